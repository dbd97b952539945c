// The sm_90a records as registered: cc 9.0 only, precision, cost model,
// shapes on padded rows.  Nothing here launches a kernel, so it
// runs without a GPU, against the emulator and against the CUDA backend.
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

// ------------------------------------------------------------- records

const char* const kWgmmaGemms[] = {"gemm_wgmma_tma_bf16",      "gemm_wgmma_tma_fp16",
                                   "gemm_wgmma_128x256_bf16",  "gemm_wgmma_128x256_fp16",
                                   "gemm_wgmma_inflight_bf16", "gemm_wgmma_inflight_fp16",
                                   "gemm_wgmma_cluster_bf16",  "gemm_wgmma_cluster_fp16"};

// The wgmma GEMM ladder per precision, in order: each rung's baseline is the
// one before it, the first's the mma.sync rung.
struct WgmmaRung {
  const char* variant;
  int tile_n;  // the block tile is 128 x tile_n
};
const WgmmaRung kWgmmaRungs[] = {
    {"wgmma_tma", 128}, {"wgmma_128x256", 256}, {"wgmma_inflight", 256}};

// The wgmma roof loops: one per precision, K of their m64n256kK wgmma, and
// whether the loop closes with one extra wgmma (fp8 alternates B and -B).
struct WgmmaLoop {
  const char* name;
  const char* precision;
  const char* ceiling;
  rl::roofline::ComputeUnit unit;
  int k;
  int closing_wgmmas;
};
const WgmmaLoop kWgmmaLoops[] = {
    {"wgmma_loop_bf16_m64n256k16", "bf16", "tc.bf16", rl::roofline::ComputeUnit::tc_bf16, 16, 0},
    {"wgmma_loop_fp16_m64n256k16", "fp16", "tc.fp16", rl::roofline::ComputeUnit::tc_fp16, 16, 0},
    {"wgmma_loop_tf32_m64n256k8", "tf32", "tc.tf32", rl::roofline::ComputeUnit::tc_tf32, 8, 0},
    {"wgmma_loop_fp8_e4m3_m64n256k32", "fp8", "tc.fp8", rl::roofline::ComputeUnit::tc_fp8, 32, 1},
    {"wgmma_loop_int8_m64n256k32", "int8", "tc.int8", rl::roofline::ComputeUnit::tc_int8, 32, 0},
};

TEST(HopperRecords, every_sm90a_record_is_gpu_only_for_compute_capability_9_0_exactly) {
  std::vector<std::string> names(std::begin(kWgmmaGemms), std::end(kWgmmaGemms));
  for (const WgmmaLoop& loop : kWgmmaLoops) names.emplace_back(loop.name);
  for (const std::string& name : names) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_TRUE(record->gpu_only) << name;
    EXPECT_EQ(record->min_cc, 90) << name;
    EXPECT_EQ(record->max_cc, 90) << name;
  }
}

TEST(HopperRecords, each_wgmma_gemm_rung_names_the_one_below_and_shares_its_idea_per_precision) {
  struct Precision {
    const char* suffix;
    rl::roofline::Precision precision;
    rl::roofline::ComputeUnit unit;
  };
  for (const Precision& p :
       {Precision{"bf16", rl::roofline::Precision::bf16, rl::roofline::ComputeUnit::tc_bf16},
        Precision{"fp16", rl::roofline::Precision::fp16, rl::roofline::ComputeUnit::tc_fp16}}) {
    std::string below = std::string("gemm_mma_sync_multistage_") + p.suffix;
    for (const WgmmaRung& rung : kWgmmaRungs) {
      const std::string name = std::string("gemm_") + rung.variant + "_" + p.suffix;
      const rl::KernelRecord* record = rl::find_kernel(name);
      ASSERT_NE(record, nullptr) << name;
      EXPECT_EQ(record->family, "gemm") << name;
      EXPECT_EQ(record->variant, rung.variant) << name;
      EXPECT_EQ(record->precision, p.precision) << name;
      EXPECT_EQ(record->unit, p.unit) << name;
      EXPECT_EQ(record->baseline, below) << name;
      EXPECT_FALSE(record->idea.empty()) << name;
      const rl::KernelRecord* other =
          rl::find_kernel(std::string("gemm_") + rung.variant +
                          (p.suffix == std::string("bf16") ? "_fp16" : "_bf16"));
      ASSERT_NE(other, nullptr) << name;
      EXPECT_EQ(record->idea, other->idea) << name;
      below = name;
    }
  }
}

