// CUPTI's range profiler for --counters (cupti_range_profiler.hpp).
#include "cupti_range_profiler.hpp"

#include "rl/check.hpp"
#include "rl/cuda.hpp"

namespace rl::bench {

namespace {

std::string name_of(CUptiResult result) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return text ? text : "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace

CuptiError::CuptiError(CUptiResult r, const std::string& call)
    : std::runtime_error(call + " failed: " + name_of(r)), result(r) {}

void check_cupti(CUptiResult result, const char* call) {
  if (result != CUPTI_SUCCESS) throw CuptiError(result, call);
}

// Through the runtime's driver entry point: nothing here links against
// libcuda (a machine without a driver still loads the benchmark and says it
// has no GPU).
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  static const GetCurrent get = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    RL_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw std::runtime_error("cuCtxGetCurrent not found through the driver entry point");
    return reinterpret_cast<GetCurrent>(fn);
  }();
  RL_CUDA_CHECK(cudaFree(nullptr));  // the runtime makes the device's primary context current
  CUcontext context = nullptr;
  if (get(&context) != CUDA_SUCCESS || context == nullptr)
    throw std::runtime_error("cuCtxGetCurrent found no current CUDA context");
  return context;
}

RangeProfiler::RangeProfiler(CUcontext context) {
  CUpti_RangeProfiler_Enable_Params p{};
  p.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  p.ctx = context;
  check_cupti(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
  object_ = p.pRangeProfilerObject;
}

RangeProfiler::~RangeProfiler() {
  CUpti_RangeProfiler_Disable_Params p{};
  p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
  p.pRangeProfilerObject = object_;
  cuptiRangeProfilerDisable(&p);  // nothing to do about a failure here
}

void RangeProfiler::configure(const std::vector<std::uint8_t>& config,
                              const std::vector<std::string>& metrics) {
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  CUpti_RangeProfiler_GetCounterDataSize_Params size{};
  size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
  size.pRangeProfilerObject = object_;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = 1;
  size.maxNumRangeTreeNodes = 1;
  check_cupti(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  data_.assign(size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{};
  init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  init.pRangeProfilerObject = object_;
  init.counterDataSize = data_.size();
  init.pCounterData = data_.data();
  check_cupti(cuptiRangeProfilerCounterDataImageInitialize(&init),
              "cuptiRangeProfilerCounterDataImageInitialize");
  config_ = config;
  CUpti_RangeProfiler_SetConfig_Params set{};
  set.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  set.pRangeProfilerObject = object_;
  set.configSize = config_.size();
  set.pConfig = config_.data();
  set.counterDataImageSize = data_.size();
  set.pCounterDataImage = data_.data();
  set.range = CUPTI_UserRange;
  set.replayMode = CUPTI_UserReplay;
  set.maxRangesPerPass = 1;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  check_cupti(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
}

void RangeProfiler::push_range() {
  CUpti_RangeProfiler_PushRange_Params push{};
  push.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE;
  push.pRangeProfilerObject = object_;
  push.pRangeName = "instance";
  check_cupti(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
}

const std::vector<std::uint8_t>& RangeProfiler::decode() {
  const auto decoded =
      call(cuptiRangeProfilerDecodeData, CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE,
           "cuptiRangeProfilerDecodeData");
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
  info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  info.pCounterDataImage = data_.data();
  info.counterDataImageSize = data_.size();
  check_cupti(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (decoded.numOfRangeDropped != 0 || info.numTotalRanges != 1)
    throw CountError("CUPTI kept " + std::to_string(info.numTotalRanges) + " ranges and dropped " +
                     std::to_string(decoded.numOfRangeDropped) + "; one range was profiled");
  return data_;
}

}  // namespace rl::bench
