// The suite's sm_100a records under the emulator as a datacenter Blackwell
// (this test runs with RL_EMU_CC=100, set by its CMakeLists): every tcgen05
// roof loop is runnable here (not gpu_only) and validates, exactly, at a small
// shape with an odd iteration count; the packed-FFMA2 FP32 roof, where it is
// registered, too.  The block-scaled loops' check is shown to catch a wrong
// scale and a dropped k-block; the instruction tests (tcgen05_*_test.cpp)
// hold the other negative cases.
#include "ceilings/tcgen05_block_scaled.hpp"
#include "emu_kernel_test.hpp"
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
  // The tcgen05 loops: bf16, fp16, tf32, fp8 e4m3/e5m2, int8; fp6 e3m2/e2m3,
  // fp4 e2m1, mxfp8, mxfp6, mxfp4, nvfp4.
  EXPECT_GE(names.size(), 13u);
  for (const std::string& name : names) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_FALSE(record->gpu_only) << name;
  }
}

// Two blocks and three iterations: small, odd, and past the first commit.
rl::Shape small_shape(const rl::KernelRecord& record) {
  const std::vector<rl::Shape> shapes = record.shapes(rl::SizePreset::small);
  EXPECT_FALSE(shapes.empty()) << record.name;
  rl::Shape shape = shapes.front();
  for (auto& [key, value] : shape.dims) {
    if (key == "blocks") value = 2;
    if (key == "iters") value = 3;
  }
  return shape;
}

// The GEMM ladder's sm100a rungs are left to sm100_gemm_tcgen05_test.cpp,
// which validates them at more shapes (here they would cost 11 s more under
// racecheck for nothing new).
TEST(Sm100OnTheEmulator, every_sm100a_record_validates_exactly_at_a_small_shape) {
  for (const std::string& name : sm100a_records()) {
    SCOPED_TRACE(name);
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr);
    if (record->family == "gemm") continue;
    std::unique_ptr<rl::Workload> workload = record->make_workload(small_shape(*record), 1);
    const rl::Validation v = workload->validate(nullptr);
    EXPECT_TRUE(v.passed) << v.detail;
  }
}

// The same loops with their uploaded scales corrupted: validation must fail.
// A dropped block needs two k-blocks an MMA (mxf4: 2X, nvfp4: 4X).
TEST(Sm100OnTheEmulator, a_wrong_scale_or_a_dropped_block_fails_the_block_scaled_check) {
  RL_SKIP_UNDER_RACECHECK();
  using rl::ceilings::Tcgen05ScaleFault;
  struct Case {
    const char* name;
    Tcgen05ScaleFault fault;
    bool passes;
  };
  const Case cases[] = {
      {"tcgen05_loop_mxf4nvf4_ue4m3", Tcgen05ScaleFault::none, true},
      {"tcgen05_loop_mxf8f6f4_e4m3", Tcgen05ScaleFault::wrong_scale, false},
      {"tcgen05_loop_mxf8f6f4_e3m2", Tcgen05ScaleFault::wrong_scale, false},
      {"tcgen05_loop_mxf4", Tcgen05ScaleFault::wrong_scale, false},
      {"tcgen05_loop_mxf4nvf4_ue4m3", Tcgen05ScaleFault::wrong_scale, false},
      {"tcgen05_loop_mxf4", Tcgen05ScaleFault::dropped_block, false},
      {"tcgen05_loop_mxf4nvf4_ue4m3", Tcgen05ScaleFault::dropped_block, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " fault " + std::to_string(static_cast<int>(c.fault)));
    const rl::KernelRecord* record = rl::find_kernel(c.name);
    ASSERT_NE(record, nullptr);
    std::unique_ptr<rl::Workload> workload = rl::ceilings::make_tcgen05_scaled_workload_with_fault(
        c.name, small_shape(*record), c.fault);
    ASSERT_NE(workload, nullptr);
    const rl::Validation v = workload->validate(nullptr);
    EXPECT_EQ(v.passed, c.passes) << v.detail;
  }
  EXPECT_EQ(rl::ceilings::make_tcgen05_scaled_workload_with_fault("tcgen05_loop_bf16", rl::Shape{},
                                                                  Tcgen05ScaleFault::wrong_scale),
            nullptr);
}

}  // namespace
