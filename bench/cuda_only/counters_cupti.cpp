// --counters on the CUDA backend: CUPTI's range profiler replays one launch
// of the instance.  Stub until issue 28's CUPTI session lands.
#include "rl/bench/counters.hpp"

namespace rl::bench {
namespace {

class NotBuiltYet final : public CounterSession {
 public:
  roofline::KernelCounters count(const std::function<void()>&, cudaStream_t) override {
    roofline::KernelCounters counters;
    counters.source = roofline::CounterSource::cupti;
    counters.unavailable = "CUPTI counter collection is not built yet";
    return counters;
  }
};

}  // namespace

std::unique_ptr<CounterSession> open_counter_session(const roofline::Context&) {
  return std::make_unique<NotBuiltYet>();
}

}  // namespace rl::bench
