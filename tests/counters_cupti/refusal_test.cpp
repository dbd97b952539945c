// The refusal sentences of --counters on the CUDA backend
// (bench/cuda_only/cupti_refusal.hpp): each CUPTI answer that means "this
// machine will not count" gives one line saying why and what to do; any other
// error is one count's failure, not a refusal.  No device needed.
#include "cupti_refusal.hpp"

#include "rl/roofline/counter_plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace rl::bench {
namespace {

struct Case {
  CUptiResult result;
  std::string_view name;  // the enumerator, which the sentence quotes
  std::string_view says;  // a fragment of what to do or why
};

constexpr Case kRefusing[] = {
    {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
     "no permission to read this GPU's performance counters"},
    {CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
     "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES", "must enable profiling"},
    {CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED",
     "bare-metal GPU"},
    {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
     "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED", "another profiler is attached"},
    {CUPTI_ERROR_HARDWARE_BUSY, "CUPTI_ERROR_HARDWARE_BUSY", "dcgmi profile --pause"},
    {CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED, "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED",
     "legacy Event/Metric API"},
    {CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED", "compute capability 7.5"},
    {CUPTI_ERROR_INVALID_CHIP_NAME, "CUPTI_ERROR_INVALID_CHIP_NAME", "newer CUDA toolkit"},
    {CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED,
     "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED", "confidential computing"},
    {CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED, "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED", "Crypto Mining"},
    {CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED", "MIG off"},
    {CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED, "CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED", "SLI"},
    {CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED, "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED", "WSL"},
};

TEST(CuptiRefusal, every_refusing_error_gives_one_line_naming_it_and_what_to_do) {
  for (const Case& c : kRefusing) {
    const auto sentence = cupti_refusal(c.result);
    ASSERT_TRUE(sentence.has_value()) << c.name;
    EXPECT_NE(sentence->find(c.name), std::string::npos) << *sentence;
    EXPECT_NE(sentence->find(c.says), std::string::npos) << *sentence;
    EXPECT_EQ(sentence->find('\n'), std::string::npos) << *sentence;
    EXPECT_TRUE(is_refusal(*sentence)) << *sentence;
  }
}

TEST(CuptiRefusal, no_permission_names_the_three_ways_to_enable_it_and_nvidias_page) {
  const std::string sentence = cupti_refusal(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES).value();
  for (std::string_view way :
       {"NVreg_RestrictProfilingToAdminUsers=0", "root", "CAP_SYS_ADMIN", "--cap-add=SYS_ADMIN",
        "https://developer.nvidia.com/ERR_NVGPUCTRPERM"})
    EXPECT_NE(sentence.find(way), std::string::npos) << way << " not in: " << sentence;
}

TEST(CuptiRefusal, an_error_of_one_collection_is_not_a_refusal) {
  for (CUptiResult result :
       {CUPTI_ERROR_UNKNOWN, CUPTI_ERROR_INVALID_PARAMETER, CUPTI_ERROR_OUT_OF_MEMORY,
        CUPTI_ERROR_INVALID_METRIC_NAME, CUPTI_ERROR_INVALID_OPERATION})
    EXPECT_FALSE(cupti_refusal(result).has_value()) << static_cast<int>(result);
  EXPECT_FALSE(is_refusal("cuptiRangeProfilerDecodeData failed: CUPTI_ERROR_UNKNOWN"));
  EXPECT_FALSE(is_refusal(""));
}

CUpti_Profiler_DeviceSupported_Params supported() {
  CUpti_Profiler_DeviceSupported_Params p{};
  p.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
  p.isSupported = p.architecture = p.sli = p.vGpu = p.confidentialCompute = p.cmp = p.wsl =
      CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  return p;
}

TEST(CuptiRefusal, each_unsupported_device_flag_gives_its_reason) {
  EXPECT_FALSE(device_support_refusal(supported()).has_value());
  using Flag = CUpti_Profiler_Support_Level CUpti_Profiler_DeviceSupported_Params::*;
  const struct {
    Flag flag;
    CUpti_Profiler_Support_Level level;
    std::string_view says;
  } cases[] = {
      {&CUpti_Profiler_DeviceSupported_Params::architecture,
       CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED, "compute capability 7.5"},
      {&CUpti_Profiler_DeviceSupported_Params::vGpu, CUPTI_PROFILER_CONFIGURATION_DISABLED,
       "disabled on this virtual GPU"},
      {&CUpti_Profiler_DeviceSupported_Params::vGpu, CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED,
       "virtual GPU cannot be profiled"},
      {&CUpti_Profiler_DeviceSupported_Params::sli, CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED,
       "SLI"},
      {&CUpti_Profiler_DeviceSupported_Params::confidentialCompute,
       CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED, "confidential computing"},
      {&CUpti_Profiler_DeviceSupported_Params::cmp, CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED,
       "Crypto Mining"},
      {&CUpti_Profiler_DeviceSupported_Params::wsl, CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED,
       "WSL"},
  };
  for (const auto& c : cases) {
    auto p = supported();
    p.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
    p.*c.flag = c.level;
    const auto sentence = device_support_refusal(p);
    ASSERT_TRUE(sentence.has_value()) << c.says;
    EXPECT_NE(sentence->find(c.says), std::string::npos) << *sentence;
    EXPECT_TRUE(is_refusal(*sentence)) << *sentence;
  }
  auto p = supported();
  p.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;  // and no flag says why
  EXPECT_NE(device_support_refusal(p).value().find("no reason given"), std::string::npos);
}

TEST(CuptiRefusal, an_unknown_chip_is_named_with_what_cupti_said) {
  const std::string sentence = unknown_chip_refusal("GX999", "unknown chip 'GX999'; CUPTI knows");
  EXPECT_NE(sentence.find("GX999"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find("CUPTI knows"), std::string::npos) << sentence;
  EXPECT_TRUE(is_refusal(sentence)) << sentence;
}

TEST(CuptiRefusals, a_refused_device_leaves_the_others_counting_and_is_said_once) {
  Refusals refusals;
  testing::internal::CaptureStderr();
  refusals.refuse(1, "cuptiRangeProfilerEnable failed: CUPTI_ERROR_UNKNOWN");
  refusals.refuse(1, "a second reason");  // the first stays, unsaid again
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(said,
            "counters unavailable: cuptiRangeProfilerEnable failed: CUPTI_ERROR_UNKNOWN "
            "(device 1)\n");
  ASSERT_NE(refusals.of(1), nullptr);
  EXPECT_EQ(*refusals.of(1), "cuptiRangeProfilerEnable failed: CUPTI_ERROR_UNKNOWN");
  EXPECT_EQ(refusals.of(0), nullptr);
  EXPECT_EQ(refusals.of(2), nullptr);
}

TEST(CuptiRefusals, a_failed_initialisation_refuses_every_device) {
  Refusals refusals;
  testing::internal::CaptureStderr();
  refusals.refuse_all(cupti_refusal(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES).value());
  EXPECT_EQ(testing::internal::GetCapturedStderr().find("(device"), std::string::npos);
  for (int device : {0, 1, 7}) {
    ASSERT_NE(refusals.of(device), nullptr) << device;
    EXPECT_TRUE(is_refusal(*refusals.of(device))) << *refusals.of(device);
  }
}

// CUPTI's host API alone: GH100's host object without a device's counter
// availability image refuses an invented metric among real ones.
TEST(CuptiRefusal, a_configuration_cupti_refuses_names_the_metrics_it_refuses_alone) {
  if (!roofline::counter_plan_available())
    GTEST_SKIP() << roofline::counter_plan_unavailable_reason();
  const std::vector<std::string> metrics{"dram__bytes_read.sum", "rl__invented_counter.sum",
                                         "lts__t_bytes.sum"};
  std::string error;
  try {
    roofline::CounterHost("GH100", {}).configure(metrics);
  } catch (const roofline::CounterPlanError& e) {
    error = e.what();
  }
  ASSERT_FALSE(error.empty()) << "CUPTI configured an invented metric";
  const std::string sentence = unconfigurable_metrics("GH100", {}, metrics, error);
  EXPECT_NE(sentence.find("GH100 cannot collect rl__invented_counter.sum ("), std::string::npos)
      << sentence;
  EXPECT_EQ(sentence.find("dram__bytes_read"), std::string::npos) << sentence;
  EXPECT_EQ(sentence.find("lts__t_bytes"), std::string::npos) << sentence;
  EXPECT_NE(sentence.find(error), std::string::npos) << sentence;
  // Metrics that each configure alone: CUPTI's words only.
  EXPECT_EQ(unconfigurable_metrics("GH100", {}, std::vector<std::string>{"dram__bytes_read.sum"},
                                   "CUPTI said no"),
            "CUPTI said no");
}

}  // namespace
}  // namespace rl::bench
