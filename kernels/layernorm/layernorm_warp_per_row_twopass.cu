// LayerNorm layernorm_warp_per_row_twopass_* (baseline
// layernorm_thread_per_row_naive_*, fuses layernorm_unfused_*): one warp per
// row, fused, shuffle reductions, two passes.
//
// One kernel does everything for a row, so the statistics never leave the
// chip and x is fetched from DRAM once: the second and third sweeps over the
// row (centred variance, then normalise) re-read it from L1/L2, where 32 lanes
// x a few KB per row still fit.  The lanes stride the row together (coalesced)
// and reduce with __shfl_xor_sync butterflies in registers: no shared memory,
// no __syncthreads.  Against the unfused rung: a third of the DRAM traffic
// for C <= ~1K, so the point moves right (3x intensity) and up.  Its limit is
// wide rows: a warp per 12288-wide row keeps too many rows in flight for the
// re-reads to stay in cache, and too little parallelism per row.
#include "layernorm/layernorm_device.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "rl/device_instances.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_workload.hpp"
#endif

namespace rl::layernorm {

constexpr int kWarpsPerBlock = 8;

// rl-static: kernel=layernorm_warp_per_row_twopass max_regs=48 max_smem=0
template <typename T>
__global__ void layernorm_warp_per_row_twopass(T* __restrict__ y, float* __restrict__ mean,
                                               float* __restrict__ rstd, const T* __restrict__ x,
                                               const T* __restrict__ weight,
                                               const T* __restrict__ bias, int rows, int C) {
  const int row =
      static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;  // the whole warp leaves together: the shuffles see 32 lanes
  const T* xr = x + static_cast<std::int64_t>(row) * C;
  T* yr = y + static_cast<std::int64_t>(row) * C;

  float sum = 0.0f;
  for (int c = lane; c < C; c += 32) sum += to_f32(xr[c]);
  const float m = warp_sum(sum) / static_cast<float>(C);

  float var = 0.0f;
  for (int c = lane; c < C; c += 32) {
    const float d = to_f32(xr[c]) - m;
    var += d * d;
  }
  const float s = rsqrtf(warp_sum(var) / static_cast<float>(C) + kEps);

  for (int c = lane; c < C; c += 32)
    yr[c] = from_f32<T>((to_f32(xr[c]) - m) * s * to_f32(weight[c]) + to_f32(bias[c]));
  if (lane == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

template <typename T>
void launch_layernorm_warp_per_row_twopass(const Args<T>& a, cudaStream_t stream) {
  rl::launch(layernorm_warp_per_row_twopass<T>,
             dim3((a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock), dim3(32 * kWarpsPerBlock), 0,
             stream, a.y, a.mean, a.rstd, a.x, a.weight, a.bias, a.rows, a.C);
}

RL_DEVICE_INSTANCES(&launch_layernorm_warp_per_row_twopass<float>,
                    &launch_layernorm_warp_per_row_twopass<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
// Cost model: three sweeps by 32 threads per row; re-reads hit cache while
// the rows in flight fit in L2 (true for C <= 1024 in fp32, see
// x_read_bytes), else each sweep comes from DRAM.
double bytes_model_warp_per_row(const Dims& d) {
  return x_read_bytes(d, 3, 32.0) + bytes_except_x(d);
}

RL_REGISTER_KERNEL(
    make_record<float>({.name = "layernorm_warp_per_row_twopass_f32",
                        .variant = "warp_per_row_twopass",
                        .baseline = "layernorm_thread_per_row_naive_f32",
                        .launcher = &launch_layernorm_warp_per_row_twopass<float>,
                        .bytes_model = &bytes_model_warp_per_row,
                        .idea = "one fused kernel, a warp per row with shuffle reductions",
                        .fuses = "layernorm_unfused_f32"}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "layernorm_warp_per_row_twopass_bf16",
                                .variant = "warp_per_row_twopass",
                                .baseline = "layernorm_thread_per_row_naive_bf16",
                                .launcher = &launch_layernorm_warp_per_row_twopass<__nv_bfloat16>,
                                .bytes_model = &bytes_model_warp_per_row,
                                .idea = "one fused kernel, a warp per row with shuffle reductions",
                                .fuses = "layernorm_unfused_bf16"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
