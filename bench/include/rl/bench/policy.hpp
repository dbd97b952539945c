// Measurement policy that does not touch the device (plain C++, unit-tested).
#pragma once

namespace rl::bench {

// Short kernels are timed as a batch of back-to-back launches between one pair
// of events, and the batch time divided by the count: a single event pair
// around a few-microsecond kernel measures launch and event overhead as much
// as the kernel.  Kernels of at least kBatchBelowSeconds are timed one launch
// per sample; shorter ones get enough launches to fill about
// kBatchTargetSeconds (at most kMaxLaunchesPerSample).  Only the first launch
// of a batch sees the flushed L2; the rest see what the previous launch left,
// which for a kernel this short is the regime it runs in anyway.
inline constexpr double kBatchBelowSeconds = 20e-6;
inline constexpr double kBatchTargetSeconds = 200e-6;
inline constexpr int kMaxLaunchesPerSample = 1000;
int launches_per_sample(double single_launch_seconds);

}  // namespace rl::bench
