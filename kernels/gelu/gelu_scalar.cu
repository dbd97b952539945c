// GELU gelu_{tanh,erf}_{f32,bf16}_scalar (the ladder's floor, no baseline): one
// element per thread, grid-stride loop.
//
// The obvious kernel.  Consecutive threads touch consecutive elements, so
// every warp access is coalesced (128 B for fp32), but each thread issues one
// 4-byte (or 2-byte) load and one store per element: the memory system needs
// many more instructions in flight to cover HBM latency than with wide
// accesses.  On the roofline it sits at GELU's fixed intensity, somewhat below
// the hbm.copy roof; the next rungs only move it up.
//
// Issue cost (SASS of nvcc 13.0 for sm_90a; hot-loop instructions per
// element written, one element a store): fp32 tanh 31 (124 per trip of 4
// elements: nvcc unrolls the loop 4x), fp32 erf 34.5, bf16 tanh 39, bf16 erf
// 46 (32.5 and 36.8 on sm_100a, where the bf16 loop is unrolled too).
// Checked on every architecture by the max_loop_instructions_per_store
// budgets below (about 10% above the larger of sm_90a and sm_100a), so an
// issue-cost regression fails the static tests.
#include "gelu/gelu_forms.hpp"
#include "gelu/gelu_launch.hpp"
#include "rl/device_instances.hpp"
#include "rl/packed128.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gelu/gelu_workload.hpp"
#endif

namespace rl::gelu {

// Cost model: rl::gelu::cost (each element read once, written once).

// rl-static: kernel=gelu_scalar max_regs=40 max_smem=0
// rl-static: kernel=*gelu_scalar<float,?(rl::gelu::Form)0>* max_loop_instructions_per_store=35
// rl-static: kernel=*gelu_scalar<float,?(rl::gelu::Form)1>* max_loop_instructions_per_store=38
// rl-static: kernel=*gelu_scalar<__nv_bfloat16,?*Form)0>* max_loop_instructions_per_store=43
// rl-static: kernel=*gelu_scalar<__nv_bfloat16,?*Form)1>* max_loop_instructions_per_store=51
template <typename T, Form F>
__global__ void gelu_scalar(T* __restrict__ y, const T* __restrict__ x, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    y[i] = from_f32<T>(gelu_f32<F>(to_f32(x[i])));
}

template <typename T, Form F>
void launch_gelu_scalar(const Args<T>& a, cudaStream_t stream) {
  constexpr int kThreads = 256;
  rl::launch(gelu_scalar<T, F>, grid_stride_grid(a.n, kThreads), dim3(kThreads), 0, stream, a.y,
             a.x, a.n);
}

RL_DEVICE_INSTANCES(&launch_gelu_scalar<float, Form::tanh>, &launch_gelu_scalar<float, Form::erf>,
                    &launch_gelu_scalar<__nv_bfloat16, Form::tanh>,
                    &launch_gelu_scalar<__nv_bfloat16, Form::erf>);

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(make_record<float>({.name = "gelu_tanh_f32_scalar",
                                       .variant = "scalar",
                                       .form = Form::tanh,
                                       .baseline = "",
                                       .launcher = &launch_gelu_scalar<float, Form::tanh>}));
RL_REGISTER_KERNEL(make_record<float>({.name = "gelu_erf_f32_scalar",
                                       .variant = "scalar",
                                       .form = Form::erf,
                                       .baseline = "",
                                       .launcher = &launch_gelu_scalar<float, Form::erf>}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "gelu_tanh_bf16_scalar",
                                .variant = "scalar",
                                .form = Form::tanh,
                                .baseline = "",
                                .launcher = &launch_gelu_scalar<__nv_bfloat16, Form::tanh>}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "gelu_erf_bf16_scalar",
                                .variant = "scalar",
                                .form = Form::erf,
                                .baseline = "",
                                .launcher = &launch_gelu_scalar<__nv_bfloat16, Form::erf>}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gelu
