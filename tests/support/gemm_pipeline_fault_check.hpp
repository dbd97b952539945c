// The negative test of GEMM validation against a rung's pipeline faults
// (gemm/gemm_pipeline_fault.hpp): every build of `launcher_of(fault)` is
// validated at `d`; the correct one must pass, each faulty one must fail the
// exact check on integer inputs.  Emulator builds only.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "gemm/gemm_pipeline_fault.hpp"
#include "gemm/gemm_workload.hpp"

namespace rl::test {

template <typename T, typename LauncherOf>
void expect_only_the_faulty_builds_fail(LauncherOf launcher_of, const rl::gemm::Dims& d,
                                        std::uint64_t seed, int ld_multiple = 1) {
  using rl::gemm::PipelineFault;
  for (const PipelineFault fault :
       {PipelineFault::none, PipelineFault::skip_one_k_tile, PipelineFault::read_stage_early}) {
    SCOPED_TRACE("PipelineFault " + std::to_string(static_cast<int>(fault)));
    rl::gemm::GemmWorkload<T> workload(launcher_of(fault), rl::gemm::kTensorCoreError, d, seed,
                                       ld_multiple);
    const rl::Validation v = workload.validate(nullptr);
    if (fault == PipelineFault::none) {
      EXPECT_TRUE(v.passed) << v.detail;
    } else {
      EXPECT_FALSE(v.passed);
      EXPECT_NE(v.detail.find("exact check on integer inputs"), std::string::npos) << v.detail;
    }
  }
}

}  // namespace rl::test
