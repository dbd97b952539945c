// The suite's sm_120a records under the emulator as an RTX Blackwell (this test
// runs with RL_EMU_CC=120, set by its CMakeLists): every block-scaled and
// f8f6f4 mma.sync roof loop is runnable here (not gpu_only) and validates,
// exactly, at a small shape with an odd iteration count.  The instruction
// tests (sm120_mma_*_test.cpp) hold the negative cases.
#include "rl/cuda.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace {

const char* const kLoops[] = {"mma_sync_loop_f8f6f4_e4m3",    "mma_sync_loop_f8f6f4_e5m2",
                              "mma_sync_loop_f8f6f4_e3m2",    "mma_sync_loop_f8f6f4_e2m3",
                              "mma_sync_loop_f8f6f4_e2m1",    "mma_sync_loop_mxf8f6f4_e4m3",
                              "mma_sync_loop_mxf8f6f4_e3m2",  "mma_sync_loop_mxf4",
                              "mma_sync_loop_mxf4nvf4_ue8m0", "mma_sync_loop_mxf4nvf4_ue4m3"};

TEST(Sm120OnTheEmulator, the_device_reports_12_0_and_every_sm120a_record_runs_on_it) {
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(prop.major * 10 + prop.minor, 120) << "this test needs RL_EMU_CC=120";
  int found = 0;
  for (const rl::KernelRecord& record : rl::kernel_registry()) {
    if (!record.source_file.ends_with("_sm120a.cu")) continue;
    ++found;
    EXPECT_FALSE(record.gpu_only) << record.name;
  }
  EXPECT_EQ(found, static_cast<int>(std::size(kLoops)));
}

class Sm120Loop : public ::testing::TestWithParam<const char*> {};

TEST_P(Sm120Loop, validates_exactly_at_a_small_shape) {
  const rl::KernelRecord* record = rl::find_kernel(GetParam());
  ASSERT_NE(record, nullptr);
  const rl::Shape shape{{{"blocks", 2}, {"threads", 128}, {"iters", 3}}};
  std::unique_ptr<rl::Workload> workload = record->make_workload(shape, 1);
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_TRUE(v.passed) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Sm120a, Sm120Loop, ::testing::ValuesIn(kLoops));

}  // namespace
