// The scheduler's state: a launch (Job), the block a worker runs (Block), its
// CUDA threads (Thread) and the host worker thread that runs them (Worker).
//
// A worker runs one cluster of blocks at a time (one block unless the launch
// has a cluster shape).  It resumes the cluster's runnable fibers
// in schedule order ("a pass"); each runs until it blocks (barrier, warp
// collective, __activemask, __nanosleep, mbarrier wait) or exits.  Barriers
// and collectives complete eagerly, in the fiber of the last arrival, which
// marks every participant runnable and then blocks too, so all of them
// continue in the next pass in schedule order (collectives.cpp).  A pass that
// finds no runnable fiber while some are alive is a deadlock: it is reported,
// the suspended fibers are unwound (AbortBlock thrown at their wait point) and
// the launch fails (block_runner.cpp).
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fiber_stacks.hpp"
#include "fiber_switch.hpp"
#include "internal.hpp"
#include "named_barriers.hpp"
#include "rl/emu/runtime.hpp"

namespace rl::emu::detail {

// object: sleeping in wait_on until wake_waiters names its object (mbarrier).
enum class State : std::uint8_t { runnable, barrier, collective, activemask, object, exited };

struct Block;
struct Cluster;
struct Job;
struct RaceCollectiveSync;  // collectives.cpp

struct Thread {
  Context context = nullptr;  // where it resumes; nullptr once it has finished
  Block* block = nullptr;
  uint3 index{};
  unsigned rank = 0;       // in its block
  State* state = nullptr;  // in the worker's dense array, scanned every pass
  // warp collective in progress
  unsigned mask = 0;
  // In the worker's arrays (rank plus the CTAs before it in the cluster).
  // Here, in mask's padding: the fields above keep the offsets they had before
  // clusters, on the record's first cache line (emu_speed).
  unsigned seat = 0;
  CollectiveFn fn = nullptr;
  void* post = nullptr;
  unsigned participants = 0;
  // wait_on in progress
  const void* wait_object = nullptr;
  WaitDescriber describe = nullptr;
  StackBounds stack;
  ThreadSlot slot[kThreadSlots];
  // Left mid-kernel (device assert, __trap, watchdog): its frames are never
  // unwound (see abandon()).
  bool abandoned = false;
  void* race_fiber = nullptr;  // racecheck: this thread's TSan fiber
  // racecheck: the sync object of the warp collective in progress, shared by
  // its participants (collectives.cpp)
  RaceCollectiveSync* race_collective = nullptr;
  bool fenced = false;  // racecheck: has executed a __threadfence*()
  // barrier.cluster: the number of completed cluster phases at which this
  // thread's pending arrival is done waiting (0: no arrival pending).
  unsigned cluster_until = 0;
};

struct Block {
  const Job* job = nullptr;
  Thread* threads = nullptr;
  State* states = nullptr;
  unsigned count = 0;
  unsigned live = 0;
  uint3 index{};
  unsigned barrier_arrived = 0;
  int barrier_true = 0;
  BarrierResult barrier_result{0, 0};
  // synccheck: threads that exited since the last barrier completed, and
  // where the pending barrier was first reached (a return address).
  unsigned exited_since_barrier = 0;
  const void* barrier_site = nullptr;
  // racecheck sync objects, fresh for every block (their addresses are all
  // TSan knows them by): two for __syncthreads, alternating by generation (a
  // thread cannot arrive at barrier g+2 before every thread left g), and one
  // the worker releases before the block starts (its fibers are reused).
  // Warp collectives have one per instance instead (Thread::race_collective).
  // At least kRaceSyncObjects long under racecheck, empty outside it.
  static constexpr std::size_t kRaceSyncObjects = 3;
  std::vector<std::uint64_t> race_sync;
  unsigned barrier_generation = 0;
  const void* race_object(std::size_t i) const {
    return race_sync.empty() ? nullptr : &race_sync[i];
  }
  const void* race_barrier(unsigned generation) const { return race_object(generation & 1u); }
  const void* race_start() const { return race_object(2); }
  std::vector<unsigned> activemask_waiting;  // per warp
  // Per warp: lanes waiting in any warp collective, and the lanes that have
  // exited or do not exist (a partial last warp).  A collective cannot
  // complete before as many lanes wait as its mask names live ones, so most
  // arrivals skip the scan over the warp.
  std::vector<unsigned> collective_waiting;
  std::vector<unsigned> gone_lanes;
  unsigned object_waiters = 0;   // threads in State::object
  NamedBarriers named_barriers;  // bar.sync / bar.arrive (named_barriers.cpp)
  void* dynamic_shared = nullptr;
  Cluster* cluster = nullptr;  // every block runs in one (a launch without clusters: 1x1x1)
  unsigned cluster_rank = 0;   // %cluster_ctarank
  bool aborting = false;
  std::string failure;
  cudaError_t error = cudaErrorLaunchFailure;  // what the launch reports if `failure` is set
};

// A thread block cluster (clusters.cpp): its CTAs run together on one
// worker, their fibers interleaved in one schedule, so a CTA can wait for
// another (barrier.cluster, a remote mbarrier arrive) and reach its shared
// memory (mapa).  A launch without a cluster shape runs 1x1x1 clusters.
struct Cluster {
  Block* blocks = nullptr;  // `size` of them, in %cluster_ctarank order
  unsigned size = 1;
  // barrier.cluster: completed phases, and the live threads that have not
  // arrived in the current one (exited threads count as arrived).
  unsigned generation = 0;
  unsigned outstanding = 0;
  // The CTA that failed first (the launch reports its failure): set when a
  // failing thread exits (cluster_thread_exited) or the runner fails a CTA.
  const Block* first_failed = nullptr;
  // racecheck: two sync objects, alternating by phase as the block
  // barrier's do (Block::race_sync); empty outside racecheck.
  std::vector<std::uint64_t> race_sync;
  const void* race_phase(unsigned g) const {
    return race_sync.empty() ? nullptr : &race_sync[g & 1u];
  }
};

// Thrown at a wait point to unwind a fiber of an aborted block.
struct AbortBlock {};

// One launch: its blocks are taken in order by every worker that runs it.
struct Job {
  LaunchSpec spec;
  const std::string* name = nullptr;  // kernel_name(spec), looked up once per kernel
  Schedule schedule;
  dim3 cluster{1, 1, 1};       // the cluster shape (spec.cluster)
  unsigned cluster_size = 1;   // CTAs per cluster
  std::uint64_t clusters = 0;  // what the workers take, one after another
  std::atomic<std::uint64_t> next_cluster{0};
  std::atomic<bool> failed{false};
  std::mutex failure_mutex;
  std::string failure;  // the first failure's one-line description
  cudaError_t error = cudaErrorLaunchFailure;
  int device = 0;  // the launching device: where a sticky error lands

