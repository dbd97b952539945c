// LayerNorm forward: the operation every rung computes and the arguments
// every rung's launcher takes.  Interface as llm.c's layernorm_forward:
// x[rows, C] -> y[rows, C], plus the per-row statistics mean[rows] and
// rstd[rows] (fp32) that the backward pass needs; weight and bias of length C
// in the storage type.
//
//   y = (x - mean) * rstd * weight + bias,   rstd = 1 / sqrt(var + 1e-5),
//   var = mean((x - mean)^2)   (biased, as PyTorch and llm.c)
//
// Variance is always the centred two-pass form; E[x^2] - E[x]^2 cancels
// catastrophically when |mean| >> std, which the tests check (error model:
// error_bounds in layernorm_reference.hpp).  The rungs, in ladder order, are
// listed in README.md here.
#pragma once

#include "rl/cuda.hpp"

#include <cstdint>
#include <functional>

namespace rl::layernorm {

inline constexpr float kEps = 1e-5f;

template <typename T>
struct Args {
  T* y;
  float* mean;
  float* rstd;
  const T* x;
  const T* weight;
  const T* bias;
  int rows;
  int C;
  // Grid cap of the rungs whose blocks loop over rows (rows-per-block, and
  // the unfused rung's normalisation); tests lower it so that blocks go round
  // that loop.  The default leaves each rung's own grid unchanged.
  std::int64_t max_blocks = std::int64_t{1} << 31;
};

// Launches a rung on `stream`: a kernel launcher, or a stateful library call
// (the cuDNN baseline keeps its execution plan).
template <typename T>
using Launcher = std::function<void(const Args<T>&, cudaStream_t)>;

}  // namespace rl::layernorm
