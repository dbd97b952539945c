// The parts the wgmma GEMM rungs share (gemm_wgmma_tma_sm90a.cu and the rungs
// above it, sm_90a, 16-bit or e4m3 inputs, fp32 C): the shared-memory ring of TMA
// tiles and its mbarriers, the producer's loop, one stage's wgmmas for one
// consumer warpgroup, the loop that waits for each stage's wgmmas before
// releasing it and the one that keeps a group in flight, the persistent
// rungs' schedule, the accumulator-to-C epilogue, the launch with its tensor
// maps and (host) the record: where it runs, and TMA's row pitch met by
// padded rows.  The layouts and
// descriptor strides are explained in gemm_wgmma_tma_sm90a.cu's header; a
// rung's own header says what it does differently.  The fp8 rung
// (gemm_wgmma_inflight_fp8_sm90a.cu) uses the same parts with 1-byte
// elements and B stored N x K (K-major), the only way fp8 wgmma reads B.
#pragma once

#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_pipeline_fault.hpp"
#include "gemm/gemm_tile_order.hpp"
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"
#include "rl/unroll.hpp"
#if !defined(__CUDA_ARCH__)
#include "gemm/gemm_workload.hpp"
#endif
#if !defined(RL_EMULATE)
#include <cuda_fp8.h>  // __nv_fp8_e4m3 (the emulator's rl/emu/fp16.hpp has it)
#endif

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rl::gemm::wgmma {

// The names without a Ring are the 16-bit rungs' (bf16, fp16); a Ring
// carries its own element size and what follows from it.
constexpr int kWarpgroupThreads = 128;
constexpr int kWgmmaM = 64, kWgmmaK = 16;                // rows of a consumer, K of one wgmma
constexpr int kElementBytes = 2;                         // bf16 or fp16
constexpr int kSwizzleBytes = 128;                       // the 128B swizzle's row
constexpr int kBoxCols = kSwizzleBytes / kElementBytes;  // 64 elements per TMA box row
constexpr int kSwizzleRepeat = 1024;                     // 8 rows of 128 bytes: tiles start on this
constexpr int kWgmmaKBytes = 32;  // every wgmma reads 32 bytes of K per row: k16 16-bit, k32 fp8

// Descriptor strides (bytes).
constexpr std::uint32_t kRowGroupBytes = 8 * kSwizzleBytes;  // SBO of A and B: 8 rows
constexpr std::uint32_t kAUnusedLbo = 16;            // K-major swizzled: not used (encodes 1)
constexpr std::uint32_t kAStepBytes = kWgmmaKBytes;  // +32 per wgmma K step (K-major)
constexpr std::uint32_t kBStepBytes = kWgmmaK * kSwizzleBytes;  // +2048 per k16 step (N-major B)

// TMA's 16-byte row pitch: every rung runs on leading dimensions padded to a
// multiple of 16 bytes, 8 16-bit or 16 8-bit elements
// (RecordSpec::ld_multiple; the tensor maps still end
// at K and N, so TMA writes zeros past them), which runs every shape.

// A ring of `Stages` stages, each an A tile (BlockM x BlockK, row-major) and
// B's tile as TMA writes them.  B stored K x N (16-bit rungs): BlockN / 64
// boxes of BlockK x 64, side by side in N ("N-major", the descriptor's
// transpose bit set).  B stored N x K (BKMajor, fp8: wgmma reads 8-bit B
// K-major only): one box of BlockN rows x BlockK, laid out as A's tile.
// ElementBytes: 2 (bf16, fp16) or 1 (e4m3); BlockK is always one 128-byte
// swizzle row (64 16-bit or 128 8-bit elements).
template <int BlockM, int BlockN, int BlockK, int Stages, int ElementBytes = 2,
          bool BKMajor = false>
struct Ring {
  static constexpr int kBlockM = BlockM, kBlockN = BlockN, kBlockK = BlockK, kStages = Stages;
  static constexpr int kElementBytes = ElementBytes;
  static constexpr bool kBKMajor = BKMajor;
  static constexpr int kBoxCols = kSwizzleBytes / ElementBytes;  // elements per TMA box row
  static constexpr int kWgmmaK = kWgmmaKBytes / ElementBytes;    // K of one wgmma
  static constexpr int kATileBytes = BlockM * BlockK * ElementBytes;
  static constexpr int kBBoxBytes =
      BKMajor ? BlockN * kSwizzleBytes : BlockK * kBoxCols * ElementBytes;
  static constexpr int kBBoxes = BKMajor ? 1 : BlockN / kBoxCols;
  // Descriptor of B: N-major, the distance between 64-column boxes (LBO) and
  // a k16 step of 16 rows; K-major, A's strides.
  static constexpr std::uint32_t kBLbo = BKMajor ? kAUnusedLbo : kBBoxBytes;
  static constexpr std::uint32_t kBStepBytes = BKMajor ? kAStepBytes : kWgmmaK * kSwizzleBytes;
  static constexpr int kStageBytes = kATileBytes + kBBoxes * kBBoxBytes;
  // + one swizzle repeat to align the ring (the dynamic base is 16-byte aligned)
  static constexpr int kDynamicSharedBytes = Stages * kStageBytes + kSwizzleRepeat;
  static_assert(ElementBytes == 2 || (ElementBytes == 1 && BKMajor),
                "16-bit inputs, or 8-bit ones with B K-major (fp8 wgmma reads B K-major only)");
  static_assert(BlockK * ElementBytes == kSwizzleBytes, "one A row = one swizzle row");
  static_assert(BKMajor ? BlockN <= 256 : BlockN % kBoxCols == 0,
                "B is whole 64-column boxes, or one box of at most 256 rows (TMA's limit)");
  static_assert(kATileBytes % kSwizzleRepeat == 0 && kBBoxBytes % kSwizzleRepeat == 0,
                "every tile starts on the swizzle repeat");
  static_assert(kDynamicSharedBytes <= 227 * 1024, "H100: 227 KiB of dynamic shared memory");

  static constexpr int kAccumulators = BlockN / 2;  // a 64 x BlockN fp32 tile per warpgroup
};

// Device code only: the host compiler sees this header too, from the tests of
// the CUDA backend.
#if defined(__CUDACC__) || defined(RL_EMULATE)

template <typename R>
__device__ __forceinline__ unsigned char* a_tile(unsigned char* ring, int stage) {
  return ring + stage * R::kStageBytes;
}
template <typename R>
__device__ __forceinline__ unsigned char* b_tile(unsigned char* ring, int stage) {
  return ring + stage * R::kStageBytes + R::kATileBytes;
}

// The ring starts on the swizzle repeat, in the shared window's addresses
// (what TMA and the descriptors see); the dynamic base is 16-byte aligned.
__device__ __forceinline__ unsigned char* ring_start(unsigned char* dynamic_shared) {
  const std::uint32_t misalignment = rl::ptx::shared_address(dynamic_shared) % kSwizzleRepeat;
  return dynamic_shared + (kSwizzleRepeat - misalignment) % kSwizzleRepeat;
}

// Every thread of the block calls it: each stage's barriers, initialised by
// the `leader` thread ("full" completes on the producer's arrive_expect_tx
// plus the stage's bytes, "empty" when every consumer thread has arrived),
// then the block meets at __syncthreads, before any thread uses them.
// (The helpers here never read threadIdx or blockIdx: the kernel does and
// passes the values.  nvcc merges every read of threadIdx.x in a kernel, and
// one made in a helper, where it is known only to be < 1024, loses the
// kernel's __launch_bounds__ range for all; moving the reads of threadIdx or
// blockIdx into helpers changed gemm_wgmma_tma's SASS.)
template <typename R>
__device__ __forceinline__ void init_ring_barriers(std::uint64_t* full, std::uint64_t* empty,
                                                   int consumer_threads, bool leader) {
  if (leader) {
    for (int s = 0; s < R::kStages; ++s) {
      rl::ptx::mbarrier_init(&full[s], 1);
      rl::ptx::mbarrier_init(&empty[s], consumer_threads);
    }
    rl::ptx::fence_mbarrier_init();
  }
  __syncthreads();
}

// The block's tile of C: the k-tiles over K, its first row and column
// (the kernel fills it from blockIdx, see init_ring_barriers).
struct BlockTile {
  int k_tiles, row, col;
};

// One k-tile (kt) of the block tile into ring stage `stage`: A's box and B's
// box(es), announced on and counted down the stage's "full" barrier.
template <typename R>
__device__ __forceinline__ void load_stage(const rl::ptx::TensorMap* a_map,
                                           const rl::ptx::TensorMap* b_map, std::uint64_t* full,
                                           unsigned char* ring, int stage, BlockTile tile, int kt) {
  rl::ptx::mbarrier_arrive_expect_tx(&full[stage], R::kStageBytes);
  rl::ptx::tma_load_2d(a_tile<R>(ring, stage), a_map, kt * R::kBlockK, tile.row, &full[stage]);
  if constexpr (R::kBKMajor) {  // Bᵀ: rows tile.col .., columns (K) from kt BlockK
    rl::ptx::tma_load_2d(b_tile<R>(ring, stage), b_map, kt * R::kBlockK, tile.col, &full[stage]);
  } else {
    for (int box = 0; box < R::kBBoxes; ++box)
      rl::ptx::tma_load_2d(b_tile<R>(ring, stage) + box * R::kBBoxBytes, b_map,
                           tile.col + box * R::kBoxCols, kt * R::kBlockK, &full[stage]);
  }
}

// The producer (one thread): tile kt goes to stage kt % kStages, on that
// stage's use number kt / kStages; from the second use on, it first waits
// until the consumers have released the previous use (empty's phase use - 1).
template <typename R>
__device__ __forceinline__ void produce_tiles(const rl::ptx::TensorMap* a_map,
                                              const rl::ptx::TensorMap* b_map, std::uint64_t* full,
                                              std::uint64_t* empty, unsigned char* ring,
                                              BlockTile tile) {
  for (int kt = 0; kt < tile.k_tiles; ++kt) {
    const int stage = kt % R::kStages, use = kt / R::kStages;
    if (use > 0) rl::ptx::mbarrier_wait_parity(&empty[stage], (use - 1) & 1);
    load_stage<R>(a_map, b_map, full, ring, stage, tile, kt);
  }
}

// One stage's BlockK / kWgmmaK wgmmas (k16 for 16-bit inputs, k32 for e4m3)
// of consumer `consumer` (rows 64c .. 64c + 63 of the block tile),
// accumulating into d, after the wgmma.fence that orders the warpgroup's
// earlier accesses to d before them; not committed, not waited for.
template <typename T, typename R>
__device__ __forceinline__ void issue_stage_wgmmas(float (&d)[R::kAccumulators],
                                                   unsigned char* ring, int stage, int consumer) {
  const std::uint32_t a_base =
      rl::ptx::shared_address(a_tile<R>(ring, stage)) + consumer * kWgmmaM * kSwizzleBytes;
  const std::uint32_t b_base = rl::ptx::shared_address(b_tile<R>(ring, stage));
  rl::ptx::wgmma_fence_operand(d);
  rl::ptx::wgmma_fence();
  RL_UNROLL
  for (int step = 0; step < R::kBlockK / R::kWgmmaK; ++step) {
    const std::uint64_t desc_a = rl::ptx::smem_descriptor(
        a_base + step * kAStepBytes, kAUnusedLbo, kRowGroupBytes, rl::ptx::SmemSwizzle::b128);
    const std::uint64_t desc_b = rl::ptx::smem_descriptor(
        b_base + step * R::kBStepBytes, R::kBLbo, kRowGroupBytes, rl::ptx::SmemSwizzle::b128);
    if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) {
      static_assert(R::kBKMajor && R::kBlockN == 256, "fp8: m64n256k32 with B K-major");
      rl::ptx::wgmma_m64n256k32_f32_e4m3</*NegateB=*/false>(d, desc_a, desc_b, 1);
    } else if constexpr (R::kBlockN == 128)
      rl::ptx::wgmma_m64n128k16_f32<T, /*TransposeB=*/true>(d, desc_a, desc_b, 1);
    else if constexpr (R::kBlockN == 256)
      rl::ptx::wgmma_m64n256k16_f32<T, /*TransposeB=*/true>(d, desc_a, desc_b, 1);
    else
      static_assert(R::kBlockN == 128, "a consumer issues m64n128k16 or m64n256k16");
  }
}

