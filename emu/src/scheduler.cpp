// The emulator's execution model: blocks on host workers, CUDA threads as
// fibers, block barriers, warp rendezvous, schedules and deadlock detection.
//
// A worker runs one block at a time.  It resumes the block's runnable fibers
// in schedule order ("a pass"); each runs until it blocks (barrier, warp
// collective, __activemask, __nanosleep) or exits.  Barriers and collectives
// complete eagerly, in the fiber of the last arrival, which marks every
// participant runnable and then blocks too, so all of them continue in the
// next pass in schedule order.  A pass that finds no runnable fiber while some
// are alive is a deadlock: it is reported, the suspended fibers are unwound
// (an exception thrown at their wait point) and the launch fails.
//
// Fiber stacks are allocated once per worker (mmap with a guard page) and
// reused by every block the worker runs.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cxxabi.h>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fiber_switch.hpp"
#include "internal.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define RL_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RL_EMU_ASAN 1
#endif
#endif

#if defined(RL_EMU_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace rl::emu {
namespace detail {
namespace {

// ---- configuration ------------------------------------------------------------

std::size_t stack_bytes() {
  static const std::size_t bytes = [] {
#if defined(RL_EMU_ASAN)
    std::size_t kib = 256;  // ASan's redzones make frames several times larger
#else
    std::size_t kib = 64;
#endif
    if (const char* text = std::getenv("RL_EMU_STACK_KB")) {
      const char* end = text + std::strlen(text);
      auto [p, ec] = std::from_chars(text, end, kib);
      if (ec != std::errc() || p != end || kib < 16 || kib > 65536)
        bad_environment("RL_EMU_STACK_KB", text, "an integer number of KiB in [16, 65536]");
    }
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return (kib * 1024 + page - 1) / page * page;
  }();
  return bytes;
}

std::mutex g_config_mutex;

bool environment_poison() {
  static const bool poison = [] {
    const char* text = std::getenv("RL_EMU_POISON");
    if (text == nullptr || *text == '\0' || std::strcmp(text, "0") == 0) return false;
    if (std::strcmp(text, "1") != 0) bad_environment("RL_EMU_POISON", text, "0 or 1");
    return true;
  }();
  return poison;
}
std::optional<Schedule> g_schedule_override;
int g_worker_override = 0;

Schedule environment_schedule() {
  static const Schedule schedule = [] {
    const char* text = std::getenv("RL_EMU_SCHEDULE");
    if (text == nullptr || *text == '\0') return Schedule{};
    auto parsed = parse_schedule(text);
    if (!parsed) bad_environment("RL_EMU_SCHEDULE", text, "forward|reverse|random[:seed]");
    return *parsed;
  }();
  return schedule;
}

int environment_workers() {
  static const int workers = [] {
    const char* text = std::getenv("RL_EMU_THREADS");
    if (text == nullptr || *text == '\0') return 1;
    int n = 0;
    const char* end = text + std::strlen(text);
    auto [p, ec] = std::from_chars(text, end, n);
    if (ec != std::errc() || p != end || n < 1 || n > 256)
      bad_environment("RL_EMU_THREADS", text, "an integer in [1, 256]");
    return n;
  }();
  return workers;
}

// ---- ASan fiber annotations ---------------------------------------------------

struct StackBounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

#if defined(RL_EMU_ASAN)
inline void start_switch(void** fake_stack, const StackBounds& to) {
  __sanitizer_start_switch_fiber(fake_stack, to.bottom, to.size);
}
inline void finish_switch(void* fake_stack, StackBounds* from) {
  __sanitizer_finish_switch_fiber(fake_stack, from ? &from->bottom : nullptr,
                                  from ? &from->size : nullptr);
}
#else
inline void start_switch(void**, const StackBounds&) {}
inline void finish_switch(void*, StackBounds*) {}
#endif

// ---- TSan fiber annotations (racecheck) ---------------------------------------
// Each CUDA thread runs as its own TSan fiber, taken by the worker for its
// block and given back when the block is done; race_switch() goes with every
// start_switch(): the jump implies no synchronisation (see internal.hpp).

#if defined(RL_EMU_TSAN)
inline void* race_current_fiber() {
  return __tsan_get_current_fiber();
}

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

// The fiber starts with its accesses ignored: until its first jump lands, the
// code of whoever jumps to it already runs as it (race_switch comes first).
inline void* race_take_fiber(std::size_t block_threads) {
  void* const fiber = race_fiber_pool().take(block_threads);
  void* const self = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(fiber, __tsan_switch_to_fiber_no_sync);
  __tsan_ignore_thread_begin();
  __tsan_switch_to_fiber(self, __tsan_switch_to_fiber_no_sync);
  return fiber;
}
inline void race_give_back_fibers(void* const* fibers, std::size_t count) {
  race_fiber_pool().give_back(fibers, count);
}
inline void race_switch(void* fiber) {
  __tsan_switch_to_fiber(fiber, __tsan_switch_to_fiber_no_sync);
}

#else
inline void* race_current_fiber() {
  return nullptr;
}
inline void* race_take_fiber(std::size_t) {
  return nullptr;
}
inline void race_switch(void*) {}
#endif

// ---- stacks ---------------------------------------------------------------------

class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool() {
    for (void* base : bases_) munmap(base, stack_bytes() + guard_bytes());
  }

