// GEMM gemm_wmma_{tf32,fp16,bf16} (the tensor-core ladder's first rung,
// baseline gemm_f32_warptiled): nvcuda::wmma.
//
// The entry to the tensor cores.  What changes from the FP32 SIMT top rung
// (gemm_f32_warptiled.cu): a warp no longer computes its 64 x 32 tile with
// FFMAs from per-lane register tiles, it hands 16 x 16 x k blocks to the
// tensor cores (wmma::mma_sync: HMMA instructions, 8 to 16 times the FP32
// pipe's FLOPs per cycle).  wmma hides the fragment layout: fragments are
// loaded from shared memory with load_matrix_sync and the accumulators can
// only leave through store_matrix_sync, so C is staged through shared memory
// for the clipped store of the tails.  Everything else stays as simple as
// the smem_tiled rung: the block tile is loaded with plain element loads
// (zeros past the edges: any M, N, K >= 1, no padding), one buffer, two
// barriers per K step.  The next rung (gemm_mma_sync_multistage.cu) takes
// the layout into its own hands (mma.sync + ldmatrix), swizzles shared
// memory instead of padding it, and pipelines the loads with cp.async.
//
// Tiles: block 128 x 128 x 32, 8 warps of 64 x 32 (4 x 2 wmma tiles of
// 16 x 16 each, 64 fp32 accumulators per lane).  Shared rows are padded by
// 16 bytes so that the 8 rows a fragment load touches do not start in the
// same bank (rows of 64 or 128 bytes would put them all in one or two bank
// groups).  Inputs: tf32 reads fp32 A and B and rounds each element once, as
// it stages it (wmma::__float_to_tf32, cvt.rna: u = 2^-11; the tensor core
// itself would truncate); fp16 and bf16 read stored __half / __nv_bfloat16.
// wmma's k is 16 for 16-bit inputs and 8 for tf32.
//
// SASS (nvcc 13.0, every architecture built): only the fp16 instance loads
// its fragments with ldmatrix (8 LDSM.16.M88.4 and 4 LDSM.16.MT88.4); the
// bf16 and tf32 instances load theirs with plain 32-bit LDS, because
// nvcuda::wmma's load_matrix_sync emits ldmatrix for __half fragments only.
// So on this rung fp16 and bf16 differ in shared-memory instructions as well
// as in type, and the fp16/bf16 comparison is skewed by that; the next rung
// (mma.sync + ldmatrix) loads every 16-bit type the same way.  The static
// check below holds both facts.
//
// Roofline: reuse tile 128 x 128 as gemm_f32_warptiled; at 16-bit storage A
// and B move half the bytes, so the intensity doubles for fp16/bf16 and the
// roof is the tensor roof of the precision.
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_storage.hpp"
#include "gemm/gemm_tiles.hpp"
#include "rl/device_instances.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_problem.hpp"
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

namespace wmma = nvcuda::wmma;

// wmma's operand element type (precision::tf32 for fp32 storage) and k.
template <typename T>
struct WmmaInput {
  using Fragment = T;
  static constexpr int kK = 16;
};
template <>
struct WmmaInput<float> {
  using Fragment = wmma::precision::tf32;
  static constexpr int kK = 8;
};

