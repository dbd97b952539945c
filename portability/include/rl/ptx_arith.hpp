// Per-thread arithmetic: the tf32 conversion, the MUFU approximations and the
// packed fp32 fma of sm_100.
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

#include "rl/emu/arch.hpp"
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

// ex2.approx.ftz.f32: 2^x with subnormals flushed (.ftz): a subnormal input
// counts as zero (2^±0 = 1) and a subnormal result becomes +0.  ptxas
// compiles it to a lone MUFU.EX2; the plain form adds a compare and two
// predicated multiplies that keep results below 2^-126 (ex2_approx above).
// It is what exp2f becomes under --use_fast_math (FlashAttention-2's build).
// The emulator applies both flushes exactly around std::exp2, so only the
// approximation error differs from a GPU: validate with a tolerance.
RL_PTX_FN float ex2_approx_ftz(float x) {
#if defined(RL_EMULATE)
  if (std::fpclassify(x) == FP_SUBNORMAL) x = 0.0f;
  const float y = std::exp2(x);
  return std::fpclassify(y) == FP_SUBNORMAL ? 0.0f : y;
#elif defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  RL_PTX_UNSUPPORTED();
  return 0.0f;
#endif
}

// Whether the emulator runs fma.rn.f32x2: at RL_EMU_CC 10.0 and later.  The
// records that issue it are gpu_only where it does not (the CUDA backend never
// reads gpu_only: there the device's compute capability decides).
inline bool emulator_runs_fma_f32x2() {
#if defined(RL_EMULATE)
  return rl::emu::compute_capability() >= 100;
#else
  return false;
#endif
}

// fma.rn.f32x2 d, a, b, c (PTX ISA 8.6, sm_100 and later): two fp32 fmas in
// one instruction, d[i] = a[i] * b[i] + c[i] rounded once to nearest even,
// element 0 in the low 32 bits of each .b64 operand (here .x) and subnormals
// kept (no .ftz).  nvcc 13.0 compiles it to one FFMA2 on sm_100a
// (cuobjdump -sass), the instruction that pairs FMAs on datacenter Blackwell.
// Each element is exactly an fmaf, so the emulator computes std::fma twice;
// it refuses the instruction below compute capability 10.0, as an older GPU
// traps.
RL_PTX_FN float2 fma_rn_f32x2(float2 a, float2 b, float2 c) {
#if defined(RL_EMULATE)
  if (rl::emu::compute_capability() < 100)
    emu_detail::refuse("fma.rn.f32x2", "sm_100 and later",
                       "RL_EMU_CC=100, 103, 120 or 121 emulates a device that has it");
  return make_float2(std::fma(a.x, b.x, c.x), std::fma(a.y, b.y, c.y));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
  float2 d;
  asm("{\n"
      ".reg .b64 pa, pb, pc, pd;\n"
      "mov.b64 pa, {%2, %3};\n"
      "mov.b64 pb, {%4, %5};\n"
      "mov.b64 pc, {%6, %7};\n"
      "fma.rn.f32x2 pd, pa, pb, pc;\n"
      "mov.b64 {%0, %1}, pd;\n"
      "}\n"
      : "=f"(d.x), "=f"(d.y)
      : "f"(a.x), "f"(a.y), "f"(b.x), "f"(b.y), "f"(c.x), "f"(c.y));
  return d;
#else
  RL_PTX_UNSUPPORTED();
  return c;
#endif
}

}  // namespace rl::ptx
