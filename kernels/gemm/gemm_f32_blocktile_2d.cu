// GEMM gemm_f32_blocktile_2d (FP32 SIMT ladder, baseline gemm_f32_blocktile_1d):
// 2-D register blocking, a ThreadM x ThreadN tile of outputs per thread.
//
// Block tile 128 x 128 x 8, 256 threads, each computing an 8 x 8 tile of C.
// At each k a thread loads a column of 8 elements of the A tile and a row of
// 8 of the B tile into registers and takes their outer product: 16 floats
// read from shared memory for 64 FMAs (the 1-D rung read 9 for 8).  In the
// SASS (every architecture) they are 4 shared loads per 64 FMAs, all LDS.128
// (the 1-D rung: 24 per 64): B's row pieces, and A's rows read along the 8 k
// of a step.  The accumulators, 64 floats, live in registers.  The global
// loads, 4 elements of A and 4 of B per thread and K step, are 8 LDG in the
// K loop on sm_100a and sm_120; on sm_80, sm_89 and sm_90a ptxas keeps
// load_tile's loop as a loop (14 LDG in the code, as in the 32 x 32 rung).
//
// Roofline: reuse tile 128 x 128: A and B requested half as often again as
// by the 64 x 64 rung, so the point moves right; with the shared-memory
// traffic per FMA cut 4.5x (9/8 to 1/4 of a float) and the shared load
// instructions 6x, it is the first rung that can approach the FP32 roof
// rather than a memory roof.
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_tiles.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

constexpr int kBlock2dM = 128, kBlock2dN = 128, kBlock2dK = 8, kThread2dM = 8, kThread2dN = 8;
constexpr int kThreads2d = (kBlock2dM / kThread2dM) * (kBlock2dN / kThread2dN);

// rl-static: kernel=gemm_f32_blocktile_2d max_regs=168 max_smem=8192
// rl-static: kernel=gemm_f32_blocktile_2d loop_ratio=LDS/FFMA==4/64
// rl-static: kernel=gemm_f32_blocktile_2d loop_ratio=LDS.128/FFMA==4/64
// rl-static: kernel=gemm_f32_blocktile_2d arch=100a,120 loop_ratio=LDG/FFMA==8/512
// rl-static: kernel=gemm_f32_blocktile_2d arch=80,89,90a loop_ratio=LDG/FFMA==14/512
template <int BlockM, int BlockN, int BlockK, int ThreadM, int ThreadN>
__global__ void __launch_bounds__((BlockM / ThreadM) * (BlockN / ThreadN))
    gemm_f32_blocktile_2d(float* __restrict__ C, const float* __restrict__ A,
                          const float* __restrict__ B, int M, int N, int K, int lda, int ldb,
                          int ldc) {
  constexpr int kThreads = (BlockM / ThreadM) * (BlockN / ThreadN);
  __shared__ float As[BlockM][BlockK];
  __shared__ float Bs[BlockK][BlockN];
  const int tid = static_cast<int>(threadIdx.x);
  const int ty = tid / (BlockN / ThreadN) * ThreadM;  // first row of the thread tile
  const int tx = tid % (BlockN / ThreadN) * ThreadN;  // first column
  const int block_row = static_cast<int>(blockIdx.y) * BlockM;
  const int block_col = static_cast<int>(blockIdx.x) * BlockN;

  float acc[ThreadM][ThreadN] = {};
  float a_frag[ThreadM];
  float b_frag[ThreadN];
  for (int k0 = 0; k0 < K; k0 += BlockK) {
    load_tile<BlockM, BlockK, kThreads>(As, A, lda, block_row, k0, M, K);
    load_tile<BlockK, BlockN, kThreads>(Bs, B, ldb, k0, block_col, K, N);
    __syncthreads();
    RL_UNROLL
    for (int k = 0; k < BlockK; ++k) {
      RL_UNROLL
      for (int i = 0; i < ThreadM; ++i) a_frag[i] = As[ty + i][k];
      RL_UNROLL
      for (int j = 0; j < ThreadN; ++j) b_frag[j] = Bs[k][tx + j];
      RL_UNROLL
      for (int i = 0; i < ThreadM; ++i) {
        RL_UNROLL
        for (int j = 0; j < ThreadN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
      }
    }
    __syncthreads();
  }
  RL_UNROLL
  for (int i = 0; i < ThreadM; ++i) {
    const int row = block_row + ty + i;
    RL_UNROLL
    for (int j = 0; j < ThreadN; ++j) {
      const int col = block_col + tx + j;
      if (row < M && col < N) C[row * ldc + col] = acc[i][j];
    }
  }
}

void launch_gemm_f32_blocktile_2d(const Args<float>& a, cudaStream_t stream) {
  launch_gemm(gemm_f32_blocktile_2d<kBlock2dM, kBlock2dN, kBlock2dK, kThread2dM, kThread2dN>,
              tile_grid(a.M, a.N, kBlock2dM, kBlock2dN), dim3(kThreads2d), a, stream);
}

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(make_fp32_simt_record(
    "gemm_f32_blocktile_2d", "gemm_f32_blocktile_1d", {.M = kBlock2dM, .N = kBlock2dN},
    &launch_gemm_f32_blocktile_2d, "128 x 128 block tile, an 8 x 8 register tile per thread"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
