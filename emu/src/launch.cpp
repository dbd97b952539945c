// A kernel launch: checks its configuration and shared memory, then runs its
// blocks on the calling thread or the worker pool and reports the outcome.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "block_reports.hpp"
#include "block_runner.hpp"
#include "clusters.hpp"
#include "cuda_api_internal.hpp"
#include "worker_pool.hpp"

namespace rl::emu::detail {
namespace {

// Per-kernel limits set with cudaFuncSetAttribute.
std::mutex g_limits_mutex;
std::unordered_map<const void*, std::size_t>& dynamic_shared_limits() {
  static std::unordered_map<const void*, std::size_t> limits;
  return limits;
}

bool valid_configuration(const dim3& grid, const dim3& block) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return false;
  if (block.x == 0 || block.y == 0 || block.z == 0) return false;
  if (block.x > 1024 || block.y > 1024 || block.z > 64) return false;
  if (static_cast<std::uint64_t>(block.x) * block.y * block.z > 1024) return false;
  if (grid.x > 2147483647u || grid.y > 65535 || grid.z > 65535) return false;
  return true;
}

}  // namespace

std::size_t max_dynamic_shared(const void* kernel) {
  std::lock_guard lock(g_limits_mutex);
  auto it = dynamic_shared_limits().find(kernel);
  return it == dynamic_shared_limits().end() ? kDefaultSharedPerBlock : it->second;
}

cudaError_t set_max_dynamic_shared(const void* kernel, int bytes) {
  if (kernel == nullptr) return cudaErrorInvalidDeviceFunction;
  if (bytes < 0 || static_cast<std::size_t>(bytes) > kOptInSharedPerBlock)
    return cudaErrorInvalidValue;
  std::lock_guard lock(g_limits_mutex);
  dynamic_shared_limits()[kernel] = static_cast<std::size_t>(bytes);
  return cudaSuccess;
}

cudaError_t launch(const LaunchSpec& spec) {
  if (tl_thread != nullptr) {
    std::fprintf(stderr, "rl::emu: kernel launched from device code (not supported)\n");
    record_error(cudaErrorNotSupported);
    return cudaErrorNotSupported;
  }
  if (!valid_configuration(spec.grid, spec.block)) {
    record_error(cudaErrorInvalidConfiguration);
    return cudaErrorInvalidConfiguration;
  }
  const std::string& name = cached_kernel_name(spec);
  int device = 0;
  if (const cudaError_t e = check_launch_devices(spec, name, &device); e != cudaSuccess) {
    record_error(e);
    return e;
  }
  if (const cudaError_t sticky = sticky_error(); sticky != cudaSuccess) {
    record_error(sticky);  // a GPU context runs nothing after a sticky error
    return sticky;
  }
  install_signal_handlers();
  if (spec.shared_bytes > max_dynamic_shared(spec.kernel)) {
    record_error(cudaErrorInvalidValue);
    return cudaErrorInvalidValue;
  }
  // Static shared memory: nvcc refuses a kernel with more than 48 KiB, and a
  // launch fails whose static plus dynamic bytes exceed the opt-in maximum.
  if (const std::size_t fixed = static_shared_bytes(spec.kernel);
      fixed > kDefaultSharedPerBlock || fixed + spec.shared_bytes > kOptInSharedPerBlock) {
    std::fprintf(stderr,
                 "rl::emu: kernel %s declares %zu bytes of static __shared__ memory (limit %zu "
                 "static, %zu static + dynamic on the emulated device); %zu dynamic requested\n",
                 kernel_name(spec).c_str(), fixed, kDefaultSharedPerBlock, kOptInSharedPerBlock,
                 spec.shared_bytes);
    record_error(cudaErrorInvalidValue);
    return cudaErrorInvalidValue;
  }
  if (const cudaError_t e = check_cluster(spec); e != cudaSuccess) {
    record_error(e);
    return e;
  }
  Job job;
  job.spec = spec;
  job.name = &name;
  job.device = device;
  job.schedule = current_schedule();
  job.cluster = spec.cluster;
  job.cluster_size = spec.cluster.x * spec.cluster.y * spec.cluster.z;
  job.clusters =
      static_cast<std::uint64_t>(spec.grid.x) * spec.grid.y * spec.grid.z / job.cluster_size;
  const std::uint64_t workers =
      std::min<std::uint64_t>(static_cast<std::uint64_t>(worker_threads()), job.clusters);
  if (workers <= 1)
    run_blocks(job);
  else
    run_with_helpers(job, static_cast<int>(workers - 1));
  race_acquire(&job);  // every CUDA thread's exit happens before the launch returns
  if (job.failed.load()) {
    std::fprintf(stderr, "rl::emu: kernel %s failed in %s\n", job.name->c_str(),
                 job.failure.c_str());
    record_launch_failure(job.error);
  }
  return cudaSuccess;
}

cudaError_t launch_attributes(const cudaLaunchConfig_t* config, dim3* cluster) {
  if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr)) {
    record_error(cudaErrorInvalidValue);
    return cudaErrorInvalidValue;
  }
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    if (a.id == cudaLaunchAttributeClusterDimension) {
      *cluster = dim3{a.val.clusterDim.x, a.val.clusterDim.y, a.val.clusterDim.z};
    } else if (a.id != cudaLaunchAttributeIgnore &&
               a.id != cudaLaunchAttributeClusterSchedulingPolicyPreference) {
      std::fprintf(stderr, "rl::emu: cudaLaunchKernelEx: launch attribute %d is not emulated\n",
                   static_cast<int>(a.id));
      record_error(cudaErrorNotSupported);
      return cudaErrorNotSupported;
    }
  }
  return cudaSuccess;
}

}  // namespace rl::emu::detail
