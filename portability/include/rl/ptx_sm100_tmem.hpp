// Datacenter Blackwell (sm_100a / sm_103a) tensor memory for device code:
// tcgen05.alloc / dealloc / relinquish_alloc_permit, tcgen05.ld / st and
// their waits, tcgen05.cp (shared -> tensor memory), tcgen05.commit to an
// mbarrier and the tcgen05 fences, all .cta_group::1.  tcgen05.mma is in
// rl/ptx_sm100_mma.hpp.
//
// On the GPU each wrapper is inline PTX that exists only in sm_100a / sm_103a
// code (__CUDA_ARCH_FEAT_SM100_ALL / __CUDA_ARCH_FEAT_SM103_ALL: the "a"
// features are not forward compatible); other GPU targets trap.  Under the
// emulator each wrapper calls rl/emu/tcgen05.hpp, which stops the launch
// unless the emulated device has tcgen05 (RL_EMU_CC=100 or 103): "tcgen05.alloc
// needs sm_100a/sm_103a: run with RL_EMU_CC=100".
//
// Tensor memory: 128 lanes x 512 columns of 32-bit cells per CTA, addressed
// lane << 16 | column.  One warp allocates (a power of two of columns, 32 ..
// 512), the same warp frees before the kernel ends.  Warp w of a warpgroup
// reaches lanes 32 (w%4) .. 32 (w%4) + 31 with ld / st.  cp (and tcgen05.mma)
// are asynchronous: they complete at the issuing thread's tcgen05.commit,
// whose mbarrier then arrives; wait on it (and fence::after_thread_sync)
// before reading what they wrote.  CTA pairs (.cta_group::2) have no wrapper:
// they need clusters, which the emulator does not have.
//
// PTX ISA 9.7.16 "TensorCore 5th Generation Family Instructions": 9.7.16.7.1
// (alloc, dealloc, relinquish_alloc_permit), 9.7.16.8.3-5 (ld, st, wait),
// 9.7.16.9.2 (cp), 9.7.16.11.1 (fence), 9.7.16.12.1 (commit); the emulation
// and the fragment layouts are described in emu/docs/blackwell.md.
#pragma once

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/tcgen05.hpp"
#endif

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

// ---- allocation -------------------------------------------------------------

// tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], ncols: the
// whole warp, the same operands; writes the allocation's address (lane 0,
// its first column) to *dst in shared memory.
RL_PTX_SM100_FN void tmem_alloc([[maybe_unused]] std::uint32_t* dst,
                                [[maybe_unused]] std::uint32_t ncols) {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::alloc(dst, ncols);
#elif RL_PTX_SM100A
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(
                   static_cast<std::uint32_t>(__cvta_generic_to_shared(dst))),
               "r"(ncols)
               : "memory");
#else
  __trap();
#endif
}

// tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols: the warp that allocated.
RL_PTX_SM100_FN void tmem_dealloc([[maybe_unused]] std::uint32_t taddr,
                                  [[maybe_unused]] std::uint32_t ncols) {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::dealloc(taddr, ncols);
#elif RL_PTX_SM100A
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(taddr), "r"(ncols)
               : "memory");
#else
  __trap();
#endif
}

// tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned: this CTA allocates no more.
RL_PTX_SM100_FN void tmem_relinquish_alloc_permit() {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::relinquish_alloc_permit();
#elif RL_PTX_SM100A
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}

// ---- tcgen05.ld / tcgen05.st --------------------------------------------------
// Shapes (lanes x bits per repetition) in the order of rl::emu::tcgen05::Shape.
// Thread t of the warp holds, in register r (offsets from taddr):
//   s32x32b   lane t,                  column r
//   s16x64b   lane t/4 + 8 (t%2),      column (t/2)%2 + 2 r
//   s16x128b  lane t/4 + 8 (r%2),      column t%4 + 4 (r/2)
//   s16x256b  lane t/4 + 8 ((r/2)%2),  column 2 (t%4) + r%2 + 8 (r/4)
//   s16x32bx2 lane t%16,               column r + (t/16) HalfSplitOffset
enum class TmemShape { s32x32b, s16x64b, s16x128b, s16x256b, s16x32bx2 };

