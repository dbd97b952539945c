// sm_120a / sm_121a mma.sync for device code (RTX 50, RTX PRO 6000, GB10):
// .kind::f8f6f4 with FP8/FP6/FP4 inputs (m16n8k32), and the block-scaled
// kinds .kind::mxf8f6f4 (scale_vec::1X, ue8m0), .kind::mxf4 (2X, ue8m0) and
// .kind::mxf4nvf4 (2X ue8m0 or 4X ue4m3; m16n8k64, packed e2m1).
//
// On the GPU each wrapper is one inline-PTX instruction, present only in
// sm_120a / sm_121a code (__CUDA_ARCH_FEAT_SM120_ALL / SM121_ALL: plain
// sm_120 rejects these kinds, and the "a" features are not forward
// compatible); other GPU targets trap.  Under the emulator (RL_EMULATE) each
// is the exact model of rl/emu/mma_sm120.hpp, which runs only while the
// emulated device is an sm_120a (RL_EMU_CC=120 or 121) and stops the process
// with one line naming the instruction otherwise.  Fragment layouts, scale
// selectors and numerics: rl/emu/mma_sm120.hpp; in short (g = lane / 4,
// t = lane % 4):
//   m16n8k32  one element per byte: A (g|g+8, 4t..4t+3 | +16), B (4t..4t+3 | +16, g);
//             e3m2/e2m3 in bits 5:0, e2m1 in bits 5:2 of its byte
//   m16n8k64  packed e2m1, 8 per register: A (g|g+8, 8t..8t+7 | +32), B (8t..8t+7 | +32, g)
//   C/D       c0..c3: (g, 2t) (g, 2t+1) (g+8, 2t) (g+8, 2t+1)
//   scales    SF_A of row m: lane 4 (m % 8) + 2 thread_id + m / 8; SF_B of column n:
//             lane 4n + thread_id; k-block j reads byte byte_id + j of that lane's data
// d may alias c.  All 32 lanes must reach each call, with the same selectors.
#pragma once

#include <cstdint>

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"  // the rest of rl::ptx (a no-op when rl/ptx.hpp includes this file)

#if defined(RL_EMULATE)
#include "rl/emu/arch.hpp"
#include "rl/emu/mma_sm120.hpp"
#define RL_PTX_SM120_FN inline
#else
#define RL_PTX_SM120_FN __device__ __forceinline__
#endif

#if defined(__CUDA_ARCH__) && \
    (defined(__CUDA_ARCH_FEAT_SM120_ALL) || defined(__CUDA_ARCH_FEAT_SM121_ALL))
#define RL_PTX_SM120A 1
#else
#define RL_PTX_SM120A 0
#endif

// Other GPU targets trap (the records that use these wrappers have min_cc 120).
#if defined(__CUDA_ARCH__)
#define RL_PTX_UNSUPPORTED_SM120() __trap()
#else
#define RL_PTX_UNSUPPORTED_SM120() ((void)0)
#endif

