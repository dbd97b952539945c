// LayerNorm layernorm_unfused_* (baseline layernorm_thread_per_row_naive_*):
// three kernels, mean / variance / normalise.
//
// What a framework gets by composing reductions and element-wise ops: each
// kernel is individually well written (a warp per row with coalesced reads for
// the two reductions, a flat coalesced grid for the normalisation), but each
// launch sweeps the whole tensor again.  At the large preset the tensor is far
// bigger than L2, so x comes from DRAM three times and the statistics make a
// round trip through memory.  Against layernorm_thread_per_row_naive_* it fixes
// coalescing, not traffic; the fused rungs that follow fix traffic.
#include "layernorm/layernorm_device.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "rl/device_instances.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_workload.hpp"
#endif

#include <algorithm>
#include <cstdint>

namespace rl::layernorm {

constexpr int kWarpsPerBlock = 8;
// Enough blocks of 256 threads to fill any current GPU (2048 threads an SM);
// more rows than that go round the row loop.  Args::max_blocks caps it
// further: the tests lower it so that a few rows take that loop.
constexpr int kMaxNormaliseBlocks = 2048;

// rl-static: kernel=layernorm_unfused_mean max_regs=40 max_smem=0
template <typename T>
__global__ void layernorm_unfused_mean(float* __restrict__ mean, const T* __restrict__ x, int rows,
                                       int C) {
  const int row =
      static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;  // the whole warp leaves together
  const T* xr = x + static_cast<std::int64_t>(row) * C;
  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) sum += to_f32(xr[c]);
  sum = warp_sum(sum);
  if (lane == 0) mean[row] = sum / static_cast<float>(C);
}

// rl-static: kernel=layernorm_unfused_rstd max_regs=40 max_smem=0
template <typename T>
__global__ void layernorm_unfused_rstd(float* __restrict__ rstd, const float* __restrict__ mean,
                                       const T* __restrict__ x, int rows, int C) {
  const int row =
      static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;
  const T* xr = x + static_cast<std::int64_t>(row) * C;
  const float m = mean[row];
  float var = 0.0f;
  for (int c = lane; c < C; c += 32) {
    const float d = to_f32(xr[c]) - m;
    var += d * d;
  }
  var = warp_sum(var);
  if (lane == 0) rstd[row] = rsqrtf(var / static_cast<float>(C) + kEps);
}

// The element-wise pass, as a framework's broadcasting kernel would run it
// (coalesced, a row's mean and rstd broadcast to its elements), but with the
// row and column from the loop structure: blocks stride over rows, threads
// over a row's columns.  A flat loop over rows x C elements would divide each
// index by C, a 64-bit division (about 60 instructions) per element, and the
// pair would then look slower than fusion alone makes it.  (SASS of nvcc 13.0
// for sm_90a: the bf16 inner loop is 24 instructions per element, no call to
// the division routine.)  Checked statically: no 64-bit division (its
// I2F.U64.RP reciprocal estimate and the CALL to nvcc's division routine) and
// the longest loop's instructions per store, about 10% over the larger of
// sm_90a and sm_100a (bf16 49 for 1 store on sm_90a, 195 for 7 on sm_100a;
// fp32 146 for 7 and 160 for 7): a division per element would add about 60.
// rl-static: kernel=layernorm_unfused_normalise max_regs=48 max_smem=0
// rl-static: kernel=layernorm_unfused_normalise sass_absent=I2F.U64.RP,CALL
// rl-static: kernel=*layernorm_unfused_normalise<float>* max_loop_instructions_per_store=25
// rl-static: kernel=*normalise<__nv_bfloat16>* max_loop_instructions_per_store=54
template <typename T>
__global__ void layernorm_unfused_normalise(T* __restrict__ y, const float* __restrict__ mean,
                                            const float* __restrict__ rstd, const T* __restrict__ x,
                                            const T* __restrict__ weight,
                                            const T* __restrict__ bias, int rows, int C) {
  for (int row = static_cast<int>(blockIdx.x); row < rows; row += static_cast<int>(gridDim.x)) {
    const std::int64_t offset = static_cast<std::int64_t>(row) * C;
    const float m = mean[row];
    const float s = rstd[row];
    for (int c = static_cast<int>(threadIdx.x); c < C; c += static_cast<int>(blockDim.x))
      y[offset + c] =
          from_f32<T>((to_f32(x[offset + c]) - m) * s * to_f32(weight[c]) + to_f32(bias[c]));
  }
}

template <typename T>
void launch_layernorm_unfused(const Args<T>& a, cudaStream_t stream) {
  const dim3 row_grid((a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const dim3 row_block(32 * kWarpsPerBlock);
  rl::launch(layernorm_unfused_mean<T>, row_grid, row_block, 0, stream, a.mean, a.x, a.rows, a.C);
  rl::launch(layernorm_unfused_rstd<T>, row_grid, row_block, 0, stream, a.rstd, a.mean, a.x, a.rows,
             a.C);
  constexpr int kThreads = 256;
  const int blocks =
      static_cast<int>(std::min<std::int64_t>({a.rows, kMaxNormaliseBlocks, a.max_blocks}));
  rl::launch(layernorm_unfused_normalise<T>, dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0,
             stream, a.y, a.mean, a.rstd, a.x, a.weight, a.bias, a.rows, a.C);
}

RL_DEVICE_INSTANCES(&launch_layernorm_unfused<float>, &launch_layernorm_unfused<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
// Cost model: x read by each of the three kernels (the tensor does not fit in
// L2 at the large preset); mean written once and read twice, rstd written
// once and read once.
double bytes_model_unfused(const Dims& d) {
  return 3.0 * d.rows * d.C * d.element_bytes + bytes_except_x(d) + 3.0 * d.rows * sizeof(float);
}

RL_REGISTER_KERNEL(
    make_record<float>({.name = "layernorm_unfused_f32",
                        .variant = "unfused",
                        .baseline = "layernorm_thread_per_row_naive_f32",
                        .launcher = &launch_layernorm_unfused<float>,
                        .bytes_model = &bytes_model_unfused,
                        .idea = "three kernels (mean, variance, normalise): x read three times"}));
RL_REGISTER_KERNEL(make_record<__nv_bfloat16>(
    {.name = "layernorm_unfused_bf16",
     .variant = "unfused",
     .baseline = "layernorm_thread_per_row_naive_bf16",
     .launcher = &launch_layernorm_unfused<__nv_bfloat16>,
     .bytes_model = &bytes_model_unfused,
     .idea = "three kernels (mean, variance, normalise): x read three times"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