// Registers per thread of Shape repeated Num times.
template <TmemShape Shape, unsigned Num>
inline constexpr unsigned tmem_registers = Shape == TmemShape::s16x256b   ? 4 * Num
                                           : Shape == TmemShape::s16x128b ? 2 * Num
                                                                          : Num;

// The wrappers' forms: .num a power of two and at most 32 registers a thread
// (the ISA goes to 128; 32 covers 32x32b.x32 and 16x256b.x8).
template <TmemShape Shape, unsigned Num>
inline constexpr bool tmem_form_supported =
    Num >= 1 && (Num & (Num - 1)) == 0 && tmem_registers<Shape, Num> <= 32;

#define RL_TMEM_LD_REGS_1 "{%0}"
#define RL_TMEM_LD_REGS_2 "{%0, %1}"
#define RL_TMEM_LD_REGS_4 "{%0, %1, %2, %3}"
#define RL_TMEM_LD_REGS_8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define RL_TMEM_LD_REGS_16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define RL_TMEM_LD_REGS_32                                                                      \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define RL_TMEM_ST_REGS_1 "{%1}"
#define RL_TMEM_ST_REGS_2 "{%1, %2}"
#define RL_TMEM_ST_REGS_4 "{%1, %2, %3, %4}"
#define RL_TMEM_ST_REGS_8 "{%1, %2, %3, %4, %5, %6, %7, %8}"
#define RL_TMEM_ST_REGS_16 "{%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16}"
#define RL_TMEM_ST_REGS_32                                                                       \
  "{%1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, " \
  "%21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32}"
#define RL_TMEM_O1(b) "=r"(r[b])
#define RL_TMEM_O2(b) RL_TMEM_O1(b), RL_TMEM_O1(b + 1)
#define RL_TMEM_O4(b) RL_TMEM_O2(b), RL_TMEM_O2(b + 2)
#define RL_TMEM_O8(b) RL_TMEM_O4(b), RL_TMEM_O4(b + 4)
#define RL_TMEM_O16(b) RL_TMEM_O8(b), RL_TMEM_O8(b + 8)
#define RL_TMEM_O32(b) RL_TMEM_O16(b), RL_TMEM_O16(b + 16)
#define RL_TMEM_I1(b) "r"(r[b])
#define RL_TMEM_I2(b) RL_TMEM_I1(b), RL_TMEM_I1(b + 1)
#define RL_TMEM_I4(b) RL_TMEM_I2(b), RL_TMEM_I2(b + 2)
#define RL_TMEM_I8(b) RL_TMEM_I4(b), RL_TMEM_I4(b + 4)
#define RL_TMEM_I16(b) RL_TMEM_I8(b), RL_TMEM_I8(b + 8)
#define RL_TMEM_I32(b) RL_TMEM_I16(b), RL_TMEM_I16(b + 16)
// One form: `if constexpr (Num == NUM) asm ...;` (chained with else).
#define RL_TMEM_LD(SHAPE, NUM, R)                                                                 \
  if constexpr (Num == NUM)                                                                       \
    asm volatile("tcgen05.ld.sync.aligned." SHAPE ".x" #NUM ".b32 " RL_TMEM_LD_REGS_##R ", [%" #R \
                                                                                        "];\n"    \
                 : RL_TMEM_O##R(0)                                                                \
                 : "r"(taddr)                                                                     \
                 : "memory");
#define RL_TMEM_LD_SPLIT(NUM, R, R1)                                                   \
  if constexpr (Num == NUM)                                                            \
    asm volatile("tcgen05.ld.sync.aligned.16x32bx2.x" #NUM ".b32 " RL_TMEM_LD_REGS_##R \
                 ", [%" #R "], %" #R1 ";\n"                                            \
                 : RL_TMEM_O##R(0)                                                     \
                 : "r"(taddr), "n"(HalfSplitOffset)                                    \
                 : "memory");
