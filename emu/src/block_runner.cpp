// One cluster of blocks (one block without a cluster shape) on one worker: set
// up its threads' fibers, run passes until every thread has exited (or the
// cluster deadlocks, times out or fails), unwind what is left.
#include "block_runner.hpp"

#include <cstring>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "block_reports.hpp"
#include "clusters.hpp"
#include "collectives.hpp"
#include "fibers.hpp"
#include "schedule.hpp"

namespace rl::emu::detail {
namespace {

// Makes `b` block `linear` of `job` on `worker`: its memory, and its
// threads' records and fresh fibers at the worker's seats from `first_seat`.
void start_block(Worker& worker, const Job& job, std::uint64_t linear, Block& b,
                 unsigned first_seat) {
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
  blockIdx = b.index;
  blockDim = block_dim;
  gridDim = grid;

  if constexpr (kRacecheck) b.race_sync.assign(Block::kRaceSyncObjects, 0);
  b.threads = worker.threads.data() + first_seat;
  b.states = worker.states.data() + first_seat;
  for (unsigned r = 0; r < count; ++r) {
    Thread& t = b.threads[r];
    t.block = &b;
    t.rank = r;
    t.seat = first_seat + r;
    t.index =
        uint3{r % block_dim.x, (r / block_dim.x) % block_dim.y, r / (block_dim.x * block_dim.y)};
    t.state = &b.states[r];
    t.stack = worker.stacks.stack(t.seat);
    for (ThreadSlot& slot : t.slot) slot = ThreadSlot{};
    t.fenced = false;
    t.cluster_until = 0;
    start_fiber(t);
    // After the host wrote the fiber's first frame; states: one per seat of the cluster.
    t.race_fiber = race_take_fiber(worker.states.size());
  }
  race_release(b.race_start());
}

// The linear index of the block of rank `rank` in cluster `cluster` (both
// x fastest, %cluster_ctarank's order).
std::uint64_t block_of_cluster(const Job& job, std::uint64_t cluster, unsigned rank) {
  const dim3 g = job.spec.grid, s = job.cluster;
  const uint3 c = block_index(cluster, dim3{g.x / s.x, g.y / s.y, g.z / s.z});
  const uint3 r = block_index(rank, s);
  const std::uint64_t x = std::uint64_t{c.x} * s.x + r.x, y = std::uint64_t{c.y} * s.y + r.y,
                      z = std::uint64_t{c.z} * s.z + r.z;
  return x + g.x * (y + std::uint64_t{g.y} * z);
}

// Starts the blocks of cluster `linear` on `worker`, block r's threads at
// seats r * count .. (r + 1) * count - 1.
void start_cluster(Worker& worker, const Job& job, std::uint64_t linear, Cluster& c) {
  const dim3 block_dim = job.spec.block;
  const unsigned count = block_dim.x * block_dim.y * block_dim.z;
  const unsigned seats = count * c.size;
  ++worker.waits;  // a block start is progress
  worker.watch.timed_out.store(false, std::memory_order_relaxed);
  worker.watch.block.store(block_of_cluster(job, linear, 0), std::memory_order_relaxed);
  worker.watch.spec.store(&job.spec, std::memory_order_release);
  if (worker.threads.size() < seats) worker.threads.resize(seats);
  worker.hot.resize(worker.threads.size());
  worker.states.assign(seats, State::runnable);
  if constexpr (kRacecheck) {
    c.race_sync.assign(2, 0);
    worker.stacks.renew(seats);
  }
  worker.race_fiber = race_current_fiber();
  c.outstanding = seats;
  for (unsigned r = 0; r < c.size; ++r) {
    c.blocks[r].cluster = &c;
    c.blocks[r].cluster_rank = r;
    start_block(worker, job, block_of_cluster(job, linear, r), c.blocks[r], r * count);
  }
}

// After the last pass: unwinds every fiber of `b` that has not finished
// (never started ones just return), one at a time: with the pass exhausted
// each jumps straight back here.
void unwind_block(Worker& worker, Block& b) {
  for (unsigned r = 0; r < b.count; ++r) {
    Thread& t = b.threads[r];
    if (t.abandoned) {  // never unwound: only its slots are released
      release_slots(t);
      t.abandoned = false;
      continue;
    }
    if (t.context == nullptr) continue;
    worker.position = static_cast<unsigned>(worker.order.size());
    switch_to(worker, nullptr, &t);
  }
}

// Every block of the cluster is unwound before any shared memory is freed:
// an unwinding thread's destructors may still reach another CTA's.
void finish_cluster(Worker& worker, Cluster& c) {
  for (unsigned r = 0; r < c.size; ++r) unwind_block(worker, c.blocks[r]);
  if constexpr (kRacecheck) {  // given back together: the pool keeps the last return in reserve
    std::vector<void*> fibers;
    for (unsigned r = 0; r < c.size; ++r)
      for (unsigned i = 0; i < c.blocks[r].count; ++i)
        fibers.push_back(std::exchange(c.blocks[r].threads[i].race_fiber, nullptr));
    race_give_back_fibers(fibers.data(), fibers.size());
  }
  for (unsigned r = 0; r < c.size; ++r)
    ::operator delete (c.blocks[r].dynamic_shared, std::align_val_t{128});
}

unsigned live_threads(const Cluster& c) {
  unsigned live = 0;
  for (unsigned r = 0; r < c.size; ++r) live += c.blocks[r].live;
  return live;
}

// One aborting CTA aborts its cluster: the others may wait for it.
bool abort_if_any(Cluster& c) {
  bool any = false;
  for (unsigned r = 0; r < c.size; ++r) any = any || c.blocks[r].aborting;
  if (any)
    for (unsigned r = 0; r < c.size; ++r) c.blocks[r].aborting = true;
  return any;
}

// The block whose thread the watchdog's signal left (else the first one).
Block& interrupted_block(Cluster& c, const Thread** interrupted) {
  for (unsigned r = 0; r < c.size; ++r)
    for (unsigned i = 0; i < c.blocks[r].count; ++i)
      if (c.blocks[r].threads[i].abandoned) {
        *interrupted = &c.blocks[r].threads[i];
        return c.blocks[r];
      }
  return c.blocks[0];
}

// A cluster in which no thread can proceed: the report (on the first CTA
// with live threads) describes every CTA that still has some, since one CTA
// may wait for another's arrival.
void deadlock(Cluster& c) {
  const DescribedCluster described(c);  // barriers named by their CTA and offset
  Block* first = nullptr;
  std::string report;
  for (unsigned r = 0; r < c.size; ++r) {
    const Block& b = c.blocks[r];
    if (b.live == 0) continue;
    if (first == nullptr) first = &c.blocks[r];
    if (c.size > 1) report += (report.empty() ? "CTA " : "; CTA ") + std::to_string(r) + ": ";
    report += deadlock_description(b);
  }
  first->failure = "deadlock: " + report;
  if (c.first_failed == nullptr) c.first_failed = first;
}

void run_cluster(Worker& worker, const Job& job, std::uint64_t linear, std::string& failure,
                 cudaError_t& error) {
  const RaceIgnored bookkeeping;  // the worker's own context runs only the emulator
  std::vector<Block> blocks(job.cluster_size);
  Cluster c;
  c.blocks = blocks.data();
  c.size = job.cluster_size;
  start_cluster(worker, job, linear, c);
  PassOrder passes(job.schedule, linear);
  passes.start(worker.order, static_cast<unsigned>(worker.states.size()));

  while (live_threads(c) > 0 && !abort_if_any(c)) {
    passes.next_pass(worker.order);
    worker.position = 0;
    worker.switches = 0;
    worker.waits = 0;
    if (Thread* first = next_runnable(worker)) switch_to(worker, nullptr, first);
    const bool ran = worker.switches > 0;
    // No fiber ever waits for an outside event, so a cluster in which nothing
    // blocks or exits for RL_EMU_WATCHDOG_S (threads spinning in __nanosleep,
    // or one spinning without yielding, which the watchdog's signal has just
    // left) can never finish.
    if (worker.watch.timed_out.load(std::memory_order_relaxed)) {
      const Thread* interrupted = nullptr;
      Block& b = interrupted_block(c, &interrupted);
      if (b.failure.empty() || interrupted != nullptr) {
        b.failure = watchdog_description(b, interrupted);
        b.error = cudaErrorLaunchTimeout;
      }
      if (c.first_failed == nullptr) c.first_failed = &b;
      b.aborting = true;
    }
    if (abort_if_any(c)) break;
    if (!ran && live_threads(c) > 0) {
      deadlock(c);
      blocks[0].aborting = true;
    }
  }
  finish_cluster(worker, c);
  // A trap (abandon) ends the pass at once without an exit: then the one
  // failed CTA is the first.
  const Block* failed = c.first_failed;
  for (unsigned r = 0; r < c.size && failed == nullptr; ++r)
    if (!blocks[r].failure.empty()) failed = &blocks[r];
  if (failed != nullptr) {
    failure = "block " + block_label(failed->index) + ": " + failed->failure;
    error = failed->error;
  }
}

// Runs one cluster (one block without a cluster shape) on this host
// thread's worker.  Under racecheck each cluster gets a fresh host thread instead: its static
// __shared__ objects (thread locals) are then new memory to TSan, not memory that the previous
// block's fibers used with nothing ordering them before this block's (TSan in GCC 12 has no
// interface call that forgets a range, and an edge between the blocks would hide every race between
// them).  The fiber stacks stay the host worker's, mapped again for each block (StackPool::renew,
// which TSan does forget).
void run_cluster_here(Worker& worker, const Job& job, std::uint64_t linear, std::string& failure,
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
      run_cluster(block_worker, job, linear, failure, error);
      unwatch(block_worker.watch);
      tl_worker = nullptr;
    }).join();
  } else {
    run_cluster(worker, job, linear, failure, error);
  }
}

}  // namespace

void run_blocks(Job& job) {
  Worker& worker = this_worker();
  std::string failure;
  cudaError_t error = cudaErrorLaunchFailure;
  if constexpr (!kRacecheck) watch(worker.watch);  // racecheck: each block's own thread
  while (!job.failed.load(std::memory_order_relaxed)) {
    const std::uint64_t linear = job.next_cluster.fetch_add(1);
    if (linear >= job.clusters) break;
    run_cluster_here(worker, job, linear, failure, error);
    if (!failure.empty()) {
      job.fail(std::move(failure), error);
      break;
    }
  }
  if constexpr (!kRacecheck) unwatch(worker.watch);
}

}  // namespace rl::emu::detail