namespace rl::ptx {

// The A and B element types of kind::f8f6f4 and kind::mxf8f6f4.
enum class F8f6f4 { e4m3, e5m2, e3m2, e2m3, e2m1 };

// One scale operand of a block-scaled mma: this lane's 32-bit scale-data
// register and the warp-uniform selectors {byte-id, thread-id}.
struct ScaleOperand {
  std::uint32_t data;
  std::uint16_t byte_id;
  std::uint16_t thread_id;
};

// Whether the emulator runs sm_120a records: only in the emulated build with
// RL_EMU_CC=120 or 121.  Records that use these wrappers are gpu_only where
// it is false (the CUDA backend never reads gpu_only: there min_cc and max_cc
// decide).
inline bool emulator_runs_sm120a() {
#if defined(RL_EMULATE)
  return rl::emu::has_block_scaled_mma_sync();
#else
  return false;
#endif
}

#if defined(RL_EMULATE)
namespace emu_sm120 {

constexpr rl::emu::narrow::Format format_of(F8f6f4 t) {
  switch (t) {
    case F8f6f4::e4m3:
      return rl::emu::narrow::Format::e4m3;
    case F8f6f4::e5m2:
      return rl::emu::narrow::Format::e5m2;
    case F8f6f4::e3m2:
      return rl::emu::narrow::Format::e3m2;
    case F8f6f4::e2m3:
      return rl::emu::narrow::Format::e2m3;
    case F8f6f4::e2m1:
      return rl::emu::narrow::Format::e2m1;
  }
  return rl::emu::narrow::Format::e4m3;
}

inline rl::emu::sm120::ScaleOperand operand(ScaleOperand s) {
  return {s.data, {s.byte_id, s.thread_id}};
}

inline void block_scaled(const rl::emu::sm120::Mma& op, float (&d)[4], const std::uint32_t (&a)[4],
                         const std::uint32_t (&b)[2], const float (&c)[4], ScaleOperand scale_a,
                         ScaleOperand scale_b) {
  rl::emu::sm120::mma_block_scaled_sync(op, a, b, c, operand(scale_a), operand(scale_b), d);
}

}  // namespace emu_sm120
#endif  // RL_EMULATE

// The operand lists every wrapper below shares.
#define RL_PTX_SM120_OPERANDS "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13}"
#define RL_PTX_SM120_SCALES ", {%14}, {%15,%16}, {%17}, {%18,%19}"
#define RL_PTX_SM120_OUTPUTS "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
#define RL_PTX_SM120_INPUTS                                                               \
  "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), \
      "f"(c[2]), "f"(c[3])
#define RL_PTX_SM120_SCALE_INPUTS                                                     \
  "r"(scale_a.data), "h"(scale_a.byte_id), "h"(scale_a.thread_id), "r"(scale_b.data), \
      "h"(scale_b.byte_id), "h"(scale_b.thread_id)

// One asm statement per (A, B) type pair: PTX names the types in the opcode.
#define RL_PTX_SM120_PAIR(A_T, B_T, ASM) \
  if constexpr (A == F8f6f4::A_T && B == F8f6f4::B_T) ASM(#A_T, #B_T)
#define RL_PTX_SM120_ROW(A_T, ASM)        \
  RL_PTX_SM120_PAIR(A_T, e4m3, ASM);      \
  else RL_PTX_SM120_PAIR(A_T, e5m2, ASM); \
  else RL_PTX_SM120_PAIR(A_T, e3m2, ASM); \
  else RL_PTX_SM120_PAIR(A_T, e2m3, ASM); \
  else RL_PTX_SM120_PAIR(A_T, e2m1, ASM)
#define RL_PTX_SM120_EVERY_PAIR(ASM) \
  RL_PTX_SM120_ROW(e4m3, ASM);       \
  RL_PTX_SM120_ROW(e5m2, ASM);       \
  RL_PTX_SM120_ROW(e3m2, ASM);       \
  RL_PTX_SM120_ROW(e2m3, ASM);       \
  RL_PTX_SM120_ROW(e2m1, ASM)

#define RL_PTX_SM120_F8F6F4_ASM(A_NAME, B_NAME)                                        \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32." A_NAME "." B_NAME \
               ".f32 " RL_PTX_SM120_OPERANDS ";\n"                                     \
               : RL_PTX_SM120_OUTPUTS                                                  \
               : RL_PTX_SM120_INPUTS)
#define RL_PTX_SM120_MXF8F6F4_ASM(A_NAME, B_NAME)                                              \
  asm volatile(                                                                                \
      "mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32." A_NAME \
      "." B_NAME ".f32.ue8m0 " RL_PTX_SM120_OPERANDS RL_PTX_SM120_SCALES ";\n"                 \
      : RL_PTX_SM120_OUTPUTS                                                                   \
      : RL_PTX_SM120_INPUTS, RL_PTX_SM120_SCALE_INPUTS)

// mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.<A>.<B>.f32: D = A B + C.
template <F8f6f4 A, F8f6f4 B>
RL_PTX_SM120_FN void mma_m16n8k32_f8f6f4_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  rl::emu::sm120::mma_sync({rl::emu::sm120::Kind::f8f6f4, emu_sm120::format_of(A),
                            emu_sm120::format_of(B), rl::emu::narrow::Format::ue8m0, 0},
                           a, b, c, d);
#elif RL_PTX_SM120A
  RL_PTX_SM120_EVERY_PAIR(RL_PTX_SM120_F8F6F4_ASM);
#else
  (void)d, (void)a, (void)b, (void)c;
  RL_PTX_UNSUPPORTED_SM120();
#endif
}

// mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X
// .f32.<A>.<B>.f32.ue8m0: D = (A SF_A)(B SF_B) + C, one ue8m0 scale per row of
// A and per column of B (byte byte_id of the selected lane's data).
template <F8f6f4 A, F8f6f4 B>
RL_PTX_SM120_FN void mma_m16n8k32_mxf8f6f4_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                               const std::uint32_t (&b)[2], const float (&c)[4],
                                               ScaleOperand scale_a, ScaleOperand scale_b) {
#if defined(RL_EMULATE)
  emu_sm120::block_scaled({rl::emu::sm120::Kind::mxf8f6f4, emu_sm120::format_of(A),
                           emu_sm120::format_of(B), rl::emu::narrow::Format::ue8m0, 1},
                          d, a, b, c, scale_a, scale_b);
#elif RL_PTX_SM120A
  RL_PTX_SM120_EVERY_PAIR(RL_PTX_SM120_MXF8F6F4_ASM);
#else
  (void)d, (void)a, (void)b, (void)c, (void)scale_a, (void)scale_b;
  RL_PTX_UNSUPPORTED_SM120();
#endif
}

// The three m16n8k64 e2m1 forms: two scales per row / column (k 0-31, 32-63)
// from bytes byte_id, byte_id + 1 (byte_id 0 or 2) for scale_vec::2X, four
// (k in blocks of 16) from bytes 0-3 for scale_vec::4X.
#define RL_PTX_SM120_K64(NAME, KIND, VEC, SCALE_T, PTX_FORM)                                      \
  RL_PTX_SM120_FN void NAME(float(&d)[4], const std::uint32_t(&a)[4], const std::uint32_t(&b)[2], \
                            const float(&c)[4], ScaleOperand scale_a, ScaleOperand scale_b) {     \
    RL_PTX_SM120_K64_BODY(KIND, VEC, SCALE_T, PTX_FORM)                                           \
  }
#if defined(RL_EMULATE)
#define RL_PTX_SM120_K64_BODY(KIND, VEC, SCALE_T, PTX_FORM)                                       \
  emu_sm120::block_scaled({rl::emu::sm120::Kind::KIND, rl::emu::narrow::Format::e2m1,             \
                           rl::emu::narrow::Format::e2m1, rl::emu::narrow::Format::SCALE_T, VEC}, \
                          d, a, b, c, scale_a, scale_b);
#elif RL_PTX_SM120A
#define RL_PTX_SM120_K64_BODY(KIND, VEC, SCALE_T, PTX_FORM)                 \
  asm volatile(PTX_FORM " " RL_PTX_SM120_OPERANDS RL_PTX_SM120_SCALES ";\n" \
               : RL_PTX_SM120_OUTPUTS                                       \
               : RL_PTX_SM120_INPUTS, RL_PTX_SM120_SCALE_INPUTS);
#else
#define RL_PTX_SM120_K64_BODY(KIND, VEC, SCALE_T, PTX_FORM)         \
  (void)d, (void)a, (void)b, (void)c, (void)scale_a, (void)scale_b; \
  RL_PTX_UNSUPPORTED_SM120();
#endif

// kind::mxf4, scale_vec::2X, ue8m0 (MXFP4).
RL_PTX_SM120_K64(mma_m16n8k64_mxf4_f32, mxf4, 2, ue8m0,
                 "mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X"
                 ".f32.e2m1.e2m1.f32.ue8m0")
// kind::mxf4nvf4, scale_vec::2X, ue8m0 (MXFP4 through the NVFP4-capable kind).
RL_PTX_SM120_K64(mma_m16n8k64_mxf4nvf4_ue8m0_f32, mxf4nvf4, 2, ue8m0,
                 "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X"
                 ".f32.e2m1.e2m1.f32.ue8m0")
// kind::mxf4nvf4, scale_vec::4X, ue4m3 (NVFP4: 16-element blocks).
RL_PTX_SM120_K64(mma_m16n8k64_mxf4nvf4_ue4m3_f32, mxf4nvf4, 4, ue4m3,
                 "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X"
                 ".f32.e2m1.e2m1.f32.ue4m3")

}  // namespace rl::ptx

#undef RL_PTX_SM120_K64
#undef RL_PTX_SM120_K64_BODY
#undef RL_PTX_SM120_MXF8F6F4_ASM
#undef RL_PTX_SM120_F8F6F4_ASM
#undef RL_PTX_SM120_EVERY_PAIR
#undef RL_PTX_SM120_ROW
#undef RL_PTX_SM120_PAIR
#undef RL_PTX_SM120_SCALE_INPUTS
#undef RL_PTX_SM120_INPUTS
#undef RL_PTX_SM120_OUTPUTS
#undef RL_PTX_SM120_SCALES
#undef RL_PTX_SM120_OPERANDS
#undef RL_PTX_SM120_FN
#undef RL_PTX_UNSUPPORTED_SM120
