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

}  // namespace
