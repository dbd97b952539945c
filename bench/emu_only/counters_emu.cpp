// --counters on the emulator: the emulator's exact counts (rl/emu/counters.hpp)
// of one launch.  Stub until issue 28's emulator session lands.
#include "rl/bench/counters.hpp"

namespace rl::bench {
namespace {

class NotBuiltYet final : public CounterSession {
 public:
  roofline::KernelCounters count(const std::function<void()>&, cudaStream_t) override {
    roofline::KernelCounters counters;
    counters.source = roofline::CounterSource::emulator;
    counters.unavailable = "the emulator's counter session is not built yet";
    return counters;
  }
};

}  // namespace

std::unique_ptr<CounterSession> open_counter_session(const roofline::Context&) {
  return std::make_unique<NotBuiltYet>();
}

}  // namespace rl::bench