  // Stack i's usable region (the guard page lies below it).
  StackBounds stack(std::size_t i) {
    while (bases_.size() <= i) {
      void* base = mmap(nullptr, stack_bytes() + guard_bytes(), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (base == MAP_FAILED) throw std::bad_alloc();
      mprotect(base, guard_bytes(), PROT_NONE);
      bases_.push_back(base);
    }
    // Stacks are a page multiple apart, so their tops would share a few cache
    // sets and evict each other on every switch; a per-stack offset of whole
    // cache lines ("colouring") spreads the hot top-of-stack lines over all sets.
    const std::size_t colour = ((i / 32) % 64) * 64;
    return {static_cast<char*>(bases_[i]) + guard_bytes(), stack_bytes() - colour};
  }

 private:
  static std::size_t guard_bytes() {
    static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return page;
  }
  std::vector<void*> bases_;
};

// ---- threads, blocks, workers ------------------------------------------------

// object: sleeping in wait_on until wake_waiters names its object (mbarrier).
enum class State : std::uint8_t { runnable, barrier, collective, activemask, object, exited };

struct Block;

struct Thread {
  Context context = nullptr;  // where it resumes; nullptr once it has finished
  Block* block = nullptr;
  uint3 index{};
  unsigned rank = 0;
  State* state = nullptr;  // in the worker's dense array, scanned every pass
  // warp collective in progress
  unsigned mask = 0;
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
  bool fenced = false;         // racecheck: has executed a __threadfence*()
};

struct Job;

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
  // TSan knows them by): per thread one for arriving at and one for leaving
  // a warp collective, then two for __syncthreads, alternating by generation
  // (a thread cannot arrive at barrier g+2 before every thread left g), and
  // one the worker releases before the block starts (its fibers are reused).
  std::vector<std::uint64_t> race_sync;
  unsigned barrier_generation = 0;
  const void* race_object(std::size_t i) const {
    return race_sync.empty() ? nullptr : &race_sync[i];
  }
  const void* race_arrive(unsigned rank) const { return race_object(2 * std::size_t{rank}); }
  const void* race_depart(unsigned rank) const { return race_object(2 * std::size_t{rank} + 1); }
  const void* race_barrier(unsigned generation) const {
    return race_object(2 * std::size_t{count} + (generation & 1u));
  }
  const void* race_start() const { return race_object(2 * std::size_t{count} + 2); }
  std::vector<unsigned> activemask_waiting;  // per warp
  // Per warp: lanes waiting in any warp collective, and the lanes that have
  // exited or do not exist (a partial last warp).  A collective cannot
  // complete before as many lanes wait as its mask names live ones, so most
  // arrivals skip the scan over the warp.
  std::vector<unsigned> collective_waiting;
  std::vector<unsigned> gone_lanes;
  unsigned object_waiters = 0;  // threads in State::object
  void* dynamic_shared = nullptr;
  bool aborting = false;
  std::string failure;
  cudaError_t error = cudaErrorLaunchFailure;  // what the launch reports if `failure` is set
};

// Thrown at a wait point to unwind a fiber of an aborted block.
struct AbortBlock {};

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
  WorkerWatch watch;              // what the watchdog reads (diagnostics.cpp)
  ProgressCount waits{watch};     // threads that blocked or exited this pass
};

thread_local Worker* tl_worker = nullptr;
thread_local Thread* tl_thread = nullptr;
// Set while a fiber switch is under way (prepare_jump to arrived): the
// watchdog's signal handler must not leave a fiber then.
thread_local volatile std::sig_atomic_t tl_switching = 0;

Worker& this_worker() {
  thread_local Worker worker;
  if (tl_worker == nullptr) prepare_worker_thread();
  tl_worker = &worker;
  return worker;
}

Thread& current_thread() {
  if (tl_thread == nullptr) {
    std::fprintf(stderr, "rl::emu: a device intrinsic was called outside a kernel\n");
    std::abort();
  }
  return *tl_thread;
}

// ---- jobs (one launch) -----------------------------------------------------

struct Job {
  LaunchSpec spec;
  const std::string* name = nullptr;  // kernel_name(spec), looked up once per kernel
  Schedule schedule;
  std::uint64_t blocks = 0;
  std::atomic<std::uint64_t> next_block{0};
  std::atomic<bool> failed{false};
  std::mutex failure_mutex;
  std::string failure;  // the first failure's one-line description
  cudaError_t error = cudaErrorLaunchFailure;

  void fail(std::string message, cudaError_t code) {
    std::lock_guard lock(failure_mutex);
    if (!failed.load()) {
      failure = std::move(message);
      error = code;
    }
    failed.store(true);
  }
};

std::string demangle(const char* symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(symbol, nullptr, nullptr, &status), std::free);
  return status == 0 ? demangled.get() : symbol;
}

std::string kernel_name(const LaunchSpec& spec) {
  Dl_info info{};
  if (dladdr(spec.kernel, &info) != 0 && info.dli_sname != nullptr && info.dli_saddr == spec.kernel)
    return demangle(info.dli_sname);
  // Kernels with internal linkage (static, anonymous namespace) are only in
  // the ELF .symtab, not in the dynamic symbol table that dladdr() reads.
  if (const std::string mangled = symbol_table_name(spec.kernel); !mangled.empty())
    return demangle(mangled.c_str());
  // A stripped binary: the kernel's address and parameter types, from
  // rl::launch's signature.
  const std::string_view signature = spec.signature;
  const std::string_view key = "KernelParams = {";
  std::string params = "?";
  if (const auto at = signature.find(key); at != std::string_view::npos) {
    const auto end = signature.find('}', at);
    params = std::string(signature.substr(at + key.size(), end - at - key.size()));
  }
  char address[32];
  std::snprintf(address, sizeof address, "%p", spec.kernel);
  return std::string("<kernel at ") + address + ">(" + params + ")";
}

