// One block on one worker: set up its threads' fibers, run passes until every
// thread has exited (or the block deadlocks, times out or fails), unwind what
// is left.
#include "block_runner.hpp"

#include <cstring>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "block_reports.hpp"
#include "collectives.hpp"
#include "fibers.hpp"
#include "schedule.hpp"

namespace rl::emu::detail {
namespace {

// Makes `b` block `linear` of `job` on `worker`: its memory, its threads'
// records and fresh fibers on the worker's stacks.
void start_block(Worker& worker, const Job& job, std::uint64_t linear, Block& b) {
  const dim3 grid = job.spec.grid;
  const dim3 block_dim = job.spec.block;
  const unsigned count = block_dim.x * block_dim.y * block_dim.z;

  b.job = &job;
  b.count = count;
  b.live = count;
  b.index = block_index(linear, grid);
  b.activemask_waiting.assign((count + 31) / 32, 0);
  b.collective_waiting.assign((count + 31) / 32, 0);
  b.gone_lanes.assign((count + 31) / 32, 0);
  if (count % 32 != 0) b.gone_lanes.back() = ~0u << (count % 32);
  // Exactly shared_bytes, on the heap, so ASan sees an overrun of it.
  b.dynamic_shared = ::operator new (job.spec.shared_bytes, std::align_val_t{128});
  if (poison_enabled()) {
    std::memset(b.dynamic_shared, kPoisonByte, job.spec.shared_bytes);
    poison_static_shared(job.spec.kernel);
  }
  ++worker.waits;  // a block start is progress
  worker.watch.timed_out.store(false, std::memory_order_relaxed);
  worker.watch.block.store(linear, std::memory_order_relaxed);
  worker.watch.spec.store(&job.spec, std::memory_order_release);

  blockIdx = b.index;
  blockDim = block_dim;
  gridDim = grid;

  if (worker.threads.size() < count) worker.threads.resize(count);
  worker.hot.resize(worker.threads.size());
  worker.states.assign(count, State::runnable);
  if constexpr (kRacecheck) {
    b.race_sync.assign(Block::kRaceSyncObjects, 0);
    worker.stacks.renew(count);
  }
  worker.race_fiber = race_current_fiber();
  b.threads = worker.threads.data();
  b.states = worker.states.data();
  for (unsigned r = 0; r < count; ++r) {
    Thread& t = worker.threads[r];
    t.block = &b;
    t.rank = r;
    t.index =
        uint3{r % block_dim.x, (r / block_dim.x) % block_dim.y, r / (block_dim.x * block_dim.y)};
    t.state = &worker.states[r];
    t.stack = worker.stacks.stack(r);
    for (ThreadSlot& slot : t.slot) slot = ThreadSlot{};
    t.fenced = false;
    start_fiber(t);
    t.race_fiber = race_take_fiber(count);  // after the host wrote the fiber's first frame
  }
  race_release(b.race_start());
}

// After the last pass: unwinds every fiber that has not finished (never
// started ones just return), one at a time: with the pass exhausted each
// jumps straight back here.
void finish_block(Worker& worker, Block& b) {
  for (unsigned r = 0; r < b.count; ++r) {
    Thread& t = worker.threads[r];
    if (t.abandoned) {  // never unwound: only its slots are released
      release_slots(t);
      t.abandoned = false;
      continue;
    }
    if (t.context == nullptr) continue;
    worker.position = b.count;
    switch_to(worker, nullptr, &t);
  }
  if constexpr (kRacecheck) {
    std::vector<void*> fibers(b.count);
    for (unsigned r = 0; r < b.count; ++r)
      fibers[r] = std::exchange(worker.threads[r].race_fiber, nullptr);
    race_give_back_fibers(fibers.data(), b.count);
  }
  ::operator delete (b.dynamic_shared, std::align_val_t{128});
}

void run_block(Worker& worker, const Job& job, std::uint64_t linear, std::string& failure,
               cudaError_t& error) {
  const RaceIgnored bookkeeping;  // the worker's own context runs only the emulator
  Block b;
  start_block(worker, job, linear, b);
  PassOrder passes(job.schedule, linear);
  passes.start(worker.order, b.count);

  while (b.live > 0 && !b.aborting) {
    passes.next_pass(worker.order);
    worker.position = 0;
    worker.switches = 0;
    worker.waits = 0;
    if (Thread* first = next_runnable(worker)) switch_to(worker, nullptr, first);
    const bool ran = worker.switches > 0;
    // No fiber ever waits for an outside event, so a block in which nothing
    // blocks or exits for RL_EMU_WATCHDOG_S (threads spinning in __nanosleep,
    // or one spinning without yielding, which the watchdog's signal has just
    // left) can never finish.
    if (worker.watch.timed_out.load(std::memory_order_relaxed)) {
      const Thread* interrupted = nullptr;
      for (unsigned r = 0; r < b.count && interrupted == nullptr; ++r)
        if (worker.threads[r].abandoned) interrupted = &worker.threads[r];
      if (b.failure.empty() || interrupted != nullptr) {
        b.failure = watchdog_description(b, interrupted);
        b.error = cudaErrorLaunchTimeout;
      }
      b.aborting = true;
    }
    if (b.aborting) break;
    if (!ran && b.live > 0) {
      b.failure = "deadlock: " + deadlock_description(b);
      b.aborting = true;
    }
  }
  finish_block(worker, b);
  if (!b.failure.empty()) {
    failure = "block " + block_label(b.index) + ": " + b.failure;
    error = b.error;
  }
}

// Runs one block on this host thread's worker.  Under racecheck each block
// gets a fresh host thread instead: its static __shared__ objects (thread
// locals) are then new memory to TSan, not memory that the previous block's
// fibers used with nothing ordering them before this block's (TSan in GCC 12
// has no interface call that forgets a range, and an edge between the blocks would
// hide every race between them).  The fiber stacks stay the host worker's,
// mapped again for each block (StackPool::renew, which TSan does forget).
void run_block_here(Worker& worker, const Job& job, std::uint64_t linear, std::string& failure,
                    cudaError_t& error) {
  if constexpr (kRacecheck) {
    // `worker` stays idle in join() below, so the watchdog watches the
    // block's own thread.  A malformed variable ends the process, which TSan
    // refuses from a thread inside an ignored section: read them out here.
    poison_enabled();
    stack_bytes();
    watchdog_seconds();
    std::thread([&] {
      const RaceIgnored bookkeeping;              // tearing the worker down included
      const BlockThreadSignalStack signal_stack;  // for the crash report after a stack overflow
      Worker block_worker;
      struct BorrowedStacks {  // mapped once per host worker, renewed per block
        StackPool& own;
        StackPool& borrower;
        BorrowedStacks(StackPool& o, StackPool& b) : own(o), borrower(b) { borrower.swap(own); }
        ~BorrowedStacks() { borrower.swap(own); }
      } borrowed{worker.stacks, block_worker.stacks};
      tl_worker = &block_worker;
      watch(block_worker.watch);
      run_block(block_worker, job, linear, failure, error);
      unwatch(block_worker.watch);
      tl_worker = nullptr;
    }).join();
  } else {
    run_block(worker, job, linear, failure, error);
  }
}

}  // namespace

void run_blocks(Job& job) {
  Worker& worker = this_worker();
  std::string failure;
  cudaError_t error = cudaErrorLaunchFailure;
  if constexpr (!kRacecheck) watch(worker.watch);  // racecheck: each block's own thread
  while (!job.failed.load(std::memory_order_relaxed)) {
    const std::uint64_t linear = job.next_block.fetch_add(1);
    if (linear >= job.blocks) break;
    run_block_here(worker, job, linear, failure, error);
    if (!failure.empty()) {
      job.fail(std::move(failure), error);
      break;
    }
  }
  if constexpr (!kRacecheck) unwatch(worker.watch);
}

}  // namespace rl::emu::detail
