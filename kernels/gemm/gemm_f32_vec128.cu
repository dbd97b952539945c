// GEMM gemm_f32_vec128 (FP32 SIMT ladder, baseline gemm_f32_blocktile_2d):
// 128-bit global and shared-memory accesses, A transposed in shared memory.
//
// The 2-D register-blocked rung (128 x 128 x 8 block tile, 8 x 8 per thread)
// with every memory access widened to 16 bytes:
//  - global: each thread fetches one float4 of the A tile (a row piece) and
//    one of the B tile (LDG.E.128): 2 global loads per K step (512 FMAs)
//    where the rung below makes 8, a quarter of the load instructions.  The
//    K loop's code holds the 2 LDG.E.128 and the 8 element loads (LDG) of
//    the fallback path below, which an aligned interior tile skips;
//  - shared, A transposed: the A tile is stored as As[k][m], so a thread's 8
//    A values at step k are consecutive and load as two float4 (LDS.128),
//    as its 8 B values already do: 4 shared loads per 64 FMAs.  The rung
//    below has the same 4 in its SASS (ptxas reads its A rows along the 8 k
//    of a step as LDS.128), so the transposition does not cut the count;
//  - C: each thread stores its rows as float4 (STG.E.128).
// The 128-bit paths need 16-byte-aligned rows (K, N multiples of 4 here);
// otherwise, and at the edges of the matrix, the same code falls back to
// element loads with zeros past the edge, so any shape works.
//
// Roofline: the same reuse tile as the rung below (128 x 128), so the same
// intensity; what it buys is instruction issue: fewer global load
// instructions per FMA (2 instead of 8 per K step) and 128-bit stores of C,
// so the point climbs towards the FP32 roof.  The static checks below hold
// these counts on every architecture.
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_tiles.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

constexpr int kVecBlockM = 128, kVecBlockN = 128, kVecBlockK = 8, kVecThreadM = 8, kVecThreadN = 8;
constexpr int kVecThreads = (kVecBlockM / kVecThreadM) * (kVecBlockN / kVecThreadN);

// rl-static: kernel=gemm_f32_vec128 max_regs=136 max_smem=8192 sass=LDG.E.128,STG.E.128,LDS.128
// rl-static: kernel=gemm_f32_vec128 loop_ratio=LDG.E.128/FFMA==2/512
// rl-static: kernel=gemm_f32_vec128 loop_ratio=LDG/FFMA==10/512
// rl-static: kernel=gemm_f32_vec128 loop_ratio=LDS/FFMA==4/64
// rl-static: kernel=gemm_f32_vec128 loop_ratio=LDS.128/FFMA==4/64
// rl-static: kernel=gemm_f32_vec128 loop_ratio=BAR/FFMA==2/512
template <int BlockM, int BlockN, int BlockK, int ThreadM, int ThreadN>
__global__ void __launch_bounds__((BlockM / ThreadM) * (BlockN / ThreadN))
    gemm_f32_vec128(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                    int M, int N, int K, int lda, int ldb, int ldc) {
  constexpr int kThreads = (BlockM / ThreadM) * (BlockN / ThreadN);
  static_assert(ThreadM % 4 == 0 && ThreadN % 4 == 0, "thread tile in float4 pieces");
  __shared__ __align__(16) float As[BlockK][BlockM];  // transposed: As[k][m]
  __shared__ __align__(16) float Bs[BlockK][BlockN];
  const int tid = static_cast<int>(threadIdx.x);
  const int ty = tid / (BlockN / ThreadN) * ThreadM;
  const int tx = tid % (BlockN / ThreadN) * ThreadN;
  const int block_row = static_cast<int>(blockIdx.y) * BlockM;
  const int block_col = static_cast<int>(blockIdx.x) * BlockN;
  const bool a_aligned = rows_aligned16(A, lda), b_aligned = rows_aligned16(B, ldb);

  Vec128TileLoader<BlockM, BlockN, BlockK, kThreads> loader;
  float acc[ThreadM][ThreadN] = {};
  Packed128<float> a_frag[ThreadM / 4];
  Packed128<float> b_frag[ThreadN / 4];
  for (int k0 = 0; k0 < K; k0 += BlockK) {
    loader.fetch(A, B, M, N, K, lda, ldb, block_row, block_col, k0, a_aligned, b_aligned);
    loader.store_staged(As, Bs);
    __syncthreads();
    RL_UNROLL
    for (int k = 0; k < BlockK; ++k) {
      RL_UNROLL
      for (int i = 0; i < ThreadM / 4; ++i) a_frag[i] = load128(&As[k][ty + 4 * i]);
      RL_UNROLL
      for (int j = 0; j < ThreadN / 4; ++j) b_frag[j] = load128(&Bs[k][tx + 4 * j]);
      RL_UNROLL
      for (int i = 0; i < ThreadM; ++i) {
        RL_UNROLL
        for (int j = 0; j < ThreadN; ++j) acc[i][j] += a_frag[i / 4][i % 4] * b_frag[j / 4][j % 4];
      }
    }
    __syncthreads();
  }
  const bool c_aligned = rows_aligned16(C, ldc);
  RL_UNROLL
  for (int i = 0; i < ThreadM; ++i) {
    RL_UNROLL
    for (int j = 0; j < ThreadN; j += 4)
      store4_clipped(C, ldc, block_row + ty + i, block_col + tx + j, M, N, c_aligned,
                     Packed128<float>{{acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]}});
  }
}

