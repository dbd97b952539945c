// Every ceiling kernel that can run under the emulator does, at a small
// shape (the emulator runs one fiber per CUDA thread), and its output equals
// the analytic value exactly: the HBM/L2 sums, the FMA chains' x0 + iters, and
// the mma loops' A*B accumulations through the emulated rl::ptx wrappers.
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rl {
namespace {

// The ceiling records that must run under the emulator.  A new ceiling record
// that is not GPU-only has to be added here (every_emulatable_ceiling_is_tested).
const std::vector<std::string> kEmulatedCeilings = {
    "hbm_read_vec16",         "hbm_write_vec16",    "hbm_copy_vec16",     "hbm_triad_vec16",
    "l2_read_vec16_rotating", "fma_chains_fp32",    "fma_chains_fp64",    "hfma2_chains_fp16",
    "hfma2_chains_bf16",      "mma_sync_loop_tf32", "mma_sync_loop_fp16", "mma_sync_loop_bf16",
    "mma_sync_loop_fp8_e4m3", "mma_sync_loop_int8", "smem_read_lds128",
};

// The record's small shape, every dimension shrunk to what the emulator runs
// in a second: a few blocks, a few thousand elements, a few iterations (odd,
// so the sign-alternating fp8 loop ends away from its start).
Shape emulator_shape(const KernelRecord& record) {
  Shape shape = record.shapes(SizePreset::small).front();
  for (auto& [name, value] : shape.dims) {
    if (name == "n") value = 4096 * 4 + 4 * 37;  // not a multiple of the grid: remainder loops run
    if (name == "passes") value = 3;
    if (name == "blocks") value = 3;
    if (name == "threads") value = 64;
    if (name == "iters") value = 5;
  }
  return shape;
}

class EmulatedCeiling : public testing::TestWithParam<std::string> {};

TEST_P(EmulatedCeiling, output_equals_the_analytic_value) {
  const KernelRecord* record = find_kernel(GetParam());
  ASSERT_NE(record, nullptr) << GetParam() << " is not registered";
  EXPECT_FALSE(record->gpu_only);
  EXPECT_EQ(record->family, "ceilings");
  EXPECT_FALSE(record->ceiling.empty());
  const Shape shape = emulator_shape(*record);
  auto workload = record->make_workload(shape, 42);
  const Validation validation = workload->validate(nullptr);
  EXPECT_TRUE(validation.passed) << record->name << " at " << shape.to_string() << ": "
                                 << validation.detail;
  EXPECT_EQ(validation.max_abs_err, 0.0) << record->name;
}

TEST_P(EmulatedCeiling, cost_model_is_finite_and_never_divides_by_zero) {
  const KernelRecord* record = find_kernel(GetParam());
  ASSERT_NE(record, nullptr);
  for (const SizePreset preset : {SizePreset::small, SizePreset::large}) {
    for (const Shape& shape : record->shapes(preset)) {
      const roofline::Cost cost = record->cost(shape);
      EXPECT_TRUE(std::isfinite(cost.flops) && cost.flops >= 0) << shape.to_string();
      EXPECT_GT(cost.bytes_model, 0) << shape.to_string();
      if (record->ceiling == "l2.read") {
        // bytes_min: the working set once from DRAM; bytes_model: every pass
        // from L2, what the ceiling measures.
        EXPECT_DOUBLE_EQ(cost.bytes_min, 4.0 * static_cast<double>(shape.at("n")));
        EXPECT_DOUBLE_EQ(cost.bytes_model,
                         cost.bytes_min * static_cast<double>(shape.at("passes")));
      } else if (record->ceiling == "smem.read") {
        // bytes_min: the one float a thread writes; bytes_model: the
        // shared-memory bytes read (four 16-byte loads a trip), what it measures.
        const double threads =
            static_cast<double>(shape.at("blocks")) * static_cast<double>(shape.at("threads"));
        EXPECT_DOUBLE_EQ(cost.bytes_min, 4.0 * threads);
        EXPECT_DOUBLE_EQ(cost.bytes_model, threads * static_cast<double>(shape.at("iters")) * 64);
      } else {
        EXPECT_EQ(cost.bytes_min, cost.bytes_model) << "ceilings move exactly what they declare";
      }
      EXPECT_TRUE(std::isfinite(cost.flops / cost.bytes_model));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ceilings, EmulatedCeiling, testing::ValuesIn(kEmulatedCeilings),
                         [](const testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

TEST(CeilingRegistry, every_emulatable_ceiling_is_tested) {
  std::set<std::string> ceilings_seen;
  for (const KernelRecord& record : kernel_registry()) {
    if (record.ceiling.empty()) continue;
    ceilings_seen.insert(record.ceiling);
    if (record.gpu_only) continue;
    EXPECT_NE(std::find(kEmulatedCeilings.begin(), kEmulatedCeilings.end(), record.name),
              kEmulatedCeilings.end())
        << record.name << " (" << record.ceiling << ") runs under the emulator but is not tested";
  }
  for (const char* name : {"hbm.read", "hbm.write", "hbm.copy", "hbm.triad", "l2.read", "fp32.fma",
                           "fp64.fma", "fp16.hfma2", "bf16.hfma2", "tc.tf32", "tc.fp16", "tc.bf16",
                           "tc.fp8", "tc.int8", "smem.read"})
    EXPECT_TRUE(ceilings_seen.contains(name)) << "no record measures " << name;
}

// The emulator shape's 5 iterations run only the FMA loops' remainder; 117
// runs whole trips of the hot loop too (two of 56 steps, one of fp64's 112)
// and then the remainder, which must end exactly where the analytic value says.
TEST(CeilingFmaLoops, whole_trips_and_the_remainder_give_the_analytic_value) {
  for (const char* name :
       {"fma_chains_fp32", "fma_chains_fp64", "hfma2_chains_fp16", "hfma2_chains_bf16"}) {
    SCOPED_TRACE(name);
    for (const std::int64_t iters : {56, 117}) {
      auto workload = find_kernel(name)->make_workload(
          Shape{{{"blocks", 2}, {"threads", 32}, {"iters", iters}}}, 1);
      const Validation v = workload->validate(nullptr);
      EXPECT_TRUE(v.passed) << "iters " << iters << ": " << v.detail;
    }
  }
}

// Whole trips at the large preset: the remainder loop (not held to the static
// check's loop share) does none of the timed work.
TEST(CeilingFmaLoops, large_preset_runs_whole_trips_of_the_hot_loop) {
  for (const auto& [name, steps] :
       std::vector<std::pair<std::string, std::int64_t>>{{"fma_chains_fp32", 56},
                                                         {"fma_chains_fp64", 112},
                                                         {"hfma2_chains_fp16", 56},
                                                         {"hfma2_chains_bf16", 56}}) {
    SCOPED_TRACE(name);
    for (const Shape& shape : find_kernel(name)->shapes(SizePreset::large))
      EXPECT_EQ(shape.at("iters") % steps, 0);
  }
}

// The emulator shape's 5 trips stay inside the shared-memory loop's 16-trip
// offset period; 37 runs two whole periods and 5 more, 64 threads a block
// (each warp still reads 32 consecutive float4s), and 16 blocks repeat the
// pattern's 15-block period.
TEST(CeilingSmemRead, whole_offset_periods_and_the_rest_give_the_analytic_value) {
  for (const std::int64_t iters : {16, 37}) {
    SCOPED_TRACE(iters);
    auto workload =
        find_kernel("smem_read_lds128")
            ->make_workload(Shape{{{"blocks", 16}, {"threads", 64}, {"iters", iters}}}, 3);
    const Validation v = workload->validate(nullptr);
    EXPECT_TRUE(v.passed) << v.detail;
  }
}

TEST(CeilingCost, stream_ceilings_count_bytes_read_plus_written) {
  const Shape shape{{{"n", 1024}}};
  EXPECT_EQ(find_kernel("hbm_read_vec16")->cost(shape).bytes_model, 1024.0 * 4);
  EXPECT_EQ(find_kernel("hbm_write_vec16")->cost(shape).bytes_model, 1024.0 * 4);
  EXPECT_EQ(find_kernel("hbm_copy_vec16")->cost(shape).bytes_model, 2 * 1024.0 * 4);
  EXPECT_EQ(find_kernel("hbm_triad_vec16")->cost(shape).bytes_model, 3 * 1024.0 * 4);
  EXPECT_EQ(find_kernel("hbm_triad_vec16")->cost(shape).flops, 2 * 1024.0);
  EXPECT_EQ(find_kernel("hbm_copy_vec16")->cost(shape).flops, 0.0);
}

TEST(CeilingCost, compute_loops_count_two_flops_per_multiply_add) {
  const Shape shape{{{"blocks", 2}, {"threads", 64}, {"iters", 5}}};
  // 128 threads x 16 chains x 5 iterations FFMA; HFMA2 does two per lane pair.
  EXPECT_EQ(find_kernel("fma_chains_fp32")->cost(shape).flops, 2.0 * 128 * 16 * 5);
  EXPECT_EQ(find_kernel("hfma2_chains_fp16")->cost(shape).flops, 2.0 * 128 * 16 * 2 * 5);
  // 4 warps x 8 accumulators x 5 iterations of m16n8k16 (2 * 16 * 8 * 16 each).
  EXPECT_EQ(find_kernel("mma_sync_loop_bf16")->cost(shape).flops, 4.0 * 8 * 5 * 2 * 16 * 8 * 16);
  EXPECT_EQ(find_kernel("mma_sync_loop_int8")->cost(shape).flops, 4.0 * 8 * 5 * 2 * 16 * 8 * 32);
}

TEST(CeilingShapes, bad_shapes_are_rejected_with_a_reason) {
  EXPECT_THROW(find_kernel("hbm_copy_vec16")->make_workload(Shape{{{"n", 1023}}}, 1),
               std::invalid_argument);
  EXPECT_THROW(find_kernel("hfma2_chains_bf16")
                   ->make_workload(Shape{{{"blocks", 1}, {"threads", 32}, {"iters", 100000}}}, 1),
               std::invalid_argument);
  EXPECT_THROW(find_kernel("fma_chains_fp32")
                   ->make_workload(Shape{{{"blocks", 1}, {"threads", 33}, {"iters", 4}}}, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace rl
