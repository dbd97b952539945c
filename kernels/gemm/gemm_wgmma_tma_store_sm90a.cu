// GEMM rung: the persistent wgmma rung with its epilogue through shared
// memory and TMA stores (sm_90a only; bf16 and fp16 inputs, fp32 C).
//
// Run on an H100 (docs/gpu-runs/2026-11-26-h100.md): it validates at the odd
// shapes of tests/hopper (label gpu; N = 263 takes the direct-store path) and
// at 8192³ (738 and 733 TFLOP/s bf16 in two runs: 96.4% and 94.2% of
// cuBLASLt BF16 in the same run).  Compiled for sm_90a with its SASS checked
// statically (below), and it computes the right C under the emulator's exact
// wgmma / TMA / mbarrier / bulk-group model with RL_EMU_CC=90
// (tests/emu_hopper), which performs a TMA store only at the wait that covers
// it, so a staging buffer overwritten before its store has read it gives a
// wrong C there.
//
// What changes from gemm_wgmma_persistent (the rung below), one idea: a
// consumer no longer writes its 64 x 256 fp32 tile to global memory itself.
// There, each thread issues 64 8-byte global stores per tile (128 floats),
// and the warpgroup reaches the next tile's wgmmas only once the last of them
// has issued.  Here each consumer warp hands its 16 rows to the TMA engine in
// 8 boxes of 16 x 32 floats (2 KiB, one 128-byte swizzle row per box row):
//   1. lane 0 waits until the box written two boxes ago has been read
//      (cp.async.bulk.wait_group.read 1: each warp double-buffers),
//   2. the warp writes its 16 floats of the box to shared memory in TMA's
//      128B swizzle (8-byte stores, two wavefronts per warp: conflict-free),
//   3. every lane fences its writes to the async proxy, the warp meets at
//      __syncwarp, and lane 0 issues cp.async.bulk.tensor (shared -> global)
//      and commits it as one bulk group.
// The warp then goes on to the next box, and after the last one to the next
// tile's wgmmas while the TMA engine writes C; the stores are waited for only
// when their buffer comes round again, and at the kernel's end.  TMA clips
// the boxes at M and N, so the tails need no test.  Warp-sized boxes need no
// barrier between the warps of a warpgroup.
//
// Shared memory: the rung below's 4 stages (193 KiB with the alignment) + 8
// consumer warps x 2 buffers x 2 KiB = 32 KiB of staging = 225 KiB of H100's
// 227.  The C tensor map needs rows of a multiple of 16 bytes (N a multiple
// of 4 floats); for other N the launcher runs the same kernel with the rung
// below's direct stores (so every shape runs; those shapes measure the rung
// below's epilogue).  Of the steps in pranjalssh/fast.cu's Hopper write-up
// this still leaves out clusters with TMA multicast.
//
// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 256, as
// the rung below (C is written once either way).
//
// SASS (sm_90a, nvcc 13.0): as the rung below's, plus UTMASTG.2D (the box
// stores), UTMACMDFLUSH (the commit) and the bulk-group waits; no spills.
//
// Performance goal (a goal, not a measurement): above gemm_wgmma_persistent
// on H100 at 8192³; the top wgmma rung's goal is 95% of cuBLASLt BF16 there.
#include "gemm/gemm_wgmma_parts.hpp"
#include "rl/cuda.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

#include <cstdint>
#include <string>
#include <utility>