void launch_gemm_f32_vec128(const Args<float>& a, cudaStream_t stream) {
  launch_gemm(gemm_f32_vec128<kVecBlockM, kVecBlockN, kVecBlockK, kVecThreadM, kVecThreadN>,
              tile_grid(a.M, a.N, kVecBlockM, kVecBlockN), dim3(kVecThreads), a, stream);
}

#if !defined(__CUDA_ARCH__)
// What the counters check (docs/counters.md), for this rung and the
// warptiled one, which load and store through the same paths.
// Vec128TileLoader reads each in-bounds float4 of A and B with one load128
// where its row is 16-byte aligned and the float4 lies wholly inside the row
// (rows and columns past M, N or K read nothing), and store4_clipped writes
// each in-bounds float4 of C with one store128 on the same terms.  The
// records' rows are K (A), N (B, C) floats, so at K and N multiples of 4 every
// load is a load128: each block reads its in-bounds panels once, bytes_model's
// A and B terms exactly (declare_counted's bytes_l2_load); at N a multiple of
// 4 every store is a store128, M N 4 bytes.  At other shapes the row tails
// are element loads and stores, which the emulator does not count and a GPU
// does: nothing is declared there.  On a GPU these loads may hit in L1 when
// two blocks of one SM read a panel at the same K step, so CUPTI's L2 bytes
// can fall short of the count (not yet checked on a GPU).
KernelRecord with_vec128_counts(KernelRecord record, CountedTile tile) {
  record.cost = [cost = std::move(record.cost), tile](const Shape& shape) {
    roofline::Cost c = cost(shape);
    const Dims d = dims(shape);
    declare_counted(c, d, tile, sizeof(float), d.K % 4 == 0 && d.N % 4 == 0, d.N % 4 == 0);
    c.tensor_ops.reset();  // declare_counted's MMA count: a SIMT rung issues none
    return c;
  };
  return record;
}

RL_REGISTER_KERNEL(with_vec128_counts(
    make_fp32_simt_record("gemm_f32_vec128", "gemm_f32_blocktile_2d",
                          {.M = kVecBlockM, .N = kVecBlockN}, &launch_gemm_f32_vec128,
                          "128-bit global and shared loads, A transposed in shared memory"),
    CountedTile{kVecBlockM, kVecBlockN, kVecBlockK}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
