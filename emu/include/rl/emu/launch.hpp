// rl::launch for the emulator, RL_DYNAMIC_SHARED, and the execution controls
// (schedules, worker threads).
//
// A launch runs the whole grid before it returns (streams are synchronous).
// Each CUDA thread is a fiber; a host worker runs one block at a time, its
// threads in the order the schedule gives, each until it blocks (barrier,
// warp collective, __nanosleep) or exits.  Blocks are spread over
// RL_EMU_THREADS host threads (default 1; the calling thread is one of them).
// Fiber stacks are RL_EMU_STACK_KB KiB (default 64, 256 under ASan), pooled
// per host thread.  A malformed value of any of these variables ends the
// process with one line on stderr and exit code 2.
//
// Limits: blocks of one grid never wait for each other (no grid-wide sync, no
// spinning on another block's flag), except the blocks of one thread block
// cluster (cudaLaunchKernelEx with a cluster shape), which run together on one
// host worker, their threads interleaved in one schedule (emu/docs/hopper.md,
// "Clusters"); a spin-wait on another thread of the
// same block must call __nanosleep, which yields.  A deadlock (live threads
// that all wait for something that cannot happen) fails the launch with
// cudaErrorLaunchFailure and one line on stderr naming kernel and block.  A
// spin-wait that cannot end (with or without __nanosleep) is stopped by the
// watchdog after RL_EMU_WATCHDOG_S seconds without progress (default 10; 0
// disables): cudaErrorLaunchTimeout and one line naming kernel, block and
// what each warp waits on.  Crashes, device assert, __trap, static shared
// limits and misaligned accesses: emu/README.md, "Errors the emulator
// reports".
//
// Schedules (RL_EMU_SCHEDULE=forward|reverse|random[:seed], default forward)
// choose the order in which runnable threads run between synchronisation
// points.  A correct kernel gives bit-identical results under every schedule;
// a missing __syncthreads usually does not, which run_under_schedules() turns
// into a test.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "rl/emu/cuda_api.hpp"
#include "rl/emu/types.hpp"

namespace rl::emu {

enum class ScheduleOrder { forward, reverse, random };

struct Schedule {
  ScheduleOrder order = ScheduleOrder::forward;
  std::uint64_t seed = 0;  // random only; each block and round derives its own permutation
};

// Parses "forward", "reverse", "random" or "random:<seed>"; nullopt otherwise.
std::optional<Schedule> parse_schedule(std::string_view text);
std::string to_string(const Schedule& schedule);

// The schedule launches use: the one set by set_schedule(), else RL_EMU_SCHEDULE.
Schedule current_schedule();
void set_schedule(const Schedule& schedule);

// Sets a schedule for its lifetime and restores the previous one.
class ScopedSchedule {
 public:
  explicit ScopedSchedule(const Schedule& schedule) : previous_(current_schedule()) {
    set_schedule(schedule);
  }
  ~ScopedSchedule() { set_schedule(previous_); }
  ScopedSchedule(const ScopedSchedule&) = delete;
  ScopedSchedule& operator=(const ScopedSchedule&) = delete;

