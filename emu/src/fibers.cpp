// A CUDA thread's fiber from its first frame to its last jump.
#include "fibers.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "clusters.hpp"
#include "collectives.hpp"

namespace rl::emu::detail {

constinit thread_local Worker* tl_worker = nullptr;
constinit thread_local Thread* tl_thread = nullptr;
constinit thread_local volatile std::sig_atomic_t tl_switching = 0;

Worker& this_worker() {
  thread_local Worker worker;
  if (tl_worker == nullptr) prepare_worker_thread();
  tl_worker = &worker;
  return worker;
}

void device_intrinsic_outside_kernel() {
  std::fprintf(stderr, "rl::emu: a device intrinsic was called outside a kernel\n");
  std::abort();
}

namespace {

// A fiber's first frame: runs the kernel as the thread the scheduler has just
// switched to, then leaves this context for good.
[[noreturn]] void fiber_main() {
  // Accesses stay ignored (race_take_fiber) until the kernel's body runs.
  Worker& worker = *tl_worker;
  Thread& t = *tl_thread;
  arrived(worker, nullptr);
  Block& blk = *t.block;
  race_acquire(blk.race_start());  // the launch, and the worker's set-up, happen before
  if (!blk.aborting) {
    try {
      const LaunchSpec& spec = blk.job->spec;
      const auto entry = spec.entry;  // read as the emulator's: the Job is the host's
      const void* const bound = spec.bound;
      const RaceVisible kernel_body;
      entry(bound);
    } catch (const AbortBlock&) {
    } catch (const std::exception& e) {
      if (blk.failure.empty()) blk.failure = std::string("thread threw an exception: ") + e.what();
      blk.aborting = true;
    } catch (...) {
      if (blk.failure.empty()) blk.failure = "thread threw an exception";
      blk.aborting = true;
    }
  }
  thread_exited(t);
  cluster_thread_exited(t);
  ++worker.waits;
  race_release(blk.job);  // all this thread did happens before the launch returns
  leave_for_good(worker, t, next_runnable(worker));
}

}  // namespace

void suspend(Thread& t) {
  Worker& w = *tl_worker;
  switch_to(w, &t, next_runnable(w));
  if (t.block->aborting) throw AbortBlock{};
}

void start_fiber(Thread& t) {
  unpoison_stack(t.stack.bottom, t.stack.size);  // an unwound fiber can leave redzones poisoned
  t.context = make_context<fiber_main>(const_cast<void*>(t.stack.bottom), t.stack.size);
}

void abandon(Worker& w, Thread& t) {
  Block& b = *t.block;
  t.abandoned = true;
  (*t.state) = State::exited;
  --b.live;
  b.aborting = true;
  leave_for_good(w, t, nullptr);
}

}  // namespace rl::emu::detail
