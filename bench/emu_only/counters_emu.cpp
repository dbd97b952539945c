// --counters on the emulator: the emulator's exact counts (rl/emu/counters.hpp)
// of one launch.  The counts do not depend on the schedule, so one pass is
// all there is; they cover only what the emulator sees (tensor-core
// instructions, the project's copy paths), which is why a cost model declares
// bytes_l2_load / _store only where every access goes through a counted path.
#include "rl/bench/counters.hpp"
#include "rl/check.hpp"
#include "rl/emu/counters.hpp"

#include <map>
#include <string>

namespace rl::bench {
namespace {

// The counts under the role keys results.json stores: the tensor roles as the
// emulator counted them, the global bytes split by direction (which CUPTI's
// lts__t_bytes cannot do) and "l2_bytes", their sum, the key a GPU's count
// has.
std::map<std::string, double> values_of(const emu::Counts& counts) {
  std::map<std::string, double> values(counts.tensor_ops.begin(), counts.tensor_ops.end());
  values["l2_load_bytes"] = counts.global_load_bytes;
  values["l2_store_bytes"] = counts.global_store_bytes;
  values["l2_bytes"] = counts.global_load_bytes + counts.global_store_bytes;
  return values;
}

class EmulatorSession final : public CounterSession {
 public:
  roofline::KernelCounters count(const std::function<void()>& launch,
                                 cudaStream_t stream) override {
    emu::reset_counts();
    {
      // Off again whatever happens: a launch that throws leaves no counting
      // running under the next instance's timed samples.
      struct StopCounting {
        ~StopCounting() { emu::stop_counting(); }
      } stop;
      launch();
      RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    roofline::KernelCounters counters;
    counters.source = roofline::CounterSource::emulator;
    counters.passes = 1;
    counters.values = values_of(emu::read_counts());
    return counters;
  }
};

}  // namespace

std::unique_ptr<CounterSession> open_counter_session(const roofline::Context&) {
  return std::make_unique<EmulatorSession>();
}

}  // namespace rl::bench
