// GEMM gemm_f32_coalesced (FP32 SIMT ladder, baseline gemm_f32_naive):
// coalesced, one thread per output of C.
//
// The same dot product per thread as the naive rung; only the mapping of
// threads to outputs changes: threadIdx.x now walks ALONG a row of C.  The 32
// lanes of a warp share one row of A (each a[i][k] is a single broadcast
// request) and read 32 consecutive elements of B (one 128-byte request), and
// they store 32 consecutive elements of C.  Every sector fetched is used.
//
// Roofline: reuse tile 1 x 32 (the warp's footprint): B is now the operand
// requested M times over, so the modelled bytes are the naive rung's
// mirrored, about the same for square shapes.  What it buys is achieved
// bandwidth: the point moves up towards the memory roof, not right.
#include "gemm/gemm_launch.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

constexpr int kCoalescedTile = 32;

// rl-static: kernel=gemm_f32_coalesced max_regs=64 max_smem=0
template <int BlockM, int BlockN>
__global__ void __launch_bounds__(BlockM* BlockN)
    gemm_f32_coalesced(float* __restrict__ C, const float* __restrict__ A,
                       const float* __restrict__ B, int M, int N, int K, int lda, int ldb,
                       int ldc) {
  const int row = static_cast<int>(blockIdx.y * BlockM + threadIdx.y);
  const int col = static_cast<int>(blockIdx.x * BlockN + threadIdx.x);
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
  C[row * ldc + col] = acc;
}

void launch_gemm_f32_coalesced(const Args<float>& a, cudaStream_t stream) {
  launch_gemm(gemm_f32_coalesced<kCoalescedTile, kCoalescedTile>,
              tile_grid(a.M, a.N, kCoalescedTile, kCoalescedTile),
              dim3(kCoalescedTile, kCoalescedTile), a, stream);
}

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(make_fp32_simt_record(
    "gemm_f32_coalesced", "gemm_f32_naive", {.M = 1, .N = kCoalescedTile},
    &launch_gemm_f32_coalesced, "a warp walks along a row of C: B reads coalesced, A broadcast"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