// A consumer's main loop where every stage waits for its own wgmmas before
// releasing the stage to the producer (nothing in flight across stages).  F:
// a deliberately wrong build for the validation tests, emulator only
// (gemm_pipeline_fault.hpp).
template <typename T, typename R, PipelineFault F = PipelineFault::none>
__device__ __forceinline__ void consume_tiles_waiting_each_stage(float (&d)[R::kAccumulators],
                                                                 std::uint64_t* full,
                                                                 std::uint64_t* empty,
                                                                 unsigned char* ring, int k_tiles,
                                                                 int consumer) {
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % R::kStages, use = kt / R::kStages;
    rl::ptx::mbarrier_wait_parity(&full[stage], use & 1);
    if constexpr (F == PipelineFault::none) {
      issue_stage_wgmmas<T, R>(d, ring, stage, consumer);
    } else if (multiplies<F>(kt, k_tiles)) {
      issue_stage_wgmmas<T, R>(d, ring, stage_read<F>(kt, k_tiles, R::kStages), consumer);
    }
    rl::ptx::wgmma_commit_group();
    rl::ptx::wgmma_wait_group<0>();
    rl::ptx::wgmma_fence_operand(d);
    rl::ptx::mbarrier_arrive(&empty[stage]);  // this thread's reads of the stage are done
  }
}