  void fail(std::string message, cudaError_t code) {
    std::lock_guard lock(failure_mutex);
    if (!failed.load()) {
      failure = std::move(message);
      error = code;
    }
    failed.store(true);
  }
};

struct Worker {
  StackPool stacks;
  std::vector<Thread> threads;
  std::vector<State> states;      // threads[i]'s state is states[i], dense for the scans
  std::vector<const char*> hot;   // where threads[i]'s stack was last in use, dense likewise
  std::vector<unsigned> order;    // this pass's schedule
  unsigned position = 0;          // next index into `order`
  Context scheduler = nullptr;    // the worker's own context while a fiber runs
  Thread* switch_from = nullptr;  // who jumped last (nullptr: the scheduler)
  StackBounds scheduler_stack;    // the worker's own stack, learned on the first switch
  void* race_fiber = nullptr;     // racecheck: the worker's own TSan fiber
  std::uint64_t switches = 0;     // fibers resumed this pass
  WorkerWatch watch;              // what the watchdog reads (watchdog.cpp)
  ProgressCount waits{watch};     // threads that blocked or exited this pass
};

// The running host thread's worker (set while it runs blocks) and CUDA thread
// (set while one of its fibers runs).  constinit: no dynamic initialisation,
// so other files read them directly, without a TLS wrapper call.
extern constinit thread_local Worker* tl_worker;
extern constinit thread_local Thread* tl_thread;
// Set while a fiber switch is under way (prepare_jump to arrived): the
// watchdog's signal handler must not leave a fiber then.
extern constinit thread_local volatile std::sig_atomic_t tl_switching;

// This host thread's worker, made (with its alternate signal stack) on first use.
Worker& this_worker();

[[noreturn]] void device_intrinsic_outside_kernel();

// The running CUDA thread; a device intrinsic called from host code ends the
// process with one line.
inline Thread& current_thread() {
  if (tl_thread == nullptr) [[unlikely]]
    device_intrinsic_outside_kernel();
  return *tl_thread;
}

// Fails `t`'s block with `message` (the first failure wins) and unwinds `t`.
[[noreturn]] void fail_block(Thread& t, std::string message,
                             cudaError_t error = cudaErrorLaunchFailure);

}  // namespace rl::emu::detail