#define RL_TMEM_ST(SHAPE, NUM, R)                                                             \
  if constexpr (Num == NUM)                                                                   \
    asm volatile("tcgen05.st.sync.aligned." SHAPE ".x" #NUM ".b32 [%0], " RL_TMEM_ST_REGS_##R \
                 ";\n" ::"r"(taddr),                                                          \
                 RL_TMEM_I##R(0)                                                              \
                 : "memory");
#define RL_TMEM_ST_SPLIT(NUM, R, R1)                                          \
  if constexpr (Num == NUM)                                                   \
    asm volatile("tcgen05.st.sync.aligned.16x32bx2.x" #NUM ".b32 [%0], %" #R1 \
                 ", " RL_TMEM_ST_REGS_##R ";\n" ::"r"(taddr),                 \
                 RL_TMEM_I##R(0), "n"(HalfSplitOffset)                        \
                 : "memory");

// tcgen05.ld.sync.aligned.<Shape>.x<Num>.b32 r, [taddr] (, HalfSplitOffset
// for s16x32bx2): the whole warp, the same taddr.  Asynchronous: r holds the
// values only after tmem_wait_ld() (the emulator fills r with a NaN until then).
template <TmemShape Shape, unsigned Num, unsigned HalfSplitOffset = 0>
RL_PTX_SM100_FN void tmem_ld([[maybe_unused]] std::uint32_t taddr,
                             [[maybe_unused]] std::uint32_t (&r)[tmem_registers<Shape, Num>]) {
  static_assert(tmem_form_supported<Shape, Num>, "tmem_ld: .num a power of two, <= 32 registers");
#if defined(RL_EMULATE)
  rl::emu::tcgen05::ld(static_cast<rl::emu::tcgen05::Shape>(Shape), Num, taddr, r, HalfSplitOffset);
#elif RL_PTX_SM100A
  if constexpr (Shape == TmemShape::s32x32b) {
    RL_TMEM_LD("32x32b", 1, 1)
    else RL_TMEM_LD("32x32b", 2, 2) else RL_TMEM_LD("32x32b", 4, 4) else RL_TMEM_LD(
        "32x32b", 8, 8) else RL_TMEM_LD("32x32b", 16, 16) else RL_TMEM_LD("32x32b", 32, 32)
  } else if constexpr (Shape == TmemShape::s16x64b) {
    RL_TMEM_LD("16x64b", 1, 1)
    else RL_TMEM_LD("16x64b", 2, 2) else RL_TMEM_LD("16x64b", 4, 4) else RL_TMEM_LD(
        "16x64b", 8, 8) else RL_TMEM_LD("16x64b", 16, 16) else RL_TMEM_LD("16x64b", 32, 32)
  } else if constexpr (Shape == TmemShape::s16x128b) {
    RL_TMEM_LD("16x128b", 1, 2)
    else RL_TMEM_LD("16x128b", 2, 4) else RL_TMEM_LD("16x128b", 4, 8) else RL_TMEM_LD(
        "16x128b", 8, 16) else RL_TMEM_LD("16x128b", 16, 32)
  } else if constexpr (Shape == TmemShape::s16x256b) {
    RL_TMEM_LD("16x256b", 1, 4)
    else RL_TMEM_LD("16x256b", 2, 8) else RL_TMEM_LD("16x256b", 4, 16) else RL_TMEM_LD("16x256b", 8,
                                                                                       32)
  } else {
    RL_TMEM_LD_SPLIT(1, 1, 2)
    else RL_TMEM_LD_SPLIT(2, 2, 3) else RL_TMEM_LD_SPLIT(4, 4, 5) else RL_TMEM_LD_SPLIT(
        8, 8, 9) else RL_TMEM_LD_SPLIT(16, 16, 17) else RL_TMEM_LD_SPLIT(32, 32, 33)
  }
#else
  __trap();
#endif
}

