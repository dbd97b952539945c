// GEMM gemm_f32_warptiled (FP32 SIMT ladder, baseline gemm_f32_vec128): warp
// tiling and double-buffered shared memory.
//
// Block tile 128 x 128 x 8, 8 warps, each owning a WarpM x WarpN = 64 x 32
// tile of C.  Inside its warp tile a warp works in 32 x 16 sub-tiles, its 32
// lanes laid out 8 (M) x 4 (N), each lane computing 4 x 4 outputs per
// sub-tile (2 x 2 sub-tiles: 64 outputs, as in the rungs below).  What that
// changes from the 128-bit rung:
//  - a lane's fragments are 4-wide pieces 32 rows / 16 columns apart, so at
//    each k the warp's 128-bit shared loads cover one contiguous 128-byte
//    (A) or 64-byte (B) run: broadcasts, no bank conflicts (in the rung
//    below each lane reads 8 consecutive floats of B, so the 128-bit loads
//    of neighbouring lanes are 32 bytes apart: 2-way bank conflicts);
//  - a warp's reads stay within its own 64 x 32 panel pair, which is the
//    level the tensor-core rungs will compute at (a warp tile of mma tiles);
//  - double buffering: the global loads of K step t+1 are issued into
//    registers before the FMAs of step t and stored to the other shared
//    buffer after them, so their latency hides behind the math, and one
//    barrier per K step suffices instead of two (the SASS of every
//    architecture: 1 BAR per 512 FMAs, the rung below 2).
// The shared loads stay 4 LDS.128 per 64 FMAs, as in the rung below (a
// lane's 2 A and 2 B fragments at each k); the static checks hold the counts.
//
// Roofline: the same 128 x 128 reuse tile (same intensity) as the two rungs
// below; the climb is towards the FP32 roof (siboehm's warptiled kernel
// reaches about 90% of cuBLAS SGEMM; ours is measured, not assumed).
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_tiles.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

constexpr int kWarpBlockM = 128, kWarpBlockN = 128, kWarpBlockK = 8, kWarpM = 64, kWarpN = 32;
constexpr int kWarpThreads = (kWarpBlockM / kWarpM) * (kWarpBlockN / kWarpN) * 32;

