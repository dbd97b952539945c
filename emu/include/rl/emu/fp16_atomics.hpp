// atomicAdd on the 16-bit float types and their cache-operator accesses
// (__ldcs and friends), for device code under the emulator only: without the
// emulator's runtime headers this header is empty.
#pragma once

#include "rl/emu/fp16_arithmetic.hpp"

#if defined(RL_EMULATE) && __has_include("rl/emu/block.hpp")
#include "rl/emu/block.hpp"
#include "rl/emu/math.hpp"

// atomicAdd on 16-bit floats: a compare-and-swap loop whose update is the
// 16-bit add (one rounding, as the hardware's).  The pair forms update the
// whole 32-bit word at once, which is at least as strong as CUDA's guarantee
// (each half atomic on its own).
#define RL_EMU_FP16_ATOMICS(T, T2)                                                           \
  inline T atomicAdd(T* address, T value) {                                                  \
    return rl::emu::detail::atomic_update(address, [value](T old) { return old + value; });  \
  }                                                                                          \
  inline T2 atomicAdd(T2* address, T2 value) {                                               \
    return rl::emu::detail::atomic_update(address, [value](T2 old) { return old + value; }); \
  }                                                                                          \
  template <>                                                                                \
  struct rl::emu::detail::cache_op_type<T> : std::true_type {};                              \
  template <>                                                                                \
  struct rl::emu::detail::cache_op_type<T2> : std::true_type {};
RL_EMU_FP16_ATOMICS(__half, __half2)
RL_EMU_FP16_ATOMICS(__nv_bfloat16, __nv_bfloat162)
#undef RL_EMU_FP16_ATOMICS
#endif
