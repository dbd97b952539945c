// Shared memory that an in-flight wgmma still reads (emu/docs/hopper.md,
// "Operands in flight").  The emulator reads wgmma's operands at issue, but
// the hardware reads them any time until the wgmma.wait_group that retires
// its group ("accessing ... the shared memory ... before the wgmma completes
// is undefined"), so a write into those bytes in between would go unseen:
// each committed-or-open group's bytes are held here until its warpgroup
// retires it, and the asynchronous writers (TMA loads, multicast from a peer
// CTA included, cp.async.bulk, cp.async) check against them; tcgen05.mma's
// operands likewise, from its issue to its thread's tcgen05.commit.  Plain
// st.shared is not checked: the kernel's stores are host stores the
// emulator never sees.  Not a public header.
//
// The bytes are kept per host worker: a cluster's CTAs run on one worker
// (block_state.hpp), so every writer into a CTA's shared memory runs there,
// and host addresses tell the CTAs apart.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rl::emu::hopper::impl {

// Host byte runs [lo, hi), collected element by element in operand order
// (consecutive elements of one 16-byte row merge as they come), and their
// bounds: a write outside the bounds of an operand skips its runs, so only a
// write near the operand (its stage, in a ring) looks at them.
struct ReadRun {
  const unsigned char* lo;
  const unsigned char* hi;
};

struct OperandReads {
  std::vector<ReadRun> runs;
  ReadRun bounds{nullptr, nullptr};
  void add(const unsigned char* p, unsigned bytes) {
    if (runs.empty()) bounds = {p, p + bytes};
    bounds = {std::min(bounds.lo, p), std::max(bounds.hi, p + bytes)};
    if (!runs.empty() && runs.back().hi == p)
      runs.back().hi = p + bytes;
    else
      runs.push_back({p, p + bytes});
  }
};

// The running thread's warpgroup: its block and thread_rank() / 128.
struct Warpgroup {
  const void* block;
  unsigned index;
};
Warpgroup running_warpgroup();

// One operand (a warp's rows of A, or B) of a wgmma of the running thread's
// warpgroup, which joins the group its lanes commit next: `group` is their
// count of commits so far.
void hold_wgmma_reads(std::uint64_t group, OperandReads&& reads);

// wgmma.wait_group by a thread of warpgroup `warpgroup` of `block`: its
// groups before `below` have completed.  The first thread of the warpgroup
// to wait retires them for all (the instruction is .sync.aligned: on the
// hardware no thread of the warp runs past it before the others reach it).
void retire_wgmma_reads(const void* block, unsigned warpgroup, std::uint64_t below);

// tcgen05.mma (RL_EMU_CC=100): its shared operands are in flight from its
// issue until the issuing thread's tcgen05.commit has performed it and
// arrives on the mbarrier (PTX ISA 9.7.16.6, "Asynchronous Operations").
void hold_tcgen05_reads(OperandReads&& reads);
// tcgen05.commit by the running thread, or its exit: its MMAs' reads end.
void retire_tcgen05_reads(const void* block, unsigned thread);

// An asynchronous write of host bytes [host, host + bytes): an error (one
// line, thrown) when an in-flight wgmma reads any of them.  `window` is the
// window address of `host` (kUnknownWindow: looked up when reporting).
inline constexpr std::uint32_t kUnknownWindow = 0xFFFFFFFFU;
void check_shared_write(const unsigned char* host, std::size_t bytes, const char* writer,
                        std::uint32_t window = kUnknownWindow);

// A TMA box of `bytes` written densely from window address `window` (host
// `host`) and then swizzled by `swizzle_mask` (1, 3 or 7; 0: none), the
// layout of hopper_tma.cpp's for_each_box_element.
void check_box_write(const unsigned char* host, std::uint32_t window, std::uint64_t bytes,
                     std::uint32_t swizzle_mask, const char* writer);

}  // namespace rl::emu::hopper::impl
