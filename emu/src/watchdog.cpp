// The watchdog (RL_EMU_WATCHDOG_S): one thread per process follows every
// worker thread that runs blocks; a worker that makes no progress for the
// limit has its block stopped (cudaErrorLaunchTimeout), and one whose block
// still stands a grace period later ends the process with one line and exit
// code 124, so the emulator never hangs.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "internal.hpp"

namespace rl::emu::detail {
namespace {

constexpr int kWatchdogExitCode = 124;  // as timeout(1)'s

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

}  // namespace

void watch(WorkerWatch& w) {
  if (watchdog_seconds() > 0.0) watchdog().watch(w);
}

void unwatch(WorkerWatch& w) {
  if (watchdog_seconds() > 0.0) watchdog().unwatch(w);
}

}  // namespace rl::emu::detail
