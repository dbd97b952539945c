// tcgen05.mma on the emulator (sm_100a / sm_103a): the instruction and
// shared-memory descriptors decoded as the PTX ISA lays them out, every
// cta_group::1 kind (f16, tf32, f8f6f4, i8 and the block-scaled mxf8f6f4,
// mxf4, mxf4nvf4), A from shared memory or tensor memory, D in tensor memory.
//
// PTX ISA (9.1) section 9.7.16 "TensorCore 5th Generation Family
// Instructions": 9.7.16.4.1 "Shared memory descriptor" (Table 40),
// 9.7.16.4.2 "Instruction descriptor" (Tables 42-44), 9.7.16.2.1 "Matrix
// Shape" (Table 39), 9.7.16.3 "Major-ness supported by Strides" (canonical
// layouts), 9.7.16.10.4 "Packing formats", 9.7.16.10.5 "Data Path Layout
// Organization", 9.7.16.10.7 "Block Scaling".  Cross-checked against CUTLASS
// include/cute/arch/mma_sm100_desc.hpp (SmemDescriptor, InstrDescriptor,
// InstrDescriptorBlockScaled) and include/cute/atom/mma_traits_sm100_frag.hpp
// (tmem_frg: the M = 64 half-subpartition layout; tmem_sf_frg: the scale
// factors' layout).  Where the ISA shows only a figure (sub-byte containers,
// scale-factor replicas) the choice and its source are in emu/src/tcgen05_mma.cpp.
//
// Numerics as mma.sync in the reference (ptx-emulation-reference.md): every
// product exact (scale factors included) and summed in double in k order
// after D, then rounded once to the type of D; i8 sums exact in int32,
// wrapping modulo 2^32 (or clamped with the descriptor's saturate bit).
//
// Anything a descriptor makes invalid throws std::invalid_argument naming the
// descriptor, the field (with its bits) and the value; inside a kernel that
// becomes the block's failure ("kernel K, block (x,y,z): ...").
#pragma once

#include <cstdint>
#include <functional>

#include "rl/emu/tcgen05.hpp"

namespace rl::emu::tcgen05 {

// The .kind qualifier.
enum class Kind { f16, tf32, f8f6f4, i8, mxf8f6f4, mxf4, mxf4nvf4 };
// The .scale_vec qualifier of the block-scaled kinds (none for the others).
enum class ScaleVec { none, x1, x2, x4 };
// What an element of A or B is (the descriptor's atype / btype read by kind).
enum class Element { f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, u8, s8 };
// What an element of D is.
enum class Accumulator { f16, f32, s32 };

const char* kind_name(Kind kind);  // "kind::f16", ...
const char* element_name(Element e);
bool block_scaled(Kind kind);
// K of one instruction (dense): f16 16, tf32 8, f8f6f4 / i8 / mxf8f6f4 32,
// mxf4 / mxf4nvf4 64.
unsigned k_of(Kind kind);

// ---- shared memory descriptor (Table 40) -------------------------------------
struct SmemDescriptor {
  std::uint32_t start;        // window byte address, bits 0-13 << 4
  std::uint32_t lbo;          // leading dimension byte offset, bits 16-29 << 4
  std::uint32_t sbo;          // stride dimension byte offset, bits 32-45 << 4
  std::uint32_t base_offset;  // bits 49-51
  bool lbo_absolute;          // bit 52: leading dimension as an absolute address (sm_103a)
  unsigned swizzle_bytes;     // bits 61-63: 0 (none), 32, 64 or 128
  bool swizzle_atom_32b;      // mode 1: 128B swizzle with 32-byte atomicity
};
// (The encoders are rl::ptx::tcgen05_smem_descriptor and tcgen05_idesc_*.)
// Decodes and checks the fixed fields: bits 46-48 must hold 0b001 (the
// version), bits 53-60 must be 0, the swizzle mode one of 0, 1, 2, 4, 6.
// `which` names the operand in the message ("a-desc", "b-desc").
SmemDescriptor decode_smem_descriptor(std::uint64_t desc, const char* which);

// The window byte address of element (mn, k) of an operand (mn: the row of A
// or the column of B) whose elements take `bits` bits of K-space (16 for
// f16, 8 for the 8-bit and padded 6/4-bit types, 4 for packed e2m1), K-major
// or MN-major, in the canonical layouts of 9.7.16.3.3, swizzle applied last
// to the absolute address.  For 4-bit elements the address is the byte that
// holds element k (the low nibble holds the even k).  Throws for what is not
// emulated (base offset, 32-byte swizzle atomicity, absolute LBO mode).
std::uint32_t operand_address(const SmemDescriptor& d, bool mn_major, unsigned bits, unsigned mn,
                              unsigned k);

// ---- instruction descriptor (Tables 42-44) -----------------------------------
struct InstrDescriptor {
  unsigned m, n;
  Element a, b;
  Accumulator d;
  bool negate_a, negate_b;
  bool a_mn_major, b_mn_major;  // the transpose bits
  bool saturate;                // i8 only
  unsigned sfa_id, sfb_id;      // block-scaled kinds: the byte of the scale-factor word
  bool scale_ue8m0;             // block-scaled kinds: scale type UE8M0 (else UE4M3)
};
// Decodes an instruction descriptor of `kind` and checks it against the ISA:
// every reserved bit zero, dense only, the types the kind allows, M and N of
// Table 39 for cta_group::1, transposes the kind and types allow (Table 51,
// 54), the scale type and ids the scale vector allows (Tables 44, 57).
InstrDescriptor decode_instr_descriptor(Kind kind, ScaleVec scale_vec, std::uint32_t idesc);

// ---- where things live in tensor memory --------------------------------------
// The lane of row m of D (and of A in tensor memory) for an M-row MMA whose
// tensor-memory address has lane field `lane0` (Data Path Layout
// Organization: M = 128 is layout D, row m in lane m; M = 64 is layout F,
// half of each 32-lane subpartition, rows 16p .. 16p + 15 in lanes
// 32p + lane0 .. 32p + lane0 + 15, lane0 0 or 16).
unsigned row_lane(unsigned m_rows, unsigned lane0, unsigned row);

// ---- the operation -------------------------------------------------------------
struct MmaOp {
  Kind kind = Kind::f16;
  ScaleVec scale_vec = ScaleVec::none;
  std::uint32_t d_tmem = 0;
  bool a_from_tmem = false;
  std::uint64_t a_desc = 0;  // A in shared memory
  std::uint32_t a_tmem = 0;  // A in tensor memory
  std::uint64_t b_desc = 0;
  std::uint32_t idesc = 0;
  bool enable_input_d = false;               // false: D = A*B, the old D ignored
  std::uint32_t sfa_tmem = 0, sfb_tmem = 0;  // block-scaled kinds
};

// The tensor-memory rectangles an MMA touches: D (written), A when it comes
// from tensor memory, the scale factors (all 128 lanes: they are replicated
// to the four lane quarters).  lanes = 0 when the operand is not there.
struct MmaRanges {
  TmemRange d, a, sfa, sfb;
};
MmaRanges ranges(const MmaOp& op, const InstrDescriptor& id);

// What an MMA reads and writes, so the arithmetic is independent of the
// tensor memory's bookkeeping (tests pass plain arrays).
struct Memory {
  // The cells of a range: cell (l, c) at result[(l - lane0) * kColumns + c - column0].
  std::function<std::uint32_t*(TmemRange range)> tmem;
  // The byte at a shared-window address.
  std::function<unsigned char(std::uint32_t window_address)> read_smem;
};

// Checks everything an issue can check (both descriptors, the shape, the
// tensor-memory addresses): throws std::invalid_argument as above.
InstrDescriptor check(const MmaOp& op);
// Performs the MMA: reads A, B (and the scale factors) and D, writes D.
void perform(const MmaOp& op, const Memory& memory);

// The instruction as a thread issues it (rl/ptx_sm100_mma.hpp): refused
// unless the emulated device has tcgen05; checked at issue; queued with the
// thread's other asynchronous tcgen05 operations and performed at its next
// tcgen05.commit (rl/emu/tcgen05.hpp), reading its operands then.
void mma(const MmaOp& op);

}  // namespace rl::emu::tcgen05
