// Packed conversions of two f32 values to the narrow formats of block-scaled
// tensor-core kernels: e4m3, e5m2, e2m3, e3m2 and e2m1 elements
// (cvt.rn.satfinite) and ue8m0 scales (cvt.rz / cvt.rp .satfinite).  PTX ISA
// 9.1 §9.7.9.21 "cvt" packs a's code above b's:
//   e4m3x2, e5m2x2, ue8m0x2  d (16 bits) = code(a) << 8 | code(b)
//   e2m3x2, e3m2x2           d (16 bits) = code(a) << 8 | code(b), 6-bit codes (2 high bits 0)
//   e2m1x2                   d (8 bits)  = code(a) << 4 | code(b)
// .satfinite is mandatory: |x| beyond the largest finite value gives it with
// x's sign, NaN gives NaN in e4m3 / e5m2 / ue8m0 and positive MAX_NORM in the
// formats without NaN (emu/docs/narrow-formats.md has every rule).
//
// On the GPU each wrapper is one cvt, on the architectures the ISA's Target
// ISA notes give it:
//   e4m3x2, e5m2x2                    sm_89 and later
//   e2m3x2, e3m2x2, e2m1x2, ue8m0x2   sm_100a, sm_103a, sm_110a, sm_120a, sm_121a
//                                     (the sm_100f, sm_110f and sm_120f families)
// and traps elsewhere, like the other rl::ptx wrappers (a kernel that needs one
// is registered with min_cc).  Under the emulator (RL_EMULATE) each is the
// exact conversion of rl/emu/narrow_float.hpp; a form the emulated device
// lacks (the f6, f4 and ue8m0 forms below RL_EMU_CC=100) stops the process
// with one line naming the instruction, as the GPU would trap.
//
// Device code includes this header directly until rl/ptx.hpp includes it.
#pragma once

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include <cstdio>
#include <cstdlib>

#include "rl/emu/arch.hpp"
#include "rl/emu/narrow_float.hpp"
#define RL_PTX_CVT_FN inline
#else
#define RL_PTX_CVT_FN __device__ __forceinline__
#endif

#if defined(__CUDA_ARCH__)
#define RL_PTX_CVT_UNSUPPORTED() __trap()
#else
#define RL_PTX_CVT_UNSUPPORTED() ((void)0)
#endif

// The f6, f4 and ue8m0 forms exist in arch-specific ("a") and family-specific
// ("f") code of compute capability 10.x to 12.x; nvcc sets
// __CUDA_ARCH_FAMILY_SPECIFIC__ for both (cuda_fp8.h keys its own use of these
// instructions to the same test).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && \
    __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000 && __CUDA_ARCH_FAMILY_SPECIFIC__ < 1300
#define RL_PTX_HAS_CVT_F6F4 1
#else
#define RL_PTX_HAS_CVT_F6F4 0
#endif

namespace rl::ptx {

#if defined(RL_EMULATE)
namespace cvt_narrow_detail {

using rl::emu::narrow::Format;
using rl::emu::narrow::Rounding;

// The f6, f4 and ue8m0 cvt forms: every emulated Blackwell (sm_100a, sm_103a,
// sm_120a, sm_121a), none before it.
inline void require_f6f4_cvt(const char* instruction) {
  const int cc = rl::emu::compute_capability();
  if (cc >= 100) return;
  std::fprintf(stderr,
               "rl::ptx: %s exists on sm_100a/sm_103a/sm_120a/sm_121a only and the emulated "
               "device is compute capability %d: run with RL_EMU_CC=100, 103, 120 or 121\n",
               instruction, cc);
  std::fflush(stderr);
  std::abort();
}

// code(a) above code(b), each `width` bits apart.
inline std::uint16_t pack(Format f, Rounding r, unsigned width, float a, float b) {
  return static_cast<std::uint16_t>((rl::emu::narrow::from_float_satfinite(f, a, r) << width) |
                                    rl::emu::narrow::from_float_satfinite(f, b, r));
}

}  // namespace cvt_narrow_detail
#endif  // RL_EMULATE

// cvt.rn.satfinite.e4m3x2.f32 (sm_89+).
RL_PTX_CVT_FN std::uint16_t cvt_rn_e4m3x2_f32(float a, float b) {
  std::uint16_t d = 0;
#if defined(RL_EMULATE)
  d = cvt_narrow_detail::pack(cvt_narrow_detail::Format::e4m3, cvt_narrow_detail::Rounding::rn, 8,
                              a, b);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(a), "f"(b));
#else
  RL_PTX_CVT_UNSUPPORTED();
#endif
  return d;
}

// cvt.rn.satfinite.e5m2x2.f32 (sm_89+).
RL_PTX_CVT_FN std::uint16_t cvt_rn_e5m2x2_f32(float a, float b) {
  std::uint16_t d = 0;
#if defined(RL_EMULATE)
  d = cvt_narrow_detail::pack(cvt_narrow_detail::Format::e5m2, cvt_narrow_detail::Rounding::rn, 8,
                              a, b);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(a), "f"(b));
