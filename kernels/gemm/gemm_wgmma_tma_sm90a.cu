// GEMM rung: Hopper wgmma fed by TMA through an mbarrier ring, warp-specialised
// producer and consumers (sm_90a only; bf16 and fp16 inputs, fp32 C).
//
// NOT YET RUN ON A GPU.  This kernel has been compiled for sm_90a and its SASS
// checked statically (HGMMA, UTMALDG, mbarrier SYNCS instructions, no spills);
// the host-side arithmetic (descriptors, tensor-map parameters) is unit-tested
// (tests/hopper), and it computes the right C under the emulator's exact
// wgmma / TMA / mbarrier model with RL_EMU_CC=90 (tests/emu_hopper).  Whether
// the hardware agrees with that model is for the gpu-labelled tests in
// tests/hopper to show on the first H100 run.
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
// pitch to be a multiple of 16 bytes, i.e. K (A's row length) and N (B's) a
// multiple of 8 for 16-bit types.  This rung REFUSES other shapes (its
// make_workload throws std::invalid_argument saying why, and its shape lists
// keep only the shapes it accepts); it does not repack.  M is free.
//
// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 128.
//
// Performance goal (a goal, not a measurement): well above the mma.sync rung
// on H100, toward the wgmma_loop_bf16_m64n256k16 ceiling.
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_tiles.hpp"
#include "rl/cuda.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace rl::gemm {
namespace {

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 64;
constexpr int kStages = 4;
constexpr int kWarpgroupThreads = 128;
constexpr int kConsumers = 2;  // warpgroups, one per 64 rows of the block tile
constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;
constexpr int kWgmmaM = 64, kWgmmaK = 16;
static_assert(kConsumers * kWgmmaM == kBlockM, "each consumer owns 64 rows");

constexpr int kElementBytes = 2;                                // bf16 or fp16
constexpr int kSwizzleBytes = 128;                              // the 128B swizzle's row
constexpr int kBoxCols = kSwizzleBytes / kElementBytes;         // 64 elements per TMA box row
constexpr int kATileBytes = kBlockM * kBlockK * kElementBytes;  // 16 KiB
constexpr int kBBoxBytes = kBlockK * kBoxCols * kElementBytes;  // 8 KiB: 64 K-rows x 64 N
constexpr int kBBoxes = kBlockN / kBoxCols;                     // 2 per stage
constexpr int kStageBytes = kATileBytes + kBBoxes * kBBoxBytes;
constexpr int kSwizzleRepeat = 1024;  // 8 rows of 128 bytes: tiles start on this
constexpr int kDynamicSharedBytes = kStages * kStageBytes + kSwizzleRepeat;
static_assert(kBlockK * kElementBytes == kSwizzleBytes, "one A row = one swizzle row");
static_assert(kATileBytes % kSwizzleRepeat == 0 && kBBoxBytes % kSwizzleRepeat == 0,
              "every tile starts on the swizzle repeat");

// Descriptor strides (bytes), see the header.
constexpr std::uint32_t kRowGroupBytes = 8 * kSwizzleBytes;  // SBO of A and B: 8 rows
constexpr std::uint32_t kAUnusedLbo = 16;  // K-major swizzled: not used (encodes 1)
constexpr std::uint32_t kAStepBytes = kWgmmaK * kElementBytes;  // +32 per k16 step
constexpr std::uint32_t kBStepBytes = kWgmmaK * kSwizzleBytes;  // +2048 per k16 step

}  // namespace

