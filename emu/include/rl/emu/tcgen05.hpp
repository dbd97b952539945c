// Blackwell (sm_100a / sm_103a) tensor memory on the emulator: allocation,
// tcgen05.ld / st / cp, the asynchronous-operation queue behind
// tcgen05.commit, and the checked cell access tcgen05.mma (rl/emu/tcgen05_mma.hpp)
// builds on.  The rl::ptx wrappers are in rl/ptx_sm100_tmem.hpp; the model and
// its PTX ISA sources are in emu/docs/blackwell.md.
//
// Model (PTX ISA 9.7.16 "TensorCore 5th Generation Family Instructions",
// subsections "Tensor Memory", "Tensor Memory Allocation", "Matrix fragments
// for tcgen05.ld/st", "tcgen05.cp", "tcgen05.commit"):
// - Each CTA has 128 lanes x 512 columns of 32-bit cells; an address is
//   lane << 16 | column.  One CTA runs per emulated SM at a time, so a CTA
//   owns all 512 columns and asking for more than are free is an error (on a
//   GPU the alloc would block for another CTA's dealloc, which never comes
//   while this CTA is the SM's only one).
// - Asynchronous tcgen05 operations (mma, cp) are queued per issuing thread
//   with the columns they write and performed at that thread's next
//   tcgen05.commit, the latest moment the ISA allows; the commit then arrives
//   once on its mbarrier.  A tcgen05.ld of cells a queued operation writes is
//   an error ("accumulator read before its commit completed").
// - tcgen05.ld reads the cells at issue; its registers receive the values at
//   tcgen05.wait::ld (until then they hold kLoadPoison, a NaN), so a kernel
//   that reads them without the wait computes NaN (see sees_cta_end()).  tcgen05.st writes at
//   issue (one legal order); tcgen05.wait::st has nothing left to wait for.
// - A CTA that exits holding tensor memory fails its launch.  Seeing the
//   CTA's end needs a thread slot for tcgen05 in rl/emu/warp.hpp
//   (kTcgen05Slot); see sees_cta_end().
// Every instruction is refused unless rl::emu::has_tcgen05() (RL_EMU_CC=100
// or 103).  Only .cta_group::1 exists here: CTA pairs (.cta_group::2) need
// emulated clusters, which the emulator does not have.  Misuse fails the
// launch with one line naming kernel, block, thread and the rule.  Tensor
// memory is the emulator's bookkeeping: racecheck does not watch it.
#pragma once

#include <cstdint>
#include <functional>

#include "rl/emu/arch.hpp"

