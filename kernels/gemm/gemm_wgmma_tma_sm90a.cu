// GEMM rung: Hopper wgmma fed by TMA through an mbarrier ring, warp-specialised
// producer and consumers (sm_90a only; bf16 and fp16 inputs, fp32 C).
//
// Run on an H200 and an H100 (docs/gpu-runs/): it validates there at the odd
// shapes of tests/hopper (label gpu) and at 8192³ (504 TFLOP/s bf16 on the
// H100).  Its SASS is checked statically (HGMMA, UTMALDG, mbarrier SYNCS
// instructions, no spills); the host-side arithmetic (descriptors,
// tensor-map parameters) is unit-tested (tests/hopper), and it computes the
// right C under the emulator's exact wgmma / TMA / mbarrier model with
// RL_EMU_CC=90 (tests/emu_hopper).
//
// The idea, and what changes from gemm_mma_sync_multistage (the rung below):
// there every warp computes its own slice of the tile with mma.sync, after
// every thread has copied its share of the next A and B tiles with cp.async
// and all of them have met at __syncthreads.  Here
//   - one thread (the producer warpgroup's thread 0) moves whole tiles with
//     TMA (cp.async.bulk.tensor): one instruction per 128 x 64 tile of A and
//     per 64 x 64 tile of B, written into shared memory already in the 128-byte
//     swizzle that wgmma reads, with out-of-bounds elements written as zero;
//   - the copies and the math meet on mbarriers, per stage, not on a block
//     barrier: a "full" barrier per stage that completes when the stage's bytes
//     have landed, and an "empty" one that completes when both consumers have
//     finished reading it, so the producer runs up to kStages tiles ahead;
//   - two consumer warpgroups each issue wgmma.m64n128k16, a 64 x 128 x 16
//     product per instruction across 128 threads, with both operands read from
//     shared memory through descriptors (no ldmatrix, no operand registers).
// Of the steps in pranjalssh/fast.cu's Hopper write-up, this has TMA + wgmma,
// warp specialisation and the mbarrier ring; it leaves out register
// reallocation (setmaxnreg), persistent tiles, clusters with TMA multicast,
// keeping a wgmma group in flight across stages (each stage waits for its own
// wgmmas before releasing it) and a TMA store epilogue.
//
// Tiles: BlockM x BlockN x BlockK = 128 x 128 x 64, kStages = 4, 384 threads
// (warpgroup 0: producer, 1 and 2: consumers of rows 0..63 and 64..127).
// Shared memory: 4 x (16 KiB of A + 16 KiB of B) + 1 KiB to align the ring to
// the swizzle's 1024-byte repeat = 129 KiB dynamic, plus 64 bytes of mbarriers.
//
// Layouts (rl/ptx_sm90.hpp explains the descriptor fields):
//   A tile, row-major 128 x 64 (K-major for wgmma): rows of 128 bytes, 128B
//     swizzle.  Descriptor: SBO = 1024 (8 rows), LBO unused; consumer c starts
//     at row 64c (+8192 bytes); each k16 step moves the start 32 bytes.
//   B tile, row-major 64 x 128 (N-major for wgmma, so imm-trans-b = 1, which
//     exists for 16-bit types): two 64 x 64 TMA boxes side by side (a 128B
//     swizzled box is at most 128 bytes wide), each 64 K-rows of 128 bytes.
//     Descriptor: LBO = 8192 (from N columns 0..63 to 64..127), SBO = 1024
//     (8 K-rows); each k16 step moves the start 16 rows = 2048 bytes.
//
// Tails: TMA writes zeros for elements outside the matrix, so partial tiles in
// M, N and K need no code (a zero term adds nothing, exactly); the epilogue
// stores only inside C.  What TMA cannot do: its tensor maps need every row
// pitch to be a multiple of 16 bytes, i.e. lda and ldb multiples of 8 for
// 16-bit types, so the workload pads A's and B's rows to that
// (RecordSpec::ld_multiple; the maps still end at K and N) and every shape
// runs; the epilogue checks both columns of a pair against N.
//
// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 128.
//
// Performance goal (a goal, not a measurement): well above the mma.sync rung
// on H100, toward the wgmma_loop_bf16_m64n256k16 ceiling.
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

using Ring = wgmma::Ring</*BlockM=*/128, /*BlockN=*/128, /*BlockK=*/64, /*Stages=*/4>;
constexpr int kConsumers = 2;  // warpgroups, one per 64 rows of the block tile
constexpr int kConsumerThreads = kConsumers * wgmma::kWarpgroupThreads;
constexpr int kThreads = wgmma::kWarpgroupThreads + kConsumerThreads;  // + the producer
static_assert(kConsumers * wgmma::kWgmmaM == Ring::kBlockM, "each consumer owns 64 rows");

}  // namespace

