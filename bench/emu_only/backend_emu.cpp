// The emulator backend's side of the harness: the emulator's honest "CPU
// emulator" device, no NVML, no libraries.  Times are CPU times of the
// emulation, not GPU performance; runs go to out/, never to results/.
#include "rl/bench/backend.hpp"
#include "rl/bench/run_info.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"

namespace rl::bench::backend {

std::string_view program_name() {
  return "bench_roofline_emu";
}
roofline::Backend backend_kind() {
  return roofline::Backend::emulator;
}
std::string_view default_size() {
  return "small";
}

std::optional<std::string> device_unavailable() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    return std::string("the CPU emulator reports no device (") + cudaGetErrorString(status) + ")";
  return std::nullopt;
}

std::filesystem::path default_out_dir(const roofline::Context&, std::string_view compact_utc_time) {
  return std::filesystem::path("out") / ("emulator-" + std::string(compact_utc_time));
}

roofline::Context collect_context(std::unique_ptr<Nvml>* nvml) {
  nvml->reset();
  cudaDeviceProp prop{};
  RL_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  roofline::Context c;
  c.backend = backend_kind();
  c.device.name = prop.name;
  c.device.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  c.device.sm_count = prop.multiProcessorCount;
  c.device.l2_bytes = prop.l2CacheSize;
  c.device.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  c.library_versions["benchmark"] = RL_BENCHMARK_VERSION;
  c.nvml_available = false;
  c.nvml_note = "emulator backend: no GPU, no NVML";
  // RL_EMU_DEVICES devices (1 unless set), every pair "emulated".
  int device_count = 0;
  RL_CUDA_CHECK(cudaGetDeviceCount(&device_count));
  c.topology = roofline::emulated_topology(device_count, c.device.name);
  for (auto& d : c.topology->devices) {  // each device's own name ("device 1 of 2")
    cudaDeviceProp p{};
    RL_CUDA_CHECK(cudaGetDeviceProperties(&p, d.index));
    d.name = p.name;
  }
  c.host = host_name();
  c.git_commit = build_git_commit();
  return c;
}

}  // namespace rl::bench::backend