// Budgets: on every architecture registers and static shared memory (other
// than on sm_90a the body traps at its first wgmma: the mbarrier and TMA
// instructions before it exist from sm_90 on); on sm_90a
// also the instructions the design rests on: HGMMA (wgmma), UTMALDG (TMA
// loads), SYNCS.ARRIVE / SYNCS.PHASECHK (mbarrier arrive and try_wait).
// max_smem is the 64 bytes of static mbarriers only: the 129 KiB ring is
// dynamic shared memory, a launch parameter the ptxas report does not see
// (tests/static/README.md); kDynamicSharedBytes is its size.
// rl-static: kernel=gemm_wgmma_tma max_regs=168 max_smem=64
// rl-static: kernel=gemm_wgmma_tma arch=90a max_regs=128 max_smem=64 sass=HGMMA,UTMALDG
// rl-static: kernel=gemm_wgmma_tma arch=90a sass=SYNCS.ARRIVE,SYNCS.PHASECHK
template <typename T>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_wgmma_tma(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                   const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map, float* __restrict__ C,
                   int M, int N, int K, int ldc) {
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ std::uint64_t full[kStages];   // stage s holds the next tile
  __shared__ std::uint64_t empty[kStages];  // stage s may be overwritten
  // The ring starts on the swizzle repeat, in the shared window's addresses
  // (what TMA and the descriptors see); the dynamic base is 16-byte aligned.
  const std::uint32_t misalignment = rl::ptx::shared_address(dynamic_shared) % kSwizzleRepeat;
  unsigned char* ring = dynamic_shared + (kSwizzleRepeat - misalignment) % kSwizzleRepeat;
  auto a_tile = [&](int stage) { return ring + stage * kStageBytes; };
  auto b_tile = [&](int stage) { return ring + stage * kStageBytes + kATileBytes; };

  const int warpgroup = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      rl::ptx::mbarrier_init(&full[s], 1);  // the producer's arrive_expect_tx (+ the bytes)
      rl::ptx::mbarrier_init(&empty[s], kConsumers * kWarpgroupThreads);  // every consumer thread
    }
    rl::ptx::fence_mbarrier_init();
  }
  __syncthreads();

  const int k_tiles = (K + kBlockK - 1) / kBlockK;
  const int block_row = static_cast<int>(blockIdx.y) * kBlockM;
  const int block_col = static_cast<int>(blockIdx.x) * kBlockN;

  if (warpgroup == 0) {
    // Producer: tile kt goes to stage kt % kStages, on that stage's use
    // number kt / kStages; from the second use on, it first waits until the
    // consumers have released the previous use (empty's phase use - 1).
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int stage = kt % kStages, use = kt / kStages;
        if (use > 0) rl::ptx::mbarrier_wait_parity(&empty[stage], (use - 1) & 1);
        rl::ptx::mbarrier_arrive_expect_tx(&full[stage], kStageBytes);
        rl::ptx::tma_load_2d(a_tile(stage), &a_map, kt * kBlockK, block_row, &full[stage]);
        for (int box = 0; box < kBBoxes; ++box)
          rl::ptx::tma_load_2d(b_tile(stage) + box * kBBoxBytes, &b_map, block_col + box * kBoxCols,
                               kt * kBlockK, &full[stage]);
      }
    }
    return;  // no block-wide barrier follows
  }

  // Consumer c = warpgroup - 1: rows 64c .. 64c + 63 of the block tile.
  const int consumer = warpgroup - 1;
  float d[kBlockN / 2];  // the 64 x 128 fp32 accumulator, 64 per thread
  for (float& v : d) v = 0.0f;
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % kStages, use = kt / kStages;
    rl::ptx::mbarrier_wait_parity(&full[stage], use & 1);
    const std::uint32_t a_base =
        rl::ptx::shared_address(a_tile(stage)) + consumer * kWgmmaM * kSwizzleBytes;
    const std::uint32_t b_base = rl::ptx::shared_address(b_tile(stage));
    rl::ptx::wgmma_fence_operand(d);
    rl::ptx::wgmma_fence();
    RL_GEMM_UNROLL
    for (int step = 0; step < kBlockK / kWgmmaK; ++step) {
      const std::uint64_t desc_a = rl::ptx::smem_descriptor(
          a_base + step * kAStepBytes, kAUnusedLbo, kRowGroupBytes, rl::ptx::SmemSwizzle::b128);
      const std::uint64_t desc_b = rl::ptx::smem_descriptor(
          b_base + step * kBStepBytes, kBBoxBytes, kRowGroupBytes, rl::ptx::SmemSwizzle::b128);
      rl::ptx::wgmma_m64n128k16_f32<T, /*TransposeB=*/true>(d, desc_a, desc_b, 1);
    }
    rl::ptx::wgmma_commit_group();
    rl::ptx::wgmma_wait_group<0>();
    rl::ptx::wgmma_fence_operand(d);
    rl::ptx::mbarrier_arrive(&empty[stage]);  // this thread's reads of the stage are done
  }

  // Epilogue: thread t holds, for each 8-column block j, C(r, 8j + c .. +1)
  // in d[4j], d[4j + 1] and C(r + 8, 8j + c .. +1) in d[4j + 2], d[4j + 3]
  // (r = 16 warp + lane / 4, c = 2 (lane % 4)).  N is a multiple of 8 and c
  // even, so both columns of a pair are inside C when the first is.
  const int t = static_cast<int>(threadIdx.x) % kWarpgroupThreads;
  const int row0 = block_row + consumer * kWgmmaM + 16 * (t / 32) + (t % 32) / 4;
  const int col0 = block_col + 2 * (t % 4);
  RL_GEMM_UNROLL
  for (int j = 0; j < kBlockN / 8; ++j) {
    const int col = col0 + 8 * j;
    if (col >= N) break;
    RL_GEMM_UNROLL
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + 8 * half;
      if (row < M) {
        C[row * ldc + col] = d[4 * j + 2 * half];
        C[row * ldc + col + 1] = d[4 * j + 2 * half + 1];
      }
    }
  }
}

