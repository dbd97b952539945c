// GEMM rung: the in-flight wgmma rung made persistent: one CTA per SM walks
// the output tiles in an order that shares A and B panels in L2 (sm_90a
// only; bf16 and fp16 inputs, fp32 C).
//
// Run on an H100 (docs/gpu-runs/2026-11-26-h100.md): it validates at the odd
// shapes of tests/hopper (label gpu, 289 tiles on 132 SMs among them) and at
// 8192³ (689 TFLOP/s bf16, 90% of cuBLASLt BF16 in the same run).  Compiled
// for sm_90a with its SASS checked statically (below), and it computes the
// right C under the emulator's exact wgmma / TMA / mbarrier model with
// RL_EMU_CC=90 (tests/emu_hopper), where the "SMs" are the emulator's worker
// threads, so every CTA there walks several tiles.
//
// What changes from gemm_wgmma_inflight (the rung below), one idea: launch
// one CTA per SM instead of one per output tile, and let each walk tiles
// tile = blockIdx.x, blockIdx.x + gridDim.x, ... until none are left.
//   - The ring does not start over at each tile: the producer and the
//     consumers count k-tiles across all of a CTA's tiles (stage = count %
//     kStages, use = count / kStages), so while the consumers drain the last
//     stage and write a tile's C, the producer is already loading the next
//     tile's first stages.  The rung below pays a tile's pipeline fill and its
//     epilogue back to back, with the tensor cores idle, once per tile; here
//     both overlap with another tile's loads.  Launch and barrier set-up are
//     paid once per SM, not once per tile.
//   - The order of the tiles is grouped (gemm_tile_order.hpp): tiles are
//     numbered down columns within bands of 16 row tiles (16 x 128 rows), so the
//     132 CTAs of an H100 that run at once hold about 16 row tiles and 9
//     column tiles: 16 A panels (K x 128) and 9 B panels (K x 256) in flight,
//     16 + 2 x 9 = 34 panel-units of 128 rows or columns, where the row-major order of
//     the rung below holds about 5 A panels and all 32 B panels at 8192
//     (5 + 2 x 32 = 69): half the L2 footprint, so more of each panel's second
//     and later reads hit L2.  (At 8192³ one A panel is 2 MiB and one B panel
//     4 MiB, against H100's 50 MiB L2; tests/emu_hopper/hopper_persistent_test
//     checks the panel counts.)
// Everything else is the rung below's: the 128 x 256 x 64 tile, 4 stages,
// setmaxnreg 40 / 232, one wgmma group in flight across stages, the
// fragment-to-C epilogue (gemm_wgmma_parts.hpp).  Of the steps in
// pranjalssh/fast.cu's Hopper write-up this still leaves out clusters with
// TMA multicast and a TMA store epilogue.
//
// Shapes: every shape, on rows padded to a multiple of 8 elements, as the
// rung below (RecordSpec::ld_multiple).  The grid is min(SMs, tiles).

// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 256, as
// the rung below (the bytes_model counts L2 -> SM traffic, which the order of
// the tiles does not change; it changes how much of it HBM serves).
//
// SASS (sm_90a, nvcc 13.0): as the rung below's: HGMMA.64x256x16.F32(.BF16),
// WARPGROUP.DEPBAR.LE, USETMAXREG, UTMALDG.2D, SYNCS.ARRIVE /
// SYNCS.PHASECHK; no spills.
//
// Performance goal (a goal, not a measurement): above gemm_wgmma_inflight on
// H100 at 8192³, towards 90% of cuBLASLt BF16.
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

}  // namespace

// Budgets: as gemm_wgmma_inflight's.
// rl-static: kernel=gemm_wgmma_persistent max_regs=168 max_smem=64
// rl-static: kernel=gemm_wgmma_persistent arch=90a sass=HGMMA.64x256x16.F32,UTMALDG
// rl-static: kernel=gemm_wgmma_persistent arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=gemm_wgmma_persistent arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
// rl-static: kernel=gemm_wgmma_persistent arch=90a sass=WARPGROUP.DEPBAR.LE
template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_persistent(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                          const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map,
                          float* __restrict__ C, int M, int N, int K, int ldc) {
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ std::uint64_t full[Ring::kStages];   // stage s holds the next tile
  __shared__ std::uint64_t empty[Ring::kStages];  // stage s may be overwritten
  unsigned char* ring = wgmma::ring_start(dynamic_shared);
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
  float d[Ring::kAccumulators];  // the 64 x 256 fp32 accumulator, 128 per thread
  int read = 0;                  // k-tiles consumed by this CTA so far, over all its tiles
  for (int t = tiles.first; t < tiles.order.tiles(); t += tiles.step, read += tiles.k_tiles) {
    const wgmma::BlockTile tile = wgmma::block_tile<Ring>(tiles, t);
    for (float& v : d) v = 0.0f;
    wgmma::consume_tiles_keeping_one_group_in_flight<T, Ring, /*ReleaseLast=*/true>(
        d, full, empty, ring, tiles.k_tiles, consumer, read);
    wgmma::store_accumulators<Ring>(d, C, M, N, ldc, tile, consumer, static_cast<int>(threadIdx.x));
  }
}

namespace {

// One CTA per SM (fewer if there are fewer tiles).
template <typename T>
void launch_gemm_wgmma_persistent(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_wgmma_gemm<Ring>(gemm_wgmma_persistent<T>, kThreads, a, stream,
                                 wgmma::persistent_grid<Ring>(a.M, a.N));
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_persistent<__nv_bfloat16>,
                    &launch_gemm_wgmma_persistent<__half>);

}  // namespace

#if !defined(__CUDA_ARCH__)
namespace {

template <typename T>
KernelRecord wgmma_persistent_record(std::string name, std::string baseline,
                                     roofline::Precision precision, roofline::ComputeUnit unit) {
  return wgmma::sm90a_record<Ring, T>(
      std::move(name), "wgmma_persistent", std::move(baseline), precision, unit,
      launch_gemm_wgmma_persistent<T>,
      "one CTA per SM walks the tiles in bands of 16 row tiles, its ring running on from tile "
      "to tile, so one tile's epilogue overlaps the next tile's loads");
}

}  // namespace

RL_REGISTER_KERNEL(wgmma_persistent_record<__nv_bfloat16>("gemm_wgmma_persistent_bf16",
                                                          "gemm_wgmma_inflight_bf16",
                                                          roofline::Precision::bf16,
                                                          roofline::ComputeUnit::tc_bf16));
RL_REGISTER_KERNEL(wgmma_persistent_record<__half>("gemm_wgmma_persistent_fp16",
                                                   "gemm_wgmma_inflight_fp16",
                                                   roofline::Precision::fp16,
                                                   roofline::ComputeUnit::tc_fp16));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