// A consumer's main loop keeping one wgmma group in flight across stages
// (gemm_wgmma_inflight_sm90a.cu's header says why in this order): stage kt's
// wgmmas issued and committed, wait_group 1 (stage kt - 1's group has
// completed and read its operands), only then stage kt - 1 released; the
// last group drained (wait_group 0) before d may be read.  A persistent CTA
// counts k-tiles on across its tiles: `first_read` is how many it has
// consumed before this tile, and ReleaseLast releases the tile's last stage
// too (the next tile's loads wait for it).
template <typename T, typename R, bool ReleaseLast = false>
__device__ __forceinline__ void consume_tiles_keeping_one_group_in_flight(
    float (&d)[R::kAccumulators], std::uint64_t* full, std::uint64_t* empty, unsigned char* ring,
    int k_tiles, int consumer, int first_read = 0) {
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int read = first_read + kt;
    const int stage = read % R::kStages, use = read / R::kStages;
    rl::ptx::mbarrier_wait_parity(&full[stage], use & 1);
    issue_stage_wgmmas<T, R>(d, ring, stage, consumer);
    rl::ptx::wgmma_commit_group();
    rl::ptx::wgmma_wait_group<1>();  // stage kt - 1's group is complete; stage kt's may run on
    if (kt > 0) rl::ptx::mbarrier_arrive(&empty[(read - 1) % R::kStages]);
  }
  rl::ptx::wgmma_wait_group<0>();  // the last stage's group: only now may d be read
  rl::ptx::wgmma_fence_operand(d);
  if constexpr (ReleaseLast)
    rl::ptx::mbarrier_arrive(&empty[(first_read + k_tiles - 1) % R::kStages]);
}

