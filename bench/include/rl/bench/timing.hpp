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

// Before a cold sample: leaves the L2 holding none of the kernel's data and
// no dirty line.  It writes one scratch buffer of twice the L2 size (evicting
// everything), then reads a second one (so the written lines are written back
// now, not inside the timed window, and the L2 ends full of clean lines).
// Per backend: bench/cuda_only/timing_cuda.cu; on the emulator, which has no
// cache, the write alone (bench/emu_only/timing_emu.cpp).
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;
  void flush(cudaStream_t stream);
  std::size_t bytes() const { return written_.bytes() + read_.bytes(); }

 private:
  DeviceBuffer<unsigned char> written_;
  DeviceBuffer<unsigned char> read_;
  DeviceBuffer<unsigned> sink_;  // keeps the read from being optimised away
  unsigned char fill_ = 0;
};

// Holds a stream while a sample's work is queued behind it, so the timed
// window starts with the whole sample already in the GPU's queue: neither the
// CPU's launch latency (cold) nor its launch rate (batch) is timed.  On the
// GPU a one-thread kernel spins on a host-mapped flag that release() sets; it
// gives up after about ten seconds (a queue that filled before the release,
// or a lost release) and says so through timed_out(), and the sample is then
// retaken without blocking.  On the emulator launches run when called, so
// there is nothing to hold: block() and release() do nothing.
class LaunchBlocker {
 public:
  LaunchBlocker();
  ~LaunchBlocker();
  LaunchBlocker(const LaunchBlocker&) = delete;
  LaunchBlocker& operator=(const LaunchBlocker&) = delete;
  void block(cudaStream_t stream);
  void release();
  // After the stream synchronised: the spin gave up before release().
  bool timed_out() const;

 private:
  int* host_flags_ = nullptr;  // [0] release, [1] timed out; host-mapped
  int* device_flags_ = nullptr;
};

}  // namespace rl::bench
