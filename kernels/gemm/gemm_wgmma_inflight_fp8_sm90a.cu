// GEMM rung: the in-flight wgmma rung with e4m3 inputs (sm_90a only; fp8
// e4m3 A and B, fp32 accumulate, fp32 C), beside cuBLASLt's fp8.
//
// Run on an H100 (SXM, 2026-11-26, docs/gpu-runs/2026-11-26-h100.md):
// validated there (exact on integers, then within kHopperFp8Error) at 8192³
// and 1000³ and at the 8 shapes of tests/hopper (label gpu).  Compiled for
// sm_90a with its SASS checked statically (below),
// and it computes the right C under the emulator's wgmma / TMA / mbarrier
// model with RL_EMU_CC=90 (tests/emu_hopper).
//
// What changes from gemm_wgmma_inflight_bf16 (the rung below), one idea: the
// same kernel on 1-byte inputs, wgmma.m64n256k32.f32.e4m3.e4m3, twice the
// tensor-core rate of bf16 on Hopper for half the bytes per element.
//   - BlockK = 128 elements: one 128-byte swizzle row of fp8, as 64 bf16
//     were, so A's tile and its descriptors are byte for byte the rung
//     below's; a stage holds 4 k32 steps (32 bytes of K each, as a k16 step
//     of bf16).
//   - B K-major.  fp8 wgmma reads both operands K-major only (no transpose
//     bit for 8-bit types), so B must reach shared memory as rows of K.  The
//     workload stores B transposed (RecordSpec::b_storage = n_by_k: N x K,
//     rows of K padded; outside the timed launch, as gemm_cublaslt_fp8's
//     "TN"), and the producer loads one box of 256 rows (N) x 128 bytes (K)
//     per stage, laid out and described exactly as A's tile (SBO 1024 bytes,
//     +32 bytes per k32 step).  Validation still reads the logical K x N B.
//   - Everything else is the rung below's, through gemm_wgmma_parts.hpp: 128 x
//     256 block tile, one producer warpgroup (setmaxnreg 40) and two
//     consumers (232; the register arithmetic is in gemm_wgmma_128x256's
//     header), one wgmma group kept in flight across stages, the epilogue
//     (the accumulator fragment of an f32 wgmma is the same for every input
//     type).
// Of the steps in DeepSeek's DeepGEMM this leaves out the fp32 promotion of
// partial sums on the CUDA cores every few wgmmas (see the error model
// below), block scaling, persistent tiles and TMA multicast.
//
// Shared memory: a stage is 16 KiB of A (128 x 128 B) + 32 KiB of B (256 x
// 128 B) = 48 KiB, as below: 4 stages = 192 KiB + 1 KiB of alignment fits
// H100's 227 KiB, 5 (241 KiB) do not.
//
// Shapes: every shape, on rows padded to 16 elements (TMA's 16-byte pitch of
// 1-byte rows, RecordSpec::ld_multiple = 16); the tensor maps end at K and N,
// so TMA fills the tails with zeros.
//
// Errors.  Timed inputs: Hopper's fp8 tensor cores keep about 14 bits of a
// sum (gemm_reference.hpp, kHopperFp8Error, the model of cuBLASLt's fp8 as
// well); this rung keeps all of K in the wgmma accumulator, where that model
// is an expectation rather than a worst case (gemm_reference.hpp says why).
// Exact check: integers in -2..2 are exact in e4m3 and each k32 step adds at
// most 4 x 32 = 128 in magnitude; the running sums stay near 2.5 sqrt(K), far
// below 2^14, so it is exact with overwhelming probability, not by
// construction (gemm_exact_check.hpp).  The emulator sums each wgmma in
// double and rounds once, so it cannot show the narrow accumulation.

// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 256,
// at 1 byte per input: per k-tile the block loads (128 + 256) x 128 bytes for
// 2 x 128 x 256 x 128 FLOPs, 171 FLOP per byte of L2 traffic (bf16's 85).
//
// SASS (sm_90a, nvcc 13.0): 4 QGMMA.64x256x32.F32.E4M3.E4M3 per stage (no
// .tnspB: both operands K-major), WARPGROUP.DEPBAR.LE gsb0, 0x1 (the
// in-flight wait) and 0x0 (the drain), USETMAXREG.DEALLOC / TRY_ALLOC,
// UTMALDG.2D (one A and one B copy per stage: the 16-bit rungs' B needs four),
// SYNCS.ARRIVE / SYNCS.PHASECHK; 168 registers, the highest named R151 (as
// the bf16 rung), no spills, no local memory.

// Performance goal: at least 90% of gemm_cublaslt_fp8 at 8192³ on H100
// (docs/performance-goals.md).  Not met in two H100 runs (cold L2, median
// of 5, each beside cuBLASLt fp8 in the same run): 1.08 and 1.07 PFLOP/s
// against 1.34 and 1.41, 80.6% and 76.3%.  Its largest error, 1.3% of
// max(|ref|, bound), is 27 times cuBLASLt fp8's (0.05%), as expected of the
// narrow accumulation over all of K (gemm_reference.hpp); promoting partial
// sums to fp32 every few wgmmas, as DeepGEMM does, is the known remedy.
#include "gemm/gemm_wgmma_parts.hpp"
#include "rl/cuda.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

#include <cstdint>

namespace rl::gemm {
namespace {

using Fp8 = __nv_fp8_e4m3;
using Ring = wgmma::Ring</*BlockM=*/128, /*BlockN=*/256, /*BlockK=*/128, /*Stages=*/4,
                         /*ElementBytes=*/1, /*BKMajor=*/true>;
constexpr int kConsumers = 2;  // warpgroups, one per 64 rows of the block tile
constexpr int kConsumerThreads = kConsumers * wgmma::kWarpgroupThreads;
constexpr int kThreads = wgmma::kWarpgroupThreads + kConsumerThreads;  // + the producer
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;       // see gemm_wgmma_128x256
static_assert(kConsumers * wgmma::kWgmmaM == Ring::kBlockM, "each consumer owns 64 rows");
static_assert(Ring::kStageBytes == 48 * 1024, "16 KiB of A + 32 KiB of B");

}  // namespace

// Budgets: as gemm_wgmma_inflight's (168 registers at sm_90a, the launch
// allotment; the stubs built for the other architectures use 4).  fp8 wgmma
// shows as QGMMA (HGMMA is the 16-bit spelling), with no .tnspB: B is K-major.
// rl-static: kernel=gemm_wgmma_inflight_fp8 max_regs=168 max_smem=64
// rl-static: kernel=gemm_wgmma_inflight_fp8 arch=90a sass=QGMMA.64x256x32.F32.E4M3.E4M3,UTMALDG
// rl-static: kernel=gemm_wgmma_inflight_fp8 arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=gemm_wgmma_inflight_fp8 arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
// rl-static: kernel=gemm_wgmma_inflight_fp8 arch=90a sass=WARPGROUP.DEPBAR.LE
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_inflight_fp8(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                            const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map,
                            float* __restrict__ C, int M, int N, int K, int ldc) {
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
  wgmma::consume_tiles_keeping_one_group_in_flight<Fp8, Ring>(d, full, empty, ring, tile.k_tiles,
                                                              consumer);
  wgmma::store_accumulators<Ring>(d, C, M, N, ldc, tile, consumer, static_cast<int>(threadIdx.x));
}

namespace {

void launch_gemm_wgmma_inflight_fp8(const Args<Fp8>& a, cudaStream_t stream) {
  wgmma::launch_wgmma_gemm<Ring>(gemm_wgmma_inflight_fp8, kThreads, a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_inflight_fp8);

}  // namespace

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(wgmma::sm90a_record<Ring, Fp8>(
    "gemm_wgmma_inflight_fp8", "wgmma_inflight_fp8", "gemm_wgmma_inflight_bf16",
    roofline::Precision::fp8, roofline::ComputeUnit::tc_fp8, launch_gemm_wgmma_inflight_fp8,
    "the in-flight rung on e4m3 inputs: m64n256k32 wgmmas, B stored N x K (fp8 wgmma reads B "
    "K-major only)"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
