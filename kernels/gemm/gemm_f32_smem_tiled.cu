// GEMM gemm_f32_smem_tiled (FP32 SIMT ladder, baseline gemm_f32_coalesced):
// shared-memory tiling, one thread per output.
//
// A 32 x 32 block of threads still computes a 32 x 32 tile of C, one output
// per thread, but now walks K in steps of BlockK = 32: at each step the block
// copies a 32 x 32 tile of A and one of B into shared memory (each thread
// loads one element of each, coalesced), synchronises, and every thread reads
// its row of the A tile and column of the B tile from shared memory.  Each
// element fetched from global memory now serves 32 outputs instead of 1.
//
// Roofline: reuse tile 32 x 32 (the block tile), so A and B are requested 32
// times less often than by the rungs below: the point moves right, by about
// 16x in intensity.  The limit is now the shared-memory traffic: two floats
// read from shared memory per FMA.  In the SASS (every architecture) that is
// 40 shared loads per 32 FMAs: ptxas reads the A row 128 bits at a time (8
// LDS.128 for the 32 k of a step) and the B column one LDS per k (32).
//
// The 2 global loads a thread makes per step are 2 LDG in the K loop on
// sm_100a and sm_120; on sm_80, sm_89 and sm_90a ptxas keeps load_tile's
// loop as a loop (14 LDG in the K loop's code: for A and for B, 3 peeled and
// a loop of 4).  The static checks below hold these counts.
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_tiles.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

constexpr int kSmemTile = 32;

// rl-static: kernel=gemm_f32_smem_tiled max_regs=64 max_smem=8192
// rl-static: kernel=gemm_f32_smem_tiled loop_ratio=LDS/FFMA==40/32
// rl-static: kernel=gemm_f32_smem_tiled loop_ratio=LDS.128/FFMA==8/32
// rl-static: kernel=gemm_f32_smem_tiled arch=100a,120 loop_ratio=LDG/FFMA==2/32
// rl-static: kernel=gemm_f32_smem_tiled arch=80,89,90a loop_ratio=LDG/FFMA==14/32
template <int Tile>
__global__ void __launch_bounds__(Tile* Tile)
    gemm_f32_smem_tiled(float* __restrict__ C, const float* __restrict__ A,
                        const float* __restrict__ B, int M, int N, int K, int lda, int ldb,
                        int ldc) {
  // BlockM = BlockN = BlockK = Tile.
  __shared__ float As[Tile][Tile];
  __shared__ float Bs[Tile][Tile];
  const int ty = static_cast<int>(threadIdx.y), tx = static_cast<int>(threadIdx.x);
  const int block_row = static_cast<int>(blockIdx.y) * Tile;
  const int block_col = static_cast<int>(blockIdx.x) * Tile;

  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += Tile) {
    load_tile<Tile, Tile, Tile * Tile>(As, A, lda, block_row, k0, M, K);
    load_tile<Tile, Tile, Tile * Tile>(Bs, B, ldb, k0, block_col, K, N);
    __syncthreads();
    RL_UNROLL
    for (int k = 0; k < Tile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // the tiles are overwritten by the next step
  }
  const int row = block_row + ty, col = block_col + tx;
  if (row < M && col < N) C[row * ldc + col] = acc;
}

void launch_gemm_f32_smem_tiled(const Args<float>& a, cudaStream_t stream) {
  launch_gemm(gemm_f32_smem_tiled<kSmemTile>, tile_grid(a.M, a.N, kSmemTile, kSmemTile),
              dim3(kSmemTile, kSmemTile), a, stream);
}

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(make_fp32_simt_record("gemm_f32_smem_tiled", "gemm_f32_coalesced",
                                         {.M = kSmemTile, .N = kSmemTile},
                                         &launch_gemm_f32_smem_tiled,
                                         "32 x 32 tiles of A and B staged in shared memory"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