// kernel_name() once per kernel: reports made where nothing may allocate
// (the SIGSEGV handler) read the Job's copy.
const std::string& cached_kernel_name(const LaunchSpec& spec) {
  static std::mutex mutex;
  static std::unordered_map<const void*, std::string> names;  // node-based: stable references
  std::lock_guard lock(mutex);
  auto [at, inserted] = names.try_emplace(spec.kernel);
  if (inserted) at->second = kernel_name(spec);
  return at->second;
}

// blockIdx of the `linear`-th block of `grid` (x fastest).
uint3 block_index(std::uint64_t linear, const dim3& grid) {
  return uint3{static_cast<unsigned>(linear % grid.x),
               static_cast<unsigned>((linear / grid.x) % grid.y),
               static_cast<unsigned>(linear / (static_cast<std::uint64_t>(grid.x) * grid.y))};
}

std::string block_label(const uint3& b) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", b.x, b.y, b.z);
  return buf;
}

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// ---- switching --------------------------------------------------------------

// Fibers switch directly to the next runnable fiber of the pass (one jump per
// thread and pass instead of two through the scheduler); the last one of a
// pass switches back to the scheduler.  Each jump saves the context it leaves
// in the leaver's own slot (Thread::context, or Worker::scheduler).

// The next runnable thread of this pass, or nullptr when the pass is over.
Thread* next_runnable(Worker& w) {
  while (w.position < w.order.size()) {
    const unsigned rank = w.order[w.position++];
    if (w.states[rank] != State::runnable) continue;
    Thread& t = w.threads[rank];
    // The lines a fiber touches when it resumes are cold (a block's fibers
    // together exceed the L1 cache); fetch the following thread's record and
    // the three stack lines around where it stopped while this one runs.  A
    // wider window costs more than it saves: 12 lines per fiber made a
    // 1024-thread barrier round 30 % slower (the prefetched lines of all
    // fibers no longer fit in L2), and fetching two or three threads ahead
    // gained nothing (emu_speed; emu/README.md has the numbers).
    if (w.position < w.order.size()) {
      const unsigned following = w.order[w.position];
      __builtin_prefetch(&w.threads[following], 0);
      if (const char* hot = w.hot[following]) {
        for (int line = -1; line < 2; ++line) __builtin_prefetch(hot + 64 * line, 1);
      }
    }
    return &t;
  }
  return nullptr;
}

void prepare_jump(Worker& w, Thread* self, Thread* target) {
  tl_switching = 1;
  w.switch_from = self;
  tl_thread = target;
  if (target != nullptr) {
    threadIdx = target->index;
    ++w.switches;
  }
}

Context& context_of(Worker& w, Thread* thread) {
  return thread != nullptr ? thread->context : w.scheduler;
}

const StackBounds& stack_of(Worker& w, Thread* target) {
  return target != nullptr ? target->stack : w.scheduler_stack;
}

void* race_fiber_of(Worker& w, Thread* target) {
  return target != nullptr ? target->race_fiber : w.race_fiber;
}

// Runs in the context that was just resumed.  The worker's own stack is
// learned from the first jump that leaves it (ASan reports the bounds of the
// stack a switch came from).
void arrived(Worker& w, const StackBounds& from_stack) {
  if (w.switch_from == nullptr) w.scheduler_stack = from_stack;
  tl_switching = 0;
}

// Leaves `self` (a thread, or nullptr for the scheduler) for `target` and
// returns when something switches back to `self`.
void switch_to(Worker& w, Thread* self, Thread* target) {
  if (self != nullptr) w.hot[self->rank] = static_cast<const char*>(__builtin_frame_address(0));
  prepare_jump(w, self, target);
  void* fake_stack = nullptr;
  start_switch(&fake_stack, stack_of(w, target));
  race_switch(race_fiber_of(w, target));
  switch_context(&context_of(w, self), context_of(w, target));
  StackBounds from_stack;
  finish_switch(fake_stack, &from_stack);
  arrived(w, from_stack);
}

// Called in a fiber that has just blocked (or yields): runs the rest of the
// pass; returns when the scheduler resumes this thread in a later pass.
void suspend(Thread& t) {
  Worker& w = *tl_worker;
  switch_to(w, &t, next_runnable(w));
  if (t.block->aborting) throw AbortBlock{};
}

[[noreturn]] void fail_block(Thread& t, std::string message,
                             cudaError_t error = cudaErrorLaunchFailure) {
  Block& b = *t.block;
  if (b.failure.empty()) {
    b.failure = std::move(message);
    b.error = error;
  }
  b.aborting = true;
  throw AbortBlock{};
}

// Leaves the running fiber for good without unwinding it: for device assert
// and __trap (glibc declares __assert_fail noexcept, so no exception may leave
// it) and for the watchdog's signal handler.  Only plain stores and the jump
// itself, so it is async-signal-safe.  The fiber's destructors never run (a
// kernel's own heap allocations leak) and its stack is reused by the next
// block, as after a fiber's final jump.  Under racecheck it is entered with
// the fiber's accesses ignored (stop_current_thread; the watchdog's signal is
// not sent there) and leaves for the worker's TSan fiber.
[[noreturn]] void abandon(Worker& w, Thread& t) {
  Block& b = *t.block;
  t.abandoned = true;
  (*t.state) = State::exited;
  --b.live;
  b.aborting = true;
  t.context = nullptr;  // nothing resumes it
  prepare_jump(w, &t, nullptr);
  start_switch(nullptr, w.scheduler_stack);  // nullptr: this fiber's fake stack is freed
  Context finished;
  race_ignore_end();  // a fiber goes back to the pool with no ignores on
  race_switch(w.race_fiber);
  switch_context(&finished, w.scheduler);
  __builtin_unreachable();
}