 private:
  Schedule previous_;
};

// Host threads that run blocks: set_worker_threads() if called, else
// RL_EMU_THREADS, else 1.
int worker_threads();
void set_worker_threads(int count);

// Emulated devices: set_device_count() if called, else RL_EMU_DEVICES, else 1.
// set_device_count (1..64, else cudaErrorInvalidValue) refuses with
// cudaErrorNotPermitted while an allocation, stream or event lives on a device
// it would remove; it makes device 0 current on the calling thread, and peer
// access among the remaining devices stays as it was.  Another host thread
// whose current device is removed falls back to device 0.
int device_count();
cudaError_t set_device_count(int count);

// Runs `run` (launches kernels, returns their output, e.g. a std::vector)
// once under each schedule and returns the outputs in that order.  A kernel
// is schedule-independent when all outputs are bitwise equal.
template <typename Run>
auto run_under_schedules(Run&& run, std::initializer_list<Schedule> schedules = {
                                        Schedule{ScheduleOrder::forward, 0},
                                        Schedule{ScheduleOrder::reverse, 0}}) {
  std::vector<decltype(run())> outputs;
  for (const Schedule& schedule : schedules) {
    ScopedSchedule scoped(schedule);
    outputs.push_back(run());
  }
  return outputs;
}

namespace detail {

struct LaunchSpec {
  dim3 grid;
  dim3 block;
  std::size_t shared_bytes;
  const void* kernel;     // for cudaFuncSetAttribute limits and the kernel's name
  const char* signature;  // fallback name when the symbol cannot be found
  void (*entry)(const void* bound);
  const void* bound;              // the kernel pointer and its copied arguments
  const char* name = nullptr;     // as written at the launch, where no kernel pointer exists
  cudaStream_t stream = nullptr;  // must belong to the current device
  // The arguments that are data pointers (nullptr for every other argument),
  // for the peer-access check: each must reach memory the launching device may.
  const void* const* pointer_args = nullptr;
  std::size_t pointer_arg_count = 0;
  // Thread block clusters of this shape (cudaLaunchAttributeClusterDimension);
  // 1x1x1 is a launch without one.
  dim3 cluster{1, 1, 1};
};

// An argument's address when it is a data pointer (a struct holding pointers
// is not looked into), else nullptr.
template <typename T>
const void* pointer_argument(const T& value) {
  if constexpr (std::is_pointer_v<T> && !std::is_function_v<std::remove_pointer_t<T>>)
    return const_cast<const void*>(static_cast<const volatile void*>(value));
  else
    return nullptr;
}
template <typename Tuple, std::size_t... I>
std::array<const void*, sizeof...(I)> pointer_arguments(const Tuple& params,
                                                        std::index_sequence<I...>) {
  return {pointer_argument(std::get<I>(params))...};
}

// Runs the launch; returns its configuration error (recorded as the last
// error too) or cudaSuccess (a kernel failure is recorded for the next
// synchronising call, as on a GPU, where the launch itself succeeded).
cudaError_t launch(const LaunchSpec& spec);

// cudaLaunchKernelEx's attributes: the cluster shape into *cluster; an
// attribute the emulator does not model is refused (and recorded).
cudaError_t launch_attributes(const cudaLaunchConfig_t* config, dim3* cluster);

// This block's dynamic shared memory: exactly shared_bytes long.
void* dynamic_shared_memory();

}  // namespace detail
}  // namespace rl::emu

namespace rl::emu::detail {

// rl::launch and cudaLaunchKernelEx: one launch of `kernel` in clusters of
// `cluster` blocks (1x1x1: no cluster shape).  Returns the configuration's
// error (also kept as the last error), or cudaSuccess: a kernel that fails
// while it runs fails the launch as every launch does.
template <typename... KernelParams, typename... Args>
cudaError_t launch_kernel(void (*kernel)(KernelParams...), dim3 grid, dim3 block, dim3 cluster,
                          std::size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  static_assert(sizeof...(KernelParams) == sizeof...(Args),
                "rl::launch: argument count differs from the kernel's parameter count");
  // Arguments are converted and copied once, as CUDA copies them to parameter
  // space; every CUDA thread then receives its own by-value copy.
  struct Bound {
    void (*kernel)(KernelParams...);
    std::tuple<std::decay_t<KernelParams>...> params;
  };
  const Bound bound{kernel, std::tuple<std::decay_t<KernelParams>...>(std::forward<Args>(args)...)};
  const auto pointers = pointer_arguments(bound.params, std::index_sequence_for<KernelParams...>{});
  LaunchSpec spec{grid,
                  block,
                  shared_bytes,
                  reinterpret_cast<const void*>(kernel),
                  __PRETTY_FUNCTION__,
                  [](const void* p) {
                    const Bound& b = *static_cast<const Bound*>(p);
                    std::apply(b.kernel, b.params);
                  },
                  &bound};
  spec.stream = stream;  // streams run synchronously, but must belong to the current device
  spec.pointer_args = pointers.data();
  spec.pointer_arg_count = pointers.size();
  spec.cluster = cluster;
  return launch(spec);
}

}  // namespace rl::emu::detail

namespace rl {

template <typename... KernelParams, typename... Args>
void launch(void (*kernel)(KernelParams...), dim3 grid, dim3 block, std::size_t shared_bytes,
            cudaStream_t stream, Args&&... args) {
  rl::emu::detail::launch_kernel(kernel, grid, block, dim3{1, 1, 1}, shared_bytes, stream,
                                 std::forward<Args>(args)...);
}

}  // namespace rl

