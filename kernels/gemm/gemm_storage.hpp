// GEMM's storage types: an element of A or B to fp32 and back, and the
// type's name.  Apart from gemm_problem.hpp (the problem, its shapes and the
// registry) because kernel code needs these and its device passes need not
// parse the registry (docs/perf-log.md, "Device passes: host-only includes").
#pragma once

#include "rl/cuda.hpp"

#if !defined(RL_EMULATE)
#include <cuda_fp8.h>  // __nv_fp8_e4m3 (the emulator's rl/emu/fp16.hpp has it)
#endif

#include <type_traits>

namespace rl::gemm {

// ---------------------------------------------------------------- storage types
//
// The value of a stored element of A or B as fp32 (exact for every storage
// type), and an fp32 value rounded to the storage type: round-to-nearest-even
// (e4m3 saturating to +-448, as cuda_fp8.h's constructor does).  GEMM-local
// so that the set of types does not depend on rl/packed128.hpp's.
template <typename T>
__host__ __device__ __forceinline__ float input_to_f32(T x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else if constexpr (std::is_same_v<T, __half>)
    return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(x);
  else {
    static_assert(std::is_same_v<T, __nv_fp8_e4m3>, "gemm inputs: float, half, bf16 or e4m3");
    return static_cast<float>(x);
  }
}

// The storage type's name, as --dump-tensors' manifest gives it.
template <typename T>
constexpr const char* storage_name() {
  if constexpr (std::is_same_v<T, float>)
    return "fp32";
  else if constexpr (std::is_same_v<T, __half>)
    return "fp16";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return "bf16";
  else
    return "fp8_e4m3";
}

template <typename T>
__host__ __device__ __forceinline__ T input_from_f32(float x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16(x);
  else {
    static_assert(std::is_same_v<T, __nv_fp8_e4m3>, "gemm inputs: float, half, bf16 or e4m3");
    return __nv_fp8_e4m3(x);
  }
}

}  // namespace rl::gemm
