// GEMM rung: the in-flight wgmma rung launched in 2-CTA clusters along M,
// the B tile loaded once per cluster by TMA multicast (sm_90a only; bf16 and
// fp16 inputs, fp32 C).
//
// Not yet run on a GPU.  Compiled for sm_90a with its SASS checked statically
// (below), and it computes the right C under the emulator's exact wgmma /
// TMA / mbarrier / cluster model with RL_EMU_CC=90 (tests/emu_hopper), at odd
// shapes (an odd number of row tiles included) under two schedules and over
// 64 k-tiles.
//
// What changes from gemm_wgmma_inflight (the rung below), one idea: the two
// CTAs of a cluster compute vertically adjacent 128 x 256 tiles of C, which
// need the same 64 x 256 B tile at every k-tile, so B is read from L2 once
// per cluster instead of once per CTA.
//   - Loads.  Each CTA's producer loads its own A box as before and HALF of
//     the stage's B boxes (rank r: boxes 2r and 2r + 1 of four), each
//     multicast to both CTAs (ctaMask 0b11, PTX "cp.async.bulk.tensor"
//     .multicast::cluster): a box lands at the same offset in both CTAs'
//     rings and completes its bytes on the stage's "full" barrier in each.
//     So each CTA's "full" barrier expects the whole stage (its A + both
//     halves of B), as before; the peer's half may land before this CTA's
//     expect_tx, which the barrier's phase allows (its pending arrival count,
//     1, is this producer's).
//   - Release.  A stage is written by BOTH producers, so it is free only
//     when both CTAs' consumers have released it: every consumer thread
//     arrives on its own CTA's "empty" barrier and, through mapa and the
//     remote mbarrier.arrive.release.cluster, on the peer's; "empty" counts
//     2 x 256 arrivals.
//   - What the emulator reports: a release to this CTA only (the peer's
//     producer may then multicast the next k-tile's B half into a stage
//     whose wgmmas this CTA has not retired) still computes the right C
//     there, since the emulator copies a TMA box and reads wgmma operands at
//     issue, but the write into shared memory an in-flight wgmma reads is
//     reported (emu/docs/hopper.md, "Operands in flight"): the fault hook
//     ReleaseFault::release_own_cta_only (gemm/gemm_pipeline_fault.hpp)
//     builds that variant, and tests/emu_hopper/hopper_cluster_fault_test.cpp
//     shows it reported at 9 k-tiles under the reverse schedule (the forward
//     one reaches each CTA's wait before the peer's producer comes back), and
//     the correct build clean under both.
//   - Cluster barriers.  barrier.cluster after the mbarriers' init, before
//     any multicast or remote arrive can reach a peer; and at the end, so no
//     CTA exits while the peer may still arrive on its barriers (the consumers
//     arrive after their last release, store C, then wait).  The producer
//     warpgroup exits early, as in the rung below: an exited thread counts
//     as arrived at barrier.cluster.
//   - An odd number of row tiles: the grid's rows of CTAs are rounded up to
//     even, and the last cluster's second CTA has no rows of C.  It runs the
//     whole pipeline anyway (its A boxes lie past M: TMA fills them with
//     zeros, still counting their bytes), because the peer needs its half of
//     B and its releases; the epilogue's row check stores nothing.
//   - The mbarriers live in dynamic shared memory, ahead of the ring: the
//     emulator refuses static __shared__ in a clustered launch (one host
//     worker runs every CTA of a cluster).
// Everything else (tile, setmaxnreg, in-flight consumer order, epilogue) is
// the rung below's; the register arithmetic and the shared-memory budget
// (4 stages of 48 KiB + 1 KiB, here + 64 bytes of barriers, in 227 KiB) are
// in gemm_wgmma_128x256_sm90a.cu's header.  Of the steps in pranjalssh/
// fast.cu's Hopper write-up this adds clusters with multicast to the
// in-flight rung; it leaves out the persistent schedule and the TMA store
// epilogue (the rungs above the in-flight one).
//
// Shapes: every shape, on rows padded to a multiple of 8 elements
// (RecordSpec::ld_multiple), as the rung below.

