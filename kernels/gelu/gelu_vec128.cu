// GELU rungs 2-4: 128-bit vector loads and stores.
//
// Rung 2, fp32 vec4: each thread moves 16 bytes per load and per store
// (LDG.E.128 / STG.E.128) instead of 4.  Same bytes, same FLOPs as the scalar
// rung, so the same intensity; what changes is that a quarter of the memory
// instructions keep the same number of bytes in flight, which is what a
// streaming kernel needs to approach the hbm.copy roof.  A scalar tail handles
// n % 4 elements, so any length works (buffers come 256-byte aligned from
// cudaMalloc, which the 16-byte accesses need).
//
// Rung 3, bf16 vec8: bf16 storage, fp32 math.  One 16-byte access now carries
// 8 elements: half the bytes per element for the same FLOPs, so the point moves
// right on the roofline (twice the intensity) and, still memory bound, twice
// the elements per second at the same GB/s.
//
// Rung 4, fast math (tanh form): the tanh becomes the hardware tanh.approx.f32
// (one MUFU instruction instead of tanhf's ~20 FP32 instructions).  Memory
// bound either way, so it should buy little time; it is here to show what the
// approximation costs in accuracy (a documented bound) for what it saves in
// instructions.
#include "gelu/gelu_common.hpp"
#include "rl/ptx.hpp"

namespace rl::gelu {

// Cost model: rl::gelu::cost (each element read once, written once).

// The element-wise math each rung applies (fp32 in, fp32 out).
template <Form F>
struct ExactGelu {
  __device__ __forceinline__ float operator()(float x) const { return gelu_f32<F>(x); }
};

// Rung 4: the same formula with the hardware tanh (documented error bound:
// tanh_fastmath_tolerance in gelu_common.hpp).
struct FastTanhGelu {
  __device__ __forceinline__ float operator()(float x) const {
    const float inner = kSqrt2OverPi * (x + kCubicCoeff * x * x * x);
    return 0.5f * x * (1.0f + ptx::tanh_approx(inner));
  }
};

// rl-static: kernel=gelu_vec128 max_regs=48 max_smem=0 sass=LDG.E.128,STG.E.128
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

RL_REGISTER_KERNEL(
    make_record<float>({.name = "gelu_tanh_f32_vec4",
                        .variant = "vec4",
                        .form = Form::tanh,
                        .baseline = "gelu_tanh_f32_scalar",
                        .launcher = &launch_gelu_vec128<float, ExactGelu<Form::tanh>>}));
RL_REGISTER_KERNEL(
    make_record<float>({.name = "gelu_erf_f32_vec4",
                        .variant = "vec4",
                        .form = Form::erf,
                        .baseline = "gelu_erf_f32_scalar",
                        .launcher = &launch_gelu_vec128<float, ExactGelu<Form::erf>>}));
RL_REGISTER_KERNEL(make_record<__nv_bfloat16>(
    {.name = "gelu_tanh_bf16_vec8",
     .variant = "vec8",
     .form = Form::tanh,
     .baseline = "gelu_tanh_bf16_scalar",
     .launcher = &launch_gelu_vec128<__nv_bfloat16, ExactGelu<Form::tanh>>}));
RL_REGISTER_KERNEL(make_record<__nv_bfloat16>(
    {.name = "gelu_erf_bf16_vec8",
     .variant = "vec8",
     .form = Form::erf,
     .baseline = "gelu_erf_bf16_scalar",
     .launcher = &launch_gelu_vec128<__nv_bfloat16, ExactGelu<Form::erf>>}));

RL_REGISTER_KERNEL(make_record<float>({.name = "gelu_tanh_f32_vec4_fastmath",
                                       .variant = "vec4_fastmath",
                                       .form = Form::tanh,
                                       .baseline = "gelu_tanh_f32_scalar",
                                       .launcher = &launch_gelu_vec128<float, FastTanhGelu>,
                                       .tolerance = &tanh_fastmath_tolerance}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "gelu_tanh_bf16_vec8_fastmath",
                                .variant = "vec8_fastmath",
                                .form = Form::tanh,
                                .baseline = "gelu_tanh_bf16_scalar",
                                .launcher = &launch_gelu_vec128<__nv_bfloat16, FastTanhGelu>,
                                .tolerance = &tanh_fastmath_tolerance}));

}  // namespace rl::gelu