// rl-static: kernel=gemm_f32_warptiled max_regs=168 max_smem=16384 sass=LDG.E.128,STG.E.128,LDS.128
// rl-static: kernel=gemm_f32_warptiled loop_ratio=BAR/FFMA==1/512
// rl-static: kernel=gemm_f32_warptiled loop_ratio=LDS/FFMA==4/64
// rl-static: kernel=gemm_f32_warptiled loop_ratio=LDS.128/FFMA==4/64
template <int BlockM, int BlockN, int BlockK, int WarpM, int WarpN>
__global__ void __launch_bounds__((BlockM / WarpM) * (BlockN / WarpN) * 32)
    gemm_f32_warptiled(float* __restrict__ C, const float* __restrict__ A,
                       const float* __restrict__ B, int M, int N, int K, int lda, int ldb,
                       int ldc) {
  constexpr int kThreads = (BlockM / WarpM) * (BlockN / WarpN) * 32;
  constexpr int kLanesM = 8, kLanesN = 4;    // lane layout within a warp sub-tile
  constexpr int kThreadM = 4, kThreadN = 4;  // outputs per lane per sub-tile: one float4 each way
  constexpr int kSubM = kLanesM * kThreadM, kSubN = kLanesN * kThreadN;  // 32 x 16
  constexpr int kIterM = WarpM / kSubM, kIterN = WarpN / kSubN;
  static_assert(kIterM * kSubM == WarpM && kIterN * kSubN == WarpN, "warp tile of sub-tiles");

  __shared__ __align__(16) float As[2][BlockK][BlockM];  // transposed, two buffers
  __shared__ __align__(16) float Bs[2][BlockK][BlockN];
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int warp_row = warp / (BlockN / WarpN) * WarpM;
  const int warp_col = warp % (BlockN / WarpN) * WarpN;
  const int lane_row = lane / kLanesN * kThreadM;
  const int lane_col = lane % kLanesN * kThreadN;
  const int block_row = static_cast<int>(blockIdx.y) * BlockM;
  const int block_col = static_cast<int>(blockIdx.x) * BlockN;
  const bool a_aligned = rows_aligned16(A, lda), b_aligned = rows_aligned16(B, ldb);

  Vec128TileLoader<BlockM, BlockN, BlockK, kThreads> loader;
  loader.fetch(A, B, M, N, K, lda, ldb, block_row, block_col, 0, a_aligned, b_aligned);
  loader.store_staged(As[0], Bs[0]);
  __syncthreads();

  float acc[kIterM][kIterN][kThreadM][kThreadN] = {};
  Packed128<float> a_frag[kIterM];
  Packed128<float> b_frag[kIterN];
  const int steps = (K + BlockK - 1) / BlockK;
  for (int step = 0; step < steps; ++step) {
    const int cur = step & 1;
    const bool more = step + 1 < steps;
    if (more)
      loader.fetch(A, B, M, N, K, lda, ldb, block_row, block_col, (step + 1) * BlockK, a_aligned,
                   b_aligned);
    RL_UNROLL
    for (int k = 0; k < BlockK; ++k) {
      RL_UNROLL
      for (int im = 0; im < kIterM; ++im)
        a_frag[im] = load128(&As[cur][k][warp_row + im * kSubM + lane_row]);
      RL_UNROLL
      for (int in = 0; in < kIterN; ++in)
        b_frag[in] = load128(&Bs[cur][k][warp_col + in * kSubN + lane_col]);
      RL_UNROLL
      for (int im = 0; im < kIterM; ++im) {
        RL_UNROLL
        for (int in = 0; in < kIterN; ++in) outer_product_4x4(acc[im][in], a_frag[im], b_frag[in]);
      }
    }
    // The other buffer was last read in step - 1, before the barrier that
    // ended it: safe to overwrite while slower warps still read `cur`.
    if (more) loader.store_staged(As[cur ^ 1], Bs[cur ^ 1]);
    __syncthreads();
  }

  const bool c_aligned = rows_aligned16(C, ldc);
  RL_UNROLL
  for (int im = 0; im < kIterM; ++im) {
    RL_UNROLL
    for (int in = 0; in < kIterN; ++in) {
      RL_UNROLL
      for (int i = 0; i < kThreadM; ++i) {
        const float* v = acc[im][in][i];
        store4_clipped(C, ldc, block_row + warp_row + im * kSubM + lane_row + i,
                       block_col + warp_col + in * kSubN + lane_col, M, N, c_aligned,
                       Packed128<float>{{v[0], v[1], v[2], v[3]}});
      }
    }
  }
}

void launch_gemm_f32_warptiled(const Args<float>& a, cudaStream_t stream) {
  launch_gemm(gemm_f32_warptiled<kWarpBlockM, kWarpBlockN, kWarpBlockK, kWarpM, kWarpN>,
              tile_grid(a.M, a.N, kWarpBlockM, kWarpBlockN), dim3(kWarpThreads), a, stream);
}

#if !defined(__CUDA_ARCH__)
// The counters: the loads and stores of the 128-bit rung (Vec128TileLoader,
// store4_clipped), so its declaration (gemm_workload.hpp).
RL_REGISTER_KERNEL(with_vec128_counts(
    make_fp32_simt_record(
        "gemm_f32_warptiled", "gemm_f32_vec128", {.M = kWarpBlockM, .N = kWarpBlockN},
        &launch_gemm_f32_warptiled,
        "warp tiles over conflict-free shared reads, double-buffered shared memory"),
    CountedTile{kWarpBlockM, kWarpBlockN, kWarpBlockK}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
