// The refusal sentences of --counters on the CUDA backend (cupti_refusal.hpp).
#include "cupti_refusal.hpp"

#include "rl/roofline/counter_plan.hpp"

#include <array>
#include <cstdio>
#include <utility>

namespace rl::bench {

namespace {

// NVIDIA's page for this error (ERR_NVGPUCTRPERM: "The user running <tool>
// does not have permission to access NVIDIA GPU Performance Counters"):
// https://developer.nvidia.com/ERR_NVGPUCTRPERM, which names the module
// option, root / CAP_SYS_ADMIN and a container's --cap-add=SYS_ADMIN.
constexpr std::string_view kNoPermission =
    "no permission to read this GPU's performance counters "
    "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, NVIDIA's ERR_NVGPUCTRPERM); enable it one of three "
    "ways: load the nvidia kernel module with NVreg_RestrictProfilingToAdminUsers=0 (the line "
    "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/, then reload the "
    "module or reboot), run as root or with the CAP_SYS_ADMIN capability, or start the container "
    "with --cap-add=SYS_ADMIN (https://developer.nvidia.com/ERR_NVGPUCTRPERM)";

// The range profiler's minimum, as cupti_result.h (CUDA 13) says of
// CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED.
constexpr std::string_view kNeedsTuring =
    "CUPTI's range profiler runs on compute capability 7.5 (Turing) and later";

struct Refusal {
  CUptiResult result;
  std::string_view sentence;
};

constexpr std::array kRefusals{
    Refusal{CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, kNoPermission},
    Refusal{CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
            "the hypervisor does not allow profiling on this virtual GPU "
            "(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES): the host's administrator "
            "must enable profiling for the VM's vGPU"},
    Refusal{CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED,
            "CUPTI cannot profile this virtual GPU (CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED): "
            "count on a bare-metal GPU"},
    Refusal{CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
            "another profiler is attached to this process "
            "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: Nsight Systems, Nsight Compute, "
            "cuda-gdb or another CUPTI client); run bench_roofline --counters outside it"},
    Refusal{CUPTI_ERROR_HARDWARE_BUSY,
            "another client holds this GPU's performance counters (CUPTI_ERROR_HARDWARE_BUSY), "
            "such as DCGM's profiling metrics or a profiler in another process; stop it (DCGM: "
            "'dcgmi profile --pause') and run again"},
    Refusal{CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED,
            "CUPTI's legacy Event/Metric API is in use in this process "
            "(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED), and the range profiler cannot run "
            "beside it"},
    Refusal{CUPTI_ERROR_NOT_SUPPORTED,
            "CUPTI's range profiler does not support this device (CUPTI_ERROR_NOT_SUPPORTED; it "
            "runs on compute capability 7.5 (Turing) and later)"},
    Refusal{CUPTI_ERROR_INVALID_CHIP_NAME,
            "this CUPTI does not know the GPU's chip (CUPTI_ERROR_INVALID_CHIP_NAME); the CUPTI of "
            "a newer CUDA toolkit may"},
    Refusal{CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED,
            "profiling is not allowed while confidential computing is on "
            "(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED)"},
    Refusal{CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED,
            "CUPTI does not profile NVIDIA Crypto Mining Processors "
            "(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED)"},
    Refusal{CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED,
            "CUPTI's range profiler does not support this MIG instance "
            "(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED); count on a GPU with MIG off"},
    Refusal{CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED,
            "CUPTI does not profile a GPU in SLI (CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED)"},
    Refusal{CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED,
            "CUPTI does not profile this GPU under WSL (CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED); "
            "count on native Linux"},
};

constexpr std::string_view kDeviceSupport = "cuptiProfilerDeviceSupported: ";
constexpr std::string_view kUnknownChip = "CUPTI's profiler does not support this GPU's chip ";

bool unsupported(CUpti_Profiler_Support_Level level) {
  return level == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
}

}  // namespace

std::optional<std::string> cupti_refusal(CUptiResult result) {
  for (const Refusal& r : kRefusals)
    if (r.result == result) return std::string(r.sentence);
  return std::nullopt;
}

std::optional<std::string> device_support_refusal(
    const CUpti_Profiler_DeviceSupported_Params& support) {
  if (support.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return std::nullopt;
  const std::string says(kDeviceSupport);
  if (unsupported(support.architecture))
    return says + "this GPU's architecture is not supported; " + std::string(kNeedsTuring);
  if (support.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED)
    return says +
           "profiling is disabled on this virtual GPU; the host's administrator must "
           "enable it for the VM's vGPU";
  if (unsupported(support.vGpu)) return says + "this virtual GPU cannot be profiled";
  if (unsupported(support.sli)) return says + "a GPU in SLI cannot be profiled";
  if (unsupported(support.confidentialCompute))
    return says + "profiling is not allowed while confidential computing is on";
  if (unsupported(support.cmp)) return says + "NVIDIA Crypto Mining Processors cannot be profiled";
  if (unsupported(support.wsl)) return says + "this GPU cannot be profiled under WSL";
  return says + "this device cannot be profiled (no reason given)";
}

std::string unknown_chip_refusal(std::string_view chip, std::string_view cupti_says) {
  return std::string(kUnknownChip) + std::string(chip) +
         "; the CUPTI of a newer CUDA toolkit may (" + std::string(cupti_says) + ")";
}

bool is_refusal(std::string_view unavailable) {
  for (const Refusal& r : kRefusals)
    if (unavailable == r.sentence) return true;
  return unavailable.starts_with(kDeviceSupport) || unavailable.starts_with(kUnknownChip);
}

std::string unconfigurable_metrics(std::string_view chip,
                                   std::span<const std::uint8_t> counter_availability,
                                   std::span<const std::string> metrics, std::string_view error) {
  std::string refused;
  for (const std::string& metric : metrics) {
    try {
      // A fresh host object: CUPTI adds each configure's metrics to the ones before.
      roofline::CounterHost(chip, counter_availability).configure(std::span(&metric, 1));
    } catch (const roofline::CounterPlanError&) {
      refused += (refused.empty() ? "" : ", ") + metric;
    }
  }
  if (refused.empty()) return std::string(error);
  return "this " + std::string(chip) + " cannot collect " + refused +
         " (CUPTI refuses each alone with this device's counter availability image: a counter "
         "another client holds, or one the chip lacks): " +
         std::string(error);
}

void Refusals::refuse_all(std::string why) {
  if (!all_.empty()) return;
  all_ = std::move(why);
  std::fprintf(stderr, "counters unavailable: %s\n", all_.c_str());
}

void Refusals::refuse(int device, std::string why) {
  const auto [found, added] = devices_.try_emplace(device, std::move(why));
  if (added)
    std::fprintf(stderr, "counters unavailable: %s (device %d)\n", found->second.c_str(), device);
}

const std::string* Refusals::of(int device) const {
  if (!all_.empty()) return &all_;
  const auto found = devices_.find(device);
  return found == devices_.end() ? nullptr : &found->second;
}

}  // namespace rl::bench
