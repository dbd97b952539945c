// CUPTI's range profiler (CUDA 13, cupti_range_profiler.h) as --counters uses
// it (counters_cupti.cpp): one user range around one call of the instance's
// work, user replay (the caller repeats the work once per pass CUPTI asks
// for), the counter data of that one range decoded at the end.
#pragma once

#include <cuda.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rl::bench {

// A CUPTI call that failed, with its result for cupti_refusal().
struct CuptiError : std::runtime_error {
  CuptiError(CUptiResult result, const std::string& call);
  CUptiResult result;
};

// Throws CuptiError naming `call` unless `result` is CUPTI_SUCCESS.
void check_cupti(CUptiResult result, const char* call);

// A collection that CUPTI ran but that gave no usable counts (its range was
// dropped, its passes did not end): that kernel's counts are unavailable.
struct CountError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The current device's primary CUDA context, made current if it was not.
CUcontext current_context();

// The range profiler enabled on a context for one collection; disabled (and
// its object destroyed) when this goes, also when the work throws.
class RangeProfiler {
 public:
  explicit RangeProfiler(CUcontext context);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // Sets `config` (the host's image of `metrics`) with user ranges and user
  // replay, and a counter data image for one range of `metrics`.
  void configure(const std::vector<std::uint8_t>& config, const std::vector<std::string>& metrics);

  // One pass: `work` inside the one range.  True once CUPTI has every pass.
  template <typename Work>
  bool pass(Work&& work) {
    call(cuptiRangeProfilerStart, CUpti_RangeProfiler_Start_Params_STRUCT_SIZE,
         "cuptiRangeProfilerStart");
    push_range();
    work();
    call(cuptiRangeProfilerPopRange, CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE,
         "cuptiRangeProfilerPopRange");
    return call(cuptiRangeProfilerStop, CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE,
                "cuptiRangeProfilerStop")
               .isAllPassSubmitted != 0;
  }

  // The counter data of the one range, decoded (for CounterHost::evaluate).
  const std::vector<std::uint8_t>& decode();

 private:
  void push_range();

  // A range-profiler call whose parameters are the object alone; returns
  // them for what CUPTI wrote back.
  template <typename Params>
  Params call(CUptiResult (*function)(Params*), std::size_t struct_size, const char* name) {
    Params p{};
    p.structSize = struct_size;
    p.pRangeProfilerObject = object_;
    check_cupti(function(&p), name);
    return p;
  }

  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::uint8_t> config_;  // CUPTI reads it at every pass
  std::vector<std::uint8_t> data_;
};

}  // namespace rl::bench
