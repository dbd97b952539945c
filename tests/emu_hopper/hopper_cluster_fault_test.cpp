// The cluster rung's release fault (gemm/gemm_pipeline_fault.hpp,
// ReleaseFault::release_own_cta_only): a consumed stage released to this
// CTA's producer only.  The peer's producer then multicasts the next k-tile's
// B half into a stage whose wgmmas this CTA has not yet retired; the emulator
// reads wgmma operands at issue, so C still comes out right, but the write is
// reported (emu/docs/hopper.md, "Operands in flight").  One 2-CTA cluster
// (M = 256) over 9 k-tiles: the 4-stage ring wraps twice.  The correct build
// passes under the same schedules (the check has no false positive here).
// Runs with RL_EMU_CC=90 (hopper_kernels_emu_test).
#include "emu_kernel_test.hpp"
#include "gemm/gemm_pipeline_fault.hpp"
#include "gemm/gemm_workload.hpp"
#include "rl/emu/launch.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using rl::gemm::ReleaseFault;

const rl::gemm::Dims kShape{256, 64, 9 * 64};

// Validates the build with `fault` under `order`: "" when it passes, else
// what the emulator printed (the launch failure throws out of validate).
std::string failure_of(ReleaseFault fault, rl::emu::ScheduleOrder order) {
  const rl::emu::ScopedSchedule schedule({order, 0});
  rl::gemm::GemmWorkload<__nv_bfloat16> workload(rl::gemm::faults::wgmma_cluster_bf16(fault),
                                                 rl::gemm::kTensorCoreError, kShape, 11, 8);
  testing::internal::CaptureStderr();
  std::string thrown;
  try {
    const rl::Validation v = workload.validate(nullptr);
    if (!v.passed) thrown = "validation failed: " + v.detail;
  } catch (const std::exception& e) {
    thrown = e.what();
  }
  // The launch's failure stays pending until a synchronize takes it (as on
  // a GPU): taken here, so the tests after this one start clean.
  (void)cudaDeviceSynchronize();
  (void)cudaGetLastError();
  const std::string printed = testing::internal::GetCapturedStderr();
  return thrown.empty() ? "" : thrown + "\n" + printed;
}

TEST(WgmmaClusterReleaseFault, a_release_to_this_cta_only_is_reported_the_correct_one_is_clean) {
  // The faulty build races by construction (the peer's multicast against
  // this CTA's wgmma reads); the correct one runs under racecheck in WgmmaGemm.
  RL_SKIP_UNDER_RACECHECK();
  for (const auto order : {rl::emu::ScheduleOrder::forward, rl::emu::ScheduleOrder::reverse}) {
    SCOPED_TRACE(order == rl::emu::ScheduleOrder::forward ? "forward" : "reverse");
    EXPECT_EQ(failure_of(ReleaseFault::none, order), "");
  }
  const std::string err =
      failure_of(ReleaseFault::release_own_cta_only, rl::emu::ScheduleOrder::reverse);
  EXPECT_NE(err.find("cp.async.bulk.tensor wrote shared bytes ["), std::string::npos) << err;
  EXPECT_NE(err.find(", read by a wgmma still in flight (committed, not yet retired by "
                     "wgmma.wait_group) of its warpgroup"),
            std::string::npos)
      << err;
}

}  // namespace
