// GEMM rung: the wgmma + TMA rung with a 128 x 256 block tile, m64n256k16
// wgmmas and register reallocation (setmaxnreg) between the producer and the
// consumer warpgroups (sm_90a only; bf16 and fp16 inputs, fp32 C).
//
// Run on an H100 (docs/gpu-runs/2026-11-26-h100.md): it validates at the odd
// shapes of tests/hopper (label gpu) and at 8192³ (531 TFLOP/s bf16, 552
// fp16, one run).  Compiled for sm_90a with its SASS checked statically
// (below), and it computes the right C under the emulator's exact wgmma / TMA
// / mbarrier model with RL_EMU_CC=90 (tests/emu_hopper).  The emulator has no
// register file: setmaxnreg is checked there only for what its form demands
// (sm_90a-only, all 32 lanes of a warp), not for its register arithmetic.
//
// What changes from gemm_wgmma_tma (the rung below), one idea: make each
// consumer's wgmma as wide as the instruction allows, and find the registers
// for it.
//   - Block tile 128 x 256 x 64: each of the two consumer warpgroups issues
//     wgmma.m64n256k16, a 64 x 256 x 16 product per instruction, so the A
//     tile it reads from shared memory is amortised over twice the columns,
//     and the tile does twice the math per byte loaded (below).
//   - The 64 x 256 fp32 accumulator is 128 registers per thread, which
//     leaves 40 of __launch_bounds__(384, 1)'s 168 for descriptors, addresses
//     and the epilogue, tight for a consumer (the SASS note below says how
//     tight it turned out).  The producer warpgroup needs almost none (one
//     thread issues TMA), so it gives registers back with setmaxnreg.dec and
//     the consumers take them with setmaxnreg.inc (PTX "setmaxnreg";
//     rl/ptx_sm90_setmaxnreg.hpp):
//       at launch   384 threads x 168 = 64512 registers (65536 / 384 = 170,
//                   allocated in steps of 8: 168)
//       producer    128 x 40  =  5120  (gives back 128 x 128 = 16384)
//       consumers   256 x 232 = 59392  (takes 256 x 64 = 16384)
//       total                   64512 <= 65536, the same as at launch, so the
//                   consumers' .inc finds exactly what the producer freed.
//   - Everything else is the rung below's, through gemm_wgmma_parts.hpp: the
//     TMA producer and its 128B-swizzled boxes (now four B boxes per stage),
//     the full/empty mbarrier ring, each stage waiting for its own wgmmas
//     before release, the fragment-to-C epilogue.
// Of the steps in pranjalssh/fast.cu's Hopper write-up this adds the larger
// tile and register reallocation; it still leaves out keeping a wgmma group
// in flight across stages (gemm_wgmma_inflight, the rung above), persistent
// tiles, clusters with TMA multicast and a TMA store epilogue.
//
// Shared memory: a stage is 16 KiB of A (128 x 64) + 4 x 8 KiB of B boxes
// (64 x 64 each) = 48 KiB.  H100 gives a block at most 227 KiB of dynamic
// shared memory: 4 stages = 192 KiB + 1 KiB to align the ring to the
// swizzle's 1024-byte repeat = 193 KiB fits, 5 stages (241 KiB) do not.
// Plus 64 bytes of static mbarriers.
//
// Shapes: every shape.  TMA needs 16-byte row pitches; where the rung below
// refuses K or N not a multiple of 8, this one runs on A and B whose rows the
// workload pads to a multiple of 8 elements (RecordSpec::ld_multiple, zeros),
// while its tensor maps end at K and N, so TMA still fills the tails with
// zeros.  M is free.

// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 256:
// A is read ceil(N / 256) times, B ceil(M / 128) times.  Per k-tile the block
// loads (128 + 256) x 64 x 2 bytes for 2 x 128 x 256 x 64 FLOPs, 85 FLOP per
// byte of L2 traffic (128 x 128: 64).
//
// SASS (sm_90a, nvcc 13.0, both precisions): 4 HGMMA.64x256x16.F32.BF16
// (bf16) or HGMMA.64x256x16.F32 (fp16) per stage, USETMAXREG.DEALLOC.CTAPOOL
// 0x28 (the producer's 40) and USETMAXREG.TRY_ALLOC.CTAPOOL 0xe8 (the
// consumers' 232, retried until the pool has them), UTMALDG.2D, SYNCS.ARRIVE
// and SYNCS.PHASECHK; no spills, no local memory.  ptxas reports 168
// registers (the launch allotment) and the highest register the code names
// is R151: with this compiler the consumers' code fits in 152 registers, so
// the .inc to 232 is headroom rather than a need, and what the reallocation
// buys on a GPU (if anything) is for a measurement to say.

// Performance goal (a goal, not a measurement): above gemm_wgmma_tma on H100
// at large square shapes, closer to the wgmma_loop_bf16_m64n256k16 ceiling.
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
constexpr int kLaunchRegisters = 168;  // what __launch_bounds__(384, 1) allots a thread
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert(kConsumers * wgmma::kWgmmaM == Ring::kBlockM, "each consumer owns 64 rows");
static_assert(wgmma::kWarpgroupThreads * (kProducerRegisters + kConsumers * kConsumerRegisters) <=
                  kThreads * kLaunchRegisters,
              "the consumers take no more registers than the producer gives back");

}  // namespace

// Budgets: registers and static shared memory everywhere (elsewhere than
// sm_90a the body traps at its first sm_90 or sm_90a instruction: 4
// registers); on sm_90a the instructions the rung rests on.  The fp16
// spelling HGMMA.64x256x16.F32 is a prefix of the bf16 one, so the
// declaration holds for both.  ptxas's register figure is the launch
// allotment (168), not the consumers' 232.
// rl-static: kernel=gemm_wgmma_128x256 max_regs=168 max_smem=64
// rl-static: kernel=gemm_wgmma_128x256 arch=90a sass=HGMMA.64x256x16.F32,UTMALDG
// rl-static: kernel=gemm_wgmma_128x256 arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=gemm_wgmma_128x256 arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_128x256(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
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

  if (warpgroup == 0) {  // the producer: every warp gives registers back, thread 0 loads
    rl::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) wgmma::produce_tiles<Ring>(&a_map, &b_map, full, empty, ring, tile);
    return;
  }

  // Consumer c = warpgroup - 1: rows 64c .. 64c + 63 of the block tile.
  rl::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  float d[Ring::kAccumulators];  // the 64 x 256 fp32 accumulator, 128 per thread
  for (float& v : d) v = 0.0f;
  wgmma::consume_tiles_waiting_each_stage<T, Ring>(d, full, empty, ring, tile.k_tiles, consumer);
  wgmma::store_accumulators<Ring>(d, C, M, N, ldc, tile, consumer, static_cast<int>(threadIdx.x));
}

namespace {

template <typename T>
void launch_gemm_wgmma_128x256(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_wgmma_gemm<Ring>(gemm_wgmma_128x256<T>, kThreads, a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_128x256<__nv_bfloat16>, &launch_gemm_wgmma_128x256<__half>);

}  // namespace

#if !defined(__CUDA_ARCH__)
namespace {

template <typename T>
KernelRecord wgmma_128x256_record(std::string name, std::string baseline,
                                  roofline::Precision precision, roofline::ComputeUnit unit) {
  return wgmma::sm90a_record<Ring, T>(
      std::move(name), "wgmma_128x256", std::move(baseline), precision, unit,
      launch_gemm_wgmma_128x256<T>,
      "128 x 256 block tile of m64n256k16 wgmmas, registers moved from the producer to "
      "the consumers with setmaxnreg");
}

}  // namespace

RL_REGISTER_KERNEL(wgmma_128x256_record<__nv_bfloat16>("gemm_wgmma_128x256_bf16",
                                                       "gemm_wgmma_tma_bf16",
                                                       roofline::Precision::bf16,
                                                       roofline::ComputeUnit::tc_bf16));
RL_REGISTER_KERNEL(wgmma_128x256_record<__half>("gemm_wgmma_128x256_fp16", "gemm_wgmma_tma_fp16",
                                                roofline::Precision::fp16,
                                                roofline::ComputeUnit::tc_fp16));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
