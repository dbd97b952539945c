// sm_120a / sm_121a mma.sync on the emulator (RTX 50, RTX PRO 6000, GB10): the
// .kind::f8f6f4 form with every FP8/FP6/FP4 input type and the block-scaled
// kinds (.kind::mxf8f6f4, .kind::mxf4, .kind::mxf4nvf4), behind the rl::ptx
// wrappers of rl/ptx_sm120.hpp.
//
// PTX ISA 9.1, section 9.7.14: "Multiply-and-Accumulate Instruction: mma"
// (the forms, and where the 6- and 4-bit values sit), "Block Scaling for
// mma.sync" (Tables 35-37: scale shapes, kinds, selectors), "Matrix Fragments
// for mma.m16n8k32" (8-bit containers) and "for mma.m16n8k64" (packed e2m1).
// Cross-checked with CUTLASS include/cute/arch/mma_sm120.hpp (the instruction
// strings) and include/cute/atom/mma_traits_sm120.hpp (SFALayout: lane
// 4g + 2 thread-id-a + h gives row g + 8h; SFBLayout: lane 4n + thread-id-b
// gives column n; e2m1 shifted left by 2 for kind::f8f6f4).
//
//   kind       shape     A/B elements              scale, vec        K per scale
//   f8f6f4     m16n8k32  e4m3 e5m2 e3m2 e2m3 e2m1  none              -
//   mxf8f6f4   m16n8k32  same                      ue8m0, 1X         32
//   mxf4       m16n8k64  e2m1                      ue8m0, 2X         32
//   mxf4nvf4   m16n8k64  e2m1                      ue8m0 2X / ue4m3 4X  32 / 16
//
// Registers (g = lane / 4, t = lane % 4), C/D as every m16n8 mma.sync:
//   K = 32: one element per byte, byte b of register r: A (g + 8 (r & 1),
//     4t + b + 16 (r >> 1)), B (4t + b + 16 r, g).  e4m3/e5m2 fill the byte,
//     e3m2/e2m3 its bits 5:0, e2m1 its bits 5:2; the padding bits are ignored.
//   K = 64: packed e2m1, nibble j of register r: A (g + 8 (r & 1),
//     8t + j + 32 (r >> 1)), B (8t + j + 32 r, g).
//   scales: each lane brings one 32-bit register of scale bytes and the
//     warp-uniform selectors {byte-id, thread-id}.  SF_A of row m comes from
//     lane 4 (m % 8) + 2 thread-id-a + m / 8, SF_B of column n from lane
//     4n + thread-id-b; block j (K / vec elements each) uses byte byte-id + j.
//
// Numerics as every emulated mma.sync (ptx-emulation-reference.md section 1):
// each product (A SF_A)(B SF_B) is exact in double, the K products are added
// to C in double in k order, and the sum is rounded once to fp32 (a NaN
// result is the canonical NaN).
#pragma once

#include <cstdint>
#include <string>

#include "rl/emu/narrow_float.hpp"
#include "rl/emu/ptx_warp.hpp"

namespace rl::emu::sm120 {

using narrow::Format;
using ptx::kWarpLanes;
using ptx::MmaA;
using ptx::MmaB;
using ptx::MmaCF32;

// The .kind qualifier.
enum class Kind { f8f6f4, mxf8f6f4, mxf4, mxf4nvf4 };

// One instruction: its kind, the A and B element types and, for the
// block-scaled kinds, the scale type (ue8m0 or ue4m3) and .scale_vec (1, 2 or
// 4; 0 for f8f6f4).
struct Mma {
  Kind kind = Kind::f8f6f4;
  Format a = Format::e4m3;
  Format b = Format::e4m3;
  Format scale = Format::ue8m0;
  int scale_vec = 0;
  bool operator==(const Mma&) const = default;
};

constexpr bool block_scaled(Kind kind) {
  return kind != Kind::f8f6f4;
}
// K of one instruction: 64 for the packed-e2m1 kinds, 32 for the others.
constexpr unsigned k_of(Kind kind) {
  return kind == Kind::mxf4 || kind == Kind::mxf4nvf4 ? 64U : 32U;
}

// The PTX spelling, e.g. "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.
// block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3".
std::string instruction_name(const Mma& op);
// Why PTX has no such instruction (Table 36 and the kinds' element types), or
// nullptr when it has.
const char* invalid_reason(const Mma& op);

// {byte-id, thread-id} of one scale operand (Table 37).
struct ScaleSelector {
  std::uint16_t byte_id = 0;
  std::uint16_t thread_id = 0;
  bool operator==(const ScaleSelector&) const = default;
};
// Why the selectors are outside Table 37 for op's .scale_vec, or nullptr.
const char* invalid_selectors(const Mma& op, ScaleSelector a, ScaleSelector b);

using ScaleRegs = std::uint32_t[kWarpLanes];

// What the instruction reads, decoded (its fragment and scale layouts above).
double a_value(const Mma& op, const MmaA& a, unsigned m, unsigned k);
double b_value(const Mma& op, const MmaB& b, unsigned k, unsigned n);
// SF_A of row m and SF_B of column n for k-block `block` (K / scale_vec wide).
double scale_a_value(const Mma& op, const ScaleRegs& regs, ScaleSelector sel, unsigned m,
                     unsigned block);
double scale_b_value(const Mma& op, const ScaleRegs& regs, ScaleSelector sel, unsigned n,
                     unsigned block);

// The whole warp's D.  Both stop the process with one line when op (or the
// selectors) name no PTX instruction.  d may alias c.
void mma_warp(const Mma& op, const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d);
void mma_block_scaled_warp(const Mma& op, const MmaA& a, const MmaB& b, const MmaCF32& c,
                           const ScaleRegs& scale_a, ScaleSelector sel_a, const ScaleRegs& scale_b,
                           ScaleSelector sel_b, MmaCF32& d);

// --- what the runtime executes (rl::emu: needs the scheduler) -----------------

// One lane's scale operand: its scale-data register and the selectors.
struct ScaleOperand {
  std::uint32_t data = 0;
  ScaleSelector selector{};
};

// One full-warp rendezvous per instruction, as rl/emu/ptx_warp.hpp's
// mma_f32_sync.  Refused unless the emulated device has these instructions
// (rl::emu::has_block_scaled_mma_sync(): RL_EMU_CC=120 or 121): one line naming
// the instruction, the emulated compute capability and the kernel, block and
// thread, then the process stops, as a kernel built without sm_120a code
// cannot run the instruction.  Lanes that disagree on the instruction or the
// selectors stop the process the same way (PTX: undefined).
void mma_sync(const Mma& op, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
              const float (&c)[4], float (&d)[4]);
void mma_block_scaled_sync(const Mma& op, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                           const float (&c)[4], ScaleOperand scale_a, ScaleOperand scale_b,
                           float (&d)[4]);

}  // namespace rl::emu::sm120