namespace rl::emu::tcgen05 {

// ---- tensor-memory addresses ---------------------------------------------------

inline constexpr unsigned kLanes = 128;
inline constexpr unsigned kColumns = 512;

constexpr std::uint32_t tmem_address(unsigned lane, unsigned column) {
  return (std::uint32_t{lane} << 16) | column;
}
constexpr unsigned lane_of(std::uint32_t address) {
  return address >> 16;
}
constexpr unsigned column_of(std::uint32_t address) {
  return address & 0xFFFFU;
}

// Stops the launch unless the emulated device has tcgen05:
// "<instruction> needs sm_100a/sm_103a: run with RL_EMU_CC=100 (the emulated
// device is compute capability C)".  Every function below calls it first.
void require_tcgen05(const char* instruction);

// ---- allocation (9.7.16.7 "Tensor Memory Allocation and Management") -----------

// tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [dst], ncols:
// warp-wide (all 32 lanes, the same operands); ncols a power of two in
// [32, 512].  Takes the lowest free column range aligned to ncols and writes
// its address (lane 0) to *dst in shared memory.  Errors: ncols invalid; not
// enough free columns; after relinquish_alloc_permit.
void alloc(std::uint32_t* dst, std::uint32_t ncols);
// tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols: warp-wide;
// taddr and ncols must name exactly one live allocation, made by this warp
// (.cta_group::1: "one warp from the CTA must perform the allocation and
// de-allocation").
void dealloc(std::uint32_t taddr, std::uint32_t ncols);
// tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned: this CTA may
// not allocate again.
void relinquish_alloc_permit();
// Columns of this CTA allocated now (tests, reports).
unsigned allocated_columns();

// Whether the emulator sees a CTA's end (rl/emu/warp.hpp has kTcgen05Slot).
// Then a CTA that exits holding tensor memory fails its launch, tcgen05.ld's
// registers wait for tcgen05.wait::ld, and alloc after
// relinquish_alloc_permit fails.  Without it those three checks are off: the
// registers get their values at once, and a CTA's state is dropped whenever
// it holds no tensor memory and has nothing in flight.
bool sees_cta_end();

// ---- tcgen05.ld / tcgen05.st (9.7.16.8.3, "Matrix fragments for tcgen05.ld/st")

// The data-movement shapes: lanes x bits per repetition.
enum class Shape { s32x32b, s16x64b, s16x128b, s16x256b, s16x32bx2 };
// Registers per thread for `shape` repeated `num` times (.x1 .. .x128):
// 32x32b num; 16x64b num; 16x128b 2 num; 16x256b 4 num; 16x32bx2 num.
unsigned registers_per_thread(Shape shape, unsigned num);
// The lane and column (offsets from taddr) register r of warp lane t holds:
//   32x32b   lane t,                     column r
//   16x64b   lane t/4 + 8 (t%2),         column (t/2)%2 + 2 r
//   16x128b  lane t/4 + 8 (r%2),         column t%4 + 4 (r/2)
//   16x256b  lane t/4 + 8 ((r/2)%2),     column 2 (t%4) + r%2 + 8 (r/4)
//   16x32bx2 lane t%16,                  column r + (t/16) half_split_offset
unsigned fragment_lane(Shape shape, unsigned t, unsigned r);
unsigned fragment_column(Shape shape, unsigned t, unsigned r, unsigned half_split_offset);

// What a tcgen05.ld's registers hold until tcgen05.wait::ld (a NaN as f32).
inline constexpr std::uint32_t kLoadPoison = 0xFFFFFFFFU;

// tcgen05.ld.sync.aligned.<shape>.x<num>.b32: warp-wide; taddr the same in
// every lane.  The warp reaches only its lane quarter: warp w of the CTA,
// lanes 32 (w%4) .. 32 (w%4) + 31.  regs: this thread's
// registers_per_thread(shape, num) registers, kLoadPoison until wait_ld()
// (at once when !sees_cta_end()).
void ld(Shape shape, unsigned num, std::uint32_t taddr, std::uint32_t* regs,
        unsigned half_split_offset = 0);
// tcgen05.st.sync.aligned.<shape>.x<num>.b32: the same fragments, written at issue.
void st(Shape shape, unsigned num, std::uint32_t taddr, const std::uint32_t* regs,
        unsigned half_split_offset = 0);
// tcgen05.wait::ld.sync.aligned: this thread's loads hand over their values.
void wait_ld();
// tcgen05.wait::st.sync.aligned: stores were performed at issue; accepted.
void wait_st();

// ---- tcgen05.cp (9.7.16.8.2): shared memory -> tensor memory, asynchronous ------

enum class CopyShape {
  s128x256b,  // 128 lanes x 256 bits (8 columns)
  s4x256b,    // 4 lanes x 256 bits
  s128x128b,  // 128 lanes x 128 bits (4 columns)
  s64x128b_warpx2_02_13,
  s64x128b_warpx2_01_23,
  s32x128b_warpx4,  // 32 lanes x 128 bits, multicast to the 4 lane quarters
};
// tcgen05.cp.cta_group::1.<shape>[.<multicast>] [taddr], s_desc: the source
// is described by a shared-memory matrix descriptor (the tcgen05 format, the
// same as tcgen05.mma's), K-major, `rows` rows of (bits / 8) bytes: row i
// lands in lane lane_of(taddr) + i, its bytes in consecutive columns from
// column_of(taddr), four to a cell, lowest address in the lowest byte;
// .32x128b.warpx4 writes row i to lanes i, 32 + i, 64 + i, 96 + i (taddr's
// lane 0).  The .64x128b.warpx2 multicasts are refused (not emulated).
// Issued by one thread; queued and performed (the source read) at its next
// commit.
void cp(CopyShape shape, std::uint32_t taddr, std::uint64_t s_desc);

// ---- tcgen05.commit and the fences --------------------------------------------

// tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar]:
// performs every asynchronous operation this thread queued (in issue order),
// then arrives once on mbar (rl::emu::hopper::mbarrier_arrive).
void commit(std::uint64_t* mbar);
// tcgen05.fence::before_thread_sync / ::after_thread_sync: nothing to order on
// the CPU (operations are performed in program order); accepted.
void fence_before_thread_sync();
void fence_after_thread_sync();

// ---- for tcgen05.mma (and future asynchronous tcgen05 operations) --------------

// A rectangle of tensor memory: `lanes` lanes from lane_of(address),
// `columns` columns from column_of(address).
struct TmemRange {
  std::uint32_t address;
  unsigned lanes;
  unsigned columns;
};

// Queues an asynchronous operation of the calling thread that writes `writes`
// (checked: inside this CTA's allocation); `perform` runs at the thread's
// next commit, in issue order with the thread's other queued operations.
// Until then a tcgen05.ld of any cell of `writes` fails the launch naming
// `instruction`.  `perform` reads its operands when it runs (the latest legal
// moment: shared memory overwritten before the commit is read as overwritten).
void enqueue_async(const char* instruction, TmemRange writes, std::function<void()> perform);

// The cells of `range`, checked to lie inside one of this CTA's allocations
// (else the launch fails naming `instruction`): cell (lane l, column c) is
// result[(l - lane_of(address)) * kColumns + (c - column_of(address))].
// For operations that read A or scale factors and write D.
std::uint32_t* tmem_cells(TmemRange range, const char* instruction);

}  // namespace rl::emu::tcgen05
