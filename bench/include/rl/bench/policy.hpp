// Measurement policy that does not touch the device (plain C++, unit-tested):
// what a sample is, how many launches it holds, when a kernel has sampled
// enough, and what a throttled sample costs.  The harness applies it on both
// backends; the device side (flush, blocking kernel, events) is in timing.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rl::bench {

// Two kinds of sample, both kept per kernel:
//  - cold: one launch, the L2 flushed first (a write then a read of scratch
//    buffers, so no dirty line is written back inside the timed window), the
//    launch queued behind a blocking kernel so launch overhead is not timed.
//    What a kernel costs when its inputs come from DRAM: the roofline's
//    default, since the roofs are DRAM roofs.
//  - batch: back-to-back launches between one pair of events, the L2 warm from
//    the previous launch, queued behind the blocking kernel so the CPU's launch
//    rate does not set the time.  What a kernel costs in a steady stream of
//    launches; the roofline uses it with --warm-l2.
enum class SampleKind { cold, batch };
std::string_view sample_kind_name(SampleKind kind);  // "cold" | "batch"

// Batch sizing: enough launches to fill about kBatchTargetSeconds, at most
// kMaxLaunchesPerSample (queued behind the blocking kernel, they must stay far
// below the driver's queue of pending launches or the CPU would wait on a GPU
// that waits on the CPU).  Kernels of at least kBatchBelowSeconds get one.
inline constexpr double kBatchBelowSeconds = 20e-6;
inline constexpr double kBatchTargetSeconds = 200e-6;
inline constexpr int kMaxLaunchesPerSample = 128;
int launches_per_sample(double single_launch_seconds);

// The devices whose L2 a cold sample flushes besides the timed one: none for
// a record on one device; every other device for a record across devices
// (min_devices > 1: a peer copy, a chase through a peer's memory), whose
// memory another device's L2 may hold.
std::vector<int> other_devices_to_flush(int min_devices, int timed_device, int device_count);

// When a kernel has sampled enough.  Per repetition and per kind: keep taking
// samples until the relative noise (1.4826 x MAD / median, the regression
// gate's statistic) is at most max_noise with at least min_samples taken, or
// the time budget is spent, or max_samples are taken.  The budget wins over
// min_samples (a kernel that takes seconds per sample gets what fits), but
// every repetition takes at least one sample.
struct SamplingPolicy {
  double max_noise = 0.005;  // --max-noise, a fraction (0.5%)
  double timeout_s = 2.0;    // --timeout: one kernel's sampling time, all repetitions and kinds
  int min_samples = 10;
  int max_samples = 10000;
};
// The budget of one repetition of one kind: the kernel's timeout shared evenly.
double repetition_budget_s(const SamplingPolicy& policy, int repetitions, int kinds);

enum class StopReason { noise, timeout, max_samples };
std::string_view stop_reason_name(StopReason reason);  // "noise" | "timeout" | "max_samples"
// nullopt: take another sample.  `samples` are this repetition's so far.
std::optional<StopReason> should_stop(std::span<const double> samples, double elapsed_s,
                                      double budget_s, const SamplingPolicy& policy);

// A sample taken while the GPU reports a clock-lowering reason (power cap,
// thermal or hardware slowdown) is discarded and retaken after a pause that
// lets the clocks recover, at most kMaxThrottleDiscards times per kernel;
// after that samples are kept and the kernel is marked throttled.
inline constexpr int kMaxThrottleDiscards = 20;
inline constexpr double kThrottleRecoveryPauseSeconds = 0.05;

// The samples of one kind over all repetitions of one kernel.
struct SampleSet {
  SampleKind kind = SampleKind::cold;
  int launches_per_sample = 1;
  std::vector<std::vector<double>> repetitions;  // seconds per launch, per repetition
  std::vector<StopReason> stopped_by;            // per repetition
};
// Each repetition's median (what a repetition reports), in order.
std::vector<double> repetition_medians(const SampleSet& set);
// Every sample of every repetition.
std::vector<double> pooled(const SampleSet& set);

}  // namespace rl::bench
