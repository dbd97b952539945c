// CUPTI's range profiler for --counters (cupti_range_profiler.hpp).
#include "cupti_range_profiler.hpp"

#include "rl/check.hpp"
#include "rl/cuda.hpp"

#include <atomic>
#include <cstdio>

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

RangeProfiler::RangeProfiler(CUcontext context, const RangeProfilerCalls& calls) : calls_(calls) {
  CUpti_RangeProfiler_Enable_Params p{};
  p.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  p.ctx = context;
  check_cupti(calls_.enable(&p), "cuptiRangeProfilerEnable");
  object_ = p.pRangeProfilerObject;
}

RangeProfiler::~RangeProfiler() {
  CUpti_RangeProfiler_Disable_Params p{};
  p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
  p.pRangeProfilerObject = object_;
  const CUptiResult result = calls_.disable(&p);
  // A destructor cannot throw, and later enables on this context may then
  // fail, each kernel with its own error; this line says where that began,
  // once, rather than once per kernel after it.
  static std::atomic<bool> said{false};
  if (result != CUPTI_SUCCESS && !said.exchange(true))
    std::fprintf(stderr,
                 "counters: cuptiRangeProfilerDisable failed: %s; later collections on this "
                 "device may fail\n",
                 name_of(result).c_str());
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
  check_cupti(calls_.get_counter_data_size(&size), "cuptiRangeProfilerGetCounterDataSize");
  data_.assign(size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{};
  init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  init.pRangeProfilerObject = object_;
  init.counterDataSize = data_.size();
  init.pCounterData = data_.data();
  check_cupti(calls_.counter_data_image_initialize(&init),
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
  check_cupti(calls_.set_config(&set), "cuptiRangeProfilerSetConfig");
}

bool RangeProfiler::pass(const std::function<void()>& work) {
  open_range();
  try {
    work();
  } catch (...) {
    close_range(false);  // the work's exception says what went wrong
    throw;
  }
  return close_range(true);
}

void RangeProfiler::open_range() {
  CUpti_RangeProfiler_Start_Params start{};
  start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
  start.pRangeProfilerObject = object_;
  check_cupti(calls_.start(&start), "cuptiRangeProfilerStart");
  CUpti_RangeProfiler_PushRange_Params push{};
  push.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE;
  push.pRangeProfilerObject = object_;
  push.pRangeName = "instance";
  const CUptiResult pushed = calls_.push_range(&push);
  if (pushed != CUPTI_SUCCESS) {
    stop();  // best effort: the push's failure is the one to report
    check_cupti(pushed, "cuptiRangeProfilerPushRange");
  }
}

std::pair<CUptiResult, bool> RangeProfiler::stop() {
  CUpti_RangeProfiler_Stop_Params params{};
  params.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  params.pRangeProfilerObject = object_;
  const CUptiResult result = calls_.stop(&params);
  return {result, params.isAllPassSubmitted != 0};
}

bool RangeProfiler::close_range(bool check) {
  CUpti_RangeProfiler_PopRange_Params pop{};
  pop.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
  pop.pRangeProfilerObject = object_;
  const CUptiResult popped = calls_.pop_range(&pop);
  const auto [stopped, all_passes_submitted] = stop();
  if (check) {
    check_cupti(popped, "cuptiRangeProfilerPopRange");
    check_cupti(stopped, "cuptiRangeProfilerStop");
  }
  return all_passes_submitted;
}

const std::vector<std::uint8_t>& RangeProfiler::decode() {
  CUpti_RangeProfiler_DecodeData_Params decoded{};
  decoded.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  decoded.pRangeProfilerObject = object_;
  check_cupti(calls_.decode_data(&decoded), "cuptiRangeProfilerDecodeData");
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
  info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  info.pCounterDataImage = data_.data();
  info.counterDataImageSize = data_.size();
  check_cupti(calls_.get_counter_data_info(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (decoded.numOfRangeDropped != 0 || info.numTotalRanges != 1)
    throw CountError("CUPTI kept " + std::to_string(info.numTotalRanges) + " ranges and dropped " +
                     std::to_string(decoded.numOfRangeDropped) + "; one range was profiled");
  return data_;
}

}  // namespace rl::bench
