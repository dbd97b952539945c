// What the rest of the emulator asks of, or does to, the running CUDA thread:
// its label for reports, its stack, its slots and block memory, failing its
// block, and stopping it without unwinding (device assert, __trap, watchdog).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "block_reports.hpp"
#include "fibers.hpp"

namespace rl::emu {
namespace detail {

bool in_kernel() {
  return tl_thread != nullptr;
}

void write_current_thread_label(char* out, std::size_t size) {
  const RaceIgnored bookkeeping;
  const Thread* t = tl_thread;
  if (t == nullptr) {
    std::snprintf(out, size, "outside a kernel");
    return;
  }
  const uint3 b = t->block->index;
  std::snprintf(out, size, "kernel %s, block (%u,%u,%u), thread (%u,%u,%u)",
                t->block->job->name->c_str(), b.x, b.y, b.z, t->index.x, t->index.y, t->index.z);
}

void fail_block(Thread& t, std::string message, cudaError_t error) {
  Block& b = *t.block;
  if (b.failure.empty()) {
    b.failure = std::move(message);
    b.error = error;
  }
  b.aborting = true;
  throw AbortBlock{};
}

[[noreturn]] void fail_current_thread(cudaError_t error, std::string message) {
  Thread& t = current_thread();
  fail_block(t, "thread " + block_label(t.index) + ": " + std::move(message), error);
}

[[noreturn]] void stop_current_thread(cudaError_t error, const char* message) {
  // What this thread did (its reads of the launch's arguments included)
  // happens before the launch returns, as at a normal exit (fiber_main):
  // without it racecheck saw the host's next launch, reusing that stack
  // space for its own arguments, race with a trapped thread's reads.
  race_release(current_thread().block->job);
  race_ignore_begin();  // emulator bookkeeping from here; abandon() ends it
  char where[1024];     // no std::string: this frame is never unwound
  write_current_thread_label(where, sizeof where);
  std::fprintf(stderr, "rl::emu: %s: %s\n", where, message);
  Thread& t = current_thread();
  Block& b = *t.block;
  if (b.failure.empty()) {
    // No temporary may outlive this statement: the fiber's frames are never
    // unwound, so a live std::string here would leak.
    b.failure = "thread " + block_label(t.index) + ": " + message;
    b.error = error;
  }
  set_sticky_error(b.job->device, error);
  abandon(*tl_worker, t);
}

void interrupt_current_thread() {
  // The watchdog signals every poll (250 ms at most) while nothing
  // progresses.  Threads that yield in __nanosleep are stopped by run_block()
  // at the end of the pass, so only a fiber found running by two signals in
  // a row, with no switch in between, has never yielded and is left.
  static thread_local std::uint64_t switches_at_last_signal = ~std::uint64_t{0};
  Worker* w = tl_worker;
  if (tl_thread == nullptr || tl_switching != 0 || w == nullptr ||
      !w->watch.timed_out.load(std::memory_order_relaxed))
    return;
  if (w->switches != switches_at_last_signal) {
    switches_at_last_signal = w->switches;
    return;
  }
  switches_at_last_signal = ~std::uint64_t{0};
  abandon(*w, *tl_thread);
}

bool current_fiber_stack(const void** bottom, std::size_t* size, std::size_t* guard) {
  if (tl_thread == nullptr) return false;
  *bottom = tl_thread->stack.bottom;
  *size = tl_thread->stack.size;
  *guard = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return true;
}

std::size_t fiber_stack_kib() {
  return stack_bytes() / 1024;
}

void* dynamic_shared_memory() {
  const RaceIgnored bookkeeping;
  return current_thread().block->dynamic_shared;
}

}  // namespace detail

ThreadSlot& thread_slot(unsigned which) {
  const detail::RaceIgnored bookkeeping;
  return detail::current_thread().slot[which];
}

}  // namespace rl::emu
