// bar.sync / bar.arrive (named barriers) on the emulator, behind
// rl::ptx::named_barrier_sync / named_barrier_arrive (rl/ptx_barrier.hpp,
// which states the PTX rules).
//
// Each block has 16 barriers.  A bar instruction is first a rendezvous of the
// whole warp (.aligned, as setmaxnreg: a lane that exited stops the process
// with one line, lanes at different bar instructions are reported); the warp
// then counts 32 threads toward the phase's `threads`.  The arrival that
// completes the phase releases every bar.sync waiter of it and resets the
// barrier for the next phase.  A bar.sync waits like an mbarrier wait, so a
// phase that can never complete is the scheduler's deadlock report.
// Misuse (id >= 16; threads 0, not a multiple of 32, or above the block's
// threads; two counts in one phase) fails the launch naming kernel, block
// and thread.  Barrier 0 is counted apart from __syncthreads (on a GPU
// they are one barrier): a kernel that mixes the two in one phase deadlocks
// here.
//
// Racecheck: each phase has its own sync object; every arrival releases into
// it (its warp's accesses so far), and a bar.sync waiter acquires it when the
// phase completes.  bar.arrive acquires nothing.
#pragma once

namespace rl::emu {

void named_barrier_sync(unsigned id, unsigned threads);
void named_barrier_arrive(unsigned id, unsigned threads);

}  // namespace rl::emu