// --- persistent rungs (gemm_wgmma_persistent and the rungs above it) -------
// One CTA per SM walks the tiles t = blockIdx.x, + gridDim.x, ... in the
// grouped order of gemm_tile_order.hpp (bands of kBandRows row tiles), and
// the ring runs on from tile to tile: the producer and the consumers count
// k-tiles over all of the CTA's tiles (stage = count % kStages, use = count /
// kStages), so the next tile's loads overlap this tile's epilogue.
constexpr int kBandRows = 16;  // gemm_wgmma_persistent_sm90a.cu's header says why 16

// This CTA's tiles: first, first + step, ... below order.tiles().
struct PersistentTiles {
  GroupedTileOrder order;
  int k_tiles, first, step;
};

template <typename R>
__host__ __device__ constexpr GroupedTileOrder tile_order(int M, int N) {
  return {(M + R::kBlockM - 1) / R::kBlockM, (N + R::kBlockN - 1) / R::kBlockN, kBandRows};
}

// Tile number t's block tile.
template <typename R>
__device__ __forceinline__ BlockTile block_tile(const PersistentTiles& tiles, int t) {
  const TilePosition p = tiles.order.position(t);
  return {tiles.k_tiles, p.row_tile * R::kBlockM, p.col_tile * R::kBlockN};
}

// The producer (one thread) of a persistent CTA: every k-tile of every tile,
// `load` counting on across tiles.
template <typename R>
__device__ __forceinline__ void produce_tiles_persistently(
    const rl::ptx::TensorMap* a_map, const rl::ptx::TensorMap* b_map, std::uint64_t* full,
    std::uint64_t* empty, unsigned char* ring, const PersistentTiles& tiles) {
  int load = 0;  // k-tiles loaded by this CTA so far, over all its tiles
  for (int t = tiles.first; t < tiles.order.tiles(); t += tiles.step) {
    const BlockTile tile = block_tile<R>(tiles, t);
    for (int kt = 0; kt < tiles.k_tiles; ++kt, ++load) {
      const int stage = load % R::kStages, use = load / R::kStages;
      if (use > 0) rl::ptx::mbarrier_wait_parity(&empty[stage], (use - 1) & 1);
      load_stage<R>(a_map, b_map, full, ring, stage, tile, kt);
    }
  }
}