// ---- barrier and warp rendezvous --------------------------------------------

// Where code at `return_address` was called from, for `addr2line -e`.
std::string call_site(const void* return_address) {
  Dl_info info{};
  const auto pc = reinterpret_cast<std::uintptr_t>(return_address) - 1;  // inside the call
  char buf[64];
  if (dladdr(return_address, &info) == 0 || info.dli_fname == nullptr) {
    std::snprintf(buf, sizeof buf, "%#zx", static_cast<std::size_t>(pc));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%#zx",
                static_cast<std::size_t>(pc - reinterpret_cast<std::uintptr_t>(info.dli_fbase)));
  const std::string file = *info.dli_fname != '\0' ? info.dli_fname : "/proc/self/exe";
  return file + "+" + buf + " (addr2line -e " + file + " " + buf + ")";
}

// synccheck: a barrier that completes after threads exited without reaching
// it is divergent (the CUDA programming guide: __syncthreads in conditional
// code only if the condition is uniform across the block).
void check_divergent_barrier(Block& b) {
  if (b.exited_since_barrier == 0 || b.aborting) return;
  b.failure = "divergent __syncthreads: " + std::to_string(b.exited_since_barrier) + " of " +
              std::to_string(b.count) +
              " threads exited without reaching the barrier that the other " +
              std::to_string(b.barrier_arrived) + " live threads wait at, called from " +
              call_site(b.barrier_site);
  b.aborting = true;
}

void release_barrier(Block& b) {
  check_divergent_barrier(b);
  b.barrier_result = {b.barrier_true, static_cast<int>(b.barrier_arrived)};
  b.barrier_arrived = 0;
  b.barrier_true = 0;
  b.exited_since_barrier = 0;
  ++b.barrier_generation;
  for (unsigned i = 0; i < b.count; ++i)
    if (b.states[i] == State::barrier) b.states[i] = State::runnable;
}

