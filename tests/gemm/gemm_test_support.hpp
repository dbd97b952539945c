// What the GEMM tests share: why a record cannot run on this backend, and
// the skip that says so.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "gemm/gemm_problem.hpp"
#include "rl/registry.hpp"

namespace rl::gemm::test {

// Why `record` cannot run here (GPU backend: compute capability, or the
// record refuses, as fp8 does where its mma.sync is emulated), or "" when it
// can.
inline std::string cannot_run_reason(const rl::KernelRecord& record) {
#if defined(RL_EMULATE)
  (void)record;
  return "";
#else
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return "no device";
  if (major * 10 + minor < record.min_cc)
    return record.name + " needs sm_" + std::to_string(record.min_cc);
  try {
    record.make_workload(rl::gemm::make_shape(1, 1, 1), 1);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
#endif
}

#define RL_SKIP_IF_CANNOT_RUN(name)                                            \
  do {                                                                         \
    const rl::KernelRecord* record_ = rl::find_kernel(name);                   \
    ASSERT_NE(record_, nullptr) << (name) << " is not registered";             \
    const std::string reason_ = ::rl::gemm::test::cannot_run_reason(*record_); \
    if (!reason_.empty()) GTEST_SKIP() << reason_;                             \
  } while (0)

}  // namespace rl::gemm::test