// Epilogue: thread t of consumer `consumer` holds, for each 8-column block j,
// C(r, 8j + c .. +1) in d[4j], d[4j + 1] and C(r + 8, 8j + c .. +1) in
// d[4j + 2], d[4j + 3] (r = 16 warp + lane / 4, c = 2 (lane % 4)).  N may be
// odd (padded rows), so the second column of a pair is checked too.
// `thread` is threadIdx.x (read by the kernel, see init_ring_barriers).
template <typename R>
__device__ __forceinline__ void store_accumulators(const float (&d)[R::kAccumulators],
                                                   float* __restrict__ C, int M, int N, int ldc,
                                                   BlockTile tile, int consumer, int thread) {
  const int t = thread % kWarpgroupThreads;
  const int row0 = tile.row + consumer * kWgmmaM + 16 * (t / 32) + (t % 32) / 4;
  const int col0 = tile.col + 2 * (t % 4);
  RL_UNROLL
  for (int j = 0; j < R::kBlockN / 8; ++j) {
    const int col = col0 + 8 * j;
    if (col >= N) break;
    RL_UNROLL
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + 8 * half;
      if (row < M) {
        C[row * ldc + col] = d[4 * j + 2 * half];
        if (col + 1 < N) C[row * ldc + col + 1] = d[4 * j + 2 * half + 1];
      }
    }
  }
}

// e4m3 as TMA's uint8: TMA copies bytes, nothing reads them as numbers.
template <typename T>
constexpr rl::ptx::TensorMapElement kTmaElement =
    std::is_same_v<T, __nv_fp8_e4m3> ? rl::ptx::TensorMapElement::uint8
    : std::is_same_v<T, __half>      ? rl::ptx::TensorMapElement::fp16
                                     : rl::ptx::TensorMapElement::bf16;

// The tensor maps are encoded on the host at every launch (a few microseconds
// of host work, no device work), then passed by value as kernel parameters.
// A: M x K, a box of BlockM rows x one swizzle row (64 16-bit or 128 8-bit
// elements); B stored K x N: BlockK rows x 64 (the B boxes of a stage are
// BlockN / 64 copies); B stored N x K (Args::B is Bᵀ, ldb its row pitch):
// BlockN rows x BlockK.  The kernel takes (a_map, b_map, C, M, N, K, ldc).
template <typename R, typename T>
struct OperandMaps {
  rl::ptx::TensorMap a, b;
};

template <typename R, typename T>
OperandMaps<R, T> operand_maps(const Args<T>& a) {
  static_assert(sizeof(T) == R::kElementBytes, "the ring is laid out for T");
  return {
      rl::ptx::encode_tensor_map_2d(
          rl::ptx::tensor_map_2d(a.M, a.K, a.lda, R::kElementBytes, R::kBlockM, R::kBoxCols),
          kTmaElement<T>, a.A),
      rl::ptx::encode_tensor_map_2d(
          R::kBKMajor
              ? rl::ptx::tensor_map_2d(a.N, a.K, a.ldb, R::kElementBytes, R::kBlockN, R::kBoxCols)
              : rl::ptx::tensor_map_2d(a.K, a.N, a.ldb, R::kElementBytes, R::kBlockK, R::kBoxCols),
          kTmaElement<T>, a.B)};
}

// On `grid` (the persistent rungs: persistent_grid); the others launch one
// CTA per tile.
template <typename R, typename T, typename Kernel>
void launch_wgmma_gemm(Kernel kernel, int threads, const Args<T>& a, cudaStream_t stream,
                       dim3 grid) {
  const OperandMaps<R, T> maps = operand_maps<R>(a);
  RL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     R::kDynamicSharedBytes));
  rl::launch(kernel, grid, dim3(threads), R::kDynamicSharedBytes, stream, maps.a, maps.b, a.C, a.M,
             a.N, a.K, a.ldc);
}

template <typename R, typename T, typename Kernel>
void launch_wgmma_gemm(Kernel kernel, int threads, const Args<T>& a, cudaStream_t stream) {
  launch_wgmma_gemm<R>(kernel, threads, a, stream, tile_grid(a.M, a.N, R::kBlockM, R::kBlockN));
}

// --- the cluster rung (gemm_wgmma_cluster_sm90a.cu) ------------------------
// Two CTAs of a cluster along M (grid y) share their B tile.
constexpr int kClusterCtas = 2;

// Its mbarriers live in dynamic shared memory ahead of the ring (the
// emulator refuses static __shared__ in a clustered launch): "full" and
// "empty" of every stage, so its launch asks for these bytes more.
template <typename R>
constexpr int kClusterBarrierBytes = 2 * static_cast<int>(sizeof(std::uint64_t)) * R::kStages;