#else
  RL_PTX_CVT_UNSUPPORTED();
#endif
  return d;
}

// cvt.rn.satfinite.e2m3x2.f32 (sm_100a, sm_103a, sm_120a, sm_121a).
RL_PTX_CVT_FN std::uint16_t cvt_rn_e2m3x2_f32(float a, float b) {
  std::uint16_t d = 0;
#if defined(RL_EMULATE)
  cvt_narrow_detail::require_f6f4_cvt("cvt.rn.satfinite.e2m3x2.f32");
  d = cvt_narrow_detail::pack(cvt_narrow_detail::Format::e2m3, cvt_narrow_detail::Rounding::rn, 8,
                              a, b);
#elif RL_PTX_HAS_CVT_F6F4
  asm("cvt.rn.satfinite.e2m3x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(a), "f"(b));
#else
  RL_PTX_CVT_UNSUPPORTED();
#endif
  return d;
}

// cvt.rn.satfinite.e3m2x2.f32 (sm_100a, sm_103a, sm_120a, sm_121a).
RL_PTX_CVT_FN std::uint16_t cvt_rn_e3m2x2_f32(float a, float b) {
  std::uint16_t d = 0;
#if defined(RL_EMULATE)
  cvt_narrow_detail::require_f6f4_cvt("cvt.rn.satfinite.e3m2x2.f32");
  d = cvt_narrow_detail::pack(cvt_narrow_detail::Format::e3m2, cvt_narrow_detail::Rounding::rn, 8,
                              a, b);
#elif RL_PTX_HAS_CVT_F6F4
  asm("cvt.rn.satfinite.e3m2x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(a), "f"(b));
#else
  RL_PTX_CVT_UNSUPPORTED();
#endif
  return d;
}

// cvt.rn.satfinite.e2m1x2.f32 (sm_100a, sm_103a, sm_120a, sm_121a).  The
// result is a .b8 register, which inline PTX cannot name: it is widened into
// a 16-bit one (as cuda_fp4.h does).
RL_PTX_CVT_FN std::uint8_t cvt_rn_e2m1x2_f32(float a, float b) {
  std::uint16_t d = 0;
#if defined(RL_EMULATE)
  cvt_narrow_detail::require_f6f4_cvt("cvt.rn.satfinite.e2m1x2.f32");
  d = cvt_narrow_detail::pack(cvt_narrow_detail::Format::e2m1, cvt_narrow_detail::Rounding::rn, 4,
                              a, b);
#elif RL_PTX_HAS_CVT_F6F4
  asm("{\n .reg .b8 pair;\n cvt.rn.satfinite.e2m1x2.f32 pair, %1, %2;\n mov.b16 %0, {pair, 0};\n}\n"
      : "=h"(d)
      : "f"(a), "f"(b));
#else
  RL_PTX_CVT_UNSUPPORTED();
#endif
  return static_cast<std::uint8_t>(d);
}

// cvt.rz.satfinite.ue8m0x2.f32 (sm_100a, sm_103a, sm_120a, sm_121a): the power
// of two at or below |x| (2^floor(log2 |x|), the OCP MX scale rule).
RL_PTX_CVT_FN std::uint16_t cvt_rz_ue8m0x2_f32(float a, float b) {
  std::uint16_t d = 0;
#if defined(RL_EMULATE)
  cvt_narrow_detail::require_f6f4_cvt("cvt.rz.satfinite.ue8m0x2.f32");
  d = cvt_narrow_detail::pack(cvt_narrow_detail::Format::ue8m0, cvt_narrow_detail::Rounding::rz, 8,
                              a, b);
#elif RL_PTX_HAS_CVT_F6F4
  asm("cvt.rz.satfinite.ue8m0x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(a), "f"(b));
#else
  RL_PTX_CVT_UNSUPPORTED();
#endif
  return d;
}

// cvt.rp.satfinite.ue8m0x2.f32 (sm_100a, sm_103a, sm_120a, sm_121a): the power
// of two at or above |x|, so a block's largest value divided by it never
// overflows the element format.
RL_PTX_CVT_FN std::uint16_t cvt_rp_ue8m0x2_f32(float a, float b) {
  std::uint16_t d = 0;
#if defined(RL_EMULATE)
  cvt_narrow_detail::require_f6f4_cvt("cvt.rp.satfinite.ue8m0x2.f32");
  d = cvt_narrow_detail::pack(cvt_narrow_detail::Format::ue8m0, cvt_narrow_detail::Rounding::rp, 8,
                              a, b);
#elif RL_PTX_HAS_CVT_F6F4
  asm("cvt.rp.satfinite.ue8m0x2.f32 %0, %1, %2;\n" : "=h"(d) : "f"(a), "f"(b));
#else
  RL_PTX_CVT_UNSUPPORTED();
#endif
  return d;
}

}  // namespace rl::ptx

#undef RL_PTX_CVT_FN
#undef RL_PTX_CVT_UNSUPPORTED
#undef RL_PTX_HAS_CVT_F6F4
