// Keeping a kernel file's record out of nvcc's device passes.
//
// nvcc parses a .cu file once for the host and once more per target
// architecture, with __CUDA_ARCH__ defined.  The device passes need the
// kernels, not the record that registers them: the workload, reference and
// validation are most of what a kernel file includes, and parsing them five
// times cost 3-10 s of a kernel file's 22-50 s compile (docs/perf-log.md,
// "Device passes").  So a kernel file puts its record under
//   #if !defined(__CUDA_ARCH__)
// and names, before it, the launchers whose kernel templates the device
// passes must still instantiate, since the record that uses them is absent:
//   RL_DEVICE_INSTANCES(&launch_x<float>, &launch_x<__nv_bfloat16>);
// In the host pass and under the emulator the line changes nothing.  A
// launcher left out leaves its kernel out of the cubin: the static check
// fails a kernel none of whose instances is there ("not found in the SASS
// listing"), and on a GPU the launch fails with cudaErrorInvalidDeviceFunction.
// When adding the guard to a file, compare the object's SASS before and after
// (`cuobjdump -sass`): it must not change.
#pragma once

namespace rl::detail {

template <typename... Launchers>
constexpr int odr_use(Launchers...) {
  return 0;
}

}  // namespace rl::detail

#define RL_DEVICE_INSTANCES_CAT2_(a, b) a##b
#define RL_DEVICE_INSTANCES_CAT_(a, b) RL_DEVICE_INSTANCES_CAT2_(a, b)
#define RL_DEVICE_INSTANCES(...)                                                                   \
  [[maybe_unused]] static constexpr int RL_DEVICE_INSTANCES_CAT_(rl_device_instances_, __LINE__) = \
      ::rl::detail::odr_use(__VA_ARGS__)