// One CTA per tile in clusters of kClusterCtas along M
// (cudaLaunchKernelEx with the cluster dimension); the grid's rows of CTAs
// rounded up to a whole number of clusters.
template <typename R, typename T, typename Kernel>
void launch_wgmma_gemm_in_clusters(Kernel kernel, int threads, const Args<T>& a,
                                   cudaStream_t stream) {
  const OperandMaps<R, T> maps = operand_maps<R>(a);
  const int shared_bytes = R::kDynamicSharedBytes + kClusterBarrierBytes<R>;
  RL_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
  dim3 grid = tile_grid(a.M, a.N, R::kBlockM, R::kBlockN);
  grid.y = (grid.y + kClusterCtas - 1) / kClusterCtas * kClusterCtas;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = kClusterCtas;
  cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = static_cast<std::size_t>(shared_bytes);
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  // As rl::launch: a refused launch is left in cudaGetLastError for the caller.
  (void)cudaLaunchKernelEx(&config, kernel, maps.a, maps.b, a.C, a.M, a.N, a.K, a.ldc);
}

// A persistent rung's grid: one CTA per SM, fewer where there are fewer tiles.
template <typename R>
dim3 persistent_grid(int M, int N) {
  int device = 0, sms = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int tiles = tile_order<R>(M, N).tiles();
  return dim3(static_cast<unsigned>(sms < tiles ? sms : tiles));
}

#endif  // __CUDACC__ || RL_EMULATE

#if !defined(__CUDA_ARCH__)

// The row pitch TMA needs (16 bytes) in elements of a 16-bit matrix.
constexpr std::int64_t kTmaPitchElements = 16 / kElementBytes;

// The error model of T's wgmma: 16-bit inputs the tensor-core bound; e4m3
// Hopper's fp8 accumulation (gemm_reference.hpp).
template <typename T>
constexpr ErrorModel kWgmmaError =
    std::is_same_v<T, __nv_fp8_e4m3> ? kHopperFp8Error : kTensorCoreError;

// The record of a wgmma rung whose ring is R: sm_90a code runs on compute
// capability 9.0 only (not 10.x or 12.x), under the emulator only as a Hopper
// (RL_EMU_CC=90); the reuse tile of the cost model is the block tile; T's
// tensor-core error model; rows padded to TMA's pitch (8 16-bit or 16 8-bit
// elements); B stored as R reads it (N x K for a K-major B).  ClusterM: the
// CTAs of a cluster along M that share one B tile (the cluster rung's 2),
// so B is read once per ClusterM row tiles: the reuse tile and the counted
// tile are ClusterM BlockM x BlockN (the grid's rows rounded up to whole
// clusters issue their wgmmas too).  device_bytes
// (A + B + C at storage size, rows padded) comes from make_record.  The
// counters' declarations (declare_counted): every consumer warpgroup issues
// its BlockK / kWgmmaK wgmmas on every k-tile of every block tile, A and B
// come through TMA; C through TMA where c_stores_counted says so.
template <typename R, typename T, int ClusterM = 1>
KernelRecord sm90a_record(std::string name, std::string variant, std::string baseline,
                          roofline::Precision precision, roofline::ComputeUnit unit,
                          Launcher<T> launcher, std::string idea,
                          bool (*c_stores_counted)(const Dims&) = nullptr) {
  KernelRecord record =
      make_record<T>({.name = std::move(name),
                      .variant = std::move(variant),
                      .baseline = std::move(baseline),
                      .precision = precision,
                      .unit = unit,
                      .tile = {ClusterM * R::kBlockM, R::kBlockN},
                      .launcher = std::move(launcher),
                      .error = kWgmmaError<T>,
                      .min_cc = 90,
                      .gpu_only = !rl::ptx::emulator_runs_sm90a(),
                      .idea = std::move(idea),
                      .refuse = nullptr,
                      .refuse_on = nullptr,
                      .ld_multiple = 16 / R::kElementBytes,
                      .b_storage = R::kBKMajor ? BStorage::n_by_k : BStorage::k_by_n,
                      .counted_tile = CountedTile{ClusterM * R::kBlockM, R::kBlockN, R::kBlockK},
                      .loads_counted = &tma_loads_counted,
                      .c_stores_counted = c_stores_counted});
  record.max_cc = 90;
  return record;
}

#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm::wgmma
