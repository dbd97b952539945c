// Datacenter Blackwell (sm_100a / sm_103a) tensor-core MMA for device code:
// tcgen05.mma.cta_group::1 of every kind, and the host-and-device encoders of
// its two descriptors.  Tensor memory itself (alloc, ld/st, cp, commit) is in
// rl/ptx_sm100_tmem.hpp.
//
// On the GPU each wrapper is inline PTX that exists only in sm_100a / sm_103a
// code (__CUDA_ARCH_FEAT_SM100_ALL / __CUDA_ARCH_FEAT_SM103_ALL: the "a"
// features are not forward compatible); other GPU targets trap.  Under the
// emulator each wrapper calls rl::emu::tcgen05::mma (rl/emu/tcgen05_mma.hpp),
// which stops the launch unless the emulated device has tcgen05
// (RL_EMU_CC=100 or 103).
//
// tcgen05.mma is issued by ONE thread; it is asynchronous: it joins the
// issuing thread's queue and completes (on the emulator: is performed) at that
// thread's tcgen05.commit, whose mbarrier then arrives.  D lives in tensor
// memory (d_tmem: lane << 16 | column); A comes from shared memory (a
// descriptor) or tensor memory (a_tmem); B from shared memory.
// accumulate = false computes D = A*B (the enable-input-d predicate).
//
// PTX ISA 9.7.16.10.9.1 "tcgen05.mma"; the descriptors' layouts are
// 9.7.16.4.1 (Table 40) and 9.7.16.4.2 (Tables 42-44), as decoded in
// emu/src/tcgen05_mma_*.cpp (rl/emu/tcgen05_mma.hpp describes the model).
#pragma once

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/tcgen05_mma.hpp"
#endif

// Shared with rl/ptx_sm100_tmem.hpp (whichever is included first defines them).
#if !defined(RL_PTX_SM100_FN)
#if defined(RL_EMULATE)
#define RL_PTX_SM100_FN inline
#else
#define RL_PTX_SM100_FN __device__ __forceinline__
#endif
#endif

#if !defined(RL_PTX_SM100A)
#if defined(__CUDA_ARCH__) && \
    (defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL))
#define RL_PTX_SM100A 1
#else
#define RL_PTX_SM100A 0
#endif
#endif