// tcgen05.st.sync.aligned.<Shape>.x<Num>.b32 [taddr], r: the same fragments as
// tmem_ld; complete (visible to tcgen05.mma and later loads) after tmem_wait_st().
template <TmemShape Shape, unsigned Num, unsigned HalfSplitOffset = 0>
RL_PTX_SM100_FN void tmem_st(
    [[maybe_unused]] std::uint32_t taddr,
    [[maybe_unused]] const std::uint32_t (&r)[tmem_registers<Shape, Num>]) {
  static_assert(tmem_form_supported<Shape, Num>, "tmem_st: .num a power of two, <= 32 registers");
#if defined(RL_EMULATE)
  rl::emu::tcgen05::st(static_cast<rl::emu::tcgen05::Shape>(Shape), Num, taddr, r, HalfSplitOffset);
#elif RL_PTX_SM100A
  if constexpr (Shape == TmemShape::s32x32b) {
    RL_TMEM_ST("32x32b", 1, 1)
    else RL_TMEM_ST("32x32b", 2, 2) else RL_TMEM_ST("32x32b", 4, 4) else RL_TMEM_ST(
        "32x32b", 8, 8) else RL_TMEM_ST("32x32b", 16, 16) else RL_TMEM_ST("32x32b", 32, 32)
  } else if constexpr (Shape == TmemShape::s16x64b) {
    RL_TMEM_ST("16x64b", 1, 1)
    else RL_TMEM_ST("16x64b", 2, 2) else RL_TMEM_ST("16x64b", 4, 4) else RL_TMEM_ST(
        "16x64b", 8, 8) else RL_TMEM_ST("16x64b", 16, 16) else RL_TMEM_ST("16x64b", 32, 32)
  } else if constexpr (Shape == TmemShape::s16x128b) {
    RL_TMEM_ST("16x128b", 1, 2)
    else RL_TMEM_ST("16x128b", 2, 4) else RL_TMEM_ST("16x128b", 4, 8) else RL_TMEM_ST(
        "16x128b", 8, 16) else RL_TMEM_ST("16x128b", 16, 32)
  } else if constexpr (Shape == TmemShape::s16x256b) {
    RL_TMEM_ST("16x256b", 1, 4)
    else RL_TMEM_ST("16x256b", 2, 8) else RL_TMEM_ST("16x256b", 4, 16) else RL_TMEM_ST("16x256b", 8,
                                                                                       32)
  } else {
    RL_TMEM_ST_SPLIT(1, 1, 2)
    else RL_TMEM_ST_SPLIT(2, 2, 3) else RL_TMEM_ST_SPLIT(4, 4, 5) else RL_TMEM_ST_SPLIT(
        8, 8, 9) else RL_TMEM_ST_SPLIT(16, 16, 17) else RL_TMEM_ST_SPLIT(32, 32, 33)
  }

#else
  __trap();
#endif
}

#undef RL_TMEM_LD
#undef RL_TMEM_LD_SPLIT
#undef RL_TMEM_ST
#undef RL_TMEM_ST_SPLIT
#undef RL_TMEM_O1
#undef RL_TMEM_O2
#undef RL_TMEM_O4
#undef RL_TMEM_O8
#undef RL_TMEM_O16
#undef RL_TMEM_O32
#undef RL_TMEM_I1
#undef RL_TMEM_I2
#undef RL_TMEM_I4
#undef RL_TMEM_I8
#undef RL_TMEM_I16
#undef RL_TMEM_I32
#undef RL_TMEM_LD_REGS_1
#undef RL_TMEM_LD_REGS_2
#undef RL_TMEM_LD_REGS_4
#undef RL_TMEM_LD_REGS_8
#undef RL_TMEM_LD_REGS_16
#undef RL_TMEM_LD_REGS_32
#undef RL_TMEM_ST_REGS_1
#undef RL_TMEM_ST_REGS_2
#undef RL_TMEM_ST_REGS_4
#undef RL_TMEM_ST_REGS_8
#undef RL_TMEM_ST_REGS_16
#undef RL_TMEM_ST_REGS_32

