// GEMM rung: datacenter Blackwell tcgen05.mma fed by TMA through an mbarrier
// ring, the accumulator in tensor memory (sm_100a / sm_103a only; bf16, fp16
// and fp8 e4m3 inputs, one template, fp32 C).
//
// Run: RL_EMU_CC=100 bench_roofline_emu --family gemm --size small
// (the emulator as a B200), or bench_roofline on a 10.0 / 10.3 GPU.
// NOT YET RUN ON A GPU: compiled for sm_100a and sm_103a with its SASS
// checked statically (below); it computes the exact C under the emulator's
// tcgen05 / TMA / mbarrier model (tests/emu_blackwell/sm100_gemm_tcgen05_test.cpp).
// Whether the hardware agrees is for the first B200 run.
//
// The idea, and what changes from the Hopper wgmma rungs (the nearest rung on
// a Blackwell is gemm_mma_sync_multistage: the wgmma rungs are sm_90a only).
// There two consumer warpgroups (256 threads) issue wgmma, each holding its
// 64 x N slice of the accumulator in registers (128 a thread at N = 256, the
// reason for setmaxnreg).  Here
//   - ONE thread issues the MMAs: tcgen05.mma.cta_group::1.kind::f16, a
//     128 x 256 x 16 product per instruction, both operands read from shared
//     memory through descriptors;
//   - the accumulator lives in tensor memory (256 of its 512 columns of
//     128 lanes, fp32), not in registers, so no thread holds it during the
//     main loop;
//   - the MMAs are asynchronous to the issuing thread too: after a stage's
//     four MMAs, tcgen05.commit to the stage's "empty" mbarrier frees the
//     stage when they have completed (no thread waits for them), and after
//     the last k-tile a commit to a "done" mbarrier tells the epilogue that
//     the accumulator is complete.
// The TMA ring is the wgmma rungs' (gemm_wgmma_parts.hpp: one producer
// thread, 128B-swizzled tiles, "full" / "empty" mbarriers per stage).
// Tensor memory is allocated, its permit relinquished and freed by warp 0.
//
// Threads: 128, four warps.  Warp 0's lane 0 produces, warp 1's lane 0 issues
// the MMAs; then all four warps are the epilogue: warp w may read only lanes
// 32w .. 32w + 31 of tensor memory (rows of D), which four warps cover.
//
// Tiles: BlockM x BlockN x BlockK = 128 x 256 x 64 (e4m3: x 128), 4 stages (48 KiB each:
// 16 KiB of A, 32 KiB of B) + 1 KiB to align the ring to the swizzle's
// 1024-byte repeat = 193 KiB of dynamic shared memory (of 227 KiB).
//
// e4m3 (gemm_tcgen05_fp8) is the same kernel with kind::f8f6f4 MMAs of K = 32
// on BlockK = 128 (one 128-byte swizzle row, so A's tile is byte for byte
// the 16-bit one) and B stored N x K (Operands below says why), its tile laid
// out and described as A's: 256 rows of 128 bytes.
//
// Layouts of the 16-bit records (rl/ptx_sm100_mma.hpp has the descriptor
// fields; they mean what they mean for wgmma, gemm_wgmma_tma_sm90a.cu's
// header):
//   A tile, row-major 128 x 64: K-major, rows of 128 bytes, 128B swizzle.
//     SBO = 1024 (8 rows), LBO unused; each k16 step moves the start 32 bytes.
//   B tile, row-major 64 x 256 as four 64 x 64 TMA boxes side by side:
//     MN-major (the instruction descriptor's transpose-B bit), 128B swizzle,
//     LBO = 8192 (from one 64-column box to the next), SBO = 1024 (8 K-rows);
//     each k16 step moves the start 16 rows = 2048 bytes.
//   D in tensor memory: row m of the tile in lane m, column n in column n.
//
// Tails: TMA writes zeros outside the matrix (tails in M, N and K need no
// code); the epilogue stores only inside C.  TMA needs 16-byte row pitches:
// the record pads A's and B's rows to 8 elements, 16 for e4m3
// (RecordSpec::ld_multiple), so every shape of the ladder runs, none is
// refused.
//
// Cost model (gemm_cost.hpp): the reuse tile is the block tile, 128 x 256.
// Why N = 256 (the largest N of a cta_group::1 MMA) and not 128: each k16
// MMA reads its operands from shared memory, 128 x 16 of A and N x 16 of B
// (2 bytes each), for 2 x 128 x N x 16 FLOPs: 64 FLOPs a byte at N = 128,
// 85 at N = 256.  A B200 SM's tensor core does 8192 dense BF16 FLOPs a
// clock (the SKU table's 2.25 PFLOP/s over 148 SMs at the 1.86 GHz that
// figure implies), and shared memory delivers 128 bytes a clock: N = 128 would need all of it (8k /
// 64), N = 256 three quarters (8k / 85 = 96 bytes).  It also halves the MMAs issued and the reads
// of A from L2 (A is read once per 256 columns of C).  Its price: 256 accumulator columns (half of
// tensor memory, so one CTA per SM holds its accumulator alone) and fewer tiles, i.e. more idle SMs
// on small shapes.
//
// What it leaves out (the rungs to come): the epilogue's stores are plain
// (each thread one row, 32 columns a tcgen05.ld), so the tensor cores idle
// while a tile's C is written; no persistent CTAs (the next tile's loads do
// not overlap this one's epilogue); no CTA pair (cta_group::2, M = 256, with
// TMA multicast of B); block-scaled MXFP8 is gemm_tcgen05_block_scaled_sm100a.cu.
//
// Performance goal (a goal, not a measurement): above the mma.sync rung on a
// B200 by several times, toward the tcgen05_loop_bf16 roof (fp8: twice the
// bf16 rate, toward tcgen05_loop_fp8_e4m3); the ladder's targets are 90% of
// gemm_cublaslt_<precision> at 8192^3, which needs the rungs above.
#include "gemm/gemm_tcgen05_fault.hpp"
#include "gemm/gemm_tcgen05_parts.hpp"
#include "gemm/gemm_wgmma_parts.hpp"
#include "rl/cuda.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#include "rl/ptx_sm100_mma.hpp"
#include "rl/ptx_sm100_tmem.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace rl::gemm {
namespace {

using tcgen05::kBlockM;
using tcgen05::kBlockN;
using tcgen05::kThreads;
constexpr std::uint32_t kColumns = tcgen05::kAccumulatorColumns;

// Per input type: the ring, the MMA's kind and its instruction descriptor
// (fp32 D, M = 128, N = 256, A K-major).  16-bit: BlockK = 64, kind::f16 with
// K = 16, B stored K x N and read MN-major (the transpose-B bit).  e4m3:
// BlockK = 128 (one 128-byte swizzle row, as 64 16-bit elements), kind::f8f6f4
// with K = 32, B stored N x K and read K-major, laid out as A.  tcgen05 could
// read an 8-bit B MN-major too, but the ring is the wgmma rungs', which store
// 8-bit B N x K (fp8 wgmma has no transpose); the workload transposes B
// outside the timed launch, as for gemm_wgmma_inflight_fp8 and cuBLASLt's fp8.
// Either way an MMA reads 32 bytes of K a row: Ring::kWgmmaK is its K.
template <typename T>
struct Operands {
  static constexpr bool kFp8 = std::is_same_v<T, __nv_fp8_e4m3>;
  using Ring = wgmma::Ring<kBlockM, kBlockN, /*BlockK=*/kFp8 ? 128 : 64, /*Stages=*/4,
                           /*ElementBytes=*/sizeof(T), /*BKMajor=*/kFp8>;
  static constexpr rl::ptx::Tcgen05Kind kKind =
      kFp8 ? rl::ptx::Tcgen05Kind::f8f6f4 : rl::ptx::Tcgen05Kind::f16;
  static constexpr std::uint32_t kIdesc =
      kFp8 ? rl::ptx::tcgen05_idesc_f8f6f4(rl::ptx::Tcgen05F8F6F4Type::e4m3,
                                           rl::ptx::Tcgen05F8F6F4Type::e4m3, kBlockM, kBlockN)
           : rl::ptx::tcgen05_idesc_f16(std::is_same_v<T, __half> ? rl::ptx::Tcgen05F16Type::f16
                                                                  : rl::ptx::Tcgen05F16Type::bf16,
                                        kBlockM, kBlockN, /*a_mn_major=*/false,
                                        /*b_mn_major=*/true);
};

// The MMA thread: for each k-tile, wait until its stage has landed, issue the
// stage's four MMAs (k16, or k32 for e4m3) into D (the first overwrites D), then commit them to
// the stage's "empty" barrier, which frees the stage once they have read it;
// after the last k-tile one more commit, to "done".  F: a deliberately wrong
// build for the validation tests, emulator only (gemm_pipeline_fault.hpp).
template <typename T, PipelineFault F, typename Ring = typename Operands<T>::Ring>
__device__ __forceinline__ void issue_mmas(std::uint32_t d, std::uint64_t* full,
                                           std::uint64_t* empty, std::uint64_t* done,
                                           unsigned char* ring, int k_tiles) {
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kt % Ring::kStages, use = kt / Ring::kStages;
    rl::ptx::mbarrier_wait_parity(&full[stage], use & 1);
    rl::ptx::tcgen05_fence_after_thread_sync();
    if (multiplies<F>(kt, k_tiles)) {
      const int read = stage_read<F>(kt, k_tiles, Ring::kStages);
      const std::uint32_t a = rl::ptx::shared_address(wgmma::a_tile<Ring>(ring, read));
      const std::uint32_t b = rl::ptx::shared_address(wgmma::b_tile<Ring>(ring, read));
      RL_UNROLL
      for (int step = 0; step < Ring::kBlockK / Ring::kWgmmaK; ++step) {
        const tcgen05::OperandDescriptors desc = tcgen05::operand_descriptors<Ring>(a, b, step);
        rl::ptx::tcgen05_mma<Operands<T>::kKind>(d, desc.a, desc.b, Operands<T>::kIdesc,
                                                 kt > 0 || step > 0);
      }
    }
    rl::ptx::tmem_commit(&empty[stage]);  // the stage is free once these MMAs completed
  }
  rl::ptx::tmem_commit(done);  // D is complete once every MMA above completed
}

}  // namespace

