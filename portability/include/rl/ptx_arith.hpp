// Per-thread arithmetic: the tf32 conversion and two MUFU approximations.
// A part of rl/ptx.hpp, which defines RL_PTX_FN and RL_PTX_UNSUPPORTED.
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_arith.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include <bit>
#include <cmath>

#include "rl/emu/ptx_warp.hpp"
#endif

namespace rl::ptx {

// ---------------------------------------------------------------------------
// Conversions and approximations
// ---------------------------------------------------------------------------

// cvt.rna.tf32.f32: nearest, ties away from zero, 10 mantissa bits kept; the
// fp32 pattern with the low 13 bits zero.  Inf stays Inf, NaN -> 0x7FFFFFFF.
RL_PTX_FN std::uint32_t f32_to_tf32(float x) {
#if defined(RL_EMULATE)
  return rl::emu::ptx::f32_to_tf32_bits(std::bit_cast<std::uint32_t>(x));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
#else
  RL_PTX_UNSUPPORTED();
  return 0;
#endif
}

// tanh.approx.f32 (sm_75+, MUFU.TANH).  The hardware result is approximate:
// the PTX ISA's tanh section gives a maximum relative error of 2^-10.987
// (about 4.9e-4); measurements published on NVIDIA's developer forum
// ("Hardware-accelerated tanh() on Turing") found at most about 1.1e-5.  The emulator returns
// std::tanh (nearly correctly rounded), so kernels using this must validate with a tolerance of at
// least 2^-11 relative, never bit equality.
RL_PTX_FN float tanh_approx(float x) {
#if defined(RL_EMULATE)
  return std::tanh(x);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  RL_PTX_UNSUPPORTED();
  return 0.0f;
#endif
}

// ex2.approx.f32: 2^x, approximate on the GPU (MUFU.EX2; bound in the PTX
// ISA's ex2 section).  The emulator returns std::exp2; validate with a
// tolerance, never bit equality.
RL_PTX_FN float ex2_approx(float x) {
#if defined(RL_EMULATE)
  return std::exp2(x);
#elif defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  RL_PTX_UNSUPPORTED();
  return 0.0f;
#endif
}

}  // namespace rl::ptx