// tcgen05.wait::ld.sync.aligned: this thread's loads have landed in their registers.
RL_PTX_SM100_FN void tmem_wait_ld() {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::wait_ld();
#elif RL_PTX_SM100A
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}

// tcgen05.wait::st.sync.aligned: this thread's stores are complete.
RL_PTX_SM100_FN void tmem_wait_st() {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::wait_st();
#elif RL_PTX_SM100A
  asm volatile("tcgen05.wait::st.sync.aligned;\n" ::: "memory");
#else
  __trap();
#endif
}

// ---- tcgen05.cp ---------------------------------------------------------------
// Shapes in the order of rl::emu::tcgen05::CopyShape.  The source is a
// tcgen05 shared-memory descriptor (rl/ptx_sm100_mma.hpp builds one) of a
// K-major matrix of rows x (bits / 8) bytes; row i lands in lane i (for
// s32x128b_warpx4 in lanes i, 32 + i, 64 + i and 96 + i), its bytes in
// consecutive columns, 4 bytes a cell, little-endian.
enum class TmemCopyShape {
  s128x256b,
  s4x256b,
  s128x128b,
  s64x128b_warpx2_02_13,
  s64x128b_warpx2_01_23,
  s32x128b_warpx4
};

// tcgen05.cp.cta_group::1.<Shape> [taddr], s_desc: issued by one thread;
// completes at that thread's tmem_commit.
template <TmemCopyShape Shape>
RL_PTX_SM100_FN void tmem_cp([[maybe_unused]] std::uint32_t taddr,
                             [[maybe_unused]] std::uint64_t s_desc) {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::cp(static_cast<rl::emu::tcgen05::CopyShape>(Shape), taddr, s_desc);
#elif RL_PTX_SM100A
#define RL_TMEM_CP(SHAPE)                                                                \
  asm volatile("tcgen05.cp.cta_group::1." SHAPE " [%0], %1;\n" ::"r"(taddr), "l"(s_desc) \
               : "memor"                                                                 \
                 "y")
  if constexpr (Shape == TmemCopyShape::s128x256b)
    RL_TMEM_CP("128x256b");
  else if constexpr (Shape == TmemCopyShape::s4x256b)
    RL_TMEM_CP("4x256b");
  else if constexpr (Shape == TmemCopyShape::s128x128b)
    RL_TMEM_CP("128x128b");
  else if constexpr (Shape == TmemCopyShape::s64x128b_warpx2_02_13)
    RL_TMEM_CP("64x128b.warpx2::02_13");
  else if constexpr (Shape == TmemCopyShape::s64x128b_warpx2_01_23)
    RL_TMEM_CP("64x128b.warpx2::01_23");
  else
    RL_TMEM_CP("32x128b.warpx4");
#undef RL_TMEM_CP
#else
  __trap();
#endif
}

// ---- completion and ordering ----------------------------------------------------

// tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar]:
// one arrival on mbar once every asynchronous tcgen05 operation this thread
// issued before (mma, cp) has completed.
RL_PTX_SM100_FN void tmem_commit([[maybe_unused]] std::uint64_t* mbar) {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::commit(mbar);
#elif RL_PTX_SM100A
  asm volatile(
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(
          static_cast<std::uint32_t>(__cvta_generic_to_shared(mbar)))
      : "memory");
#else
  __trap();
#endif
}

// tcgen05.fence::before_thread_sync: orders this thread's earlier tcgen05
// operations before a following barrier / mbarrier arrival.
RL_PTX_SM100_FN void tcgen05_fence_before_thread_sync() {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::fence_before_thread_sync();
#elif RL_PTX_SM100A
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
#else
  __trap();
#endif
}

// tcgen05.fence::after_thread_sync: orders this thread's later tcgen05
// operations after a preceding barrier / mbarrier wait.
RL_PTX_SM100_FN void tcgen05_fence_after_thread_sync() {
#if defined(RL_EMULATE)
  rl::emu::tcgen05::fence_after_thread_sync();
#elif RL_PTX_SM100A
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
#else
  __trap();
#endif
}

}  // namespace rl::ptx
