// What the tensor-core attention kernels do with an accumulator fragment's
// rows: the 4 lanes of a quad share a row (lanes 4g .. 4g + 3 hold rows g
// and g + 8, in mma.sync's C fragment and in each warp's 16 rows of a wgmma
// accumulator alike), so a row's max or sum is two shuffles; and P is
// rounded to T two elements to a register, lower index in the low half, the
// order of an A fragment.  Device code only.
#pragma once

#include "rl/cuda.hpp"
#include "rl/unroll.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace rl::attention {

#if defined(__CUDACC__) || defined(RL_EMULATE)

// Two T in one 32-bit register: __nv_bfloat162 or __half2.
template <typename T>
using Pair = std::conditional_t<std::is_same_v<T, __nv_bfloat16>, __nv_bfloat162, __half2>;

template <typename T>
__device__ __forceinline__ Pair<T> make_pair_rn(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __floats2bfloat162_rn(lo, hi);
  else
    return __floats2half2_rn(lo, hi);
}

template <typename T>
__device__ __forceinline__ std::uint32_t pack_pair(float lo, float hi) {
  const Pair<T> pair = make_pair_rn<T>(lo, hi);
  std::uint32_t bits;
  memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

// Max or sum over the 4 lanes of a quad.
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::attention