namespace rl::gemm {
namespace {

using Ring = wgmma::Ring</*BlockM=*/128, /*BlockN=*/256, /*BlockK=*/64, /*Stages=*/4>;
constexpr int kConsumers = 2;  // warpgroups, one per 64 rows of the block tile
constexpr int kConsumerThreads = kConsumers * wgmma::kWarpgroupThreads;
constexpr int kThreads = wgmma::kWarpgroupThreads + kConsumerThreads;  // + the producer
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;       // see gemm_wgmma_128x256
static_assert(kConsumers * wgmma::kWgmmaM == Ring::kBlockM, "each consumer owns 64 rows");

// The staging of C: a box is one warp's 16 rows x 32 columns of fp32, one
// 128-byte swizzle row per box row; two buffers per consumer warp.
constexpr int kBoxRows = 16, kBoxCols = 32;
constexpr int kBoxBytes = kBoxRows * kBoxCols * 4;  // 2 KiB
constexpr int kBuffers = 2;
constexpr int kConsumerWarps = kConsumerThreads / 32;
constexpr int kStagingBytes = kConsumerWarps * kBuffers * kBoxBytes;  // 32 KiB
constexpr int kDynamicSharedBytes = Ring::kDynamicSharedBytes + kStagingBytes;
static_assert(kBoxCols * 4 == wgmma::kSwizzleBytes, "one box row = one swizzle row");
static_assert(kBoxBytes % wgmma::kSwizzleRepeat == 0, "every box starts on the swizzle repeat");
static_assert(Ring::kStages * Ring::kStageBytes % wgmma::kSwizzleRepeat == 0,
              "the staging after the ring starts on the swizzle repeat");
static_assert(kDynamicSharedBytes <= 227 * 1024, "H100: 227 KiB of dynamic shared memory");

// The epilogue of one consumer warp: its 16 rows of the tile's C, in 8 boxes
// of 32 columns through its two staging buffers (header, steps 1-3).  Thread
// `lane` holds C(r, 8j + c .. +1) in d[4j], d[4j + 1] and C(r + 8, ...) in
// d[4j + 2], d[4j + 3] (r = lane / 4, c = 2 (lane % 4), rows of the warp's
// 16); box q holds columns 32q .. 32q + 31, i.e. j = 4q .. 4q + 3.
// `boxes` counts the warp's boxes over all its tiles (which buffer is next).
__device__ __forceinline__ void store_through_tma(const float (&d)[Ring::kAccumulators],
                                                  const rl::ptx::TensorMap* c_map,
                                                  unsigned char* warp_staging, int row, int col,
                                                  int lane, int& boxes) {
  RL_UNROLL
  for (int q = 0; q < Ring::kBlockN / kBoxCols; ++q, ++boxes) {
    unsigned char* box = warp_staging + (boxes % kBuffers) * kBoxBytes;
    if (lane == 0) rl::ptx::bulk_wait_group_read<kBuffers - 1>();  // this buffer has been read
    __syncwarp();
    RL_UNROLL
    for (int jj = 0; jj < kBoxCols / 8; ++jj) {
      const int j = 4 * q + jj, box_col = 8 * jj + 2 * (lane % 4);  // even: 8 bytes of a 16
      RL_UNROLL
      for (int half = 0; half < 2; ++half) {
        const int box_row = lane / 4 + 8 * half;
        const int chunk = (box_col / 4) ^ (box_row % 8);  // the 128B swizzle of 16-byte chunks
        float* at = reinterpret_cast<float*>(box + box_row * wgmma::kSwizzleBytes + chunk * 16 +
                                             (box_col % 4) * 4);
        at[0] = d[4 * j + 2 * half];
        at[1] = d[4 * j + 2 * half + 1];
      }
    }
    rl::ptx::fence_proxy_async_shared();  // this lane's writes, visible to the TMA engine
    __syncwarp();
    if (lane == 0) {
      rl::ptx::tma_store_2d(c_map, col + q * kBoxCols, row, box);
      rl::ptx::bulk_commit_group();
    }
  }
}

}  // namespace

// Budgets: as gemm_wgmma_persistent's.
// rl-static: kernel=gemm_wgmma_tma_store max_regs=168 max_smem=64
// rl-static: kernel=gemm_wgmma_tma_store arch=90a sass=HGMMA.64x256x16.F32,UTMALDG
// The TMA stores exist in the kTmaStore instances (the others are the
// fallback for N not a multiple of 4):
// rl-static: kernel=*gemm_wgmma_tma_store<*,?true>* arch=90a sass=UTMASTG,UTMACMDFLUSH
// rl-static: kernel=gemm_wgmma_tma_store arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=gemm_wgmma_tma_store arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
// rl-static: kernel=gemm_wgmma_tma_store arch=90a sass=WARPGROUP.DEPBAR.LE
template <typename T, bool kTmaStore>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_tma_store(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                         const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map,
                         const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap c_map, float* __restrict__ C,
                         int M, int N, int K, int ldc) {
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ std::uint64_t full[Ring::kStages];   // stage s holds the next tile
  __shared__ std::uint64_t empty[Ring::kStages];  // stage s may be overwritten
  unsigned char* ring = wgmma::ring_start(dynamic_shared);
  unsigned char* staging = ring + Ring::kStages * Ring::kStageBytes;
  const int warpgroup = static_cast<int>(threadIdx.x) / wgmma::kWarpgroupThreads;
  wgmma::init_ring_barriers<Ring>(full, empty, kConsumerThreads, threadIdx.x == 0);
  const wgmma::PersistentTiles tiles = {wgmma::tile_order<Ring>(M, N),
                                        (K + Ring::kBlockK - 1) / Ring::kBlockK,
                                        static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x)};

