// Barriers and warp collectives: what a thread's exit means to them.  The
// entry points (__syncthreads, warp_collective, __activemask, mbarrier
// sleeps) are declared in the public headers and defined in collectives.cpp.
#pragma once

#include "block_state.hpp"

namespace rl::emu::detail {

// `t` has finished its kernel (or was unwound): releases its slots and
// completes any barrier or collective of its warp that waited only for it.
void thread_exited(Thread& t);

// Runs the cleanups of the thread's slots (cp.async queue, ...) and empties them.
void release_slots(Thread& t);

}  // namespace rl::emu::detail