namespace rl::ptx {

// Whether the emulator runs tcgen05 records: only in the emulated build with
// RL_EMU_CC=100 or 103.  The records' gpu_only is its negation (the CUDA
// backend never reads gpu_only: there the device's compute capability decides).
inline bool emulator_runs_tcgen05() {
#if defined(RL_EMULATE)
  return rl::emu::has_tcgen05();
#else
  return false;
#endif
}

// ---------------------------------------------------------------------------
// Shared-memory descriptor (Table 40): 64 bits.
//   bits  0-13  start address >> 4 (18-bit shared-window address)
//   bits 16-29  leading dimension byte offset >> 4 (K-major swizzled: unused, 1)
//   bits 32-45  stride dimension byte offset >> 4 (K-major: between 8-row groups)
//   bits 46-48  the constant 0b001 (descriptor version: wgmma's has none)
//   bits 49-51  base offset (0: the swizzle pattern starts on its repeat)
//   bit  52     leading dimension mode (0 relative; 1 absolute, sm_103a)
//   bits 61-63  swizzle: 0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B
// ---------------------------------------------------------------------------
enum class Tcgen05Swizzle : std::uint32_t { none = 0, b128_atom32 = 1, b128 = 2, b64 = 4, b32 = 6 };

__host__ __device__ constexpr std::uint64_t tcgen05_smem_descriptor(
    std::uint32_t shared_address, std::uint32_t leading_byte_offset,
    std::uint32_t stride_byte_offset, Tcgen05Swizzle swizzle) {
  return std::uint64_t{(shared_address & 0x3FFFFu) >> 4} |
         (std::uint64_t{(leading_byte_offset & 0x3FFFFu) >> 4} << 16) |
         (std::uint64_t{(stride_byte_offset & 0x3FFFFu) >> 4} << 32) | (std::uint64_t{1} << 46) |
         (std::uint64_t{static_cast<std::uint32_t>(swizzle)} << 61);
}

// ---------------------------------------------------------------------------
// Instruction descriptors (32 bits).  Table 42 (kind::f16, tf32, f8f6f4, i8):
//   bit 3 saturate (i8); 4-5 D type (F16 0, F32 1, S32 2); 7-9 A type;
//   10-12 B type; 13/14 negate A/B; 15/16 transpose A/B (MN-major);
//   17-22 N >> 3; 24-28 M >> 4.
// Tables 43/44 (block-scaled kinds): 4-5 scale-factor B id; 7-9 A type;
// 10-12 B type (10-11 for mxf4*); 13/14 negate; 15/16 transpose;
// 17-22 N >> 3; 23 scale type (UE4M3 0, UE8M0 1); 27-28 M >> 7;
// 29-30 scale-factor A id.
// ---------------------------------------------------------------------------
enum class Tcgen05F16Type : std::uint32_t { f16 = 0, bf16 = 1 };
enum class Tcgen05F8F6F4Type : std::uint32_t { e4m3 = 0, e5m2 = 1, e2m3 = 3, e3m2 = 4, e2m1 = 5 };
enum class Tcgen05I8Type : std::uint32_t { u8 = 0, s8 = 1 };

namespace tcgen05_detail {
__host__ __device__ constexpr std::uint32_t shape_and_types(std::uint32_t atype,
                                                            std::uint32_t btype, unsigned n,
                                                            bool a_mn_major, bool b_mn_major) {
  return (atype << 7) | (btype << 10) | (std::uint32_t{a_mn_major} << 15) |
         (std::uint32_t{b_mn_major} << 16) | ((n >> 3) << 17);
}
}  // namespace tcgen05_detail

// kind::f16: f16 or bf16 A and B, f32 D (or f16 D with f16 inputs).
__host__ __device__ constexpr std::uint32_t tcgen05_idesc_f16(Tcgen05F16Type type, unsigned m,
                                                              unsigned n, bool a_mn_major = false,
                                                              bool b_mn_major = false,
                                                              bool f16_accumulator = false) {
  const auto t = static_cast<std::uint32_t>(type);
  return (std::uint32_t{f16_accumulator ? 0u : 1u} << 4) |
         tcgen05_detail::shape_and_types(t, t, n, a_mn_major, b_mn_major) | ((m >> 4) << 24);
}
// kind::tf32: tf32 A and B (32-bit containers), f32 D.
__host__ __device__ constexpr std::uint32_t tcgen05_idesc_tf32(unsigned m, unsigned n) {
  return (1u << 4) | tcgen05_detail::shape_and_types(2, 2, n, false, false) | ((m >> 4) << 24);
}
// kind::f8f6f4: any pair of e4m3 / e5m2 / e2m3 / e3m2 / e2m1, f32 D.
__host__ __device__ constexpr std::uint32_t tcgen05_idesc_f8f6f4(Tcgen05F8F6F4Type a,
                                                                 Tcgen05F8F6F4Type b, unsigned m,
                                                                 unsigned n,
                                                                 bool a_mn_major = false,
                                                                 bool b_mn_major = false) {
  return (1u << 4) |
         tcgen05_detail::shape_and_types(static_cast<std::uint32_t>(a),
                                         static_cast<std::uint32_t>(b), n, a_mn_major, b_mn_major) |
         ((m >> 4) << 24);
}
// kind::i8: u8 / s8 A and B, s32 D (wrapping; saturate clamps instead).
__host__ __device__ constexpr std::uint32_t tcgen05_idesc_i8(Tcgen05I8Type a, Tcgen05I8Type b,
                                                             unsigned m, unsigned n,
                                                             bool saturate = false) {
  return (std::uint32_t{saturate} << 3) | (2u << 4) |
         tcgen05_detail::shape_and_types(static_cast<std::uint32_t>(a),
                                         static_cast<std::uint32_t>(b), n, false, false) |
         ((m >> 4) << 24);
}
// kind::mxf8f6f4 (M = 128, UE8M0 scales): sfa_id / sfb_id pick the byte of
// the scale-factor word (0-3).
__host__ __device__ constexpr std::uint32_t tcgen05_idesc_mxf8f6f4(Tcgen05F8F6F4Type a,
                                                                   Tcgen05F8F6F4Type b, unsigned n,
                                                                   unsigned sfa_id = 0,
                                                                   unsigned sfb_id = 0) {
  return (sfb_id << 4) |
         tcgen05_detail::shape_and_types(static_cast<std::uint32_t>(a),
                                         static_cast<std::uint32_t>(b), n, false, false) |
         (1u << 23) | (1u << 27) | (sfa_id << 29);
}
// kind::mxf4 / kind::mxf4nvf4 (M = 128, e2m1 A and B): UE8M0 scales
// (ue8m0 = true) or UE4M3 (mxf4nvf4 with scale_vec::4X); ids 0 or 2 (2X), 0 (4X).
__host__ __device__ constexpr std::uint32_t tcgen05_idesc_mxf4(unsigned n, bool ue8m0,
                                                               unsigned sfa_id = 0,
                                                               unsigned sfb_id = 0) {
  return (sfb_id << 4) | tcgen05_detail::shape_and_types(1, 1, n, false, false) |
         (std::uint32_t{ue8m0} << 23) | (1u << 27) | (sfa_id << 29);
}

// ---------------------------------------------------------------------------
// The instructions
// ---------------------------------------------------------------------------
enum class Tcgen05Kind { f16, tf32, f8f6f4, i8 };
// The block-scaled kinds with their scale vector (Table 57).
enum class Tcgen05ScaledKind { mxf8f6f4_1x, mxf4_2x, mxf4nvf4_2x, mxf4nvf4_4x };

#if defined(RL_EMULATE)
namespace tcgen05_detail {
inline rl::emu::tcgen05::Kind emu_kind(Tcgen05Kind k) {
  using K = rl::emu::tcgen05::Kind;
  return k == Tcgen05Kind::f16      ? K::f16
         : k == Tcgen05Kind::tf32   ? K::tf32
         : k == Tcgen05Kind::f8f6f4 ? K::f8f6f4
                                    : K::i8;
}
inline rl::emu::tcgen05::MmaOp emu_scaled(Tcgen05ScaledKind k) {
  using K = rl::emu::tcgen05::Kind;
  using V = rl::emu::tcgen05::ScaleVec;
  rl::emu::tcgen05::MmaOp op;
  op.kind = k == Tcgen05ScaledKind::mxf8f6f4_1x ? K::mxf8f6f4
            : k == Tcgen05ScaledKind::mxf4_2x   ? K::mxf4
                                                : K::mxf4nvf4;
  op.scale_vec = k == Tcgen05ScaledKind::mxf8f6f4_1x   ? V::x1
                 : k == Tcgen05ScaledKind::mxf4nvf4_4x ? V::x4
                                                       : V::x2;
  return op;
}
// Fills in the operands and issues: A from a descriptor, or from tensor
// memory when a_tmem is given.
inline void emulate(rl::emu::tcgen05::MmaOp op, std::uint32_t d_tmem, std::uint64_t a_desc,
                    const std::uint32_t* a_tmem, std::uint64_t b_desc, std::uint32_t idesc,
                    bool accumulate, std::uint32_t sfa_tmem = 0, std::uint32_t sfb_tmem = 0) {
  op.d_tmem = d_tmem;
  op.a_from_tmem = a_tmem != nullptr;
  op.a_desc = a_desc;
  op.a_tmem = a_tmem != nullptr ? *a_tmem : 0;
  op.b_desc = b_desc;
  op.idesc = idesc;
  op.enable_input_d = accumulate;
  op.sfa_tmem = sfa_tmem;
  op.sfb_tmem = sfb_tmem;
  rl::emu::tcgen05::mma(op);
}
inline rl::emu::tcgen05::MmaOp emu_plain(Tcgen05Kind k) {
  rl::emu::tcgen05::MmaOp op;
  op.kind = emu_kind(k);
  return op;
}
}  // namespace tcgen05_detail
#endif

// The PTX of the plain kinds, A from a descriptor ("%1") or tensor memory ("[%1]").
#define RL_PTX_TCGEN05_MMA(kind, a)                                                         \
  asm volatile(                                                                             \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                           \
      "tcgen05.mma.cta_group::1.kind::" kind " [%0], " a ", %2, %3, p;\n}\n" ::"r"(d_tmem), \
      A_OPERAND, "l"(b_desc), "r"(idesc), "r"(static_cast<std::uint32_t>(accumulate)))

// kind::i8 exists on sm_100a but not on sm_103a (ptxas: "Feature '.kind::i8'
// not supported on .target 'sm_103a'"): there it traps.
#if defined(__CUDA_ARCH_FEAT_SM103_ALL)
#define RL_PTX_TCGEN05_I8(a) __trap()
#else
#define RL_PTX_TCGEN05_I8(a) RL_PTX_TCGEN05_MMA("i8", a)
#endif

// tcgen05.mma.cta_group::1.kind::<Kind> [d_tmem], a_desc, b_desc, idesc, enable-input-d
template <Tcgen05Kind Kind>
RL_PTX_SM100_FN void tcgen05_mma([[maybe_unused]] std::uint32_t d_tmem,
                                 [[maybe_unused]] std::uint64_t a_desc,
                                 [[maybe_unused]] std::uint64_t b_desc,
                                 [[maybe_unused]] std::uint32_t idesc,
                                 [[maybe_unused]] bool accumulate) {
#if defined(RL_EMULATE)
  tcgen05_detail::emulate(tcgen05_detail::emu_plain(Kind), d_tmem, a_desc, nullptr, b_desc, idesc,
                          accumulate);
#elif RL_PTX_SM100A
#define A_OPERAND "l"(a_desc)
  if constexpr (Kind == Tcgen05Kind::f16)
    RL_PTX_TCGEN05_MMA("f16", "%1");
  else if constexpr (Kind == Tcgen05Kind::tf32)
    RL_PTX_TCGEN05_MMA("tf32", "%1");
  else if constexpr (Kind == Tcgen05Kind::f8f6f4)
    RL_PTX_TCGEN05_MMA("f8f6f4", "%1");
  else
    RL_PTX_TCGEN05_I8("%1");
#undef A_OPERAND
#elif defined(__CUDA_ARCH__)
  __trap();  // not sm_100a / sm_103a: a registry bug (records say min_cc)
#endif
}

// tcgen05.mma.cta_group::1.kind::<Kind> [d_tmem], [a_tmem], b_desc, idesc, enable-input-d:
// A (M x K, K-major) in tensor memory, in the same lanes as D, K packed from
// the low bits of each cell (8 columns for every kind).
template <Tcgen05Kind Kind>
RL_PTX_SM100_FN void tcgen05_mma_tmem_a([[maybe_unused]] std::uint32_t d_tmem,
                                        [[maybe_unused]] std::uint32_t a_tmem,
                                        [[maybe_unused]] std::uint64_t b_desc,
                                        [[maybe_unused]] std::uint32_t idesc,
                                        [[maybe_unused]] bool accumulate) {
#if defined(RL_EMULATE)
  tcgen05_detail::emulate(tcgen05_detail::emu_plain(Kind), d_tmem, 0, &a_tmem, b_desc, idesc,
                          accumulate);
#elif RL_PTX_SM100A
#define A_OPERAND "r"(a_tmem)
  if constexpr (Kind == Tcgen05Kind::f16)
    RL_PTX_TCGEN05_MMA("f16", "[%1]");
  else if constexpr (Kind == Tcgen05Kind::tf32)
    RL_PTX_TCGEN05_MMA("tf32", "[%1]");
  else if constexpr (Kind == Tcgen05Kind::f8f6f4)
    RL_PTX_TCGEN05_MMA("f8f6f4", "[%1]");
  else
    RL_PTX_TCGEN05_I8("[%1]");
#undef A_OPERAND
#elif defined(__CUDA_ARCH__)
  __trap();  // not sm_100a / sm_103a: a registry bug (records say min_cc)
#endif
}
#undef RL_PTX_TCGEN05_MMA
#undef RL_PTX_TCGEN05_I8

// The PTX of the block-scaled kinds.
#define RL_PTX_TCGEN05_MMA_SCALED(kind, a)                              \
  asm volatile(                                                         \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                       \
      "tcgen05.mma.cta_group::1.kind::" kind " [%0], " a                \
      ", %2, %3, [%4], [%5], p;\n}\n" ::"r"(d_tmem),                    \
      A_OPERAND, "l"(b_desc), "r"(idesc), "r"(sfa_tmem), "r"(sfb_tmem), \
      "r"(static_cast<std::uint32_t>(accumulate)))
#define RL_PTX_TCGEN05_SCALED_KINDS(a)                                  \
  if constexpr (Kind == Tcgen05ScaledKind::mxf8f6f4_1x)                 \
    RL_PTX_TCGEN05_MMA_SCALED("mxf8f6f4.block_scale.scale_vec::1X", a); \
  else if constexpr (Kind == Tcgen05ScaledKind::mxf4_2x)                \
    RL_PTX_TCGEN05_MMA_SCALED("mxf4.block_scale.scale_vec::2X", a);     \
  else if constexpr (Kind == Tcgen05ScaledKind::mxf4nvf4_2x)            \
    RL_PTX_TCGEN05_MMA_SCALED("mxf4nvf4.block_scale.scale_vec::2X", a); \
  else                                                                  \
    RL_PTX_TCGEN05_MMA_SCALED("mxf4nvf4.block_scale.scale_vec::4X", a)

// tcgen05.mma.cta_group::1.kind::<mx kind>.block_scale.scale_vec::<V>
//   [d_tmem], a_desc, b_desc, idesc, [sfa_tmem], [sfb_tmem], enable-input-d
// D = (A * scale_A) * (B * scale_B) + D: row m's scales in lane m, column
// sfa + m/32; column n's in column sfb + n/32, lane n % 32 of every lane
// quarter (replicated, as tcgen05.cp .32x128b.warpx4 writes them); the
// descriptor's scale-factor ids pick the byte(s) of each 32-bit cell.
template <Tcgen05ScaledKind Kind>
RL_PTX_SM100_FN void tcgen05_mma_block_scaled([[maybe_unused]] std::uint32_t d_tmem,
                                              [[maybe_unused]] std::uint64_t a_desc,
                                              [[maybe_unused]] std::uint64_t b_desc,
                                              [[maybe_unused]] std::uint32_t idesc,
                                              [[maybe_unused]] std::uint32_t sfa_tmem,
                                              [[maybe_unused]] std::uint32_t sfb_tmem,
                                              [[maybe_unused]] bool accumulate) {
#if defined(RL_EMULATE)
  tcgen05_detail::emulate(tcgen05_detail::emu_scaled(Kind), d_tmem, a_desc, nullptr, b_desc, idesc,
                          accumulate, sfa_tmem, sfb_tmem);
#elif RL_PTX_SM100A
#define A_OPERAND "l"(a_desc)
  RL_PTX_TCGEN05_SCALED_KINDS("%1");
#undef A_OPERAND
#elif defined(__CUDA_ARCH__)
  __trap();  // not sm_100a / sm_103a: a registry bug (records say min_cc)
#endif
}

// The same with A in tensor memory.
template <Tcgen05ScaledKind Kind>
RL_PTX_SM100_FN void tcgen05_mma_block_scaled_tmem_a([[maybe_unused]] std::uint32_t d_tmem,
                                                     [[maybe_unused]] std::uint32_t a_tmem,
                                                     [[maybe_unused]] std::uint64_t b_desc,
                                                     [[maybe_unused]] std::uint32_t idesc,
                                                     [[maybe_unused]] std::uint32_t sfa_tmem,
                                                     [[maybe_unused]] std::uint32_t sfb_tmem,
                                                     [[maybe_unused]] bool accumulate) {
#if defined(RL_EMULATE)
  tcgen05_detail::emulate(tcgen05_detail::emu_scaled(Kind), d_tmem, 0, &a_tmem, b_desc, idesc,
                          accumulate, sfa_tmem, sfb_tmem);
#elif RL_PTX_SM100A
#define A_OPERAND "r"(a_tmem)
  RL_PTX_TCGEN05_SCALED_KINDS("[%1]");
#undef A_OPERAND
#elif defined(__CUDA_ARCH__)
  __trap();  // not sm_100a / sm_103a: a registry bug (records say min_cc)
#endif
}
#undef RL_PTX_TCGEN05_SCALED_KINDS
#undef RL_PTX_TCGEN05_MMA_SCALED

}  // namespace rl::ptx
