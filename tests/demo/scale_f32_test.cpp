// The demo scale kernels validate against their float64 reference at odd
// sizes (scalar tail of the float4 variant) under the forward and reverse
// thread schedules.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "rl/registry.hpp"

namespace {

void expect_valid_at_odd_sizes(const std::string& name, rl::emu::ScheduleOrder order) {
  const rl::KernelRecord* record = rl::find_kernel(name);
  ASSERT_NE(record, nullptr) << name << " is not registered";
  rl::emu::ScopedSchedule schedule(rl::emu::Schedule{.order = order});
  for (const std::int64_t n : {1, 31, 1000, 4097}) {
    const rl::Shape shape{{{"n", n}}};
    const rl::Validation v = record->make_workload(shape, 7)->validate(nullptr);
    EXPECT_TRUE(v.passed) << name << " n=" << n << ": " << v.detail;
  }
}

TEST(DemoScale, ScalarMatchesReferenceAtOddSizesUnderTwoSchedules) {
  expect_valid_at_odd_sizes("scale_f32_scalar", rl::emu::ScheduleOrder::forward);
  expect_valid_at_odd_sizes("scale_f32_scalar", rl::emu::ScheduleOrder::reverse);
}

TEST(DemoScale, Vec4MatchesReferenceAtOddSizesUnderTwoSchedules) {
  expect_valid_at_odd_sizes("scale_f32_vec4", rl::emu::ScheduleOrder::forward);
  expect_valid_at_odd_sizes("scale_f32_vec4", rl::emu::ScheduleOrder::reverse);
}

// --list shows each record's file, the same in every build whatever path the
// compiler was given (absolute under the emulator, relative under nvcc).
TEST(Registry, RecordsTheProjectRelativeFileThatRegisteredIt) {
  EXPECT_EQ(rl::find_kernel("scale_f32_vec4")->source_file, "kernels/demo/scale_f32.cu");
  EXPECT_EQ(rl::project_relative_path("/r/kernels/gemm/x.cu"), "kernels/gemm/x.cu");
  EXPECT_EQ(rl::project_relative_path("../../kernels/gemm/cuda_only/y.cpp"),
            "kernels/gemm/cuda_only/y.cpp");
  EXPECT_EQ(rl::project_relative_path("/home/tests/p/kernels/a.cu"), "kernels/a.cu");
  EXPECT_EQ(rl::project_relative_path("/x/mykernels/a.cu"), "/x/mykernels/a.cu");
}

}  // namespace