namespace {

template <typename T>
constexpr rl::ptx::TensorMapElement kTmaElement =
    std::is_same_v<T, __half> ? rl::ptx::TensorMapElement::fp16 : rl::ptx::TensorMapElement::bf16;

// The tensor maps are encoded on the host at every launch (a few microseconds
// of host work, no device work), then passed by value as kernel parameters.
// A: M x K, a box of kBlockM rows x 64 columns; B: K x N, kBlockK rows x 64
// (the two B boxes of a stage are two copies).
template <typename T>
void launch_gemm_wgmma_tma(const Args<T>& a, cudaStream_t stream) {
  const rl::ptx::TensorMap a_map = rl::ptx::encode_tensor_map_2d(
      rl::ptx::tensor_map_2d(a.M, a.K, a.lda, kElementBytes, kBlockM, kBoxCols), kTmaElement<T>,
      a.A);
  const rl::ptx::TensorMap b_map = rl::ptx::encode_tensor_map_2d(
      rl::ptx::tensor_map_2d(a.K, a.N, a.ldb, kElementBytes, kBlockK, kBoxCols), kTmaElement<T>,
      a.B);
  RL_CUDA_CHECK(cudaFuncSetAttribute(gemm_wgmma_tma<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     kDynamicSharedBytes));
  rl::launch(gemm_wgmma_tma<T>, tile_grid(a.M, a.N, kBlockM, kBlockN), dim3(kThreads),
             kDynamicSharedBytes, stream, a_map, b_map, a.C, a.M, a.N, a.K, a.ldc);
}

RL_DEVICE_INSTANCES(&launch_gemm_wgmma_tma<__nv_bfloat16>, &launch_gemm_wgmma_tma<__half>);

}  // namespace

#if !defined(__CUDA_ARCH__)
namespace {

// The row pitch TMA needs (16 bytes) in elements of a 16-bit matrix.
constexpr std::int64_t kTmaPitchElements = 16 / kElementBytes;

// Shapes TMA can describe with the workload's leading dimensions (lda = K,
// ldb = N): the reason, or "" when accepted.
std::string tma_refusal(const Dims& d) {
  if (d.K % kTmaPitchElements == 0 && d.N % kTmaPitchElements == 0) return "";
  return "gemm_wgmma_tma: TMA needs 16-byte row pitches, so K and N must be multiples of " +
         std::to_string(kTmaPitchElements) + " for 16-bit inputs (got M=" + std::to_string(d.M) +
         " N=" + std::to_string(d.N) + " K=" + std::to_string(d.K) +
         "); this rung refuses such shapes rather than repacking A and B";
}

template <typename T>
KernelRecord wgmma_tma_record(std::string name, std::string baseline, roofline::Precision precision,
                              roofline::ComputeUnit unit) {
  KernelRecord record = make_record<T>({.name = std::move(name),
                                        .variant = "wgmma_tma",
                                        .baseline = std::move(baseline),
                                        .precision = precision,
                                        .unit = unit,
                                        .tile = {kBlockM, kBlockN},
                                        .launcher = launch_gemm_wgmma_tma<T>,
                                        .error = kTensorCoreError,
                                        .min_cc = 90,
                                        // runs under the emulator only as a Hopper (RL_EMU_CC=90)
                                        .gpu_only = !rl::ptx::emulator_runs_sm90a(),
                                        .idea = "wgmma from 128B-swizzled shared memory fed by "
                                                "TMA, 4-stage mbarrier ring, producer and "
                                                "consumer warpgroups"});
  record.max_cc = 90;  // sm_90a code: Hopper only, not 10.x or 12.x
  // device_bytes (A + B + C at storage size) comes from make_record.
  record.shapes = [all = record.shapes](SizePreset preset) {
    std::vector<Shape> accepted;
    for (const Shape& s : all(preset))
      if (tma_refusal(dims(s)).empty()) accepted.push_back(s);
    return accepted;
  };
  record.make_workload = [inner = record.make_workload](const Shape& shape, std::uint64_t seed) {
    if (const std::string why = tma_refusal(dims(shape)); !why.empty())
      throw std::invalid_argument(why);
    return inner(shape, seed);
  };
  return record;
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
