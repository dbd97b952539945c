// The CUDA backend's side of the harness: device properties and attributes
// (CUDA 13 removed clockRate/memoryClockRate from cudaDeviceProp, so clocks
// come from NVML, or device attributes where NVML is missing), CUDA, cuBLAS
// and cuDNN versions, NVML.
#include "rl/bench/backend.hpp"
#include "rl/bench/run_info.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"

#include <cublas_api.h>
#if defined(RL_HAVE_CUDNN)
#include <cudnn.h>
#endif

#include <cstdio>
#include <string>
#include <vector>

namespace rl::bench::backend {

namespace {

std::string cuda_version_string(int version) {  // 12040 -> "12.4"
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string uuid_string(const cudaUUID_t& uuid) {  // NVML's spelling: GPU-8-4-4-4-12 hex
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
  }
  return out;
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace

std::string_view program_name() {
  return "bench_roofline";
}
roofline::Backend backend_kind() {
  return roofline::Backend::cuda;
}
std::string_view default_size() {
  return "large";
}

std::optional<std::string> device_unavailable() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  const char* hint = "; run bench_roofline_emu to exercise the suite on the CPU emulator";
  if (status != cudaSuccess) {
    const std::string why = cudaGetErrorString(status);
    cudaGetLastError();  // clear it: nothing else runs, but leave the runtime tidy
    return "no CUDA device available (" + why + ")" + hint;
  }
  if (count == 0) return std::string("no CUDA device available (0 devices)") + hint;
  return std::nullopt;
}

std::filesystem::path default_out_dir(const roofline::Context& context,
                                      std::string_view compact_utc_time) {
  return std::filesystem::path("results") /
         (device_slug(context.device.name) + "-" + std::string(compact_utc_time));
}

roofline::Context collect_context(std::unique_ptr<Nvml>* nvml) {
  constexpr int device = 0;
  RL_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  RL_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));

  roofline::Context c;
  c.backend = backend_kind();
  c.device.name = prop.name;
  c.device.uuid = uuid_string(prop.uuid);
  c.device.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  c.device.sm_count = prop.multiProcessorCount;
  c.device.l2_bytes = prop.l2CacheSize;
  c.device.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  c.device.memory_bus_width_bits = device_attribute(cudaDevAttrGlobalMemoryBusWidth, device);

  int driver = 0, runtime = 0;
  RL_CUDA_CHECK(cudaDriverGetVersion(&driver));
  RL_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  c.cuda_driver_version = cuda_version_string(driver);
  c.cuda_runtime_version = cuda_version_string(runtime);
  c.library_versions["cublas"] = cublas_version();
#if defined(RL_HAVE_CUDNN)
  const std::size_t cudnn = cudnnGetVersion();  // MAJOR*10000 + MINOR*100 + PATCH (cuDNN 9)
  c.library_versions["cudnn"] = std::to_string(cudnn / 10000) + "." +
                                std::to_string((cudnn % 10000) / 100) + "." +
                                std::to_string(cudnn % 100);
#endif
  c.library_versions["benchmark"] = RL_BENCHMARK_VERSION;
  c.host = host_name();
  c.git_commit = build_git_commit();

  // Peak clocks from the device attributes (kHz); NVML, when present, gives
  // current and max clocks and replaces them.
  c.clocks.sm_max_mhz = device_attribute(cudaDevAttrClockRate, device) / 1000.0;
  c.clocks.memory_max_mhz = device_attribute(cudaDevAttrMemoryClockRate, device) / 1000.0;

  std::string why;
  *nvml = Nvml::open(c.device.uuid, static_cast<unsigned>(device), &why);
  // Every CUDA device, in CUDA's order: records name devices by that index.
  int device_count = 0;
  RL_CUDA_CHECK(cudaGetDeviceCount(&device_count));
  std::vector<std::string> uuids, names;
  for (int d = 0; d < device_count; ++d) {
    cudaDeviceProp p{};
    RL_CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    uuids.push_back(uuid_string(p.uuid));
    names.emplace_back(p.name);
  }
  if (*nvml) {
    c.topology = (*nvml)->topology(uuids, names);
  } else {
    roofline::Topology unavailable;
    unavailable.note = why;
    for (int d = 0; d < device_count; ++d)
      unavailable.devices.push_back({.index = d, .name = names[static_cast<std::size_t>(d)]});
    c.topology = std::move(unavailable);
  }
  if (!*nvml) {
    c.nvml_available = false;
    c.nvml_note = why +
                  "; clocks are the device attributes' peak values, ECC, persistence, "
                  "power limit and throttling are unknown";
    return c;
  }
  const Nvml& n = **nvml;
  c.nvml_available = true;
  c.driver_version = n.driver_version();
  c.clocks.sm_mhz = n.sm_clock_mhz().value_or(0);
  c.clocks.sm_max_mhz = n.sm_max_clock_mhz().value_or(c.clocks.sm_max_mhz);
  c.clocks.memory_mhz = n.memory_clock_mhz().value_or(0);
  c.clocks.memory_max_mhz = n.memory_max_clock_mhz().value_or(c.clocks.memory_max_mhz);
  c.ecc_enabled = n.ecc_enabled();
  c.persistence_mode = n.persistence_mode();
  c.power_limit_w = n.power_limit_w();
  return c;
}

}  // namespace rl::bench::backend
