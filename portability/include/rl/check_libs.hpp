// Error checks for cuBLAS / cuBLASLt and cuDNN status codes, the library
// counterparts of RL_CUDA_CHECK (rl/check.hpp): file:line, the call, the status
// name and its description, thrown as rl::LibraryError so the harness records a
// failed baseline and goes on.
//
// CUDA backend only: the library baselines and ceilings live in
// kernels/<family>/cuda_only/, which the emulator build never compiles.
// RL_CUDNN_CHECK exists only where cuDNN was found (RL_HAVE_CUDNN), so a cuDNN
// baseline must sit behind the same guard.
#pragma once

#if defined(RL_EMULATE)
#error "rl/check_libs.hpp is for the CUDA backend only (cuBLAS/cuDNN baselines)"
#endif

#include "rl/library_error.hpp"

#include <cublas_api.h>
#if defined(RL_HAVE_CUDNN)
#include <cudnn.h>
#endif

#include <stdexcept>
#include <string>
#include <utility>

namespace rl {

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* expr,
                                            const char* file, int line) {
  throw LibraryError("cuBLAS", static_cast<int>(status),
                     std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                         cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

#if defined(RL_HAVE_CUDNN)
[[noreturn]] inline void throw_cudnn_error(cudnnStatus_t status, const char* expr, const char* file,
                                           int line) {
  std::string what = std::string(file) + ":" + std::to_string(line) + ": " + expr +
                     " failed: " + cudnnGetErrorString(status);
  // cuDNN 9 keeps a more specific message (which descriptor, which attribute)
  // for the last failed call of this thread.
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  if (detail[0] != '\0') what += std::string(" (") + detail + ")";
  throw LibraryError("cuDNN", static_cast<int>(status), what);
}
#endif

}  // namespace rl

// Also covers cuBLASLt, whose calls return cublasStatus_t.
#define RL_CUBLAS_CHECK(expr)                                                \
  do {                                                                       \
    const cublasStatus_t rl_check_status_ = (expr);                          \
    if (rl_check_status_ != CUBLAS_STATUS_SUCCESS)                           \
      ::rl::throw_cublas_error(rl_check_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#if defined(RL_HAVE_CUDNN)
#define RL_CUDNN_CHECK(expr)                                                \
  do {                                                                      \
    const cudnnStatus_t rl_check_status_ = (expr);                          \
    if (rl_check_status_ != CUDNN_STATUS_SUCCESS)                           \
      ::rl::throw_cudnn_error(rl_check_status_, #expr, __FILE__, __LINE__); \
  } while (0)
#endif
