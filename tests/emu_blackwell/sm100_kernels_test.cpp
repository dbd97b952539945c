// The suite's sm_100a records under the emulator as a datacenter Blackwell
// (this test runs with RL_EMU_CC=100, set by its CMakeLists): every tcgen05
// roof loop is runnable here (not gpu_only) and validates, exactly, at a small
// shape with an odd iteration count; the packed-FFMA2 FP32 roof, where it is
// registered, too.  The instruction tests (tcgen05_*_test.cpp) hold the
// negative cases.
#include "rl/cuda.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

// Every record of *_sm100a.cu and the ffma2 roof.
std::vector<std::string> sm100a_records() {
  std::vector<std::string> names;
  for (const rl::KernelRecord& record : rl::kernel_registry())
    if (record.source_file.ends_with("_sm100a.cu") || record.name.starts_with("ffma2_"))
      names.push_back(record.name);
  return names;
}

TEST(Sm100OnTheEmulator, the_device_reports_10_0_and_every_sm100a_record_runs_on_it) {
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(prop.major * 10 + prop.minor, 100) << "this test needs RL_EMU_CC=100";
  const std::vector<std::string> names = sm100a_records();
  EXPECT_GE(names.size(), 6u);  // the tcgen05 loops: bf16, fp16, tf32, fp8 e4m3/e5m2, int8
  for (const std::string& name : names) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_FALSE(record->gpu_only) << name;
  }
}

TEST(Sm100OnTheEmulator, every_sm100a_record_validates_exactly_at_a_small_shape) {
  for (const std::string& name : sm100a_records()) {
    SCOPED_TRACE(name);
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr);
    const std::vector<rl::Shape> shapes = record->shapes(rl::SizePreset::small);
    ASSERT_FALSE(shapes.empty());
    rl::Shape shape = shapes.front();
    // Two blocks and three iterations: small, odd, and past the first commit.
    for (auto& [key, value] : shape.dims) {
      if (key == "blocks") value = 2;
      if (key == "iters") value = 3;
    }
    std::unique_ptr<rl::Workload> workload = record->make_workload(shape, 1);
    const rl::Validation v = workload->validate(nullptr);
    EXPECT_TRUE(v.passed) << v.detail;
  }
}

}  // namespace
