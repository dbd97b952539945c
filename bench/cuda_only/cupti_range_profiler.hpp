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
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
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

// The range profiler's calls that RangeProfiler makes, CUPTI's by default; a
// host-only test replaces them to check the order of the calls (the range
// closed and the profiler stopped before it is disabled, also when the work
// throws), which no device run shows.
struct RangeProfilerCalls {
  CUptiResult (*enable)(CUpti_RangeProfiler_Enable_Params*) = cuptiRangeProfilerEnable;
  CUptiResult (*disable)(CUpti_RangeProfiler_Disable_Params*) = cuptiRangeProfilerDisable;
  CUptiResult (*get_counter_data_size)(CUpti_RangeProfiler_GetCounterDataSize_Params*) =
      cuptiRangeProfilerGetCounterDataSize;
  CUptiResult (*counter_data_image_initialize)(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params*) =
      cuptiRangeProfilerCounterDataImageInitialize;
  CUptiResult (*set_config)(CUpti_RangeProfiler_SetConfig_Params*) = cuptiRangeProfilerSetConfig;
  CUptiResult (*start)(CUpti_RangeProfiler_Start_Params*) = cuptiRangeProfilerStart;
  CUptiResult (*push_range)(CUpti_RangeProfiler_PushRange_Params*) = cuptiRangeProfilerPushRange;
  CUptiResult (*pop_range)(CUpti_RangeProfiler_PopRange_Params*) = cuptiRangeProfilerPopRange;
  CUptiResult (*stop)(CUpti_RangeProfiler_Stop_Params*) = cuptiRangeProfilerStop;
  CUptiResult (*decode_data)(CUpti_RangeProfiler_DecodeData_Params*) = cuptiRangeProfilerDecodeData;
  CUptiResult (*get_counter_data_info)(CUpti_RangeProfiler_GetCounterDataInfo_Params*) =
      cuptiRangeProfilerGetCounterDataInfo;
};

// The range profiler enabled on a context for one collection; disabled (and
// its object destroyed) when this goes, also when the work throws.  A failed
// disable is printed once a process: CUPTI may then refuse later enables on
// that context, and the kernels after it are unavailable for that reason.
class RangeProfiler {
 public:
  explicit RangeProfiler(CUcontext context, const RangeProfilerCalls& calls = {});
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // Sets `config` (the host's image of `metrics`) with user ranges and user
  // replay, and a counter data image for one range of `metrics`.
  void configure(const std::vector<std::uint8_t>& config, const std::vector<std::string>& metrics);

  // One pass: `work` inside the one range.  True once CUPTI has every pass.
  // When `work` throws, the range is popped and the profiler stopped (as far
  // as CUPTI lets: their failures give way to the work's exception), so the
  // destructor disables a stopped profiler.
  bool pass(const std::function<void()>& work);

  // The counter data of the one range, decoded (for CounterHost::evaluate).
  const std::vector<std::uint8_t>& decode();

 private:
  void open_range();  // start, then push the range (stopped again if the push fails)
  // cuptiRangeProfilerStop: its result, and whether every pass has been submitted.
  std::pair<CUptiResult, bool> stop();
  // Pops the range, then stops, the stop also after a failed pop; whether
  // CUPTI has every pass.  Throws the first failure only if `check`.
  bool close_range(bool check);

  RangeProfilerCalls calls_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::uint8_t> config_;  // CUPTI reads it at every pass
  std::vector<std::uint8_t> data_;
};

}  // namespace rl::bench
