// GELU's vector rungs, 128-bit loads and stores; each one's baseline is the
// scalar record of its form and storage type (gelu_tanh_f32_scalar, ...).
//
// gelu_{tanh,erf}_f32_vec4: each thread moves 16 bytes per load and per store
// (LDG.E.128 / STG.E.128) instead of 4.  Same bytes, same FLOPs as the scalar
// rung, so the same intensity; what changes is that a quarter of the memory
// instructions keep the same number of bytes in flight, which is what a
// streaming kernel needs to approach the hbm.copy roof.  A scalar tail handles
// n % 4 elements, so any length works (buffers come 256-byte aligned from
// cudaMalloc, which the 16-byte accesses need).
//
// gelu_{tanh,erf}_bf16_vec8: bf16 storage, fp32 math.  One 16-byte access now
// carries 8 elements: half the bytes per element for the same FLOPs, so the
// point moves right on the roofline (twice the intensity) and, still memory
// bound, twice the elements per second at the same GB/s.
//
// gelu_tanh_{f32_vec4,bf16_vec8}_fastmath (tanh form): the tanh becomes the
// hardware tanh.approx.f32 (one MUFU instruction instead of tanhf's ~20 FP32
// instructions).  Memory bound either way, so it should buy little time; it is
// here to show what the approximation costs in accuracy (a documented bound)
// for what it saves in instructions.
//
// Issue cost (SASS of nvcc 13.0 for sm_90a; hot-loop instructions per
// element written, per 128-bit store / 4 or 8 elements; sm_100a within 2%
// of these, except fast math: 10.3 and 11.2):
//   fp32 tanh 26.3 (105), fp32 erf 30.5 (122), fp32 fast math 11.3 (45),
//   bf16 tanh 25.9 (207), bf16 erf 29.5 (236), bf16 fast math 11.6 (93).
// A bf16 element moves 4 bytes (read and write): at an H200's 4.8 TB/s
// (datasheet) that is 1.2e12 elements/s, while its 132 SMs x 4 schedulers x
// 32 lanes issue 3.3e13 thread-instructions/s at 1.98 GHz: about 28 per
// element.  The exact bf16 rungs sit at that issue limit, the fast-math rung
// well below it.  Checked on every architecture by the
// max_loop_instructions_per_store budgets below (about 10% above the larger
// of sm_90a and sm_100a).
#include "gelu/gelu_forms.hpp"
#include "gelu/gelu_launch.hpp"
#include "rl/device_instances.hpp"
#include "rl/packed128.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gelu/gelu_reference.hpp"
#include "gelu/gelu_workload.hpp"
#endif

namespace rl::gelu {

// Cost model: rl::gelu::cost (each element read once, written once), and
// the L2 bytes the counters check (declare_vec128_stream).

// The element-wise math each rung applies (fp32 in, fp32 out).
template <Form F>
struct ExactGelu {
  __device__ __forceinline__ float operator()(float x) const { return gelu_f32<F>(x); }
};

// The fastmath records: the same formula with the hardware tanh (documented
// error bound: error_bound in gelu_reference.hpp).
struct FastTanhGelu {
  __device__ __forceinline__ float operator()(float x) const {
    const float inner = kSqrt2OverPi * (x + kCubicCoeff * x * x * x);
    return 0.5f * x * (1.0f + ptx::tanh_approx(inner));
  }
};

// rl-static: kernel=gelu_vec128 max_regs=48 max_smem=0 sass=LDG.E.128,STG.E.128
// rl-static: kernel=*gelu_vec128<float,?*Form)0>* max_loop_instructions_per_store=116
// rl-static: kernel=*gelu_vec128<float,?*Form)1>* max_loop_instructions_per_store=135
// rl-static: kernel=*gelu_vec128<float,?*FastTanhGelu>* max_loop_instructions_per_store=50
// rl-static: kernel=*gelu_vec128<__nv_bfloat16,?*Form)0>* max_loop_instructions_per_store=229
// rl-static: kernel=*gelu_vec128<__nv_bfloat16,?*Form)1>* max_loop_instructions_per_store=261
// rl-static: kernel=*gelu_vec128<__nv_bfloat16,?*FastTanhGelu>* max_loop_instructions_per_store=103
template <typename T, typename Math>
__global__ void gelu_vec128(T* __restrict__ y, const T* __restrict__ x, std::int64_t n) {
  constexpr int kVec = Packed128<T>::size;
  const Math gelu{};
  const std::int64_t n_vec = n / kVec;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first; i < n_vec; i += stride) {
    Packed128<T> v = load128(x + i * kVec);
    for (int j = 0; j < kVec; ++j) v[j] = from_f32<T>(gelu(to_f32(v[j])));
    store128(y + i * kVec, v);
  }
  // The last n % kVec elements, one per thread of the first threads.
  const std::int64_t tail = n_vec * kVec + first;
  if (tail < n) y[tail] = from_f32<T>(gelu(to_f32(x[tail])));
}

