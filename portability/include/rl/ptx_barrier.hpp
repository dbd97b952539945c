// Named barriers: bar.sync / bar.arrive with a barrier id and a thread count,
// the hand-off warp-specialised kernels use between warpgroups (FlashAttention-3's
// pingpong: one consumer warpgroup waits for its turn with bar.sync while the
// other hands the turn on with bar.arrive).  A part of rl/ptx.hpp, which
// defines RL_PTX_FN and RL_PTX_UNSUPPORTED.
//
// PTX ISA ("bar, barrier"; sm_70+ semantics, bar.sync == barrier.sync.aligned,
// bar.arrive == barrier.arrive.aligned):
// - A CTA has 16 barriers, ids 0 .. 15; id 0 is the one __syncthreads uses.
// - `threads` is the number of threads the barrier's phase waits for: a
//   multiple of the warp size (32), at most the CTA's threads.  Every
//   arrival counts whole warps: .aligned means all threads of the warp
//   execute the same bar instruction (same id, same count), converged.
// - bar.sync counts the warp and waits until `threads` threads have arrived
//   (by bar.sync or bar.arrive); then the barrier resets for its next phase.
//   It orders memory among the participants: what any participant wrote
//   before arriving is visible to the bar.sync waiters after it.
// - bar.arrive counts the warp and returns at once.  It gives the arriving
//   thread nothing: no wait, and no ordering for its own later reads (a
//   producer that writes, bar.arrive's, and writes again races with the
//   consumer that bar.sync'ed).
// - All arrivals of one phase name the same `threads`.
// The emulator checks each of these rules and reports a breach with one line
// (rl/emu/named_barrier.hpp); a barrier phase that can never complete is the
// scheduler's deadlock report.  id and threads may be runtime values.
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_barrier.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#if defined(RL_EMULATE)
#include "rl/emu/named_barrier.hpp"
#endif

namespace rl::ptx {

// bar.sync id, threads: counts this warp at barrier `id` and waits until
// `threads` threads have arrived in the barrier's current phase.
RL_PTX_FN void named_barrier_sync(unsigned id, unsigned threads) {
#if defined(RL_EMULATE)
  rl::emu::named_barrier_sync(id, threads);
#elif defined(__CUDA_ARCH__)
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// bar.arrive id, threads: counts this warp at barrier `id` and returns.
RL_PTX_FN void named_barrier_arrive(unsigned id, unsigned threads) {
#if defined(RL_EMULATE)
  rl::emu::named_barrier_arrive(id, threads);
#elif defined(__CUDA_ARCH__)
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx
