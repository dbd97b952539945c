// --counters on the CUDA backend: CUPTI's Range Profiler (CUDA 13:
// cupti_range_profiler.h, with the Profiler Host API of cupti_profiler_host.h
// through rl::roofline::CounterHost; not the deprecated Event/Metric APIs)
// counts one launch of the instance after its timed samples.
//
// The metrics are the chip's plan (rl/roofline/counter_plan.hpp, what
// `roofline counters --chip` prints).  One user range holds one call of
// `launch`, so a library call of several kernels is counted whole; user
// replay calls `launch` once per pass CUPTI asks for.  Before each pass the
// L2 is flushed, as before a cold sample, unless the run keeps it warm
// (--warm-l2): the DRAM bytes are then those the cost model's bytes_model
// describes, not what the previous pass left in the L2.
//
// The session is opened once a run, and initialises CUPTI then; each device
// is probed at its first count (the current one at once): its support, its
// chip and plan, the counter availability image and the plan's configuration
// on it, an enable of the range profiler.  A refusal (no permission, an
// unsupported chip, a metric the device cannot collect, another profiler
// attached; cupti_refusal.hpp) is printed once, as "counters unavailable:
// <why and what to do> (device N)", and every count() on that device returns
// it as `unavailable`; the other devices go on counting.  Only a failed
// initialisation refuses every device.  A build without CUPTI (RL_HAVE_CUPTI
// undefined) says so the same way.  A collection that fails otherwise (a CUPTI
// error of that count, a dropped range) is that kernel's `unavailable`, its
// reason said once a run; the run goes on counting the others.
#include "rl/bench/counters.hpp"

#include "rl/roofline/counter_plan.hpp"

#include <cstdio>
#include <string>
#include <utility>

#if defined(RL_HAVE_CUPTI)
#include "counter_readout.hpp"
#include "cupti_range_profiler.hpp"
#include "cupti_refusal.hpp"
#include "rl/bench/timing.hpp"
#include "rl/check.hpp"

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>
#endif

