// GEMM rung: the 128 x 256 wgmma + TMA rung with one wgmma group kept in
// flight across stages (sm_90a only; bf16 and fp16 inputs, fp32 C).
//
// Run on an H100 (docs/gpu-runs/2026-11-26-h100.md): it validates at the odd
// shapes of tests/hopper (label gpu), where a stage released before its
// wgmmas have read it would show, and at 8192³ (593-597 TFLOP/s bf16 in two
// runs).  Compiled for sm_90a with its SASS checked statically (below), and
// it computes the right C under the emulator's exact wgmma / TMA / mbarrier
// model with RL_EMU_CC=90 (tests/emu_hopper).
//
// What changes from gemm_wgmma_128x256 (the rung below), one idea: a consumer
// no longer waits for a stage's wgmmas before starting the next stage's.
// There, each stage ends with wgmma.wait_group 0, so the tensor cores drain
// and sit idle while the warpgroup releases the stage, waits on the next
// "full" barrier and issues again.  Here, at stage kt the consumer
//   1. waits until stage kt's tiles have landed and issues its four wgmmas,
//   2. commits them as one group and waits with wgmma.wait_group 1: at most
//      one group, stage kt's, is still pending, so stage kt - 1's has
//      completed and its shared-memory operands have been read,
//   3. only then releases stage kt - 1 to the producer (arrives on its
//      "empty" barrier),
// and after the last stage drains with wait_group 0 before the epilogue
// reads the accumulators.  The wgmmas of consecutive stages chain on the
// same accumulators, which needs no wait in between (PTX: accumulator
// accesses across wgmma.mma_async of the same shape are ordered).  The cost:
// a stage is held one stage longer, so the producer runs at most kStages - 1
// tiles ahead instead of kStages.
//
// What the emulator can and cannot check here.  It hands a wgmma's
// accumulators over only at the wait_group that covers it (NaN until then),
// so a missing drain, or an epilogue that reads d early, fails validation.
// But it reads a wgmma's shared-memory operands at issue, so releasing a
// stage BEFORE its group completes (arriving on "empty" ahead of the
// wait_group) computes the same, correct C under the emulator: that ordering
// bug can only show on a GPU.  The order above is checked by reading, not by
// a test.
//
// Everything else (tile, setmaxnreg, ring, producer, epilogue) is the rung
// below's, through gemm_wgmma_parts.hpp; the register arithmetic and the
// shared-memory budget (4 stages of 48 KiB + 1 KiB in 227 KiB) are in
// gemm_wgmma_128x256_sm90a.cu's header.  Of the steps in pranjalssh/fast.cu's
// Hopper write-up this still leaves out persistent tiles, clusters with TMA
// multicast and a TMA store epilogue.
//
// Shapes: every shape, on rows padded to a multiple of 8 elements, as the
// rung below (RecordSpec::ld_multiple).

// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 256
// (the same traffic as the rung below; this rung changes only when the
// tensor cores are busy).
//
// SASS (sm_90a, nvcc 13.0): HGMMA.64x256x16.F32(.BF16), WARPGROUP.DEPBAR.LE
// gsb0, 0x1 (the wait_group 1) as well as 0x0 (the drain), USETMAXREG,
// UTMALDG.2D, SYNCS.ARRIVE / SYNCS.PHASECHK; no spills.
//
// Performance goal (a goal, not a measurement): above gemm_wgmma_128x256 on
// H100 at large square shapes, where the tensor cores no longer drain at
// every stage.
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

// Budgets: as gemm_wgmma_128x256's.  The wait that keeps one group in flight
// is WARPGROUP.DEPBAR.LE gsb0, 0x1; sass= matches opcodes, not operands, so
// the declaration asks only for the opcode (the header says what SASS shows).
// rl-static: kernel=gemm_wgmma_inflight max_regs=168 max_smem=64
// rl-static: kernel=gemm_wgmma_inflight arch=90a sass=HGMMA.64x256x16.F32,UTMALDG
// rl-static: kernel=gemm_wgmma_inflight arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=gemm_wgmma_inflight arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
// rl-static: kernel=gemm_wgmma_inflight arch=90a sass=WARPGROUP.DEPBAR.LE
template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_inflight(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
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
  wgmma::consume_tiles_keeping_one_group_in_flight<T, Ring>(d, full, empty, ring, tile.k_tiles,
                                                            consumer);
  wgmma::store_accumulators<Ring>(d, C, M, N, ldc, tile, consumer, static_cast<int>(threadIdx.x));
}

namespace {

template <typename T>
void launch_gemm_wgmma_inflight(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_wgmma_gemm<Ring>(gemm_wgmma_inflight<T>, kThreads, a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_inflight<__nv_bfloat16>,
                    &launch_gemm_wgmma_inflight<__half>);

}  // namespace

#if !defined(__CUDA_ARCH__)
namespace {

template <typename T>
KernelRecord wgmma_inflight_record(std::string name, std::string baseline,
                                   roofline::Precision precision, roofline::ComputeUnit unit) {
  return wgmma::sm90a_record<Ring, T>(
      std::move(name), "wgmma_inflight", std::move(baseline), precision, unit,
      launch_gemm_wgmma_inflight<T>,
      "one wgmma group kept in flight across stages: a stage is released after the next "
      "stage's wgmmas are issued");
}

}  // namespace

RL_REGISTER_KERNEL(wgmma_inflight_record<__nv_bfloat16>("gemm_wgmma_inflight_bf16",
                                                        "gemm_wgmma_128x256_bf16",
                                                        roofline::Precision::bf16,
                                                        roofline::ComputeUnit::tc_bf16));
RL_REGISTER_KERNEL(wgmma_inflight_record<__half>("gemm_wgmma_inflight_fp16",
                                                 "gemm_wgmma_128x256_fp16",
                                                 roofline::Precision::fp16,
                                                 roofline::ComputeUnit::tc_fp16));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