template <typename T, typename Math>
void launch_gelu_vec128(const Args<T>& a, cudaStream_t stream) {
  constexpr int kThreads = 256;
  rl::launch(gelu_vec128<T, Math>, grid_stride_grid(a.n / Packed128<T>::size, kThreads),
             dim3(kThreads), 0, stream, a.y, a.x, a.n);
}

RL_DEVICE_INSTANCES(&launch_gelu_vec128<float, ExactGelu<Form::tanh>>,
                    &launch_gelu_vec128<float, ExactGelu<Form::erf>>,
                    &launch_gelu_vec128<__nv_bfloat16, ExactGelu<Form::tanh>>,
                    &launch_gelu_vec128<__nv_bfloat16, ExactGelu<Form::erf>>,
                    &launch_gelu_vec128<float, FastTanhGelu>,
                    &launch_gelu_vec128<__nv_bfloat16, FastTanhGelu>);

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(
    make_record<float>({.name = "gelu_tanh_f32_vec4",
                        .variant = "vec4",
                        .form = Form::tanh,
                        .baseline = "gelu_tanh_f32_scalar",
                        .launcher = &launch_gelu_vec128<float, ExactGelu<Form::tanh>>,
                        .vec128 = true}));
RL_REGISTER_KERNEL(make_record<float>({.name = "gelu_erf_f32_vec4",
                                       .variant = "vec4",
                                       .form = Form::erf,
                                       .baseline = "gelu_erf_f32_scalar",
                                       .launcher = &launch_gelu_vec128<float, ExactGelu<Form::erf>>,
                                       .vec128 = true}));
RL_REGISTER_KERNEL(make_record<__nv_bfloat16>(
    {.name = "gelu_tanh_bf16_vec8",
     .variant = "vec8",
     .form = Form::tanh,
     .baseline = "gelu_tanh_bf16_scalar",
     .launcher = &launch_gelu_vec128<__nv_bfloat16, ExactGelu<Form::tanh>>,
     .vec128 = true}));
RL_REGISTER_KERNEL(make_record<__nv_bfloat16>(
    {.name = "gelu_erf_bf16_vec8",
     .variant = "vec8",
     .form = Form::erf,
     .baseline = "gelu_erf_bf16_scalar",
     .launcher = &launch_gelu_vec128<__nv_bfloat16, ExactGelu<Form::erf>>,
     .vec128 = true}));

RL_REGISTER_KERNEL(make_record<float>({.name = "gelu_tanh_f32_vec4_fastmath",
                                       .variant = "vec4_fastmath",
                                       .form = Form::tanh,
                                       .baseline = "gelu_tanh_f32_scalar",
                                       .launcher = &launch_gelu_vec128<float, FastTanhGelu>,
                                       .tanh_error = kTanhApproxMaxRelError,
                                       .vec128 = true}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "gelu_tanh_bf16_vec8_fastmath",
                                .variant = "vec8_fastmath",
                                .form = Form::tanh,
                                .baseline = "gelu_tanh_bf16_scalar",
                                .launcher = &launch_gelu_vec128<__nv_bfloat16, FastTanhGelu>,
                                .tanh_error = kTanhApproxMaxRelError,
                                .vec128 = true}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gelu