// The cost model's reuse tile is each rung's block tile: A is read
// ceil(N / tile_n) times, B ceil(M / 128) times, C written once.
TEST(HopperRecords, wgmma_gemm_cost_reuses_each_rungs_block_tile) {
  const rl::Shape s{{{"M", 300}, {"N", 264}, {"K", 520}}};
  for (const WgmmaRung& rung : kWgmmaRungs) {
    const std::string name = std::string("gemm_") + rung.variant + "_bf16";
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    const rl::roofline::Cost cost = record->cost(s);
    EXPECT_EQ(cost.flops, 2.0 * 300 * 264 * 520) << name;
    const double a_reads = (264 + rung.tile_n - 1) / rung.tile_n;  // 3 for 128, 2 for 256
    EXPECT_EQ(cost.bytes_model, 300.0 * 520 * a_reads * 2 + 520.0 * 264 * 3 * 2 + 300.0 * 264 * 4)
        << name;
  }
}

// The cluster rung: two 128 x 256 CTAs share B, so B is read once per 256
// rows (ceil(300 / 256) = 2, where its baseline reads it 3 times), A as its
// baseline; the counted tile is the cluster's 256 x 256 x 64 (the grid's
// rows rounded up to whole clusters issue their wgmmas too).
TEST(HopperRecords, the_cluster_rung_reads_b_once_per_cluster_of_two_row_tiles) {
  const rl::Shape s{{{"M", 300}, {"N", 264}, {"K", 520}}};
  for (const auto& [name, baseline] :
       {std::pair{"gemm_wgmma_cluster_bf16", "gemm_wgmma_inflight_bf16"},
        std::pair{"gemm_wgmma_cluster_fp16", "gemm_wgmma_inflight_fp16"}}) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_EQ(record->variant, "wgmma_cluster") << name;
    EXPECT_EQ(record->idea, "B tile multicast to a 2-CTA cluster") << name;
    EXPECT_EQ(record->baseline, baseline) << name;
    const rl::roofline::Cost cost = record->cost(s);
    EXPECT_EQ(cost.bytes_model, 300.0 * 520 * 2 * 2 + 520.0 * 264 * 2 * 2 + 300.0 * 264 * 4)
        << name;
    EXPECT_EQ(cost.bytes_l2_load, 300.0 * 520 * 2 * 2 + 520.0 * 264 * 2 * 2) << name;
    EXPECT_EQ(cost.tensor_ops, 2.0 * 512 * 512 * 576) << name;
  }
}

TEST(HopperRecords, gemm_cost_reuses_the_128_by_128_block_tile_and_counts_device_bytes) {
  const rl::KernelRecord* record = rl::find_kernel("gemm_wgmma_tma_bf16");
  ASSERT_NE(record, nullptr);
  const rl::Shape s{{{"M", 300}, {"N", 264}, {"K", 520}}};
  const rl::roofline::Cost cost = record->cost(s);
  EXPECT_EQ(cost.flops, 2.0 * 300 * 264 * 520);
  // A read ceil(264 / 128) = 3 times, B ceil(300 / 128) = 3 times, C once.
  EXPECT_EQ(cost.bytes_model, 300.0 * 520 * 3 * 2 + 520.0 * 264 * 3 * 2 + 300.0 * 264 * 4);
  ASSERT_TRUE(record->device_bytes);
  EXPECT_EQ(record->device_bytes(s), (300u * 520 + 520u * 264) * 2 + 300u * 264 * 4);
}

// Rows of A (K long) and B (N long) padded to a multiple of 8 elements: the
// TMA needs 16-byte row pitches: the device memory counts the padding; every
// preset shape of the ladder is listed and none refused.
TEST(HopperRecords, gemms_count_their_padded_rows_and_run_every_preset_shape) {
  const rl::KernelRecord* warptiled = rl::find_kernel("gemm_f32_warptiled");
  ASSERT_NE(warptiled, nullptr);
  for (const char* name : kWgmmaGemms) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr);
    ASSERT_TRUE(record->device_bytes);
    const rl::Shape odd{{{"M", 127}, {"N", 129}, {"K", 65}}};
    EXPECT_EQ(record->device_bytes(odd), (127u * 72 + 65u * 136) * 2 + 127u * 129 * 4) << name;
    for (rl::SizePreset preset :
         {rl::SizePreset::small, rl::SizePreset::medium, rl::SizePreset::large}) {
      const std::vector<rl::Shape> shapes = record->shapes(preset);
      EXPECT_EQ(shapes.size(), warptiled->shapes(preset).size()) << name;
      for (const rl::Shape& s : shapes)
        EXPECT_FALSE(record->refuse_shape && record->refuse_shape(s))
            << name << " " << s.to_string();
    }
  }
}

