// GEMM gemm_f32_blocktile_1d (FP32 SIMT ladder, baseline gemm_f32_smem_tiled):
// 1-D register blocking, ThreadM outputs per thread.
//
// The block tile grows to BlockM x BlockN = 64 x 64 with a thin BlockK = 8,
// and each thread computes a column of ThreadM = 8 outputs instead of one.
// In the inner loop a thread loads one element of the B tile into a register
// and reuses it for its 8 outputs, each with one element of the A tile: 9
// floats read from shared memory for 8 FMAs instead of 16.  512 threads per
// block.  In the SASS (every architecture) that is 24 shared loads per 64
// FMAs, 3 per 8 (the rung below: 40 per 32, 10 per 8): one LDS of B per k,
// and each of a thread's 8 rows of the A tile, 8 k long, read as two LDS.128.
//
// Roofline: reuse tile 64 x 64, half the global requests of the 32 x 32 rung
// (the point moves right again, past the ridge of most GPUs at large K); the
// fewer shared loads per FMA let it climb towards the FP32 roof.
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_tiles.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

constexpr int kBlock1dM = 64, kBlock1dN = 64, kBlock1dK = 8, kThread1dM = 8;
constexpr int kThreads1d = kBlock1dM * kBlock1dN / kThread1dM;

// rl-static: kernel=gemm_f32_blocktile_1d max_regs=64 max_smem=4096
// rl-static: kernel=gemm_f32_blocktile_1d loop_ratio=LDS/FFMA==24/64
// rl-static: kernel=gemm_f32_blocktile_1d loop_ratio=LDS.128/FFMA==16/64
template <int BlockM, int BlockN, int BlockK, int ThreadM>
__global__ void __launch_bounds__(BlockM* BlockN / ThreadM)
    gemm_f32_blocktile_1d(float* __restrict__ C, const float* __restrict__ A,
                          const float* __restrict__ B, int M, int N, int K, int lda, int ldb,
                          int ldc) {
  constexpr int kThreads = BlockM * BlockN / ThreadM;
  __shared__ float As[BlockM][BlockK];
  __shared__ float Bs[BlockK][BlockN];
  const int tid = static_cast<int>(threadIdx.x);
  const int tx = tid % BlockN;            // the output column
  const int ty = tid / BlockN * ThreadM;  // the first of its ThreadM rows
  const int block_row = static_cast<int>(blockIdx.y) * BlockM;
  const int block_col = static_cast<int>(blockIdx.x) * BlockN;

  float acc[ThreadM] = {};
  for (int k0 = 0; k0 < K; k0 += BlockK) {
    load_tile<BlockM, BlockK, kThreads>(As, A, lda, block_row, k0, M, K);
    load_tile<BlockK, BlockN, kThreads>(Bs, B, ldb, k0, block_col, K, N);
    __syncthreads();
    RL_UNROLL
    for (int k = 0; k < BlockK; ++k) {
      const float b = Bs[k][tx];
      RL_UNROLL
      for (int i = 0; i < ThreadM; ++i) acc[i] += As[ty + i][k] * b;
    }
    __syncthreads();
  }
  const int col = block_col + tx;
  RL_UNROLL
  for (int i = 0; i < ThreadM; ++i) {
    const int row = block_row + ty + i;
    if (row < M && col < N) C[row * ldc + col] = acc[i];
  }
}

void launch_gemm_f32_blocktile_1d(const Args<float>& a, cudaStream_t stream) {
  launch_gemm(gemm_f32_blocktile_1d<kBlock1dM, kBlock1dN, kBlock1dK, kThread1dM>,
              tile_grid(a.M, a.N, kBlock1dM, kBlock1dN), dim3(kThreads1d), a, stream);
}

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(make_fp32_simt_record("gemm_f32_blocktile_1d", "gemm_f32_smem_tiled",
                                         {.M = kBlock1dM, .N = kBlock1dN},
                                         &launch_gemm_f32_blocktile_1d,
                                         "64 x 64 block tile, 8 outputs per thread in registers"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
