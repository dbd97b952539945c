// Errors instead of hangs and bare crashes (issue 14 item 4): the watchdog,
// SIGSEGV/SIGBUS reports, device assert and __trap, and the static __shared__
// objects of a kernel (their size limit and initcheck poisoning).
//
// Signals: SIGSEGV and SIGBUS get a handler that names the kernel, block and
// thread when the fault happened in a CUDA thread, then hands the signal to
// the handler installed before it (ASan's under the asan preset, which then
// prints its own report) or to the default action (the process dies of the
// signal).  The watchdog thread sends SIGUSR2 to a worker thread that made no
// progress; its handler leaves the running fiber (fibers.cpp, abandon()).
// Both run on an alternate signal stack per worker thread, so they also run
// after a fiber overflowed its stack.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "internal.hpp"

namespace rl::emu::detail {
namespace {

constexpr int kWatchdogSignal = SIGUSR2;
constexpr int kWatchdogExitCode = 124;  // as timeout(1)'s

// ---- watchdog -------------------------------------------------------------------

class Watchdog;
Watchdog& watchdog();

// One thread per process, started by the first launch.  A fork()ed child
// (gtest's "fast" death tests) has no watchdog thread: it starts its own and
// never joins the parent's.
class Watchdog {
 public:
  Watchdog() {
    // A fork while the watchdog thread holds the mutex would leave it locked
    // in the child for good.
    pthread_atfork([] { watchdog().mutex_.lock(); }, [] { watchdog().mutex_.unlock(); },
                   [] { watchdog().mutex_.unlock(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_ != nullptr && owner_ == getpid()) {
      thread_->join();
      delete thread_;
    }
  }

  void watch(WorkerWatch& w) {
    std::lock_guard lock(mutex_);
    w.thread = pthread_self();
    entries_.push_back({&w, w.progress.load(std::memory_order_relaxed), Clock::now()});
    if (thread_ == nullptr || owner_ != getpid()) {
      thread_ = new std::thread([this] { loop(); });  // a parent's is left alone (see above)
      owner_ = getpid();
    }
    wake_.notify_all();
  }

  void unwatch(WorkerWatch& w) {
    std::lock_guard lock(mutex_);
    std::erase_if(entries_, [&](const Entry& e) { return e.watch == &w; });
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    WorkerWatch* watch;
    std::uint64_t seen;
    Clock::time_point since;
  };

  void loop() {
    const auto limit = std::chrono::duration<double>(watchdog_seconds());
    const auto period = std::min<Clock::duration>(
        std::chrono::milliseconds(250), std::chrono::duration_cast<Clock::duration>(limit / 4));
    // How long a timed-out block may take to stop before the process ends:
    // the signal acts within two polls, a yielding thread by the end of the
    // scheduler's pass; what still stands then cannot be interrupted.
    const auto grace = std::max<std::chrono::duration<double>>(limit, std::chrono::seconds(1));
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (entries_.empty())
        wake_.wait(lock);
      else
        wake_.wait_for(lock, period);
      const auto now = Clock::now();
      for (Entry& e : entries_) {
        const std::uint64_t progress = e.watch->progress.load(std::memory_order_relaxed);
        if (progress != e.seen) {
          e.seen = progress;
          e.since = now;
        } else if (now - e.since >= limit + grace) {
          give_up(*e.watch, now - e.since);
        } else if (now - e.since >= limit) {
          // The scheduler stops threads that yield at the end of its pass.
          e.watch->timed_out.store(true, std::memory_order_relaxed);
          // A thread that never yields is left by the signal's handler.
          // Sent again at every poll while nothing moves: a signal that
          // arrived during a fiber switch is ignored by the handler.  Under
          // the mutex, so the worker is still in run_blocks().  Not under
          // TSan: it delays a signal until the thread calls into its
          // runtime (a spinning thread never does), and a handler that
          // leaves by a context switch would corrupt its signal state.
          if constexpr (!kRacecheck) pthread_kill(e.watch->thread, kWatchdogSignal);
        }
      }
    }
  }

  // Never hang: a thread that the watchdog cannot stop (under TSan, any
  // thread that never yields; elsewhere one the signal cannot reach) ends the
  // process with one report and kWatchdogExitCode.
  [[noreturn]] static void give_up(const WorkerWatch& w, Clock::duration stood) {
    const std::string label = watched_block_label(w);
    std::fprintf(stderr,
                 "rl::emu: %s: watchdog: no thread of the block made progress for %.1f s and the "
                 "running thread could not be stopped (it never yields%s); exiting with code %d\n",
                 label.c_str(), std::chrono::duration<double>(stood).count(),
                 kRacecheck ? ": under ThreadSanitizer a signal waits until the thread calls "
                              "into the runtime"
                            : "",
                 kWatchdogExitCode);
    std::fflush(stderr);
    std::_Exit(kWatchdogExitCode);
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Entry> entries_;
  std::thread* thread_ = nullptr;
  pid_t owner_ = 0;  // the process that started thread_
  bool stop_ = false;
};

Watchdog& watchdog() {
  static Watchdog instance;
  return instance;
}

// ---- signal handlers --------------------------------------------------------------

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

// The fault is reported, then handed on: the process state is not
// recoverable (a half-written block, a fiber whose stack overflowed).
void crash_handler(int sig, siginfo_t* info, void* context) {
  const void* bottom = nullptr;
  std::size_t size = 0;
  std::size_t guard = 0;
  if (current_fiber_stack(&bottom, &size, &guard)) {
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

void watchdog_handler(int) {
  interrupt_current_thread();
}

// ---- static __shared__ objects -------------------------------------------------------

// A mapped ELF file's symbol table, read once per file (the mapping is kept
// for the process's life).
struct SymbolTable {
  const Elf64_Sym* symbols = nullptr;
  std::size_t count = 0;
  const char* names = nullptr;
  std::size_t names_bytes = 0;
  bool executable = false;  // ET_EXEC: symbol values are absolute
  // Function-local thread_local objects ("_ZZ..." STT_TLS symbols): the
  // candidates for static __shared__ objects, collected once.
  std::vector<const Elf64_Sym*> local_tls;

  std::string_view name(const Elf64_Sym& s) const {
    if (s.st_name >= names_bytes) return {};
    const char* p = names + s.st_name;
    return {p, strnlen(p, names_bytes - s.st_name)};
  }
};

SymbolTable map_symbols(const char* path) {
  SymbolTable table;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return table;
  struct stat st {};
  void* image = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size > 0)
    image = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (image == MAP_FAILED) return table;
  const auto* bytes = static_cast<const unsigned char*>(image);
  const auto size = static_cast<std::size_t>(st.st_size);
  Elf64_Ehdr header{};
  if (size < sizeof header) return table;
  std::memcpy(&header, bytes, sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shoff + header.e_shnum * sizeof(Elf64_Shdr) > size)
    return table;
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(bytes + header.e_shoff);
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    const Elf64_Shdr& symtab = sections[i];
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= header.e_shnum) continue;
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    if (symtab.sh_offset + symtab.sh_size > size || strtab.sh_offset + strtab.sh_size > size)
      continue;
    table.symbols = reinterpret_cast<const Elf64_Sym*>(bytes + symtab.sh_offset);
    table.count = symtab.sh_size / sizeof(Elf64_Sym);
    table.names = reinterpret_cast<const char*>(bytes + strtab.sh_offset);
    table.names_bytes = strtab.sh_size;
    table.executable = header.e_type == ET_EXEC;
    break;
  }
  for (std::size_t i = 0; i < table.count; ++i) {
    const Elf64_Sym& s = table.symbols[i];
    if (ELF64_ST_TYPE(s.st_info) == STT_TLS && table.name(s).starts_with("_ZZ"))
      table.local_tls.push_back(&s);
  }
  return table;
}

std::mutex g_symbols_mutex;

// The symbol table of the object holding `address`, and that object's base.
const SymbolTable* symbols_of(const void* address, const void** base) {
  static std::unordered_map<std::string, SymbolTable> files;
  Dl_info info{};
  if (dladdr(address, &info) == 0) return nullptr;
  *base = info.dli_fbase;
  const std::string path =
      info.dli_fname != nullptr && *info.dli_fname != '\0' ? info.dli_fname : "/proc/self/exe";
  auto file = files.find(path);
  if (file == files.end()) file = files.emplace(path, map_symbols(path.c_str())).first;
  return &file->second;
}

std::string_view function_name(const SymbolTable& table, const void* base, const void* function) {
  const auto address = reinterpret_cast<std::uintptr_t>(function);
  const std::uintptr_t wanted =
      table.executable ? address : address - reinterpret_cast<std::uintptr_t>(base);
  for (std::size_t i = 0; i < table.count; ++i) {
    const Elf64_Sym& s = table.symbols[i];
    if (ELF64_ST_TYPE(s.st_info) == STT_FUNC && s.st_value == wanted) return table.name(s);
  }
  return {};
}

struct SharedObject {
  std::size_t offset;  // in the module's TLS block
  std::size_t bytes;
};

struct KernelShared {
  const void* module_base = nullptr;  // dli_fbase of the object holding the kernel
  std::vector<SharedObject> objects;
  std::size_t total = 0;
};

// A kernel's static __shared__ objects are its function-local `static
// thread_local` objects (what the __shared__ macro makes them), named
// "_ZZ" <the kernel's encoding> "E" <entity> by the Itanium C++ ABI.  Objects
// declared in device functions the kernel calls carry those functions' names
// and are not found.
const KernelShared& kernel_shared(const void* kernel) {
  static std::unordered_map<const void*, KernelShared> kernels;
  std::lock_guard lock(g_symbols_mutex);
  if (auto it = kernels.find(kernel); it != kernels.end()) return it->second;
  KernelShared& found = kernels[kernel];
  const SymbolTable* table = symbols_of(kernel, &found.module_base);
  if (table == nullptr || table->local_tls.empty()) return found;
  const std::string_view mangled = function_name(*table, found.module_base, kernel);
  if (mangled.empty()) return found;  // stripped: nothing is checked
  const std::string prefix =
      mangled.starts_with("_Z")
          ? "_ZZ" + std::string(mangled.substr(2)) + "E"
          : "_ZZ" + std::to_string(mangled.size()) + std::string(mangled) + "E";  // extern "C"
  for (const Elf64_Sym* s : table->local_tls) {
    if (!table->name(*s).starts_with(prefix)) continue;
    found.objects.push_back({static_cast<std::size_t>(s->st_value), s->st_size});
    found.total += s->st_size;
  }
  return found;
}

// The calling host thread's TLS block of the object loaded at `base`.
void* tls_block(const void* base) {
  struct Search {
    const void* base;
    void* block;
  } search{base, nullptr};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (reinterpret_cast<const void*>(info->dlpi_addr) != s->base &&
            !(info->dlpi_addr == 0 && s->base != nullptr && info->dlpi_name[0] == '\0'))
          return 0;
        s->block = info->dlpi_tls_data;
        return 1;
      },
      &search);
  return search.block;
}

}  // namespace

// ---- entry points ---------------------------------------------------------------------

void watch(WorkerWatch& w) {
  if (watchdog_seconds() > 0.0) watchdog().watch(w);
}

void unwatch(WorkerWatch& w) {
  if (watchdog_seconds() > 0.0) watchdog().unwatch(w);
}

namespace {
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

std::string symbol_table_name(const void* function) {
  std::lock_guard lock(g_symbols_mutex);
  const void* base = nullptr;
  const SymbolTable* table = symbols_of(function, &base);
  return table == nullptr ? std::string() : std::string(function_name(*table, base, function));
}

std::size_t static_shared_bytes(const void* kernel) {
  return kernel_shared(kernel).total;
}

void poison_static_shared(const void* kernel) {
  const KernelShared& shared = kernel_shared(kernel);
  if (shared.objects.empty()) return;
  auto* block = static_cast<unsigned char*>(tls_block(shared.module_base));
  if (block == nullptr) return;  // a dlopen()ed module whose TLS this thread has not touched yet
  for (const SharedObject& o : shared.objects) std::memset(block + o.offset, kPoisonByte, o.bytes);
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
