// Shared between the emulator's sources; not part of the public headers.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "environment.hpp"
#include "rl/emu/runtime.hpp"
#include "sanitizer_hooks.hpp"

namespace rl::emu::detail {

// The calling host thread's error state (cudaGetLastError semantics).
void record_error(cudaError_t error);
// A failed launch: reported by cudaGetLastError and by the calling thread's
// next synchronising call with the launching device current.
void record_launch_failure(cudaError_t error = cudaErrorLaunchFailure);
// Returns and clears the failure the next synchronising call reports.
cudaError_t take_pending_failure();

// initcheck (RL_EMU_POISON=1): new device allocations and every block's
// dynamic shared memory start filled with kPoisonByte.  0xFF repeated is a
// NaN in every floating-point format kernels use (f64, f32, tf32, f16, bf16,
// e4m3, e5m2) and -1 / the maximum in every integer type, so a kernel that
// reads memory it never wrote produces NaN (or absurd indices) and fails
// validation instead of passing on whatever the host allocator returned.
inline constexpr unsigned char kPoisonByte = 0xFF;

inline constexpr std::size_t kDefaultSharedPerBlock = 48 * 1024;
inline constexpr std::size_t kOptInSharedPerBlock = 227 * 1024;
inline constexpr std::size_t kSharedPerMultiprocessor = 228 * 1024;

// The dynamic shared memory a kernel may use (48 KiB unless raised with
// cudaFuncAttributeMaxDynamicSharedMemorySize).
std::size_t max_dynamic_shared(const void* kernel);
cudaError_t set_max_dynamic_shared(const void* kernel, int bytes);

// ---- diagnostics (watchdog.cpp, thread_faults.cpp, static_shared.cpp): errors
// instead of hangs and bare crashes

// What the watchdog knows of one worker thread while it runs blocks.
struct WorkerWatch {
  // Bumped at every barrier or collective arrival, thread exit and block
  // start; the watchdog trips when it stands still for RL_EMU_WATCHDOG_S.
  std::atomic<std::uint64_t> progress{0};
  std::atomic<bool> timed_out{false};  // set by the watchdog, cleared at block start
  pthread_t thread{};
  // The block being run (set at its start), for the report of a thread that
  // cannot be interrupted (watched_block_label).
  std::atomic<const LaunchSpec*> spec{nullptr};
  std::atomic<std::uint64_t> block{0};
};

// "kernel K, block (x,y,z)" of the block `w` runs: for the watchdog thread.
std::string watched_block_label(const WorkerWatch& w);

// The scheduler's per-pass count of threads that blocked or exited; each
// increment is also progress for the watchdog (a relaxed store by the one
// thread that writes it, so as cheap as the plain increment it replaces).
class ProgressCount {
 public:
  explicit ProgressCount(WorkerWatch& watch) : progress_(watch.progress) {}
  ProgressCount& operator++() {
    ++value_;
    progress_.store(progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return *this;
  }
  ProgressCount& operator=(std::uint64_t value) {
    value_ = value;
    return *this;
  }
  operator std::uint64_t() const { return value_; }  // NOLINT: reads as the count it was

 private:
  std::uint64_t value_ = 0;
  std::atomic<std::uint64_t>& progress_;
};

// The signal the watchdog sends a worker whose running thread never yields
// (watchdog.cpp); its handler leaves that fiber (thread_faults.cpp).
inline constexpr int kWatchdogSignal = SIGUSR2;
// The watchdog follows `watch` (the calling worker thread) until unwatch().
void watch(WorkerWatch& watch);
void unwatch(WorkerWatch& watch);
// Once per host thread that runs blocks: an alternate signal stack, so the
// crash report runs after a fiber overflowed its stack.
void prepare_worker_thread();
// The same for a host thread that runs one block and ends (racecheck), freed
// with the object.
class BlockThreadSignalStack {
 public:
  BlockThreadSignalStack();
  ~BlockThreadSignalStack();
  BlockThreadSignalStack(const BlockThreadSignalStack&) = delete;
  BlockThreadSignalStack& operator=(const BlockThreadSignalStack&) = delete;

 private:
  void* stack_;
};
// Once per process, at the first launch: SIGSEGV/SIGBUS reports and the
// watchdog's signal.
void install_signal_handlers();

// Static __shared__ objects of a kernel (its function-local `static
// thread_local` objects, found by name in the ELF symbol table): their total
// size, and poisoning this host thread's copies at a block's start.
std::size_t static_shared_bytes(const void* kernel);
// The mangled name of the function at `function` from the ELF .symtab of the
// object holding it (empty when stripped or not found).
std::string symbol_table_name(const void* function);
void poison_static_shared(const void* kernel);

// Inside a kernel (current_thread.cpp): the running CUDA thread, for reports.
bool in_kernel();
// "kernel K, block (x,y,z), thread (x,y,z)" of the running CUDA thread into
// `out`, without allocating (signal handlers call it); "outside a kernel" else.
void write_current_thread_label(char* out, std::size_t size);
// Fails the launch with `error` and unwinds the calling CUDA thread (an
// exception: callable where the call chain may throw).
[[noreturn]] void fail_current_thread(cudaError_t error, std::string message);
// Fails the launch with `error` and leaves the calling CUDA thread without
// unwinding it (device assert, __trap: their callers are noexcept), after
// printing "rl::emu: <kernel, block, thread>: <message>".
// `message` is plain characters: the caller's frames are never unwound, so
// nothing on them may own heap memory.
[[noreturn]] void stop_current_thread(cudaError_t error, const char* message);
// From the watchdog's signal handler: leaves the running fiber for the
// worker's scheduler if one runs and no switch is under way; otherwise returns
// (the scheduler then sees timed_out after the current pass).
void interrupt_current_thread();
// The running fiber's usable stack [bottom, bottom + size) and guard page size,
// false outside a kernel (for the crash report).
bool current_fiber_stack(const void** bottom, std::size_t* size, std::size_t* guard);
std::size_t fiber_stack_kib();
// Sticky errors (device assert, __trap): every later launch and synchronising
// call on that device returns it until cudaDeviceReset there, as a GPU
// context does.  sticky_error() is the calling thread's current device's.
void set_sticky_error(int device, cudaError_t error);
cudaError_t sticky_error();

// The emulated devices (devices.cpp; at most kMaxDevices, RL_EMU_DEVICES).
inline constexpr int kMaxDevices = 64;
// The calling host thread's current device (cudaSetDevice).
int current_device();

}  // namespace rl::emu::detail