// nvcc 13.0 gives it 120-142 registers up to sm_90a and 174-255 (tf32) on
// sm_100a and sm_120, without spills.
// rl-static: kernel=gemm_wmma max_smem=43520 sass=HMMA
// rl-static: kernel=gemm_wmma arch=80,89,90 max_regs=168
// rl-static: kernel=gemm_wmma arch=100,120 max_regs=255
// rl-static: kernel=*gemm_wmma<__half,* sass=LDSM.16.M88.4,LDSM.16.MT88.4
// rl-static: kernel=*gemm_wmma<__nv_bfloat16,* sass_absent=LDSM
// rl-static: kernel=*gemm_wmma<float,* sass_absent=LDSM
template <typename T, int BlockM, int BlockN, int BlockK, int WarpM, int WarpN>
__global__ void __launch_bounds__((BlockM / WarpM) * (BlockN / WarpN) * 32)
    gemm_wmma(float* __restrict__ C, const T* __restrict__ A, const T* __restrict__ B, int M, int N,
              int K, int lda, int ldb, int ldc) {
  using FragIn = typename WmmaInput<T>::Fragment;
  constexpr int kK = WmmaInput<T>::kK;
  constexpr int kThreads = (BlockM / WarpM) * (BlockN / WarpN) * 32;
  constexpr int kWarps = kThreads / 32;
  constexpr int kPad =
      16 / static_cast<int>(sizeof(T));  // 16 bytes: keeps wmma's 32-byte alignment
  constexpr int kLdA = BlockK + kPad, kLdB = BlockN + kPad;
  constexpr int kTilesM = WarpM / 16, kTilesN = WarpN / 16;

  __shared__ __align__(32) T As[BlockM][kLdA];
  __shared__ __align__(32) T Bs[BlockK][kLdB];
  __shared__ __align__(32) float Cs[kWarps][16 * 16];  // one 16 x 16 tile per warp at a time

  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int block_row = static_cast<int>(blockIdx.y) * BlockM;
  const int block_col = static_cast<int>(blockIdx.x) * BlockN;
  const int warp_row = (warp / (BlockN / WarpN)) * WarpM;
  const int warp_col = (warp % (BlockN / WarpN)) * WarpN;

  wmma::fragment<wmma::accumulator, 16, 16, kK, float> acc[kTilesM][kTilesN];
  RL_UNROLL
  for (int i = 0; i < kTilesM; ++i) {
    RL_UNROLL
    for (int j = 0; j < kTilesN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  // Consecutive threads take consecutive columns: coalesced global reads.
  // tf32: rounded here, once per element and block.
  auto stage = [](T value) {
    if constexpr (std::is_same_v<T, float>)
      return wmma::__float_to_tf32(value);
    else
      return value;
  };
  const T zero = input_from_f32<T>(0.0f);

  for (int k0 = 0; k0 < K; k0 += BlockK) {
    RL_UNROLL
    for (int i = tid; i < BlockM * BlockK; i += kThreads) {
      const int r = i / BlockK, c = i % BlockK;
      const int row = block_row + r, col = k0 + c;
      As[r][c] = row < M && col < K ? stage(A[row * lda + col]) : zero;
    }
    RL_UNROLL
    for (int i = tid; i < BlockK * BlockN; i += kThreads) {
      const int r = i / BlockN, c = i % BlockN;
      const int row = k0 + r, col = block_col + c;
      Bs[r][c] = row < K && col < N ? stage(B[row * ldb + col]) : zero;
    }
    __syncthreads();
    RL_UNROLL
    for (int kk = 0; kk < BlockK; kk += kK) {
      wmma::fragment<wmma::matrix_a, 16, 16, kK, FragIn, wmma::row_major> a[kTilesM];
      wmma::fragment<wmma::matrix_b, 16, 16, kK, FragIn, wmma::row_major> b[kTilesN];
      RL_UNROLL
      for (int i = 0; i < kTilesM; ++i)
        wmma::load_matrix_sync(a[i], &As[warp_row + i * 16][kk], kLdA);
      RL_UNROLL
      for (int j = 0; j < kTilesN; ++j)
        wmma::load_matrix_sync(b[j], &Bs[kk][warp_col + j * 16], kLdB);
      RL_UNROLL
      for (int i = 0; i < kTilesM; ++i) {
        RL_UNROLL
        for (int j = 0; j < kTilesN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // the tiles are overwritten next
  }

  // Each warp stores a 16 x 16 accumulator into its slot of Cs, then its
  // lanes copy the in-bounds part to C (rows of 16 floats, 2 rows a pass).
  float* tile = Cs[warp];
  RL_UNROLL
  for (int i = 0; i < kTilesM; ++i) {
    RL_UNROLL
    for (int j = 0; j < kTilesN; ++j) {
      wmma::store_matrix_sync(tile, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int row0 = block_row + warp_row + i * 16, col0 = block_col + warp_col + j * 16;
      RL_UNROLL
      for (int e = lane; e < 16 * 16; e += 32) {
        const int row = row0 + e / 16, col = col0 + e % 16;
        if (row < M && col < N) C[row * ldc + col] = tile[e];
      }
      __syncwarp();  // the slot is overwritten by the next tile
    }
  }
}

constexpr int kWmmaBlockM = 128, kWmmaBlockN = 128, kWmmaBlockK = 32, kWmmaWarpM = 64,
              kWmmaWarpN = 32;
constexpr int kWmmaThreads = (kWmmaBlockM / kWmmaWarpM) * (kWmmaBlockN / kWmmaWarpN) * 32;

template <typename T>
void launch_gemm_wmma(const Args<T>& a, cudaStream_t stream) {
  launch_gemm(gemm_wmma<T, kWmmaBlockM, kWmmaBlockN, kWmmaBlockK, kWmmaWarpM, kWmmaWarpN>,
              tile_grid(a.M, a.N, kWmmaBlockM, kWmmaBlockN), dim3(kWmmaThreads), a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_wmma<float>, &launch_gemm_wmma<__half>,
                    &launch_gemm_wmma<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
template <typename T>
KernelRecord wmma_record(roofline::Precision precision, roofline::ComputeUnit unit,
                         ErrorModel error) {
  std::string name = "gemm_wmma_" + std::string(to_string(precision));
  return make_record<T>(
      {.name = std::move(name),
       .variant = "wmma",
       .baseline = "gemm_f32_warptiled",
       .precision = precision,
       .unit = unit,
       .tile = {.M = kWmmaBlockM, .N = kWmmaBlockN},
       .launcher = &launch_gemm_wmma<T>,
       .error = error,
       .idea = "tensor cores through nvcuda::wmma fragments on shared-memory tiles",
       // The counters (declare_counted): every K step's mma_syncs over the
       // whole block tile, edges zero-padded; A and B come through plain
       // element loads, which the emulator does not count: tensor_ops only.
       .counted_tile = CountedTile{kWmmaBlockM, kWmmaBlockN, kWmmaBlockK}});
}

RL_REGISTER_KERNEL(wmma_record<float>(roofline::Precision::tf32, roofline::ComputeUnit::tc_tf32,
                                      kTensorCoreTf32Error));
RL_REGISTER_KERNEL(wmma_record<__half>(roofline::Precision::fp16, roofline::ComputeUnit::tc_fp16,
                                       kTensorCoreError));
RL_REGISTER_KERNEL(wmma_record<__nv_bfloat16>(roofline::Precision::bf16,
                                              roofline::ComputeUnit::tc_bf16, kTensorCoreError));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
