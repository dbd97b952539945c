// The one error check for CUDA runtime calls (file:line, error name, string).
// Errors are thrown as rl::CudaError so the harness can record a failed
// kernel and go on with the next one; main() turns an escaping one into a
// single line and exit code 2.
#pragma once

#include "rl/cuda.hpp"

#include <stdexcept>
#include <string>

namespace rl {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* expr, const char* file,
                                          int line) {
  throw CudaError(code, std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                            cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

}  // namespace rl

#define RL_CUDA_CHECK(expr)                                           \
  do {                                                                \
    const cudaError_t rl_check_status_ = (expr);                      \
    if (rl_check_status_ != cudaSuccess)                              \
      ::rl::throw_cuda_error(rl_check_status_, #expr, __FILE__, __LINE__); \
  } while (0)
