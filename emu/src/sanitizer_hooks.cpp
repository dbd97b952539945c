// The out-of-line racecheck hooks (sanitizer_hooks.hpp): the TSan fiber pool
// and CUDA's fence-then-atomic model (rl/emu/block.hpp).  Empty in other
// builds, where the header's inline no-ops stand in for them.
#include "sanitizer_hooks.hpp"

#if defined(RL_EMU_TSAN)

#include <deque>
#include <mutex>

#include "block_state.hpp"

namespace rl::emu::detail {
namespace {

// Creating a TSan fiber costs about as much as creating a thread (GCC 12's
// runtime zeroes and maps a large per-thread state), so fibers are reused.  A
// reused fiber carries its last thread's history, which orders that thread
// before the new one; the queue is first in, first out and kept at least as
// long as the block taking fibers plus the block that gave some back last, so
// no block gets a fiber of the block that ran just before it (blocks two or
// more apart may be ordered: README "Sanitizers on the CPU").
class RaceFiberPool {
 public:
  void* take(std::size_t block_threads) {
    std::lock_guard lock(mutex_);
    while (idle_.size() < block_threads + last_returned_) idle_.push_back(__tsan_create_fiber(0));
    void* const fiber = idle_.front();
    idle_.pop_front();
    return fiber;
  }
  void give_back(void* const* fibers, std::size_t count) {
    std::lock_guard lock(mutex_);
    idle_.insert(idle_.end(), fibers, fibers + count);
    last_returned_ = count;
  }

 private:
  std::mutex mutex_;
  std::deque<void*> idle_;
  std::size_t last_returned_ = 0;
};

RaceFiberPool& race_fiber_pool() {
  static RaceFiberPool* pool = new RaceFiberPool;  // outlives every worker thread
  return *pool;
}

}  // namespace

// The fiber starts with its accesses ignored: until its first jump lands, the
// code of whoever jumps to it already runs as it (race_switch comes first).
void* race_take_fiber(std::size_t block_threads) {
  void* const fiber = race_fiber_pool().take(block_threads);
  void* const self = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(fiber, __tsan_switch_to_fiber_no_sync);
  __tsan_ignore_thread_begin();
  __tsan_switch_to_fiber(self, __tsan_switch_to_fiber_no_sync);
  return fiber;
}

void race_give_back_fibers(void* const* fibers, std::size_t count) {
  race_fiber_pool().give_back(fibers, count);
}

void race_fence() {
  const RaceIgnored bookkeeping;
  if (tl_thread != nullptr) tl_thread->fenced = true;
}

void race_atomic_begin(const void* address) {
  const RaceIgnored bookkeeping;
  if (tl_thread != nullptr && tl_thread->fenced) race_release(address);
}

void race_atomic_end(const void* address) {
  race_acquire(address);
}

}  // namespace rl::emu::detail

#endif  // RL_EMU_TSAN
