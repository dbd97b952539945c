// Kernel tests that build twice from one source: against the emulator (label
// emu) and against the CUDA backend (label gpu, skipped without a device).
//
//   RL_KERNEL_TEST_SETUP();   first line of every such test: nothing under the
//                             emulator, RL_REQUIRE_GPU() on the CUDA backend.
//   expect_passes_under_two_schedules(workload);
//                             validate() under two thread schedules (emulator)
//                             or twice (GPU); both must pass and the outputs
//                             must be bit-identical.  A missing barrier or a
//                             read of another thread's unwritten data shows up
//                             as a difference between schedules.
//   RL_SKIP_UNDER_RACECHECK();
//                             a validator or numerics test: skipped under tsan.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpu.hpp"
#include "rl/inspectable_workload.hpp"

#if defined(RL_EMULATE)
#define RL_KERNEL_TEST_SETUP() \
  do {                         \
  } while (0)
#else
#define RL_KERNEL_TEST_SETUP() RL_REQUIRE_GPU()
#endif

// First line after RL_KERNEL_TEST_SETUP() of a test that checks the validator
// or the numerics (a sabotaged launch or redrawn inputs) of a kernel whose
// positive tests run the same record on the same launch path: under the tsan
// preset it is skipped, since racecheck learns nothing from a second run of
// that code and every run costs ten times more there.  One reason string, so
// that the skip summary shows these as one group; other presets run them.
#if defined(__SANITIZE_THREAD__)
#define RL_SKIP_UNDER_RACECHECK() \
  GTEST_SKIP() << "checks the validator/numerics; racecheck runs this kernel's positive tests"
#else
#define RL_SKIP_UNDER_RACECHECK() \
  do {                            \
  } while (0)
#endif

// RL_SKIP_BF16_TWIN_UNDER_RACECHECK(name): a memory-bound ladder's bf16
// record is the f32 record's template over another element type: the same
// barriers, shuffles and shared-memory reductions in the same order, which
// is what racecheck looks at.  Under the tsan preset only the f32 twin runs.
// Not identical: a 128-bit access holds 8 bf16 against 4 floats, so at the
// odd shapes a thread's trip counts and which threads sit idle in a tail
// differ, and the bf16 tails are not racechecked; their indexing is checked
// by exact-or-bounded validation under two schedules in the default build
// and by memcheck under ASan.  About 40 s of tsan test time.
#if defined(__SANITIZE_THREAD__)
#define RL_SKIP_BF16_TWIN_UNDER_RACECHECK(name)                                             \
  do {                                                                                      \
    if (std::string_view(name).find("_bf16") != std::string_view::npos)                     \
      GTEST_SKIP() << "racecheck runs the f32 twin of this template; the default and asan " \
                      "builds run this one";                                                \
  } while (0)
#else
#define RL_SKIP_BF16_TWIN_UNDER_RACECHECK(name) \
  do {                                          \
  } while (0)
#endif

namespace rl::test {

#if defined(RL_EMULATE)
// The two orders in which the emulator runs a block's threads between
// synchronisation points.
inline const rl::emu::Schedule kScheduleA{rl::emu::ScheduleOrder::forward, 0};
inline const rl::emu::Schedule kScheduleB{rl::emu::ScheduleOrder::reverse, 0};
#else
// On a GPU the hardware schedules; the two runs check determinism.
struct NoSchedule {};
inline const NoSchedule kScheduleA{};
inline const NoSchedule kScheduleB{};
inline std::string to_string(const NoSchedule&) {
  return "gpu";
}
#endif

// The workload of the registered kernel `name` for `shape`, or nullptr when
// no such kernel is registered or its workload is not inspectable.
inline std::unique_ptr<InspectableWorkload> make_inspectable_workload(const std::string& name,
                                                                      const Shape& shape,
                                                                      std::uint64_t seed) {
  const KernelRecord* record = find_kernel(name);
  if (record == nullptr) return nullptr;
  std::unique_ptr<Workload> w = record->make_workload(shape, seed);
  auto* inspectable = dynamic_cast<InspectableWorkload*>(w.get());
  if (inspectable == nullptr) return nullptr;
  w.release();
  return std::unique_ptr<InspectableWorkload>(inspectable);
}

struct ScheduledRun {
  Validation validation;
  std::vector<float> outputs;
};

template <typename Schedule>
ScheduledRun validate_under(InspectableWorkload& workload, const Schedule& schedule) {
#if defined(RL_EMULATE)
  const rl::emu::ScopedSchedule scoped(schedule);
#else
  (void)schedule;
#endif
  ScheduledRun run;
  run.validation = workload.validate(nullptr);
  run.outputs = workload.download_outputs();
  return run;
}

// Index of the first element whose bits differ, or -1.
inline long first_bit_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return static_cast<long>(i);
  return -1;
}

inline void expect_passes_under_two_schedules(InspectableWorkload& workload) {
  using std::to_string;
  const ScheduledRun a = validate_under(workload, kScheduleA);
  EXPECT_TRUE(a.validation.passed)
      << "schedule " << to_string(kScheduleA) << ": " << a.validation.detail << " (max rel err "
      << a.validation.max_rel_err << ")";
#if defined(__SANITIZE_THREAD__)
  // Under racecheck one schedule: TSan reports a race between CUDA threads
  // whatever order they ran in, which is what the second schedule is for, and
  // every run costs ten times more there (the other presets run both).
  return;
#endif
  const ScheduledRun b = validate_under(workload, kScheduleB);
  EXPECT_TRUE(b.validation.passed)
      << "schedule " << to_string(kScheduleB) << ": " << b.validation.detail << " (max rel err "
      << b.validation.max_rel_err << ")";
  const long diff = first_bit_difference(a.outputs, b.outputs);
  EXPECT_EQ(diff, -1) << "outputs differ between schedules at element " << diff
                      << (diff >= 0 && static_cast<std::size_t>(diff) < a.outputs.size() &&
                                  a.outputs.size() == b.outputs.size()
                              ? ": " + std::to_string(a.outputs[static_cast<std::size_t>(diff)]) +
                                    " vs " +
                                    std::to_string(b.outputs[static_cast<std::size_t>(diff)])
                              : std::string(" (sizes differ)"));
}

}  // namespace rl::test
