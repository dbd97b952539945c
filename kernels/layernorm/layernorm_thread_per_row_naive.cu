// LayerNorm layernorm_thread_per_row_naive_* (the ladder's floor, no baseline):
// one thread per row, three passes over the row.
//
// The CPU loop moved to the GPU as is: thread r computes the mean of row r,
// then the centred variance, then writes y, reading the row from memory in
// each pass.  Two things make it slow.  Neighbouring threads read addresses C
// elements apart, so a warp's load touches 32 different rows (32 sectors for
// 128 useful bytes) and only L1 reuse of those sectors across iterations
// keeps it from being worse.  And with hundreds of thousands of rows in flight
// (one per thread), nothing survives in cache between passes: x comes from
// DRAM three times.  On the roofline: a third of the intensity of the one-pass
// rungs, and far below the roof even for that.
#include "layernorm/layernorm_launch.hpp"
#include "rl/device_instances.hpp"
#include "rl/packed128.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_workload.hpp"
#endif

namespace rl::layernorm {

// rl-static: kernel=layernorm_thread_per_row_naive max_regs=48 max_smem=0
template <typename T>
__global__ void layernorm_thread_per_row_naive(T* __restrict__ y, float* __restrict__ mean,
                                               float* __restrict__ rstd, const T* __restrict__ x,
                                               const T* __restrict__ weight,
                                               const T* __restrict__ bias, int rows, int C) {
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (row >= rows) return;
  const T* xr = x + static_cast<std::int64_t>(row) * C;
  T* yr = y + static_cast<std::int64_t>(row) * C;

  float sum = 0.0f;
  for (int c = 0; c < C; ++c) sum += to_f32(xr[c]);
  const float m = sum / static_cast<float>(C);

  float var = 0.0f;
  for (int c = 0; c < C; ++c) {
    const float d = to_f32(xr[c]) - m;
    var += d * d;
  }
  const float s = rsqrtf(var / static_cast<float>(C) + kEps);

  for (int c = 0; c < C; ++c)
    yr[c] = from_f32<T>((to_f32(xr[c]) - m) * s * to_f32(weight[c]) + to_f32(bias[c]));
  mean[row] = m;
  rstd[row] = s;
}

template <typename T>
void launch_layernorm_thread_per_row_naive(const Args<T>& a, cudaStream_t stream) {
  constexpr int kThreads = 256;
  rl::launch(layernorm_thread_per_row_naive<T>, dim3((a.rows + kThreads - 1) / kThreads),
             dim3(kThreads), 0, stream, a.y, a.mean, a.rstd, a.x, a.weight, a.bias, a.rows, a.C);
}

RL_DEVICE_INSTANCES(&launch_layernorm_thread_per_row_naive<float>,
                    &launch_layernorm_thread_per_row_naive<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
// Cost model: x read three times (one thread per row: rows in flight x row
// bytes exceed L2 at every C of the large preset).
double bytes_model_thread_per_row(const Dims& d) {
  return x_read_bytes(d, 3, 1.0) + bytes_except_x(d);
}

RL_REGISTER_KERNEL(make_record<float>({.name = "layernorm_thread_per_row_naive_f32",
                                       .variant = "thread_per_row_naive",
                                       .baseline = "",
                                       .launcher = &launch_layernorm_thread_per_row_naive<float>,
                                       .bytes_model = &bytes_model_thread_per_row,
                                       .idea = "a thread per row, three sweeps of the row"}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "layernorm_thread_per_row_naive_bf16",
                                .variant = "thread_per_row_naive",
                                .baseline = "",
                                .launcher = &launch_layernorm_thread_per_row_naive<__nv_bfloat16>,
                                .bytes_model = &bytes_model_thread_per_row,
                                .idea = "a thread per row, three sweeps of the row"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