// cudaLaunchKernelEx (the C++ template of cuda_runtime.h): the configuration's
// grid, block, dynamic shared memory and stream, and of its attributes the
// cluster shape (cudaLaunchAttributeClusterDimension; emu/docs/hopper.md,
// "Clusters", has its refusals).  The scheduling-policy preference is a hint
// and ignored; any other attribute is refused with cudaErrorNotSupported, as
// the emulator does not model it.
template <typename... KernelParams, typename... Args>
cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t* config, void (*kernel)(KernelParams...),
                               Args&&... args) {
  dim3 cluster{1, 1, 1};
  const cudaError_t attributes = rl::emu::detail::launch_attributes(config, &cluster);
  if (attributes != cudaSuccess) return attributes;
  return rl::emu::detail::launch_kernel(kernel, config->gridDim, config->blockDim, cluster,
                                        config->dynamicSmemBytes, config->stream,
                                        std::forward<Args>(args)...);
}

namespace rl::emu {

// A launch of a kernel template whose template arguments nvcc deduces from the
// launch's arguments (`k<<<g, b>>>(x)` for `template <class T> __global__ void
// k(T*)`): `call` is a generic lambda that calls the kernel, so C++ deduces
// them exactly as a call does.  The arguments are copied once, decayed (what
// by-value deduced parameters become); each CUDA thread's call copies them
// again into the kernel's parameters.  With no kernel pointer, the launch is
// named `name`, keyed by its entry function, and checked against the default
// 48 KiB dynamic shared limit; the kernel's static __shared__ objects are not
// found for the size check or initcheck (emu/docs/porting.md).
template <typename Call, typename... Args>
void launch_deduced(const char* name, const Call& call, dim3 grid, dim3 block,
                    std::size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  struct Bound {
    const Call* call;
    std::tuple<std::decay_t<Args>...> params;
  };
  const Bound bound{&call, std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...)};
  void (*const entry)(const void*) = [](const void* p) {
    const Bound& b = *static_cast<const Bound*>(p);
    std::apply(*b.call, b.params);
  };
  const auto pointers = detail::pointer_arguments(bound.params, std::index_sequence_for<Args...>{});
  detail::LaunchSpec spec{grid, block, shared_bytes, reinterpret_cast<const void*>(entry),
                          name, entry, &bound,       name};
  spec.stream = stream;
  spec.pointer_args = pointers.data();
  spec.pointer_arg_count = pointers.size();
  detail::launch(spec);
}

namespace detail {

// The kernel of a launch as written, `k<<<...>>>(...)`: its name, its pointer
// when `k` names one function (or is a pointer), else nullptr (a function
// template whose arguments the call deduces), and a call of it.
template <typename Pointer, typename Call>
struct KernelAsWritten {
  const char* name;
  Pointer pointer;
  Call call;
};

// Deduces F from a function or a pointer; from a function template's name
// alone it cannot, which RL_EMU_KERNEL's requires-expression turns into false.
template <typename F, typename Tag>
constexpr F kernel_pointer(F f, Tag) {
  return f;
}

}  // namespace detail

// What `k<<<grid, block, shared, stream>>>(args...)` becomes under
// rl_emu_cuda_executable's rewrite (emu/tools/cuda_rewrite.py): rl::launch when
// the kernel has a pointer, launch_deduced when C++ must deduce its template
// arguments from the call.
template <typename Pointer, typename Call, typename... Args>
void launch_as_written(const detail::KernelAsWritten<Pointer, Call>& kernel, dim3 grid, dim3 block,
                       std::size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  if constexpr (std::is_null_pointer_v<Pointer>)
    launch_deduced(kernel.name, kernel.call, grid, block, shared_bytes, stream,
                   std::forward<Args>(args)...);
  else
    rl::launch(kernel.pointer, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
}

}  // namespace rl::emu

// The kernel expression of a launch, for launch_as_written.  Variadic: template
// arguments hold commas (`k<64, 64>`).  The lambdas capture by reference so
// that a kernel held in a local function-pointer variable works too.
// clang-format off
#define RL_EMU_KERNEL(...)                                                          \
  ::rl::emu::detail::KernelAsWritten{                                               \
      #__VA_ARGS__,                                                                 \
      [&](auto rl_emu_tag) {                                                        \
        if constexpr (requires {                                                    \
                        ::rl::emu::detail::kernel_pointer(__VA_ARGS__, rl_emu_tag); \
                      })                                                            \
          return ::rl::emu::detail::kernel_pointer(__VA_ARGS__, rl_emu_tag);        \
        else                                                                        \
          return nullptr;                                                           \
      }(0),                                                                         \
      [&](auto&&... rl_emu_args) { __VA_ARGS__(rl_emu_args...); }}
// clang-format on

#define RL_DYNAMIC_SHARED(T, name) \
  T* name = static_cast<T*>(::rl::emu::detail::dynamic_shared_memory())
