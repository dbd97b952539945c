// Faults of a CUDA thread reported instead of crashing bare: SIGSEGV/SIGBUS,
// the watchdog's signal, device assert and __trap.
//
// SIGSEGV and SIGBUS get a handler that names the kernel, block and thread
// when the fault happened in a CUDA thread, then hands the signal to the
// handler installed before it (ASan's under the asan preset, which then
// prints its own report) or to the default action (the process dies of the
// signal).  The watchdog thread sends kWatchdogSignal to a worker thread that
// made no progress; its handler leaves the running fiber (fibers.cpp,
// abandon()).  Both run on an alternate signal stack per worker thread, so
// they also run after a fiber overflowed its stack.
//
// A general-protection fault (x86-64: SIGSEGV, SI_KERNEL, address 0) is
// decoded (fault_decode.hpp).  A misaligned vector access fails the launch
// with cudaErrorMisalignedAddress, sticky as on a GPU: the signal returns
// into stop_misaligned_thread() on the CUDA thread's own stack, which stops
// the thread as a device assert does.  Returning normally, rather than
// leaving the handler by a context switch as the watchdog's does, lets the
// kernel restore the signal mask (SIGSEGV stays blocked in a handler that
// never returns, and a second fault would then end the process unreported),
// the floating-point control state, and a sanitizer's signal bookkeeping
// (ThreadSanitizer runs our handler inside its own).  Any other #GP is
// described and handed on.
//
// __assert_fail stays in this file: every program that launches a kernel
// links it (install_signal_handlers), so the interposition always holds.
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "block_state.hpp"
#include "fault_decode.hpp"
#include "internal.hpp"

namespace rl::emu::detail {
namespace {

struct sigaction g_previous_segv {};
struct sigaction g_previous_bus {};

void write_stderr(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// To the handler installed before ours, or to the default action.
void hand_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = sig == SIGBUS ? g_previous_bus : g_previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
      previous.sa_handler != nullptr) {
    previous.sa_handler(sig);
    return;
  }
  // Default action: returning re-executes the faulting instruction, which
  // now kills the process with the signal (core dump included).
  signal(sig, SIG_DFL);
}

#if defined(__x86_64__)
// The general-protection fault's description, for stop_misaligned_thread():
// a plain character buffer written by the handler on the same host thread.
constinit thread_local char tl_fault_description[256] = {};

[[noreturn]] void stop_misaligned_thread() {
  // As at a thread's exit (fiber_main): what it did before the fault happens
  // before the launch returns (racecheck; the launching thread reuses the
  // stack that held the kernel's arguments).
  race_release(current_thread().block->job);
  stop_current_thread(cudaErrorMisalignedAddress, tl_fault_description);
}

// What stop_misaligned_thread() needs below the faulting frame: its report
// (a 1 KiB label, fprintf) and abandon().
constexpr std::uintptr_t kStopStackBytes = 16 * 1024;

// A return address of 0 ends a debugger's backtrace at the stop function.
__attribute__((no_sanitize_address)) void store_return_address(std::uintptr_t slot) {
  *reinterpret_cast<std::uintptr_t*>(slot) = 0;
}

// Makes the signal's return enter stop_misaligned_thread() as if the faulting
// instruction had called it, below the faulting frame and its red zone on
// the fiber's own stack; false when the stack is not the fiber's or too full.
bool return_into_stop(ucontext_t& context, const void* bottom, std::size_t size) {
  greg_t* registers = context.uc_mcontext.gregs;
  const auto sp = static_cast<std::uintptr_t>(registers[REG_RSP]);
  const auto low = reinterpret_cast<std::uintptr_t>(bottom);
  constexpr std::uintptr_t kRedZone = 128;
  if (tl_switching != 0 || sp < low + kStopStackBytes + kRedZone || sp > low + size) return false;
  const std::uintptr_t entry = ((sp - kRedZone) & ~std::uintptr_t{15}) - 8;  // as after a call
  store_return_address(entry);
  registers[REG_RSP] = static_cast<greg_t>(entry);
  registers[REG_RIP] =
      static_cast<greg_t>(reinterpret_cast<std::uintptr_t>(&stop_misaligned_thread));
  return true;
}

// A #GP in a CUDA thread: true when the signal's return now stops the thread
// (a misaligned access); otherwise the description is printed and the
// signal handed on.
bool general_protection_stops_thread(ucontext_t& context, const void* bottom, std::size_t size) {
  if (describe_general_protection(context, tl_fault_description, sizeof tl_fault_description) &&
      return_into_stop(context, bottom, size))
    return true;
  char where[1024];
  write_current_thread_label(where, sizeof where);
  write_stderr("rl::emu: SIGSEGV in ");
  write_stderr(where);
  write_stderr(": ");
  write_stderr(tl_fault_description);
  write_stderr("\n");
  return false;
}
#endif

// The fault is reported, then handed on: the process state is not
// recoverable (a half-written block, a fiber whose stack overflowed).  The
// exception is a misaligned vector access (the file comment).
void crash_handler(int sig, siginfo_t* info, void* context) {
  const void* bottom = nullptr;
  std::size_t size = 0;
  std::size_t guard = 0;
  if (current_fiber_stack(&bottom, &size, &guard)) {
#if defined(__x86_64__)
    if (sig == SIGSEGV && info->si_code == SI_KERNEL && info->si_addr == nullptr) {
      // A stopped thread: the signal's return enters stop_misaligned_thread().
      if (!general_protection_stops_thread(*static_cast<ucontext_t*>(context), bottom, size))
        hand_on(sig, info, context);
      return;
    }
#endif
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    const auto low = reinterpret_cast<std::uintptr_t>(bottom);
    bool overflow = address < low && address + guard + 1024 * 1024 >= low;
#if defined(__x86_64__)
    const auto sp =
        static_cast<std::uintptr_t>(static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_RSP]);
    overflow = overflow || sp < low;
#endif
    // Nothing here allocates (the kernel's name was looked up at launch):
    // the fault may have hit inside the allocator.
    char where[1024];
    write_current_thread_label(where, sizeof where);
    char line[512];
    if (overflow) {
      std::snprintf(line, sizeof line,
                    ": stack overflow (fault at %p, below the fiber stack of %zu KiB); set "
                    "RL_EMU_STACK_KB=%zu or more\n",
                    info->si_addr, fiber_stack_kib(), 2 * fiber_stack_kib());
    } else {
      std::snprintf(line, sizeof line, ": invalid %s at address %p\n",
                    sig == SIGBUS ? "access (SIGBUS)" : "memory access (SIGSEGV)", info->si_addr);
    }
    write_stderr("rl::emu: ");
    write_stderr(sig == SIGBUS ? "SIGBUS in " : "SIGSEGV in ");
    write_stderr(where);
    write_stderr(line);
  }
  hand_on(sig, info, context);
}