// Budgets: on every architecture registers and static shared memory (80
// bytes: the 9 mbarriers and the tensor-memory address; the 193 KiB ring is
// dynamic, which the ptxas report does not see).  nvcc 13.0 gives 42
// registers on sm_100a and sm_103a, no spills; elsewhere every tcgen05
// wrapper traps (5 registers; the records refuse those devices by min_cc).
// On sm_100a and sm_103a the instructions the design rests on, as the SASS
// spells them: UTCHMMA (tcgen05.mma kind::f16; UTCQMMA for kind::f8f6f4;
// four a k-tile, each behind an ELECT of one lane), UTCBAR (tcgen05.commit),
// UTMALDG.2D (TMA loads), LDTM.x32 (tcgen05.ld 32x32b.x32),
// UTCATOMSWS.FIND_AND_SET / .AND (tcgen05.alloc / dealloc), SYNCS.PHASECHK
// (mbarrier waits).  The MMA
// thread's loop is 96 instructions a k-tile for its 4 MMAs (the full-barrier
// wait, four descriptor pairs, each MMA in its ELECT retry, the commit):
// loop_share bounds it at 25 instructions an MMA, which one thread issues
// while the tensor core spends about 128 clocks on a 128 x 256 x 16 MMA.
// rl-static: kernel=gemm_tcgen05 max_regs=48 max_smem=80
// rl-static: kernel=gemm_tcgen05 arch=100a,103a sass=UTCBAR,UTMALDG.2D,LDTM.x32
// rl-static: kernel=*gemm_tcgen05<__nv_bfloat16,* arch=100a,103a sass=UTCHMMA loop_share=UTCHMMA:4
// rl-static: kernel=*gemm_tcgen05<__half,* arch=100a,103a sass=UTCHMMA loop_share=UTCHMMA:4
// rl-static: kernel=*gemm_tcgen05<__nv_fp8_e4m3,* arch=100a,103a sass=UTCQMMA loop_share=UTCQMMA:4
// rl-static: kernel=gemm_tcgen05 arch=100a,103a sass=UTCATOMSWS.FIND_AND_SET,UTCATOMSWS.AND
// rl-static: kernel=gemm_tcgen05 arch=100a,103a sass=SYNCS.PHASECHK
template <typename T, PipelineFault F = PipelineFault::none>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_tcgen05(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                 const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map, float* __restrict__ C, int M,
                 int N, int K, int ldc) {
  using Ring = typename Operands<T>::Ring;
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ std::uint64_t full[Ring::kStages];   // stage s holds the next tile
  __shared__ std::uint64_t empty[Ring::kStages];  // stage s may be overwritten
  __shared__ std::uint64_t done;                  // D holds the whole product
  __shared__ std::uint32_t tmem_base;             // where tcgen05.alloc put D
  unsigned char* ring = wgmma::ring_start(dynamic_shared);
  const int thread = static_cast<int>(threadIdx.x);
  const std::uint32_t d = tcgen05::start<Ring>(&tmem_base, kColumns, full, empty, &done, thread);
  const wgmma::BlockTile tile = {(K + Ring::kBlockK - 1) / Ring::kBlockK,
                                 static_cast<int>(blockIdx.y) * Ring::kBlockM,
                                 static_cast<int>(blockIdx.x) * Ring::kBlockN};

  if (thread == 0) wgmma::produce_tiles<Ring>(&a_map, &b_map, full, empty, ring, tile);
  if (thread == 32) issue_mmas<T, F>(d, full, empty, &done, ring, tile.k_tiles);
  tcgen05::finish(d, kColumns, &done, thread, C, M, N, ldc, tile);
}

