// libcu++'s block-scope cuda::barrier and cuda::memcpy_async on the emulator:
// the state a barrier keeps in shared memory and the operations on it, which
// <cuda/barrier> (emu/cuda_include/cuda/barrier) wraps in CUDA's names.
//
// Semantics are std::barrier's ([thread.barrier.class]), which libcu++ keeps:
// each phase expects `expected` arrivals; arrive(n) counts n of them and
// returns a token of the phase; the arrival that completes the phase runs the
// completion function, then the next phase starts, expecting `expected` again
// less the arrive_and_drop() calls so far; wait(token) returns once the
// token's phase has completed.  A thread that waits sleeps in the scheduler's
// object wait (rl/emu/block.hpp: wait_on) until the barrier changes, so a
// phase that can never complete is the scheduler's deadlock report, naming
// the barrier.
//
// memcpy_async copies at once and counts the copy as part of the issuing
// thread's arrival in the current phase.  That is exact for every correct
// program: CUDA lets the bytes land at any moment before the phase completes
// (on sm_80+ libcu++ issues cp.async and an mbarrier arrive that holds the
// phase open until they land; elsewhere it copies synchronously), and a
// correct program reads the destination, or writes the source, only after
// waiting for that phase.  Landing at issue is one of the allowed moments.
//
// Misuse is one line naming kernel, block and thread and fails the launch: an
// operation on a barrier this block never initialised, an arrival beyond what
// the phase still expects, a wait on a token that is not of the barrier's
// current or previous phase, a misaligned aligned_size_t copy.
//
// Under racecheck every arrival (and every copy) releases into its phase's
// own sync object and a wait acquires the phase it waited for, so a waiter
// sees exactly the arrivals and copies of that phase.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rl::emu::cuda_barrier {

// The bytes of a cuda::barrier.  A static __shared__ barrier holds what the
// previous block on its host worker left (or RL_EMU_POISON's bytes) until
// init(); `owner` tells whether the running block initialised it.
struct State {
  std::uint64_t owner;           // the initialising block's key (cuda_barrier.cpp)
  std::uint64_t phase;           // phases completed since init
  std::uint32_t expected;        // arrivals each phase expects
  std::uint32_t pending;         // arrivals the current phase still expects
  std::uint32_t window_address;  // the shared-window address, for messages
  std::uint32_t reserved;        // keeps the layout free of padding
  const void* race_phase;        // racecheck: the current phase's sync object
};

// What arrive() returns: the phase the arrival was counted in.
struct Token {
  const State* barrier = nullptr;  // nullptr: no arrive() returned this token
  std::uint64_t phase = 0;
  const void* race_phase = nullptr;
};

// The largest expected count (an mbarrier's 20-bit arrival count, libcu++'s max()).
inline constexpr std::ptrdiff_t kMaxExpected = (1 << 20) - 1;

// A barrier's completion function, called with its object; nullptr for none.
using Completion = void (*)(void* function_object);

void init(State* bar, std::ptrdiff_t expected);
Token arrive(State* bar, std::ptrdiff_t update, Completion completion, void* function_object);
void arrive_and_drop(State* bar, Completion completion, void* function_object);
void wait(const State* bar, const Token& token);
// memcpy_async(dst, src, bytes, barrier): copies now, counted in the calling
// thread's arrival of the current phase.  `alignment` is aligned_size_t's
// (1 for a plain size): dst, src and bytes must be multiples of it.
void copy(void* dst, const void* src, std::size_t bytes, std::size_t alignment, State* bar);

}  // namespace rl::emu::cuda_barrier
