// The measurement primitives of the timed region: CUDA events and the L2
// flush (the batching policy is in rl/bench/policy.hpp).
#pragma once

#include "rl/bench/policy.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"

#include <cstddef>

namespace rl::bench {

// A start/stop event pair on one stream.
class EventTimer {
 public:
  EventTimer() {
    RL_CUDA_CHECK(cudaEventCreate(&start_));
    RL_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start(cudaStream_t stream) { RL_CUDA_CHECK(cudaEventRecord(start_, stream)); }
  void stop(cudaStream_t stream) { RL_CUDA_CHECK(cudaEventRecord(stop_, stream)); }
  // Waits for the stop event; seconds between the two events.
  double seconds() {
    RL_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    RL_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

// Writes a buffer of twice the L2 size before a timed sample, so the kernel
// starts with its inputs in DRAM, not in a cache the previous sample warmed.
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes) : scratch_(2 * l2_bytes) {}
  void flush(cudaStream_t stream) {
    if (scratch_.size() == 0) return;
    RL_CUDA_CHECK(cudaMemsetAsync(scratch_.get(), ++fill_, scratch_.bytes(), stream));
  }
  std::size_t bytes() const { return scratch_.bytes(); }

 private:
  DeviceBuffer<unsigned char> scratch_;
  unsigned char fill_ = 0;
};

}  // namespace rl::bench
