// mma.sync: warp-level tensor-core D = A * B + C (f16, bf16, tf32, fp8 e4m3
// and e5m2 with f32 accumulators; f16 accumulators; s8 with s32), and where
// fp8 mma.sync is a tensor-core instruction (fp8_mma_sync_refusal).  A part of
// rl/ptx.hpp, which defines RL_PTX_FN and RL_PTX_UNSUPPORTED.
//
// On the GPU each wrapper is one inline-PTX instruction (sm_80+; fp8 sm_89+).
// Under the emulator (RL_EMULATE) each is a full-warp rendezvous whose last
// lane computes the whole warp's result once with the exact semantics in
// rl/emu/ptx_warp.hpp, which follow the PTX ISA fragment layouts (docs:
// ptx-emulation-reference.md).  Register layouts, in short (g = lane / 4,
// t = lane % 4; 16-bit elements low half first):
//   mma m16n8k16 f16/bf16  A a0..a7: (g|g+8, 2t..2t+1 | +8), B b0..b3: (2t..2t+1 | +8, g)
//   mma m16n8k8 tf32       A a0..a3: (g, t) (g+8, t) (g, t+4) (g+8, t+4); B (t, g) (t+4, g)
//   mma m16n8k32 8-bit     A bytes: (g|g+8, 4t..4t+3 | +16), B bytes: (4t..4t+3 | +16, g)
//   C/D (all)              c0..c3: (g, 2t) (g, 2t+1) (g+8, 2t) (g+8, 2t+1)
// d may alias c.  All mma calls must be reached by all 32 lanes.
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_mma.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "rl/check.hpp"
#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/ptx_warp.hpp"
#endif

#if defined(RL_EMULATE)
namespace rl::ptx::emu_detail {

// mma.sync: one warp rendezvous; the last lane to arrive computes every
// lane's D with the fragments decoded once (rl/emu/ptx_warp.hpp).
inline void mma_f32(rl::emu::ptx::MmaInput input, float (&d)[4], const std::uint32_t (&a)[4],
                    const std::uint32_t (&b)[2], const float (&c)[4]) {
  rl::emu::ptx::mma_f32_sync(input, a, b, c, d);
}

}  // namespace rl::ptx::emu_detail
#endif  // RL_EMULATE

namespace rl::ptx {

// ---------------------------------------------------------------------------
// mma.sync: D = A * B + C, f32 accumulators (int32 for s8)
// ---------------------------------------------------------------------------

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
RL_PTX_FN void mma_m16n8k16_f16_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::f16, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16: f16 accumulators, two
// .f16x2 registers for C and D (c0, c1 in c[0], low half first; c2, c3 in
// c[1]).  The emulator sums in double and rounds once to f16; PTX leaves the
// order and rounding of the accumulation unspecified (test with tolerances).
RL_PTX_FN void mma_m16n8k16_f16_f16(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2], const std::uint32_t (&c)[2]) {
#if defined(RL_EMULATE)
  rl::emu::ptx::mma_m16n8k16_f16_f16_sync(a, b, c, d);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
      "{%8,%9};\n"
      : "=r"(d[0]), "=r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
RL_PTX_FN void mma_m16n8k16_bf16_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                     const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::bf16, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32.  The tensor core reads
// only the upper 19 bits of each operand: convert with f32_to_tf32 first.
RL_PTX_FN void mma_m16n8k8_tf32_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::tf32, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (sm_89+).
RL_PTX_FN void mma_m16n8k32_e4m3_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                     const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::e4m3, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// Where mma.sync with 8-bit float inputs is a tensor-core instruction.  nvcc
// 13.0 compiles mma_m16n8k32_e4m3_f32 to QMMA.16832.F32.E4M3.E4M3 for sm_89
// (Ada) and sm_120 (consumer Blackwell), but for sm_90a and sm_100a to f16
// unpacks (F2FP.F16.E4M3.UNPACK_B) feeding HMMA: an emulation, whose timing
// is not an fp8 tensor-core measurement (cuobjdump -sass of each).  Other
// parts are treated as emulating until their SASS says otherwise.
constexpr bool fp8_mma_sync_is_native(int cc_major, int cc_minor) {
  return (cc_major == 8 && cc_minor >= 9) || cc_major == 12;
}

// Host side of a workload that times fp8 mma.sync: throws, naming `what`, on
// a device where the instruction is emulated.  The CPU emulator executes the
// instruction exactly, so nothing is refused there.
// Why fp8 mma.sync is not timed on compute capability cc_x10 (x10, 90 for
// sm_90), or nullopt where it is a tensor instruction: the records'
// KernelRecord::refuse_on (the harness skips the instance with this reason).
inline std::optional<std::string> fp8_mma_sync_refusal(int cc_x10) {
  if (fp8_mma_sync_is_native(cc_x10 / 10, cc_x10 % 10)) return std::nullopt;
  return "mma.sync e4m3 is emulated on sm_" + std::to_string(cc_x10) +
         " (f16 unpacks and HMMA), not an fp8 tensor-core measurement";
}

inline void refuse_emulated_fp8_mma_sync(const char* what) {
#if defined(RL_EMULATE)
  (void)what;
#else
  int device = 0, major = 0, minor = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (const std::optional<std::string> why = fp8_mma_sync_refusal(major * 10 + minor))
    throw std::runtime_error(std::string(what) + ": " + *why);
#endif
}

// mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 (sm_89+).
RL_PTX_FN void mma_m16n8k32_e5m2_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                     const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::e5m2, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32: exact int32 sums that wrap
// (no .satfinite).
RL_PTX_FN void mma_m16n8k32_s8_s32(std::int32_t (&d)[4], const std::uint32_t (&a)[4],
                                   const std::uint32_t (&b)[2], const std::int32_t (&c)[4]) {
#if defined(RL_EMULATE)
  rl::emu::ptx::mma_m16n8k32_s8_s32_sync(a, b, c, d);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
        "r"(c[2]), "r"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx
