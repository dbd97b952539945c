// The order of the range profiler's CUPTI calls
// (bench/cuda_only/cupti_range_profiler.hpp), with CUPTI's functions replaced
// by fakes that log each call: no device.  A pass whose work throws must still
// pop its range and stop the profiler before the profiler is disabled, or
// CUPTI may refuse the disable and then every later enable, losing the rest
// of the run's counts; a failed disable is said once.
#include "cupti_range_profiler.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace rl::bench {
namespace {

std::vector<std::string> g_log;                // the calls, in order
CUptiResult g_disable_result = CUPTI_SUCCESS;  // what the fake disable answers
CUptiResult g_push_result = CUPTI_SUCCESS;     // what the fake push answers

template <typename Params>
CUptiResult logged(const char* name, Params*) {
  g_log.emplace_back(name);
  return CUPTI_SUCCESS;
}

RangeProfilerCalls fake_calls() {
  RangeProfilerCalls c;
  c.enable = [](CUpti_RangeProfiler_Enable_Params* p) { return logged("enable", p); };
  c.disable = [](CUpti_RangeProfiler_Disable_Params*) {
    g_log.emplace_back("disable");
    return g_disable_result;
  };
  c.get_counter_data_size = [](CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
    p->counterDataSize = 16;
    return logged("get_counter_data_size", p);
  };
  c.counter_data_image_initialize = [](CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
    return logged("counter_data_image_initialize", p);
  };
  c.set_config = [](CUpti_RangeProfiler_SetConfig_Params* p) { return logged("set_config", p); };
  c.start = [](CUpti_RangeProfiler_Start_Params* p) { return logged("start", p); };
  c.push_range = [](CUpti_RangeProfiler_PushRange_Params*) {
    g_log.emplace_back("push_range");
    return g_push_result;
  };
  c.pop_range = [](CUpti_RangeProfiler_PopRange_Params* p) { return logged("pop_range", p); };
  c.stop = [](CUpti_RangeProfiler_Stop_Params* p) {
    p->isAllPassSubmitted = 1;
    return logged("stop", p);
  };
  c.decode_data = [](CUpti_RangeProfiler_DecodeData_Params* p) { return logged("decode_data", p); };
  c.get_counter_data_info = [](CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
    p->numTotalRanges = 1;
    return logged("get_counter_data_info", p);
  };
  return c;
}

class RangeProfilerOrder : public testing::Test {
 protected:
  void SetUp() override {
    g_log.clear();
    g_disable_result = CUPTI_SUCCESS;
    g_push_result = CUPTI_SUCCESS;
  }
  // Enables, configures, runs one pass of `work` and decodes, as a count does.
  static void collect(const std::function<void()>& work) {
    RangeProfiler profiler(nullptr, fake_calls());
    profiler.configure({1, 2, 3}, {"dram__bytes_read.sum"});
    EXPECT_TRUE(profiler.pass(work));
    profiler.decode();
  }
  static std::vector<std::string> calls(std::initializer_list<const char*> tail) {
    std::vector<std::string> all{"enable", "get_counter_data_size", "counter_data_image_initialize",
                                 "set_config"};
    all.insert(all.end(), tail.begin(), tail.end());
    return all;
  }
};

TEST_F(RangeProfilerOrder, a_pass_pushes_inside_start_and_pops_before_stop) {
  collect([] { g_log.emplace_back("work"); });
  EXPECT_EQ(g_log, calls({"start", "push_range", "work", "pop_range", "stop", "decode_data",
                          "get_counter_data_info", "disable"}));
}

TEST_F(RangeProfilerOrder, work_that_throws_pops_the_range_and_stops_before_disable) {
  EXPECT_THROW(collect([] {
                 g_log.emplace_back("work");
                 throw std::runtime_error("the launch failed");
               }),
               std::runtime_error);  // the work's own exception, not CUPTI's
  EXPECT_EQ(g_log, calls({"start", "push_range", "work", "pop_range", "stop", "disable"}));
}

TEST_F(RangeProfilerOrder, a_failed_push_stops_the_started_profiler) {
  g_push_result = CUPTI_ERROR_INVALID_OPERATION;
  try {
    collect([] { g_log.emplace_back("work"); });
    ADD_FAILURE() << "the failed push was not reported";
  } catch (const CuptiError& error) {
    EXPECT_EQ(error.result, CUPTI_ERROR_INVALID_OPERATION);
    EXPECT_NE(std::string(error.what()).find("cuptiRangeProfilerPushRange"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(g_log, calls({"start", "push_range", "stop", "disable"}));
}

TEST_F(RangeProfilerOrder, a_failed_disable_is_said_once_a_process) {
  g_disable_result = CUPTI_ERROR_INVALID_OPERATION;
  testing::internal::CaptureStderr();
  { const RangeProfiler first(nullptr, fake_calls()); }
  { const RangeProfiler second(nullptr, fake_calls()); }
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(g_log, (std::vector<std::string>{"enable", "disable", "enable", "disable"}));
  const auto line = said.find("cuptiRangeProfilerDisable failed");
  ASSERT_NE(line, std::string::npos) << said;
  EXPECT_EQ(said.find("cuptiRangeProfilerDisable failed", line + 1), std::string::npos) << said;
}

}  // namespace
}  // namespace rl::bench