// Budgets: on every architecture registers and static shared memory (other
// than on sm_90a the body traps at its first wgmma: the mbarrier and TMA
// instructions before it exist from sm_90 on); on sm_90a
// also the instructions the design rests on: HGMMA (wgmma), UTMALDG (TMA
// loads), SYNCS.ARRIVE / SYNCS.PHASECHK (mbarrier arrive and try_wait).
// max_smem is the 64 bytes of static mbarriers only: the 129 KiB ring is
// dynamic shared memory, a launch parameter the ptxas report does not see
// (tests/static/README.md); Ring::kDynamicSharedBytes is its size.
// rl-static: kernel=gemm_wgmma_tma max_regs=168 max_smem=64
// rl-static: kernel=gemm_wgmma_tma arch=90a max_regs=128 max_smem=64 sass=HGMMA,UTMALDG
// rl-static: kernel=gemm_wgmma_tma arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
template <typename T, PipelineFault F = PipelineFault::none>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_tma(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                   const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map, float* __restrict__ C,
                   int M, int N, int K, int ldc) {
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ std::uint64_t full[Ring::kStages];   // stage s holds the next tile
  __shared__ std::uint64_t empty[Ring::kStages];  // stage s may be overwritten
  unsigned char* ring = wgmma::ring_start(dynamic_shared);
  const int warpgroup = static_cast<int>(threadIdx.x) / wgmma::kWarpgroupThreads;
  wgmma::init_ring_barriers<Ring>(full, empty, kConsumerThreads, threadIdx.x == 0);
  const wgmma::BlockTile tile = {(K + Ring::kBlockK - 1) / Ring::kBlockK,
                                 static_cast<int>(blockIdx.y) * Ring::kBlockM,
                                 static_cast<int>(blockIdx.x) * Ring::kBlockN};

  if (warpgroup == 0) {  // the producer: its thread 0 issues every TMA load
    if (threadIdx.x == 0) wgmma::produce_tiles<Ring>(&a_map, &b_map, full, empty, ring, tile);
    return;  // no block-wide barrier follows
  }

  // Consumer c = warpgroup - 1: rows 64c .. 64c + 63 of the block tile.
  const int consumer = warpgroup - 1;
  float d[Ring::kAccumulators];  // the 64 x 128 fp32 accumulator, 64 per thread
  for (float& v : d) v = 0.0f;
  wgmma::consume_tiles_waiting_each_stage<T, Ring, F>(d, full, empty, ring, tile.k_tiles, consumer);
  wgmma::store_accumulators<Ring>(d, C, M, N, ldc, tile, consumer, static_cast<int>(threadIdx.x));
}

namespace {

template <typename T, PipelineFault F = PipelineFault::none>
void launch_gemm_wgmma_tma(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_wgmma_gemm<Ring>(gemm_wgmma_tma<T, F>, kThreads, a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_tma<__nv_bfloat16>, &launch_gemm_wgmma_tma<__half>);

}  // namespace

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::wgmma_tma_bf16(PipelineFault fault) {
  switch (fault) {
    case PipelineFault::none:
      return &launch_gemm_wgmma_tma<__nv_bfloat16>;
    case PipelineFault::skip_one_k_tile:
      return &launch_gemm_wgmma_tma<__nv_bfloat16, PipelineFault::skip_one_k_tile>;
    case PipelineFault::read_stage_early:
      return &launch_gemm_wgmma_tma<__nv_bfloat16, PipelineFault::read_stage_early>;
  }
  return nullptr;
}
#endif

#if !defined(__CUDA_ARCH__)
namespace {

template <typename T>
KernelRecord wgmma_tma_record(std::string name, std::string baseline, roofline::Precision precision,
                              roofline::ComputeUnit unit) {
  return wgmma::sm90a_record<Ring, T>(
      std::move(name), "wgmma_tma", std::move(baseline), precision, unit, launch_gemm_wgmma_tma<T>,
      "wgmma from 128B-swizzled shared memory fed by TMA, 4-stage mbarrier ring, producer "
      "and consumer warpgroups");
}

}  // namespace

RL_REGISTER_KERNEL(wgmma_tma_record<__nv_bfloat16>("gemm_wgmma_tma_bf16",
                                                   "gemm_mma_sync_multistage_bf16",
                                                   roofline::Precision::bf16,
                                                   roofline::ComputeUnit::tc_bf16));
RL_REGISTER_KERNEL(wgmma_tma_record<__half>("gemm_wgmma_tma_fp16", "gemm_mma_sync_multistage_fp16",
                                            roofline::Precision::fp16,
                                            roofline::ComputeUnit::tc_fp16));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
