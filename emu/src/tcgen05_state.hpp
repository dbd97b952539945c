// The tensor memory of the running CTA and what its threads have in flight,
// shared by tcgen05_memory.cpp (allocation, the CTA's end), tcgen05_data.cpp
// (ld / st / cp) and tcgen05_async.cpp (the queue, commit).  One block runs
// on a host worker at a time, so the state is the worker's (thread_local);
// it is made at the CTA's first tcgen05 instruction and dropped when the
// CTA's last thread exits.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "block_state.hpp"
#include "rl/emu/tcgen05.hpp"

namespace rl::emu::tcgen05::internal {

struct Allocation {
  unsigned column;   // first column
  unsigned columns;  // a power of two, 32 .. 512
  unsigned warp;     // the warp that allocated it (and must free it)
};

// An asynchronous operation (mma, cp) queued until its thread's commit.
struct QueuedOp {
  unsigned thread;  // linear thread index in the block
  const char* instruction;
  TmemRange writes;
  std::function<void()> perform;
};

// A tcgen05.ld whose registers receive their values at the thread's wait::ld.
struct PendingLoad {
  unsigned thread;
  std::uint32_t* registers;
  std::vector<std::uint32_t> values;
};

struct Cta {
  std::vector<std::uint32_t> cells;  // kLanes x kColumns, lane-major
  std::vector<Allocation> allocations;
  bool relinquished = false;
  unsigned last_alloc_columns = 0;  // "should not increase between two allocations"
  std::vector<QueuedOp> queued;     // every thread's, in issue order
  std::vector<PendingLoad> loads;
};

// The running CTA's state (the calling CUDA thread's block).
Cta& cta();

// Fails the launch: "kernel K failed in block (x,y,z): thread (x,y,z):
// <message>", and unwinds the calling CUDA thread.
[[noreturn]] void fail(const std::string& message);

// The calling thread's linear index in its block and its warp's lane quarter
// (warp % 4: lanes 32 q .. 32 q + 31 of tensor memory).
unsigned thread_index();
unsigned lane_quarter();

// "0x0000ffff"
std::string hex(unsigned v);
// "[lanes a..b, columns c..d]"
std::string describe(TmemRange range);

// Fails naming `instruction` unless `range` lies inside one allocation of this CTA.
void check_allocated(TmemRange range, const char* instruction);
// Fails naming `instruction` and the queued operation when a queued (not yet
// committed) asynchronous operation writes a cell of `range`.
void check_not_in_flight(TmemRange range, const char* instruction);

// Allocations as words: "128 columns from column 0 (allocated by warp 0), ...".
std::string allocations_text(const Cta& c);

// A .sync.aligned warp instruction's operands, posted by every lane to the
// warp collective: all 32 lanes must take part with equal operands (Post has
// operator==).  Returns lane 0's.
template <typename Post>
const Post& aligned_post(void* const* posts, unsigned participants, const char* instruction) {
  if (participants != 0xFFFFFFFFU)
    fail(std::string(instruction) +
         " is .sync.aligned: all 32 lanes of the warp must execute it (lanes present: " +
         hex(participants) + ")");
  const auto& first = *static_cast<const Post*>(posts[0]);
  for (unsigned l = 1; l < 32; ++l)
    if (!(*static_cast<const Post*>(posts[l]) == first))
      fail(std::string(instruction) + ": lanes of one warp pass different operands (lane 0 and " +
           std::to_string(l) + ")");
  return first;
}

// The exchange of a warp instruction that may fail the launch, as a warp
// collective runs it: the collective completes in the thread of its last
// arrival, or in the thread of a lane that exits (a lane missing from a
// .sync.aligned instruction), where no exception may escape.  So a failure
// only marks the block failed (fail() has set the message) and returns; each
// participant then leaves the collective into the block's abort.
template <void (*Exchange)(void* const*, unsigned)>
void failing_exchange(void* const* posts, unsigned participants) {
  try {
    Exchange(posts, participants);
  } catch (const detail::AbortBlock&) {
  }
}

}  // namespace rl::emu::tcgen05::internal
