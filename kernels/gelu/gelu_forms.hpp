// GELU's two forms, the tanh approximation GPT-2 uses and the exact erf form:
// their constants and the fp32 device functions every rung calls.  The rungs,
// in ladder order, are listed in README.md here.
//
// GELU is a pure stream: each element is read once and written once, so no
// rung can change its arithmetic intensity except by shrinking the element
// (bf16 halves the bytes and doubles the intensity).  The fp32 rungs all sit at
// the same intensity; what the ladder buys is achieved bandwidth, i.e. how close
// the point gets to the measured hbm.copy roof.
#pragma once

#include "rl/cuda.hpp"

#include <cmath>

namespace rl::gelu {

enum class Form { tanh, erf };

inline constexpr float kSqrt2OverPi = 0.7978845608028654f;
inline constexpr float kCubicCoeff = 0.044715f;
inline constexpr float kInvSqrt2 = 0.7071067811865476f;

__device__ __forceinline__ float gelu_tanh_f32(float x) {
  const float inner = kSqrt2OverPi * (x + kCubicCoeff * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__device__ __forceinline__ float gelu_erf_f32(float x) {
  return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
}

template <Form F>
__device__ __forceinline__ float gelu_f32(float x) {
  if constexpr (F == Form::tanh)
    return gelu_tanh_f32(x);
  else
    return gelu_erf_f32(x);
}

}  // namespace rl::gelu