  if (warpgroup == 0) {  // the producer: every warp gives registers back, thread 0 loads
    rl::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0)
      wgmma::produce_tiles_persistently<Ring>(&a_map, &b_map, full, empty, ring, tiles);
    return;
  }

  // Consumer c = warpgroup - 1: rows 64c .. 64c + 63 of each block tile.
  rl::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int warp = static_cast<int>(threadIdx.x) / 32 - 4;  // 0 .. 7 among the consumers
  const int lane = static_cast<int>(threadIdx.x) % 32;
  unsigned char* warp_staging = staging + warp * kBuffers * kBoxBytes;
  float d[Ring::kAccumulators];  // the 64 x 256 fp32 accumulator, 128 per thread
  int read = 0;                  // k-tiles consumed by this CTA so far, over all its tiles
  int boxes = 0;                 // C boxes this warp has stored, over all its tiles
  for (int t = tiles.first; t < tiles.order.tiles(); t += tiles.step, read += tiles.k_tiles) {
    const wgmma::BlockTile tile = wgmma::block_tile<Ring>(tiles, t);
    for (float& v : d) v = 0.0f;
    wgmma::consume_tiles_keeping_one_group_in_flight<T, Ring, /*ReleaseLast=*/true>(
        d, full, empty, ring, tiles.k_tiles, consumer, read);
    if constexpr (kTmaStore) {
      store_through_tma(d, &c_map, warp_staging, tile.row + warp * kBoxRows, tile.col, lane, boxes);
    } else {
      wgmma::store_accumulators<Ring>(d, C, M, N, ldc, tile, consumer,
                                      static_cast<int>(threadIdx.x));
    }
  }
  if constexpr (kTmaStore) {
    if (lane == 0) rl::ptx::bulk_wait_group<0>();  // C written before the CTA's shared memory goes
  }
}

namespace {

// One CTA per SM (fewer if there are fewer tiles); TMA stores where C's rows
// meet TMA's 16-byte pitch.
template <typename T>
void launch_gemm_wgmma_tma_store(const Args<T>& a, cudaStream_t stream) {
  const wgmma::OperandMaps<Ring, T> maps = wgmma::operand_maps<Ring>(a);
  const bool tma_store = a.ldc % 4 == 0;
  const rl::ptx::TensorMap c_map =
      tma_store ? rl::ptx::encode_tensor_map_2d(
                      rl::ptx::tensor_map_2d(a.M, a.N, a.ldc, 4, kBoxRows, kBoxCols),
                      rl::ptx::TensorMapElement::fp32, a.C)
                : rl::ptx::TensorMap{};
  auto kernel = tma_store ? gemm_wgmma_tma_store<T, true> : gemm_wgmma_tma_store<T, false>;
  RL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     kDynamicSharedBytes));
  rl::launch(kernel, wgmma::persistent_grid<Ring>(a.M, a.N), dim3(kThreads), kDynamicSharedBytes,
             stream, maps.a, maps.b, c_map, a.C, a.M, a.N, a.K, a.ldc);
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_tma_store<__nv_bfloat16>,
                    &launch_gemm_wgmma_tma_store<__half>);

}  // namespace

#if !defined(__CUDA_ARCH__)
namespace {

// The counters' C stores: TMA boxes (in-bounds part) where the launcher
// takes that path, ldc = N a multiple of 4 fp32 (16 bytes).
bool c_stores_through_tma(const Dims& d) {
  return d.N % 4 == 0;
}

template <typename T>
KernelRecord wgmma_tma_store_record(std::string name, std::string baseline,
                                    roofline::Precision precision, roofline::ComputeUnit unit) {
  return wgmma::sm90a_record<Ring, T>(
      std::move(name), "wgmma_tma_store", std::move(baseline), precision, unit,
      launch_gemm_wgmma_tma_store<T>,
      "the epilogue through shared memory and TMA stores, each warp double-buffering 16 x 32 "
      "boxes, so a tile's C is written while the next tile's wgmmas run",
      &c_stores_through_tma);
}

}  // namespace

RL_REGISTER_KERNEL(wgmma_tma_store_record<__nv_bfloat16>("gemm_wgmma_tma_store_bf16",
                                                         "gemm_wgmma_persistent_bf16",
                                                         roofline::Precision::bf16,
                                                         roofline::ComputeUnit::tc_bf16));
RL_REGISTER_KERNEL(wgmma_tma_store_record<__half>("gemm_wgmma_tma_store_fp16",
                                                  "gemm_wgmma_persistent_fp16",
                                                  roofline::Precision::fp16,
                                                  roofline::ComputeUnit::tc_fp16));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