// Set bits of a lane mask.  Without -mpopcnt __builtin_popcount is a libgcc
// call, measurable on every warp collective; this is a handful of ALU ops.
inline unsigned lane_count(unsigned mask) {
  mask = mask - ((mask >> 1) & 0x55555555u);
  mask = (mask & 0x33333333u) + ((mask >> 2) & 0x33333333u);
  return (((mask + (mask >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

// Completes the collective `t` waits in if every non-exited lane of its mask
// waits in the same one.
bool try_complete_collective(Block& b, const Thread& t) {
  const unsigned base = t.rank & ~31u;
  unsigned participants = 0;
  void* posts[32] = {};
  for (unsigned m = t.mask; m != 0; m &= m - 1) {
    const unsigned lane = static_cast<unsigned>(__builtin_ctz(m));
    if (base + lane >= b.count) continue;  // absent lane of a partial warp
    const Thread& u = b.threads[base + lane];
    if ((*u.state) == State::exited) continue;
    if ((*u.state) != State::collective || u.mask != t.mask || u.fn != t.fn) return false;
    participants |= 1u << lane;
    posts[lane] = u.post;
  }
  // racecheck: every participant's arrival happens before the exchange and
  // the exchange before every participant's departure, nothing else.  An
  // exiting lane outside the mask completes it on behalf of a participant.
  const bool outsider = tl_thread == nullptr || (tl_thread->rank & ~31u) != base ||
                        ((participants >> (tl_thread->rank & 31u)) & 1u) == 0;
  void* const own_fiber = outsider ? race_current_fiber() : nullptr;
  if (outsider)
    race_switch(b.threads[base + static_cast<unsigned>(__builtin_ctz(participants))].race_fiber);
  for (unsigned m = participants; m != 0; m &= m - 1)
    race_acquire(b.race_arrive(base + static_cast<unsigned>(__builtin_ctz(m))));
  {
    const RaceVisible warp_instruction;  // e.g. ldmatrix's shared-memory reads
    t.fn(posts, participants);
  }
  for (unsigned m = participants; m != 0; m &= m - 1)
    race_release(b.race_depart(base + static_cast<unsigned>(__builtin_ctz(m))));
  if (outsider) race_switch(own_fiber);
  b.collective_waiting[t.rank / 32] -= lane_count(participants);
  for (unsigned m = participants; m != 0; m &= m - 1) {
    Thread& u = b.threads[base + static_cast<unsigned>(__builtin_ctz(m))];
    u.participants = participants;
    (*u.state) = State::runnable;
  }
  return true;
}

// __activemask's soft rendezvous completes once no lane of the warp can run
// before it: the waiting lanes form the mask.
void complete_activemask_if_ready(Block& b, unsigned warp) {
  const unsigned base = warp * 32;
  const unsigned end = std::min(b.count, base + 32);
  unsigned waiting = 0;
  for (unsigned r = base; r < end; ++r) {
    if (b.states[r] == State::runnable) return;
    if (b.states[r] == State::activemask) waiting |= 1u << (r - base);
  }
  for (unsigned r = base; r < end; ++r) {
    if (b.states[r] != State::activemask) continue;
    b.threads[r].participants = waiting;
    b.states[r] = State::runnable;
  }
  b.activemask_waiting[warp] = 0;
}

// Called whenever a lane blocks or exits; cheap when nobody waits.
inline void try_complete_activemask(Block& b, unsigned warp) {
  if (b.activemask_waiting[warp] != 0) complete_activemask_if_ready(b, warp);
}

// Runs the cleanups of the thread's slots (cp.async queue, ...) and empties them.
void release_slots(Thread& t) {
  for (ThreadSlot& slot : t.slot) {
    if (slot.cleanup != nullptr) slot.cleanup(slot.ptr);
    slot = ThreadSlot{};
  }
}

void thread_exited(Thread& t) {
  Block& b = *t.block;
  release_slots(t);
  (*t.state) = State::exited;
  b.gone_lanes[t.rank / 32] |= 1u << (t.rank & 31u);
  --b.live;
  if (b.aborting) return;
  ++b.exited_since_barrier;
  if (b.barrier_arrived > 0 && b.barrier_arrived == b.live) release_barrier(b);
  const unsigned base = t.rank & ~31u;
  for (unsigned r = base; r < std::min(b.count, base + 32); ++r)
    if (b.states[r] == State::collective) try_complete_collective(b, b.threads[r]);
  try_complete_activemask(b, t.rank / 32);
}

// ---- one block --------------------------------------------------------------

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A fiber's first frame: runs the kernel as the thread the scheduler has just
// switched to, then leaves this context for good.
[[noreturn]] void fiber_main() {
  // Accesses stay ignored (race_take_fiber) until the kernel's body runs.
  Worker& worker = *tl_worker;
  Thread& t = *tl_thread;
  StackBounds from_stack;
  finish_switch(nullptr, &from_stack);
  arrived(worker, from_stack);
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
  ++worker.waits;
  race_release(blk.job);  // all this thread did happens before the launch returns
  // The final jump: nothing resumes this context, so its stack is free again.
  t.context = nullptr;
  Thread* next = next_runnable(worker);
  prepare_jump(worker, &t, next);
  start_switch(nullptr, stack_of(worker, next));
  Context finished;
  race_ignore_end();  // a fiber goes back to the pool with no ignores on
  race_switch(race_fiber_of(worker, next));
  switch_context(&finished, context_of(worker, next));
  __builtin_unreachable();
}

void start_fiber(Worker&, Thread& t) {
#if defined(RL_EMU_ASAN)
  // A fiber unwound by an exception can leave redzones poisoned behind it.
  ASAN_UNPOISON_MEMORY_REGION(t.stack.bottom, t.stack.size);
#endif
  t.context = make_context<fiber_main>(const_cast<void*>(t.stack.bottom), t.stack.size);
}

std::string deadlock_description(const Block& b) {
  unsigned at_barrier = 0, in_collective = 0;
  std::string example;
  for (unsigned i = 0; i < b.count; ++i) {
    const Thread& t = b.threads[i];
    if ((*t.state) == State::barrier) ++at_barrier;
    if ((*t.state) != State::collective) continue;
    ++in_collective;
    if (!example.empty()) continue;
    const unsigned base = t.rank & ~31u;
    for (unsigned m = t.mask; m != 0; m &= m - 1) {
      const unsigned lane = static_cast<unsigned>(__builtin_ctz(m));
      if (base + lane >= b.count) continue;
      const Thread& u = b.threads[base + lane];
      if ((*u.state) == State::exited) continue;
      if ((*u.state) == State::collective && u.mask == t.mask && u.fn == t.fn) continue;
      example = "; thread " + std::to_string(t.rank) + " waits in a warp collective (mask " +
                hex(t.mask) + ") for lane " + std::to_string(lane) + ", which " +
                ((*u.state) == State::barrier  ? "waits at __syncthreads"
                 : (*u.state) == State::object ? "sleeps on an mbarrier"
                                               : "waits in a different warp collective");
      break;
    }
  }
  unsigned on_object = 0;
  for (unsigned i = 0; i < b.count; ++i) {
    const Thread& t = b.threads[i];
    if ((*t.state) != State::object) continue;
    if (on_object++ == 0 && example.empty())
      example = "; thread " + std::to_string(t.rank) + " waits on " + t.describe(t.wait_object);
  }
  return std::to_string(b.live) + " of " + std::to_string(b.count) +
         " threads alive and none can proceed (" + std::to_string(at_barrier) +
         " at __syncthreads, " + std::to_string(in_collective) + " in warp collectives" +
         (on_object > 0 ? ", " + std::to_string(on_object) + " on mbarriers" : std::string()) +
         example + ")";
}

// What each warp of a stopped block waits on, e.g. "warp 0: 31 at
// __syncthreads, 1 running (interrupted)"; one clause per state present.
std::string warp_states(const Block& b, const Thread* interrupted) {
  std::string out;
  for (unsigned base = 0; base < b.count; base += 32) {
    unsigned counts[static_cast<unsigned>(State::exited) + 1] = {};
    unsigned stopped = 0;
    std::string object;  // what the first thread waiting on an object waits on
    for (unsigned r = base; r < std::min(b.count, base + 32); ++r) {
      const Thread& t = b.threads[r];
      if (t.abandoned) {
        ++stopped;
        continue;
      }
      ++counts[static_cast<unsigned>(*t.state)];
      if (*t.state == State::object && object.empty())
        object = "waiting on " + t.describe(t.wait_object);
    }
    out += (base == 0 ? "warp " : "; warp ") + std::to_string(base / 32) + ":";
    const char* sep = " ";
    const auto clause = [&](unsigned n, const char* what) {
      if (n == 0) return;
      out += sep + std::to_string(n) + " " + what;
      sep = ", ";
    };
    clause(counts[static_cast<unsigned>(State::runnable)],
           "runnable (yielded in __nanosleep or not yet run)");
    clause(counts[static_cast<unsigned>(State::barrier)], "at __syncthreads");
    clause(counts[static_cast<unsigned>(State::collective)], "in a warp collective");
    clause(counts[static_cast<unsigned>(State::activemask)], "in __activemask");
    clause(counts[static_cast<unsigned>(State::object)], object.c_str());
    clause(counts[static_cast<unsigned>(State::exited)], "exited");
    if (stopped > 0)
      clause(stopped, interrupted != nullptr
                          ? "running without ever yielding (stopped by the watchdog)"
                          : "stopped mid-kernel");
  }
  return out;
}

void run_block(Worker& worker, const Job& job, std::uint64_t linear, std::string& failure,
               cudaError_t& error) {
  const RaceIgnored bookkeeping;  // the worker's own context runs only the emulator
  const dim3 grid = job.spec.grid;
  const dim3 block_dim = job.spec.block;
  const unsigned count = block_dim.x * block_dim.y * block_dim.z;

  Block b;
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
  if (environment_poison()) {
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
#if defined(RL_EMU_TSAN)
  b.race_sync.assign(2 * std::size_t{count} + 3, 0);
  worker.race_fiber = race_current_fiber();
#endif
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
    start_fiber(worker, t);
    t.race_fiber = race_take_fiber(count);  // after the host wrote the fiber's first frame
  }

  race_release(b.race_start());
  worker.order.resize(count);
  for (unsigned r = 0; r < count; ++r)
    worker.order[r] = job.schedule.order == ScheduleOrder::reverse ? count - 1 - r : r;
  std::uint64_t rng = job.schedule.seed * 0x2545f4914f6cdd1dull + linear;

  while (b.live > 0 && !b.aborting) {
    if (job.schedule.order == ScheduleOrder::random) {
      for (unsigned i = count; i > 1; --i)
        std::swap(worker.order[i - 1], worker.order[splitmix64(rng) % i]);
    }
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
      for (unsigned r = 0; r < count && interrupted == nullptr; ++r)
        if (worker.threads[r].abandoned) interrupted = &worker.threads[r];
      if (b.failure.empty() || interrupted != nullptr) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", watchdog_seconds());
        b.failure =
            std::string("watchdog: no thread of the block made progress for ") + seconds +
            " s (RL_EMU_WATCHDOG_S; a spin-wait that cannot end?): " + warp_states(b, interrupted);
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
  // Unwind every fiber that has not finished (never started ones just return),
  // one at a time: with the pass exhausted each jumps straight back here.
  for (unsigned r = 0; r < count; ++r) {
    Thread& t = worker.threads[r];
    if (t.abandoned) {  // never unwound: only its slots are released
      release_slots(t);
      t.abandoned = false;
      continue;
    }
    if (t.context == nullptr) continue;
    worker.position = count;
    switch_to(worker, nullptr, &t);
  }
#if defined(RL_EMU_TSAN)
  std::vector<void*> fibers(count);
  for (unsigned r = 0; r < count; ++r)
    fibers[r] = std::exchange(worker.threads[r].race_fiber, nullptr);
  race_give_back_fibers(fibers.data(), count);
#endif

  ::operator delete (b.dynamic_shared, std::align_val_t{128});
  if (!b.failure.empty()) {
    failure = "block " + block_label(b.index) + ": " + b.failure;
    error = b.error;
  }
}

// Runs one block on this host thread's worker.  Under racecheck each block
// gets a fresh host thread instead: its static __shared__ objects (thread
// locals) and fiber stacks are then new memory to TSan, not memory that the
// previous block's fibers used with nothing ordering them before this
// block's (TSan in GCC 12 has no working call that forgets a range, and an
// edge between the blocks would hide every race between them).
void run_block_here(Worker& worker, const Job& job, std::uint64_t linear, std::string& failure,
                    cudaError_t& error) {
#if defined(RL_EMU_TSAN)
  (void)worker;  // idle in join() below, so the watchdog watches the block's own thread
  // A malformed variable ends the process, which TSan refuses from a thread
  // inside an ignored section: read them out here.
  environment_poison();
  stack_bytes();
  watchdog_seconds();
  std::thread([&] {
    const RaceIgnored bookkeeping;              // tearing the worker down included
    const BlockThreadSignalStack signal_stack;  // for the crash report after a stack overflow
    Worker block_worker;
    tl_worker = &block_worker;
    watch(block_worker.watch);
    run_block(block_worker, job, linear, failure, error);
    unwatch(block_worker.watch);
    tl_worker = nullptr;
  }).join();
#else
  run_block(worker, job, linear, failure, error);
#endif
}

void run_blocks(Job& job) {
  Worker& worker = this_worker();
  std::string failure;
  cudaError_t error = cudaErrorLaunchFailure;
#if !defined(RL_EMU_TSAN)
  watch(worker.watch);
#endif
  while (!job.failed.load(std::memory_order_relaxed)) {
    const std::uint64_t linear = job.next_block.fetch_add(1);
    if (linear >= job.blocks) break;
    run_block_here(worker, job, linear, failure, error);
    if (!failure.empty()) {
      job.fail(std::move(failure), error);
      break;
    }
  }
#if !defined(RL_EMU_TSAN)
  unwatch(worker.watch);
#endif
}

// ---- worker pool --------------------------------------------------------------

class WorkerPool {
 public:
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // Runs `job` on the calling thread and `helpers` pool threads.
  void run(Job& job, int helpers) {
    std::lock_guard serial(launch_mutex_);
    {
      std::lock_guard lock(mutex_);
      while (static_cast<int>(threads_.size()) < helpers) {
        const int index = static_cast<int>(threads_.size());
        threads_.emplace_back([this, index] { loop(index); });
      }
      job_ = &job;
      wanted_ = helpers;
      pending_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    run_blocks(job);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void loop(int index) {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= wanted_) continue;
      Job* job = job_;
      lock.unlock();
      run_blocks(*job);
      lock.lock();
      if (--pending_ == 0) done_.notify_all();
    }
  }

  std::mutex launch_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::vector<std::thread> threads_;
  Job* job_ = nullptr;
  std::uint64_t generation_ = 0;
  int wanted_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

WorkerPool& worker_pool() {
  static WorkerPool pool;
  return pool;
}

// ---- per-kernel limits ------------------------------------------------------

std::mutex g_limits_mutex;
std::unordered_map<const void*, std::size_t>& dynamic_shared_limits() {
  static std::unordered_map<const void*, std::size_t> limits;
  return limits;
}

bool valid_configuration(const dim3& grid, const dim3& block) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return false;
  if (block.x == 0 || block.y == 0 || block.z == 0) return false;
  if (block.x > 1024 || block.y > 1024 || block.z > 64) return false;
  if (static_cast<std::uint64_t>(block.x) * block.y * block.z > 1024) return false;
  if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535) return false;
  return true;
}

}  // namespace

void bad_environment(const char* name, const char* value, const char* expected) {
  std::fprintf(stderr, "rl::emu: %s='%s' is invalid (expected %s)\n", name, value, expected);
  std::exit(2);
}

// ---- entry points -------------------------------------------------------------

bool poison_enabled() {
  return environment_poison();
}

std::size_t max_dynamic_shared(const void* kernel) {
  std::lock_guard lock(g_limits_mutex);
  auto it = dynamic_shared_limits().find(kernel);
  return it == dynamic_shared_limits().end() ? kDefaultSharedPerBlock : it->second;
}

cudaError_t set_max_dynamic_shared(const void* kernel, int bytes) {
  if (kernel == nullptr) return cudaErrorInvalidDeviceFunction;
  if (bytes < 0 || static_cast<std::size_t>(bytes) > kOptInSharedPerBlock)
    return cudaErrorInvalidValue;
  std::lock_guard lock(g_limits_mutex);
  dynamic_shared_limits()[kernel] = static_cast<std::size_t>(bytes);
  return cudaSuccess;
}

void launch(const LaunchSpec& spec) {
  if (tl_thread != nullptr) {
    std::fprintf(stderr, "rl::emu: kernel launched from device code (not supported)\n");
    record_error(cudaErrorNotSupported);
    return;
  }
  if (!valid_configuration(spec.grid, spec.block)) {
    record_error(cudaErrorInvalidConfiguration);
    return;
  }
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess) {
    record_error(sticky);  // a GPU context runs nothing after a sticky error
    return;
  }
  install_signal_handlers();
  if (spec.shared_bytes > max_dynamic_shared(spec.kernel)) {
    record_error(cudaErrorInvalidValue);
    return;
  }
  // Static shared memory: nvcc refuses a kernel with more than 48 KiB, and a
  // launch fails whose static plus dynamic bytes exceed the opt-in maximum.
  if (const std::size_t fixed = static_shared_bytes(spec.kernel);
      fixed > kDefaultSharedPerBlock || fixed + spec.shared_bytes > kOptInSharedPerBlock) {
    std::fprintf(stderr,
                 "rl::emu: kernel %s declares %zu bytes of static __shared__ memory (limit %zu "
                 "static, %zu static + dynamic on the emulated device); %zu dynamic requested\n",
                 kernel_name(spec).c_str(), fixed, kDefaultSharedPerBlock, kOptInSharedPerBlock,
                 spec.shared_bytes);
    record_error(cudaErrorInvalidValue);
    return;
  }
  Job job;
  job.spec = spec;
  job.name = &cached_kernel_name(spec);
  job.schedule = current_schedule();
  job.blocks = static_cast<std::uint64_t>(spec.grid.x) * spec.grid.y * spec.grid.z;
  const std::uint64_t workers =
      std::min<std::uint64_t>(static_cast<std::uint64_t>(worker_threads()), job.blocks);
  if (workers <= 1)
    run_blocks(job);
  else
    worker_pool().run(job, static_cast<int>(workers - 1));
  race_acquire(&job);  // every CUDA thread's exit happens before the launch returns
  if (job.failed.load()) {
    std::fprintf(stderr, "rl::emu: kernel %s failed in %s\n", job.name->c_str(),
                 job.failure.c_str());
    record_launch_failure(job.error);
  }
}

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

[[noreturn]] void fail_current_thread(cudaError_t error, std::string message) {
  Thread& t = current_thread();
  fail_block(t, "thread " + block_label(t.index) + ": " + std::move(message), error);
}

[[noreturn]] void stop_current_thread(cudaError_t error, const char* message) {
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
  set_sticky_error(error);
  abandon(*tl_worker, t);
}

std::string watched_block_label(const WorkerWatch& w) {
  const LaunchSpec* spec = w.spec.load(std::memory_order_acquire);
  if (spec == nullptr) return "a kernel";
  return "kernel " + cached_kernel_name(*spec) + ", block " +
         block_label(block_index(w.block.load(std::memory_order_relaxed), spec->grid));
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

BarrierResult syncthreads_reduce(int predicate) {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  const unsigned generation = b.barrier_generation;
  race_release(b.race_barrier(generation));
  if (b.barrier_arrived == 0) b.barrier_site = __builtin_return_address(0);
  (*t.state) = State::barrier;
  ++b.barrier_arrived;
  b.barrier_true += predicate != 0 ? 1 : 0;
  if (b.barrier_arrived == b.live)
    release_barrier(b);
  else
    try_complete_activemask(b, t.rank / 32);
  ++tl_worker->waits;
  suspend(t);
  race_acquire(b.race_barrier(generation));
  return b.barrier_result;
}

void yield_thread() {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  suspend(t);
}

void wait_on(const void* object, WaitDescriber describe) {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  (*t.state) = State::object;
  t.wait_object = object;
  t.describe = describe;
  ++b.object_waiters;
  try_complete_activemask(b, t.rank / 32);
  ++tl_worker->waits;
  suspend(t);
}

void wake_waiters(const void* object) {
  const RaceIgnored bookkeeping;
  if (tl_thread == nullptr) return;  // host code (unit tests) has nobody to wake
  Block& b = *tl_thread->block;
  for (unsigned i = 0; i < b.count && b.object_waiters > 0; ++i) {
    Thread& u = b.threads[i];
    if ((*u.state) != State::object || u.wait_object != object) continue;
    (*u.state) = State::runnable;
    --b.object_waiters;
  }
}

unsigned warp_collective(unsigned mask, CollectiveFn fn, void* post) {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  const unsigned lane = t.rank & 31u;
  if (((mask >> lane) & 1u) == 0)
    fail_block(t, "thread " + std::to_string(t.rank) + " called a warp collective with mask " +
                      hex(mask) + ", which does not include its own lane " + std::to_string(lane));
  race_release(b.race_arrive(t.rank));
  (*t.state) = State::collective;
  t.mask = mask;
  t.fn = fn;
  t.post = post;
  const unsigned warp = t.rank / 32;
  ++b.collective_waiting[warp];
  const unsigned needed = lane_count(mask & ~b.gone_lanes[warp]);
  if (b.collective_waiting[warp] < needed || !try_complete_collective(b, t))
    try_complete_activemask(b, warp);
  ++tl_worker->waits;
  suspend(t);
  race_acquire(b.race_depart(t.rank));
  return t.participants;
}

unsigned active_mask() {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  (*t.state) = State::activemask;
  ++b.activemask_waiting[t.rank / 32];
  try_complete_activemask(b, t.rank / 32);
  ++tl_worker->waits;
  suspend(t);
  return t.participants;
}

#if defined(RL_EMU_TSAN)
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
#endif

void ballot_exchange(void* const* posts, unsigned participants) {
  unsigned ballot = 0;
  for (unsigned m = participants; m != 0; m &= m - 1)
    ballot |= static_cast<BallotPost*>(posts[__builtin_ctz(m)])->bit;
  for (unsigned m = participants; m != 0; m &= m - 1) {
    auto* p = static_cast<BallotPost*>(posts[__builtin_ctz(m)]);
    p->result = ballot;
    p->participants = participants;
  }
}

}  // namespace detail

// ---- public controls ------------------------------------------------------------

std::optional<Schedule> parse_schedule(std::string_view text) {
  if (text == "forward") return Schedule{ScheduleOrder::forward, 0};
  if (text == "reverse") return Schedule{ScheduleOrder::reverse, 0};
  if (text == "random") return Schedule{ScheduleOrder::random, 1};
  constexpr std::string_view prefix = "random:";
  if (text.substr(0, prefix.size()) == prefix) {
    const std::string_view digits = text.substr(prefix.size());
    std::uint64_t seed = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    if (ec == std::errc() && p == digits.data() + digits.size() && !digits.empty())
      return Schedule{ScheduleOrder::random, seed};
  }
  return std::nullopt;
}

std::string to_string(const Schedule& schedule) {
  switch (schedule.order) {
    case ScheduleOrder::forward:
      return "forward";
    case ScheduleOrder::reverse:
      return "reverse";
    case ScheduleOrder::random:
      return "random:" + std::to_string(schedule.seed);
  }
  return "forward";
}

Schedule current_schedule() {
  std::lock_guard lock(detail::g_config_mutex);
  return detail::g_schedule_override ? *detail::g_schedule_override
                                     : detail::environment_schedule();
}

void set_schedule(const Schedule& schedule) {
  std::lock_guard lock(detail::g_config_mutex);
  detail::g_schedule_override = schedule;
}

int worker_threads() {
  std::lock_guard lock(detail::g_config_mutex);
  return detail::g_worker_override > 0 ? detail::g_worker_override : detail::environment_workers();
}

void set_worker_threads(int count) {
  std::lock_guard lock(detail::g_config_mutex);
  detail::g_worker_override = std::clamp(count, 1, 256);
}

unsigned warp_allgather(const void* mine, void* all, std::size_t bytes) {
  struct Post {
    const void* mine;
    void* all;
    std::size_t bytes;
  };
  Post post{mine, all, bytes};
  return detail::warp_collective(
      0xffffffffu,
      [](void* const* posts, unsigned participants) {
        for (unsigned m = participants; m != 0; m &= m - 1) {
          auto* p = static_cast<Post*>(posts[__builtin_ctz(m)]);
          auto* out = static_cast<unsigned char*>(p->all);
          for (unsigned lane = 0; lane < 32; ++lane) {
            if (((participants >> lane) & 1u) != 0)
              std::memcpy(out + lane * p->bytes, static_cast<Post*>(posts[lane])->mine, p->bytes);
            else
              std::memset(out + lane * p->bytes, 0, p->bytes);
          }
        }
      },
      &post);
}

ThreadSlot& thread_slot(unsigned which) {
  const detail::RaceIgnored bookkeeping;
  return detail::current_thread().slot[which];
}

}  // namespace rl::emu