namespace rl::bench {
namespace {

void say_unavailable(const std::string& why) {
  std::fprintf(stderr, "counters unavailable: %s\n", why.c_str());
}

// Every count() of a run that cannot count returns the one reason.
roofline::KernelCounters unavailable(std::string why) {
  roofline::KernelCounters counters;
  counters.source = roofline::CounterSource::cupti;
  counters.unavailable = std::move(why);
  return counters;
}

#if !defined(RL_HAVE_CUPTI)

class WithoutCupti final : public CounterSession {
 public:
  roofline::KernelCounters count(const std::function<void()>&, cudaStream_t) override {
    return unavailable(std::string(roofline::counter_plan_unavailable_reason()));
  }
};

}  // namespace

std::unique_ptr<CounterSession> open_counter_session(const roofline::Context&) {
  say_unavailable(std::string(roofline::counter_plan_unavailable_reason()));
  return std::make_unique<WithoutCupti>();
}

#else

// What a device needs for every collection: its chip's plan as a readout,
// the host object that configured it and evaluates, and an L2 flusher.
struct DeviceCounting {
  std::string chip;
  CounterReadout readout;
  std::unique_ptr<roofline::CounterHost> host;
  roofline::CounterHost::Config config;
  std::unique_ptr<L2Flusher> flusher;  // null with --warm-l2
};

std::vector<std::uint8_t> counter_availability(CUcontext context) {
  CUpti_Profiler_GetCounterAvailability_Params p{};
  p.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
  p.ctx = context;
  check_cupti(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  check_cupti(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  return image;
}

// Throws CuptiError, roofline::CounterPlanError (unknown chip, host API) or
// std::runtime_error with the sentence of a refusal.
DeviceCounting prepare(int ordinal, bool flush_l2) {
  CUpti_Profiler_DeviceSupported_Params support{};
  support.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
  support.cuDevice = ordinal;
  support.api = CUPTI_PROFILER_RANGE_PROFILING;
  check_cupti(cuptiProfilerDeviceSupported(&support), "cuptiProfilerDeviceSupported");
  if (auto why = device_support_refusal(support)) throw std::runtime_error(*why);

  DeviceCounting device;
  CUpti_Device_GetChipName_Params name{};
  name.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  name.deviceIndex = static_cast<std::size_t>(ordinal);
  check_cupti(cuptiDeviceGetChipName(&name), "cuptiDeviceGetChipName");
  device.chip = name.pChipName;
  try {
    device.readout = readout_of(roofline::plan_counters(device.chip));
  } catch (const roofline::CounterPlanError& error) {
    throw std::runtime_error(unknown_chip_refusal(device.chip, error.what()));
  }
  const CUcontext context = current_context();
  const auto availability = counter_availability(context);
  device.host = std::make_unique<roofline::CounterHost>(device.chip, availability);
  try {
    device.config = device.host->configure(device.readout.metrics);
  } catch (const roofline::CounterPlanError& error) {
    throw std::runtime_error(
        unconfigurable_metrics(device.chip, availability, device.readout.metrics, error.what()));
  }
  {  // Permission and another attached profiler show here, once, not per kernel.
    const RangeProfiler probe(context);
  }
  if (flush_l2) {
    int l2_bytes = 0;
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, ordinal));
    device.flusher = std::make_unique<L2Flusher>(static_cast<std::size_t>(l2_bytes));
  }
  return device;
}

class CuptiSession final : public CounterSession {
 public:
  explicit CuptiSession(const roofline::Context& context) : flush_l2_(context.l2_flushed) {
    try {
      CUpti_Profiler_Initialize_Params p{};
      p.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
      check_cupti(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
      initialized_ = true;
    } catch (const CuptiError& error) {
      refusals_.refuse_all(cupti_refusal(error.result).value_or(error.what()));
      return;
    }
    try {
      device_for(current_device());          // a refusal shows at the start of the run
    } catch (const std::exception& error) {  // no current device: CUDA itself failed
      refusals_.refuse_all(error.what());
    }
  }
  ~CuptiSession() override {
    devices_.clear();
    if (!initialized_) return;
    CUpti_Profiler_DeInitialize_Params p{};
    p.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE;
    cuptiProfilerDeInitialize(&p);
  }

  roofline::KernelCounters count(const std::function<void()>& launch,
                                 cudaStream_t stream) override {
    const int ordinal = current_device();
    const DeviceCounting* device = device_for(ordinal);
    if (device == nullptr) return unavailable(*refusals_.of(ordinal));
    roofline::KernelCounters counters;
    counters.source = roofline::CounterSource::cupti;
    counters.chip = device->chip;
    try {
      RangeProfiler profiler(current_context());
      profiler.configure(device->config.image, device->readout.metrics);
      // CUPTI says how many passes it needs; a few more than its plan means
      // it is not converging, which would otherwise replay forever.
      const std::size_t most = device->config.passes + 2;
      bool done = false;
      while (!done) {
        if (static_cast<std::size_t>(counters.passes) == most)
          throw CountError("CUPTI asked for more than " + std::to_string(most) +
                           " passes (its plan: " + std::to_string(device->config.passes) + ")");
        if (device->flusher) {
          device->flusher->flush(stream);
          RL_CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        done = profiler.pass([&] {
          launch();
          RL_CUDA_CHECK(cudaStreamSynchronize(stream));
        });
        ++counters.passes;
      }
      const auto values = device->host->evaluate(profiler.decode(), device->readout.metrics);
      counters.values = role_values(device->readout, values);
    } catch (const CuptiError& error) {
      // The device passed the session's probe, so "not supported" now
      // concerns this launch, not the machine; the other refusals (a
      // permission checked only at a pass, another profiler or client that
      // took the counters since) hold for this device for the rest of the run.
      if (error.result != CUPTI_ERROR_NOT_SUPPORTED)
        if (auto why = cupti_refusal(error.result)) {
          refusals_.refuse(ordinal, std::move(*why));
          return unavailable(*refusals_.of(ordinal));
        }
      counters.unavailable = error.what();
    } catch (const roofline::CounterPlanError& error) {
      counters.unavailable = error.what();
    } catch (const CountError& error) {
      counters.unavailable = error.what();
    }
    // Anything else (the launch itself failed) reaches the harness, which
    // records the kernel's counts as unavailable with it.
    if (!counters.unavailable.empty()) {
      counters.values.clear();
      if (said_.insert(counters.unavailable).second) say_unavailable(counters.unavailable);
    }
    return counters;
  }

 private:
  static int current_device() {
    int ordinal = 0;
    RL_CUDA_CHECK(cudaGetDevice(&ordinal));
    return ordinal;
  }

  // The device's counting, prepared at its first count; null when it is
  // refused.  Whatever stops its preparation refuses that device alone.
  const DeviceCounting* device_for(int ordinal) {
    if (refusals_.of(ordinal)) return nullptr;
    if (auto found = devices_.find(ordinal); found != devices_.end()) return &found->second;
    try {
      return &devices_.emplace(ordinal, prepare(ordinal, flush_l2_)).first->second;
    } catch (const CuptiError& error) {
      refusals_.refuse(ordinal, cupti_refusal(error.result).value_or(error.what()));
    } catch (const std::exception& error) {
      refusals_.refuse(ordinal, error.what());
    }
    return nullptr;
  }

  bool flush_l2_ = true;
  bool initialized_ = false;
  Refusals refusals_;
  std::set<std::string> said_;             // one count's failures, each said once a run
  std::map<int, DeviceCounting> devices_;  // by device ordinal
};

}  // namespace

std::unique_ptr<CounterSession> open_counter_session(const roofline::Context& context) {
  return std::make_unique<CuptiSession>(context);
}

#endif

}  // namespace rl::bench
