// LayerNorm layernorm_block_per_row_* (baseline layernorm_thread_per_row_naive_*):
// one block per row, for wide rows (C >= 4096).
//
// A warp per 8192- or 12288-wide row leaves each lane hundreds of dependent
// loads and keeps thousands of rows in flight, so the re-reads of
// layernorm_warp_per_row_twopass_* fall out of L2.  Here 512 threads share a
// row: 16x more loads in flight per row, only four rows per SM at a time (a
// 48 KB fp32 row x 528 rows fits in L2), so the second and third sweeps hit cache
// again and x comes from DRAM once.  The reduction is two-level: shuffles
// within each warp, then the 16 warp partials through shared memory
// (block_sum).  Rows narrower than 4096 are not its job.
#include "layernorm/layernorm_device.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "rl/device_instances.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_workload.hpp"
#endif

namespace rl::layernorm {

constexpr int kThreads = 512;

// rl-static: kernel=layernorm_block_per_row max_regs=48 max_smem=128
template <typename T>
__global__ void __launch_bounds__(kThreads)
    layernorm_block_per_row(T* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd,
                            const T* __restrict__ x, const T* __restrict__ weight,
                            const T* __restrict__ bias, int C) {
  __shared__ float scratch[32];
  const int row = static_cast<int>(blockIdx.x);
  const int tid = static_cast<int>(threadIdx.x);
  const T* xr = x + static_cast<std::int64_t>(row) * C;
  T* yr = y + static_cast<std::int64_t>(row) * C;

  float sum = 0.0f;
  for (int c = tid; c < C; c += kThreads) sum += to_f32(xr[c]);
  const float m = block_sum(sum, scratch) / static_cast<float>(C);

  float var = 0.0f;
  for (int c = tid; c < C; c += kThreads) {
    const float d = to_f32(xr[c]) - m;
    var += d * d;
  }
  const float s = rsqrtf(block_sum(var, scratch) / static_cast<float>(C) + kEps);

  for (int c = tid; c < C; c += kThreads)
    yr[c] = from_f32<T>((to_f32(xr[c]) - m) * s * to_f32(weight[c]) + to_f32(bias[c]));
  if (tid == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

template <typename T>
void launch_layernorm_block_per_row(const Args<T>& a, cudaStream_t stream) {
  rl::launch(layernorm_block_per_row<T>, dim3(static_cast<unsigned>(a.rows)), dim3(kThreads), 0,
             stream, a.y, a.mean, a.rstd, a.x, a.weight, a.bias, a.C);
}

RL_DEVICE_INSTANCES(&launch_layernorm_block_per_row<float>,
                    &launch_layernorm_block_per_row<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
// Cost model: three sweeps by 512 threads per row; x from DRAM once while the
// rows in flight fit in L2 (they do at every C of the large preset).
double bytes_model_block_per_row(const Dims& d) {
  return x_read_bytes(d, 3, kThreads) + bytes_except_x(d);
}

RL_REGISTER_KERNEL(
    make_record<float>({.name = "layernorm_block_per_row_f32",
                        .variant = "block_per_row",
                        .baseline = "layernorm_thread_per_row_naive_f32",
                        .launcher = &launch_layernorm_block_per_row<float>,
                        .bytes_model = &bytes_model_block_per_row,
                        .min_C = 4096,
                        .idea = "a block per wide row, block reductions through shared memory"}));
RL_REGISTER_KERNEL(make_record<__nv_bfloat16>(
    {.name = "layernorm_block_per_row_bf16",
     .variant = "block_per_row",
     .baseline = "layernorm_thread_per_row_naive_bf16",
     .launcher = &launch_layernorm_block_per_row<__nv_bfloat16>,
     .bytes_model = &bytes_model_block_per_row,
     .min_C = 4096,
     .idea = "a block per wide row, block reductions through shared memory"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