// Cost model (gemm_cost.hpp): A is read ceil(N / 256) times as below, B once
// per cluster, ceil(M / 256) times: the reuse tile is the cluster's 256 x
// 256.  Per k-tile a CTA now loads (128 + 128) x 64 x 2 bytes for 2 x 128 x
// 256 x 64 FLOPs, 128 FLOP per byte of L2 traffic (the rung below: 85).
// The counters' declaration is over 256 x 256 x 64 tiles too: every CTA of
// the rounded-up grid issues its wgmmas (the empty one on zeros), and each B
// box is counted once per multicast.
//
// SASS (sm_90a, nvcc 13.0): the declarations below hold HGMMA.64x256x16.F32
// (.BF16 for bf16), UTMALDG with multicast (UTMALDG.2D.MULTICAST) beside
// the A box's UTMALDG.2D, barrier.cluster (UCGABAR_ARV, UCGABAR_WAIT),
// setmaxnreg and the mbarrier ops, within 168 registers (the launch
// allotment, as below); no spills.
//
// Run (an H100; the emulator with RL_EMU_CC=90):
//   bench_roofline --family gemm --benchmark_filter=gemm_wgmma_cluster
//
// Performance goal (a goal, not a measurement): above gemm_wgmma_inflight on
// H100 at large square shapes, where B's L2 traffic is halved.  The
// per-thread remote arrivals (256 a stage per CTA) are the simplest correct
// release; whether they cost anything on a GPU is for a measurement to say.
#include "gemm/gemm_pipeline_fault.hpp"
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
constexpr std::uint16_t kBothCtas = 0b11;                              // the multicast's ctaMask
constexpr int kBBoxesPerCta = Ring::kBBoxes / wgmma::kClusterCtas;     // 2 of the stage's 4
static_assert(kConsumers * wgmma::kWgmmaM == Ring::kBlockM, "each consumer owns 64 rows");
static_assert(kBBoxesPerCta * wgmma::kClusterCtas == Ring::kBBoxes, "B splits in halves");

#if defined(__CUDACC__) || defined(RL_EMULATE)

// One k-tile into stage `stage`: this CTA's A box, and its half of B's boxes
// multicast to both CTAs; "full" expects the whole stage in each CTA.
__device__ __forceinline__ void load_stage_sharing_b(const rl::ptx::TensorMap* a_map,
                                                     const rl::ptx::TensorMap* b_map,
                                                     std::uint64_t* full, unsigned char* ring,
                                                     int stage, wgmma::BlockTile tile, int kt,
                                                     int rank) {
  rl::ptx::mbarrier_arrive_expect_tx(&full[stage], Ring::kStageBytes);
  rl::ptx::tma_load_2d(wgmma::a_tile<Ring>(ring, stage), a_map, kt * Ring::kBlockK, tile.row,
                       &full[stage]);
  for (int i = 0; i < kBBoxesPerCta; ++i) {
    const int box = rank * kBBoxesPerCta + i;
    rl::ptx::tma_load_2d_multicast(wgmma::b_tile<Ring>(ring, stage) + box * Ring::kBBoxBytes, b_map,
                                   tile.col + box * Ring::kBoxCols, kt * Ring::kBlockK,
                                   &full[stage], kBothCtas);
  }
}

// The producer (one thread), as wgmma::produce_tiles: its "empty" wait
// covers both CTAs' consumers, since its B half lands in both.
__device__ __forceinline__ void produce_tiles_sharing_b(const rl::ptx::TensorMap* a_map,
                                                        const rl::ptx::TensorMap* b_map,
                                                        std::uint64_t* full, std::uint64_t* empty,
                                                        unsigned char* ring, wgmma::BlockTile tile,
                                                        int rank) {
  for (int kt = 0; kt < tile.k_tiles; ++kt) {
    const int stage = kt % Ring::kStages, use = kt / Ring::kStages;
    if (use > 0) rl::ptx::mbarrier_wait_parity(&empty[stage], (use - 1) & 1);
    load_stage_sharing_b(a_map, b_map, full, ring, stage, tile, kt, rank);
  }
}

// A consumer thread's release of a stage: on its own CTA's "empty" barrier
// and on the peer's (mapa + the remote arrive), since both producers write
// the stage.  The faulty build (gemm_pipeline_fault.hpp) arrives on its own only.
template <ReleaseFault F>
__device__ __forceinline__ void release_stage(std::uint64_t* empty_stage, std::uint32_t peer) {
  rl::ptx::mbarrier_arrive(empty_stage);
  if constexpr (F == ReleaseFault::none)
    rl::ptx::mbarrier_arrive_cluster(
        rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(empty_stage), peer));
}

// wgmma::consume_tiles_keeping_one_group_in_flight's order (its rung's
// header says why), each release going to both CTAs.
template <typename T, ReleaseFault F>
__device__ __forceinline__ void consume_tiles_releasing_both(float (&d)[Ring::kAccumulators],
                                                             std::uint64_t* full,
                                                             std::uint64_t* empty,
                                                             unsigned char* ring, int k_tiles,
                                                             int consumer, std::uint32_t peer) {
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % Ring::kStages, use = kt / Ring::kStages;
    rl::ptx::mbarrier_wait_parity(&full[stage], use & 1);
    wgmma::issue_stage_wgmmas<T, Ring>(d, ring, stage, consumer);
    rl::ptx::wgmma_commit_group();
    rl::ptx::wgmma_wait_group<1>();  // stage kt - 1's group is complete
    if (kt > 0) release_stage<F>(&empty[(kt - 1) % Ring::kStages], peer);
  }
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(d);
  if (k_tiles > 0) release_stage<F>(&empty[(k_tiles - 1) % Ring::kStages], peer);
}

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace

// Budgets: as gemm_wgmma_inflight's, and the cluster's instructions: the
// multicast load (UTMALDG.2D.MULTICAST) and barrier.cluster (UCGABAR_ARV /
// UCGABAR_WAIT; tests/static/README.md, "cluster SASS spellings").  No
// static shared memory: the barriers are dynamic (above).
// rl-static: kernel=gemm_wgmma_cluster max_regs=168 max_smem=0
// rl-static: kernel=gemm_wgmma_cluster arch=90a sass=HGMMA.64x256x16.F32,UTMALDG.2D.MULTICAST
// rl-static: kernel=gemm_wgmma_cluster arch=90a sass=UCGABAR_ARV,UCGABAR_WAIT
// rl-static: kernel=gemm_wgmma_cluster arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=gemm_wgmma_cluster arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
template <typename T, ReleaseFault F = ReleaseFault::none>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_cluster(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                       const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map, float* __restrict__ C,
                       int M, int N, int K, int ldc) {
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  auto* full = reinterpret_cast<std::uint64_t*>(dynamic_shared);  // stage s holds the next tile
  std::uint64_t* empty = full + Ring::kStages;  // stage s may be overwritten, in both CTAs
  unsigned char* ring = wgmma::ring_start(dynamic_shared + wgmma::kClusterBarrierBytes<Ring>);
  const int warpgroup = static_cast<int>(threadIdx.x) / wgmma::kWarpgroupThreads;
  const auto rank = static_cast<int>(rl::ptx::cluster_ctarank());
  // "empty" counts both CTAs' consumer threads (the __syncthreads in it is
  // redundant with the cluster barrier after it, once a launch); the faulty
  // build's, this CTA's only.
  constexpr int kReleasingCtas = F == ReleaseFault::none ? wgmma::kClusterCtas : 1;
  wgmma::init_ring_barriers<Ring>(full, empty, kReleasingCtas * kConsumerThreads, threadIdx.x == 0);
  rl::ptx::barrier_cluster_sync();  // both CTAs' barriers exist before anything reaches them
  const wgmma::BlockTile tile = {(K + Ring::kBlockK - 1) / Ring::kBlockK,
                                 static_cast<int>(blockIdx.y) * Ring::kBlockM,
                                 static_cast<int>(blockIdx.x) * Ring::kBlockN};

  if (warpgroup == 0) {  // the producer: every warp gives registers back, thread 0 loads
    rl::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) produce_tiles_sharing_b(&a_map, &b_map, full, empty, ring, tile, rank);
    return;
  }

  // Consumer c = warpgroup - 1: rows 64c .. 64c + 63 of the block tile.
  rl::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  float d[Ring::kAccumulators];  // the 64 x 256 fp32 accumulator, 128 per thread
  for (float& v : d) v = 0.0f;
  consume_tiles_releasing_both<T, F>(d, full, empty, ring, tile.k_tiles, consumer,
                                     static_cast<std::uint32_t>(rank ^ 1));
  rl::ptx::barrier_cluster_arrive();  // after the last release to the peer
  wgmma::store_accumulators<Ring>(d, C, M, N, ldc, tile, consumer, static_cast<int>(threadIdx.x));
  rl::ptx::barrier_cluster_wait();  // the peer is done with this CTA's barriers and memory
}

namespace {

template <typename T, ReleaseFault F = ReleaseFault::none>
void launch_gemm_wgmma_cluster(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_wgmma_gemm_in_clusters<Ring>(gemm_wgmma_cluster<T, F>, kThreads, a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_cluster<__nv_bfloat16>, &launch_gemm_wgmma_cluster<__half>);

}  // namespace

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::wgmma_cluster_bf16(ReleaseFault fault) {
  if (fault == ReleaseFault::release_own_cta_only)
    return &launch_gemm_wgmma_cluster<__nv_bfloat16, ReleaseFault::release_own_cta_only>;
  return &launch_gemm_wgmma_cluster<__nv_bfloat16>;
}
#endif

#if !defined(__CUDA_ARCH__)
namespace {

template <typename T>
KernelRecord wgmma_cluster_record(std::string name, std::string baseline,
                                  roofline::Precision precision, roofline::ComputeUnit unit) {
  return wgmma::sm90a_record<Ring, T, wgmma::kClusterCtas>(
      std::move(name), "wgmma_cluster", std::move(baseline), precision, unit,
      launch_gemm_wgmma_cluster<T>, "B tile multicast to a 2-CTA cluster");
}

}  // namespace

RL_REGISTER_KERNEL(wgmma_cluster_record<__nv_bfloat16>("gemm_wgmma_cluster_bf16",
                                                       "gemm_wgmma_inflight_bf16",
                                                       roofline::Precision::bf16,
                                                       roofline::ComputeUnit::tc_bf16));
RL_REGISTER_KERNEL(wgmma_cluster_record<__half>("gemm_wgmma_cluster_fp16",
                                                "gemm_wgmma_inflight_fp16",
                                                roofline::Precision::fp16,
                                                roofline::ComputeUnit::tc_fp16));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