void watchdog_handler(int) {
  interrupt_current_thread();
}

constexpr std::size_t kAlternateStackBytes = 256 * 1024;

// Installs an alternate signal stack on the calling thread unless it has one
// (ASan installs its own); returns the new mapping, or nullptr.
void* install_alternate_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return nullptr;
  void* stack = mmap(nullptr, kAlternateStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return nullptr;
  stack_t alternate{};
  alternate.ss_sp = stack;
  alternate.ss_size = kAlternateStackBytes;
  sigaltstack(&alternate, nullptr);
  return stack;
}
}  // namespace

void prepare_worker_thread() {
  // Never freed: a host thread's alternate stack must outlive every signal
  // delivered to it, and worker threads live as long as the process.
  install_alternate_stack();
}

BlockThreadSignalStack::BlockThreadSignalStack() : stack_(install_alternate_stack()) {}

BlockThreadSignalStack::~BlockThreadSignalStack() {
  if (stack_ == nullptr) return;
  stack_t off{};
  off.ss_flags = SS_DISABLE;
  sigaltstack(&off, nullptr);
  munmap(stack_, kAlternateStackBytes);
}

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    prepare_fault_decoder();
    struct sigaction crash {};
    crash.sa_sigaction = crash_handler;
    crash.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&crash.sa_mask);
    sigaction(SIGSEGV, &crash, &g_previous_segv);
    sigaction(SIGBUS, &crash, &g_previous_bus);
    // SA_NODEFER: the handler leaves by a context switch, never returning,
    // so the signal must not stay blocked behind it.
    struct sigaction stop {};
    stop.sa_handler = watchdog_handler;
    stop.sa_flags = SA_ONSTACK | SA_NODEFER | SA_RESTART;
    sigemptyset(&stop.sa_mask);
    sigaction(kWatchdogSignal, &stop, nullptr);
  });
}

}  // namespace rl::emu::detail

// ---- device assert and __trap ------------------------------------------------------------

// assert() calls glibc's __assert_fail; this definition interposes it for
// every object linked with rl::emu.  In a kernel the failed assertion stops
// the CUDA thread (and with it the launch, whose other blocks do not start)
// and leaves the sticky cudaErrorAssert, as on a GPU; anywhere else it is
// glibc's (print, abort).
extern "C" [[noreturn]] void __assert_fail(const char* assertion, const char* file,
                                           unsigned int line, const char* function) noexcept {
  if (rl::emu::detail::in_kernel()) {
    // A character buffer, not a std::string: this frame is never unwound.
    char message[1024];
    std::snprintf(message, sizeof message, "device assertion `%s' failed at %s:%u in %s", assertion,
                  file, line, function);
    rl::emu::detail::stop_current_thread(cudaErrorAssert, message);
  }
  using AssertFail = void (*)(const char*, const char*, unsigned int, const char*);
  if (auto glibc = reinterpret_cast<AssertFail>(dlsym(RTLD_NEXT, "__assert_fail")))
    glibc(assertion, file, line, function);
  std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, assertion);
  std::abort();
}

void __trap() {
  if (!rl::emu::detail::in_kernel()) {
    std::fprintf(stderr, "rl::emu: __trap() called outside a kernel\n");
    std::abort();
  }
  rl::emu::detail::stop_current_thread(cudaErrorLaunchFailure, "__trap()");
}
