#include "worker_pool.hpp"

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "block_runner.hpp"

namespace rl::emu::detail {
namespace {

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

}  // namespace

void run_with_helpers(Job& job, int helpers) {
  worker_pool().run(job, helpers);
}

}  // namespace rl::emu::detail
