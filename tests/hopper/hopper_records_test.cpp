// The sm_90a records as registered: cc 9.0 only, precision, cost model,
// shapes and the shapes they refuse.  Nothing here launches a kernel, so it
// runs without a GPU, against the emulator and against the CUDA backend.
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

// ------------------------------------------------------------- records

const char* const kWgmmaGemms[] = {"gemm_wgmma_tma_bf16", "gemm_wgmma_tma_fp16"};

TEST(HopperRecords, every_sm90a_record_is_gpu_only_for_compute_capability_9_0_exactly) {
  for (const char* name :
       {"gemm_wgmma_tma_bf16", "gemm_wgmma_tma_fp16", "wgmma_loop_bf16_m64n256k16"}) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_TRUE(record->gpu_only) << name;
    EXPECT_EQ(record->min_cc, 90) << name;
    EXPECT_EQ(record->max_cc, 90) << name;
  }
}

TEST(HopperRecords, gemm_records_name_their_precision_pipe_and_mma_sync_baseline) {
  const rl::KernelRecord* bf16 = rl::find_kernel("gemm_wgmma_tma_bf16");
  const rl::KernelRecord* fp16 = rl::find_kernel("gemm_wgmma_tma_fp16");
  ASSERT_NE(bf16, nullptr);
  ASSERT_NE(fp16, nullptr);
  EXPECT_EQ(bf16->family, "gemm");
  EXPECT_EQ(bf16->precision, "bf16");
  EXPECT_EQ(bf16->unit, rl::roofline::ComputeUnit::tc_bf16);
  EXPECT_EQ(bf16->baseline, "gemm_mma_sync_multistage_bf16");
  EXPECT_EQ(fp16->precision, "fp16");
  EXPECT_EQ(fp16->unit, rl::roofline::ComputeUnit::tc_fp16);
  EXPECT_EQ(fp16->baseline, "gemm_mma_sync_multistage_fp16");
  EXPECT_FALSE(bf16->idea.empty());
  EXPECT_EQ(bf16->idea, fp16->idea);
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

TEST(HopperRecords, gemm_shapes_are_only_those_tma_can_describe) {
  for (const char* name : kWgmmaGemms) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr);
    for (rl::SizePreset preset :
         {rl::SizePreset::small, rl::SizePreset::medium, rl::SizePreset::large}) {
      const auto shapes = record->shapes(preset);
      EXPECT_FALSE(shapes.empty()) << name;
      for (const rl::Shape& s : shapes) {
        EXPECT_EQ(s.at("K") % 8, 0) << name;
        EXPECT_EQ(s.at("N") % 8, 0) << name;
      }
    }
  }
}

TEST(HopperRecords, gemm_refuses_k_or_n_not_a_multiple_of_8_before_allocating) {
  for (const char* name : kWgmmaGemms) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr);
    for (const rl::Shape& s : {rl::Shape{{{"M", 127}, {"N", 129}, {"K", 64}}},
                               rl::Shape{{{"M", 128}, {"N", 128}, {"K", 65}}}}) {
      try {
        record->make_workload(s, 1);
        ADD_FAILURE() << name << ": expected std::invalid_argument";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("K and N must be multiples of 8"), std::string::npos)
            << e.what();
      }
    }
  }
}

}  // namespace