// The fp8 rung: the in-flight rung's structure on e4m3, beside cuBLASLt's
// fp8.  Cost at 1 byte per input on its 128 x 256 block tile; rows padded to
// 16 elements (TMA's 16-byte pitch of 1-byte rows), B stored transposed (N
// rows of K padded); every preset shape runs.
TEST(HopperRecords, the_fp8_wgmma_rung_reads_e4m3_on_the_inflight_tile_with_b_stored_n_by_k) {
  const rl::KernelRecord* record = rl::find_kernel("gemm_wgmma_inflight_fp8");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->family, "gemm");
  EXPECT_EQ(record->variant, "wgmma_inflight_fp8");
  EXPECT_EQ(record->baseline, "gemm_wgmma_inflight_bf16");
  EXPECT_EQ(record->precision, rl::roofline::Precision::fp8);
  EXPECT_EQ(record->unit, rl::roofline::ComputeUnit::tc_fp8);
  EXPECT_FALSE(record->idea.empty());
  EXPECT_TRUE(record->gpu_only);
  EXPECT_EQ(record->min_cc, 90);
  EXPECT_EQ(record->max_cc, 90);
  const rl::Shape s{{{"M", 300}, {"N", 264}, {"K", 520}}};
  const rl::roofline::Cost cost = record->cost(s);
  EXPECT_EQ(cost.flops, 2.0 * 300 * 264 * 520);
  // A read ceil(264 / 256) = 2 times, B ceil(300 / 128) = 3 times, 1 byte each.
  EXPECT_EQ(cost.bytes_model, 300.0 * 520 * 2 + 520.0 * 264 * 3 + 300.0 * 264 * 4);
  ASSERT_TRUE(record->device_bytes);
  // K = 65 padded to 80 for A's rows and for Bᵀ's N = 129 rows.
  const rl::Shape odd{{{"M", 127}, {"N", 129}, {"K", 65}}};
  EXPECT_EQ(record->device_bytes(odd), 127u * 80 + 129u * 80 + 127u * 129 * 4);
  for (rl::SizePreset preset :
       {rl::SizePreset::small, rl::SizePreset::medium, rl::SizePreset::large})
    for (const rl::Shape& shape : record->shapes(preset))
      EXPECT_FALSE(record->refuse_shape && record->refuse_shape(shape)) << shape.to_string();
}

TEST(HopperRecords, wgmma_loops_name_their_precision_and_ceiling) {
  for (const WgmmaLoop& loop : kWgmmaLoops) {
    const rl::KernelRecord* record = rl::find_kernel(loop.name);
    ASSERT_NE(record, nullptr) << loop.name;
    EXPECT_EQ(record->family, "ceilings") << loop.name;
    EXPECT_EQ(record->variant, "wgmma_loop") << loop.name;
    EXPECT_EQ(to_string(record->precision), loop.precision) << loop.name;
    EXPECT_EQ(record->unit, loop.unit) << loop.name;
    EXPECT_EQ(record->ceiling, loop.ceiling) << loop.name;
  }
}

TEST(HopperRecords, wgmma_loop_cost_counts_2_64_256_k_per_wgmma_and_the_outputs) {
  const rl::Shape s{{{"blocks", 264}, {"threads", 128}, {"iters", 4096}}};
  for (const WgmmaLoop& loop : kWgmmaLoops) {
    const rl::KernelRecord* record = rl::find_kernel(loop.name);
    ASSERT_NE(record, nullptr) << loop.name;
    const rl::roofline::Cost cost = record->cost(s);
    const double wgmmas = 264.0 * (4096.0 * 4 + loop.closing_wgmmas);
    EXPECT_EQ(cost.flops, wgmmas * 2 * 64 * 256 * loop.k) << loop.name;
    // A minimum and a maximum of 4 bytes per thread (f32, or s32 for int8).
    EXPECT_EQ(cost.bytes_model, 264.0 * 128 * 2 * 4) << loop.name;
    EXPECT_EQ(cost.unit, loop.unit) << loop.name;
  }
}

TEST(HopperRecords, wgmma_loop_refuses_sums_past_2_to_the_24_and_other_than_one_warpgroup) {
  for (const WgmmaLoop& loop : kWgmmaLoops) {
    const rl::KernelRecord* record = rl::find_kernel(loop.name);
    ASSERT_NE(record, nullptr) << loop.name;
    const std::int64_t max_iters = (std::int64_t{1} << 24) / (4 * loop.k);
    EXPECT_NO_THROW(
        record->cost(rl::Shape{{{"blocks", 1}, {"threads", 128}, {"iters", max_iters}}}))
        << loop.name;
    const rl::Shape too_long{{{"blocks", 1}, {"threads", 128}, {"iters", max_iters + 1}}};
    EXPECT_THROW(record->cost(too_long), std::invalid_argument) << loop.name;
    EXPECT_THROW(record->make_workload(too_long, 1), std::invalid_argument) << loop.name;
    const rl::Shape two_warpgroups{{{"blocks", 1}, {"threads", 256}, {"iters", 1}}};
    EXPECT_THROW(record->make_workload(two_warpgroups, 1), std::invalid_argument) << loop.name;
  }
}

}  // namespace