namespace {

template <typename T, PipelineFault F = PipelineFault::none>
void launch_gemm_tcgen05(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_wgmma_gemm<typename Operands<T>::Ring>(gemm_tcgen05<T, F>, kThreads, a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_tcgen05<__nv_bfloat16>, &launch_gemm_tcgen05<__half>,
                    &launch_gemm_tcgen05<__nv_fp8_e4m3>);

}  // namespace

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::tcgen05_bf16(PipelineFault fault) {
  switch (fault) {
    case PipelineFault::none:
      return &launch_gemm_tcgen05<__nv_bfloat16>;
    case PipelineFault::skip_one_k_tile:
      return &launch_gemm_tcgen05<__nv_bfloat16, PipelineFault::skip_one_k_tile>;
    case PipelineFault::read_stage_early:
      return &launch_gemm_tcgen05<__nv_bfloat16, PipelineFault::read_stage_early>;
  }
  return nullptr;
}
#endif

#if !defined(__CUDA_ARCH__)
namespace {

// sm_100a code runs on compute capability 10.0 and 10.3 (the build compiles
// 103a for the latter), under the emulator only as a datacenter Blackwell
// (RL_EMU_CC=100 or 103); rows padded to TMA's 16-byte pitch; T's error model
// (e4m3: kHopperFp8Error, since how wide the fp8 pipe accumulates is not
// documented for Blackwell either).  The baseline is the rung below that runs
// on a Blackwell (the wgmma rungs are 9.0 only; fp8 mma.sync is refused
// there, so e4m3's is this rung in bf16); the ladder table puts every rung
// beside gemm_cublaslt_<precision> itself.
constexpr const char* kIdea =
    "tcgen05.mma issued by one thread from a TMA-fed 128B-swizzled ring, the 128 x 256 fp32 "
    "accumulator in tensor memory, stages freed by tcgen05.commit (sm_100a)";
template <typename T>
KernelRecord tcgen05_record(std::string name, std::string baseline, roofline::Precision precision,
                            roofline::ComputeUnit unit, std::string idea) {
  KernelRecord record =
      make_record<T>({.name = std::move(name),
                      .variant = "tcgen05",
                      .baseline = std::move(baseline),
                      .precision = precision,
                      .unit = unit,
                      .tile = {kBlockM, kBlockN},
                      .launcher = launch_gemm_tcgen05<T>,
                      .error = wgmma::kWgmmaError<T>,
                      .min_cc = 100,
                      .gpu_only = !rl::ptx::emulator_runs_tcgen05(),
                      .idea = std::move(idea),
                      .refuse = nullptr,
                      .refuse_on = nullptr,
                      .ld_multiple = 16 / static_cast<int>(sizeof(T)),
                      .b_storage = Operands<T>::kFp8 ? BStorage::n_by_k : BStorage::k_by_n,
                      // Every k-tile's MMAs over the whole 128 x 256 tile; A and B
                      // through TMA; C through plain stores (not declared).
                      .counted_tile = CountedTile{kBlockM, kBlockN, Operands<T>::Ring::kBlockK},
                      .loads_counted = &tma_loads_counted});
  record.max_cc = 103;
  return record;
}

}  // namespace

RL_REGISTER_KERNEL(tcgen05_record<__nv_bfloat16>("gemm_tcgen05_bf16",
                                                 "gemm_mma_sync_multistage_bf16",
                                                 roofline::Precision::bf16,
                                                 roofline::ComputeUnit::tc_bf16, kIdea));
RL_REGISTER_KERNEL(tcgen05_record<__half>("gemm_tcgen05_fp16", "gemm_mma_sync_multistage_fp16",
                                          roofline::Precision::fp16, roofline::ComputeUnit::tc_fp16,
                                          kIdea));
RL_REGISTER_KERNEL(tcgen05_record<__nv_fp8_e4m3>(
    "gemm_tcgen05_fp8", "gemm_tcgen05_bf16", roofline::Precision::fp8,
    roofline::ComputeUnit::tc_fp8,
    "the tcgen05 rung on e4m3 inputs: kind::f8f6f4 MMAs (K = 32), B stored N x K (sm_100a)"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
