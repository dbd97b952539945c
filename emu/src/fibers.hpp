// CUDA threads as fibers: starting one, switching between them within a pass,
// and leaving one for good.
//
// Fibers switch directly to the next runnable fiber of the pass (one jump per
// thread and pass instead of two through the scheduler); the last one of a
// pass switches back to the scheduler.  Each jump saves the context it leaves
// in the leaver's own slot (Thread::context, or Worker::scheduler).
//
// The switch itself is inline: a barrier or warp collective is one jump per
// thread, so it sits on the emulator's hottest path (emu_speed).  Sources
// whose functions jump midway are compiled without TSan's function
// entry/exit events (emu/CMakeLists.txt).
#pragma once

#include "block_state.hpp"
#include "fiber_switch.hpp"
#include "sanitizer_hooks.hpp"

namespace rl::emu::detail {

// Writes `t`'s first frame on its stack: the first switch to it runs the kernel.
void start_fiber(Thread& t);

// Leaves the running fiber for good without unwinding it: for device assert
// and __trap (glibc declares __assert_fail noexcept, so no exception may leave
// it) and for the watchdog's signal handler.  Only plain stores and the jump
// itself, so it is async-signal-safe.  The fiber's destructors never run (a
// kernel's own heap allocations leak) and its stack is reused by the next
// block, as after a fiber's final jump.  Under racecheck it is entered with
// the fiber's accesses ignored (stop_current_thread; the watchdog's signal is
// not sent there) and leaves for the worker's TSan fiber.
[[noreturn]] void abandon(Worker& w, Thread& t);

// The next runnable thread of this pass, or nullptr when the pass is over.
inline Thread* next_runnable(Worker& w) {
  while (w.position < w.order.size()) {
    const unsigned seat = w.order[w.position++];
    if (w.states[seat] != State::runnable) continue;
    Thread& t = w.threads[seat];
    // The lines a fiber touches when it resumes are cold (a block's fibers
    // together exceed the L1 cache); fetch the following thread's record and
    // the three stack lines around where it stopped while this one runs.  A
    // wider window costs more than it saves: 12 lines per fiber made a
    // 1024-thread barrier round 30 % slower (the prefetched lines of all
    // fibers no longer fit in L2), and fetching two or three threads ahead
    // gained nothing (emu_speed; emu/README.md has the numbers).
    if (w.position < w.order.size()) {
      const unsigned following = w.order[w.position];  // a seat
      __builtin_prefetch(&w.threads[following], 0);
      if (const char* hot = w.hot[following]) {
        for (int line = -1; line < 2; ++line) __builtin_prefetch(hot + 64 * line, 1);
      }
    }
    return &t;
  }
  return nullptr;
}

inline void prepare_jump(Worker& w, Thread* self, Thread* target) {
  tl_switching = 1;
  w.switch_from = self;
  tl_thread = target;
  if (target != nullptr) {
    threadIdx = target->index;
    // A cluster's CTAs share the worker.  Between two threads of one block
    // blockIdx stays: not reading the Block and writing the TLS on every
    // switch keeps a __syncthreads round as fast as before clusters (emu_speed).
    if (self == nullptr || self->block != target->block) blockIdx = target->block->index;
    ++w.switches;
  }
}

// What a jump to `thread` (nullptr: the worker's scheduler) resumes.
inline Context& context_of(Worker& w, Thread* thread) {
  return thread != nullptr ? thread->context : w.scheduler;
}

inline const StackBounds& stack_of(Worker& w, Thread* target) {
  return target != nullptr ? target->stack : w.scheduler_stack;
}

inline void* race_fiber_of(Worker& w, Thread* target) {
  return target != nullptr ? target->race_fiber : w.race_fiber;
}

// Runs in the context that was just resumed.  The worker's own stack is
// learned from the first jump that leaves it (ASan reports the bounds of the
// stack a switch came from).
inline void arrived(Worker& w, void* fake_stack) {
  StackBounds from_stack;
  stack_switch_finish(fake_stack, &from_stack.bottom, &from_stack.size);
  if (w.switch_from == nullptr) w.scheduler_stack = from_stack;
  tl_switching = 0;
}

// Leaves `self` (a thread, or nullptr for the scheduler) for `target` and
// returns when something switches back to `self`.
inline void switch_to(Worker& w, Thread* self, Thread* target) {
  if (self != nullptr) w.hot[self->seat] = static_cast<const char*>(__builtin_frame_address(0));
  prepare_jump(w, self, target);
  void* fake_stack = nullptr;
  const StackBounds& to = stack_of(w, target);
  stack_switch_start(&fake_stack, to.bottom, to.size);
  race_switch(race_fiber_of(w, target));
  switch_context(&context_of(w, self), context_of(w, target));
  arrived(w, fake_stack);
}

// The last jump of `self`, a thread that has finished or is abandoned, to
// `next` (nullptr: the scheduler): nothing resumes `self`, so its stack is
// free again.
[[noreturn]] inline void leave_for_good(Worker& w, Thread& self, Thread* next) {
  self.context = nullptr;
  prepare_jump(w, &self, next);
  const StackBounds& to = stack_of(w, next);
  stack_switch_start(nullptr, to.bottom, to.size);  // nullptr: this fiber's fake stack is freed
  Context finished;
  race_ignore_end();  // a fiber goes back to the pool with no ignores on
  race_switch(race_fiber_of(w, next));
  switch_context(&finished, context_of(w, next));
  __builtin_unreachable();
}

// Called in a fiber that has just blocked (or yields): runs the rest of the
// pass; returns when the scheduler resumes this thread in a later pass.
// Out of line on purpose (fibers.cpp): a blocked thread's switch then
// happens in this small frame, whose lines next_runnable prefetches, rather
// than in the larger frame of whichever barrier or collective inlined it (a
// 1024-thread __syncthreads round measured 19 -> 27 us with it inlined).
void suspend(Thread& t);

}  // namespace rl::emu::detail
