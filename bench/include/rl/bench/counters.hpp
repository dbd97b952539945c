// --counters (issue 28): after an instance's timed samples, one more launch
// of its run() is counted, by CUPTI's range profiler on the CUDA backend
// (bench/cuda_only/counters_cupti.cpp) or from the emulator's exact counts
// (bench/emu_only/counters_emu.cpp).  The comparison with the cost model is
// roofline's (one tolerance policy for both sources).
#pragma once

#include "rl/cuda.hpp"
#include "rl/roofline/results.hpp"

#include <functional>
#include <memory>

namespace rl::bench {

class CounterSession {
 public:
  virtual ~CounterSession() = default;
  // Counts one call of `launch`, which enqueues the instance's work on
  // `stream`; the session replays it as often as its passes need and
  // synchronises.  Never inside a timed sample.  When counts cannot be taken
  // (no profiling permission, an unsupported chip) the result says why in
  // `unavailable` and the run goes on.
  virtual roofline::KernelCounters count(const std::function<void()>& launch,
                                         cudaStream_t stream) = 0;
};

// The backend's session, opened once per run with --counters.  A reason
// counts cannot be taken at all is printed once, as one line saying how to
// enable them, and every count() then returns it as `unavailable`.
std::unique_ptr<CounterSession> open_counter_session(const roofline::Context& context);

}  // namespace rl::bench
