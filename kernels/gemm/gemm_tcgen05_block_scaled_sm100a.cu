// GEMM rung: block-scaled MXFP8 on datacenter Blackwell, the tcgen05 rung
// (gemm_tcgen05_sm100a.cu, its e4m3 form gemm_tcgen05_fp8 is the baseline)
// with one ue8m0 scale per 32 K-elements of each row of A and each column of
// B (gemm_block_scaled.hpp: the layout, as cuBLASLt's VEC32_UE8M0 takes it).
//
// Run: RL_EMU_CC=100 bench_roofline_emu --family gemm --size small
// (the emulator as a B200), or bench_roofline on a 10.0 / 10.3 GPU.
// NOT YET RUN ON A GPU: compiled for sm_100a and sm_103a with its SASS
// checked statically (below); it computes the exact C under the emulator's
// tcgen05 / TMA / mbarrier model (tests/emu_blackwell/
// sm100_gemm_tcgen05_mxfp8_test.cpp).  Whether the hardware agrees is for
// the first B200 run.
//
// The one idea over gemm_tcgen05_fp8: the scales travel with the tiles.  A
// 128-wide k-tile of a 128-row tile is exactly one 512-byte atom of the
// scale layout, so each stage of the TMA ring gets three more copies, plain
// bulk copies (cp.async.bulk) counted on the same "full" barrier: A's atom
// and the two atoms of B's 256 columns.  The MMA thread then moves them into
// tensor memory with tcgen05.cp .32x128b.warpx4 (row i of an atom lands in
// lanes i, 32 + i, 64 + i, 96 + i, its four 4-byte groups in four columns:
// row m's scales in lane m, column 256 + m / 32, the layout the MMA reads)
// and issues the k-tile's four MMAs as
// tcgen05.mma.kind::mxf8f6f4.block_scale.scale_vec::1X (K = 32: one k-block
// each), the instruction descriptor's scale-factor ids picking byte `step`
// of each 32-bit scale cell.  The copies are queued ahead of the MMAs by the
// same thread, and a thread's tcgen05.cp and tcgen05.mma run in the order it
// issues them, so the next k-tile's copies overwrite the scale columns only
// after this k-tile's MMAs have read them (CUTLASS's block-scaled mainloop
// relies on the same order); the stage's commit to "empty" covers the copies'
// shared-memory reads too.  Tensor memory: D's 256 columns, then A's 4 and
// B's 8 scale columns: 512 allocated (a power of two).
//
// What it should buy: the tc.mxfp8 rate, which on a B200 is the fp8 rate
// (the SKU table), so about gemm_tcgen05_fp8's time plus the scale traffic
// (1/32 of A's and B's bytes) and three tcgen05.cp a k-tile; over the fp8
// rung, per-block scaling for the accuracy of MX formats at no loss of rate.
//
// Tails: TMA zero-fills A and B outside the matrix (M, N and K); scale atoms
// exist for every row and k-block of the padded layout, except B's second
// atom past N, where the producer copies the first one again (any finite
// scale serves columns that are never stored).  K needs no multiple of 32:
// the last k-block's scale multiplies TMA's zeros (the workload pads rows to
// 32 elements with zeros, gemm_block_scaled_workload.hpp).
//
// Cost model: FLOPs 2 M N K; bytes_model the tcgen05 rung's (A once per 256
// columns of C, B once per 128 rows) plus the scale atoms read with them
// (scaled_cost).  Counted (declare_counted below): every k-tile's MMAs over
// the whole tile; A and B through TMA, the scales through bulk copies: three
// atoms a k-tile a CTA.
#include "gemm/gemm_block_scaled.hpp"
#include "gemm/gemm_pipeline_fault.hpp"
#include "gemm/gemm_tcgen05_parts.hpp"
#include "gemm/gemm_wgmma_parts.hpp"
#include "rl/cuda.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#include "rl/ptx_sm100_mma.hpp"
#include "rl/ptx_sm100_tmem.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_block_scaled_workload.hpp"
#endif

#include <cstdint>

namespace rl::gemm {
namespace {

using tcgen05::kBlockM;
using tcgen05::kBlockN;
using tcgen05::kThreads;
// gemm_tcgen05_fp8's ring: BlockK = 128 e4m3 (one 128-byte swizzle row), B
// stored N x K and laid out as A.
using Ring = wgmma::Ring<kBlockM, kBlockN, /*BlockK=*/128, /*Stages=*/4, /*ElementBytes=*/1,
                         /*BKMajor=*/true>;
static_assert(Ring::kBlockK == kScaleBlock * kScaleAtomBlocks, "one k-tile = one scale atom");
static_assert(kBlockM == kScaleAtomRows, "A's tile = one scale atom");
constexpr int kBAtoms = kBlockN / kScaleAtomRows;                  // 2
constexpr int kScaleStageBytes = (1 + kBAtoms) * kScaleAtomBytes;  // 1536 a stage
constexpr int kDynamicSharedBytes = Ring::kDynamicSharedBytes + Ring::kStages * kScaleStageBytes;
static_assert(kDynamicSharedBytes <= 227 * 1024, "B200: 227 KiB of dynamic shared memory");

constexpr std::uint32_t kColumns = 512;               // D, then the scales
constexpr std::uint32_t kSfaColumn = kBlockN;         // A's row m: column + m / 32
constexpr std::uint32_t kSfbColumn = kSfaColumn + 4;  // B's column n: column + n / 32
constexpr int kMmaK = 32;                             // kind::mxf8f6f4: one k-block an MMA

// Stage s's scale atoms (A's, then B's two), after the ring's tiles.
__device__ __forceinline__ unsigned char* scale_slot(unsigned char* ring, int stage) {
  return ring + Ring::kStages * Ring::kStageBytes + stage * kScaleStageBytes;
}

// The producer: the tcgen05 rung's loop (wgmma::produce_tiles) with the
// k-tile's three scale atoms on the same "full" barrier.  Atom kt of a row of
// atoms is k-tile kt's.
__device__ __forceinline__ void produce_tiles(const rl::ptx::TensorMap* a_map,
                                              const rl::ptx::TensorMap* b_map,
                                              const std::uint8_t* scale_a,
                                              const std::uint8_t* scale_b, std::uint64_t* full,
                                              std::uint64_t* empty, unsigned char* ring,
                                              wgmma::BlockTile tile, int N, int K) {
  const int atom_row_bytes = static_cast<int>(scale_atoms_k(K)) * kScaleAtomBytes;
  const int last_b_atom = (N - 1) / kScaleAtomRows;
  const std::uint8_t* sa = scale_a + tile.row / kScaleAtomRows * atom_row_bytes;
  const std::uint8_t* sb[kBAtoms];
  for (int h = 0; h < kBAtoms; ++h) {
    const int atom = tile.col / kScaleAtomRows + h;
    sb[h] = scale_b + (atom <= last_b_atom ? atom : last_b_atom) * atom_row_bytes;
  }
  for (int kt = 0; kt < tile.k_tiles; ++kt) {
    const int stage = kt % Ring::kStages, use = kt / Ring::kStages;
    if (use > 0) rl::ptx::mbarrier_wait_parity(&empty[stage], (use - 1) & 1);
    rl::ptx::mbarrier_arrive_expect_tx(&full[stage], Ring::kStageBytes + kScaleStageBytes);
    rl::ptx::tma_load_2d(wgmma::a_tile<Ring>(ring, stage), a_map, kt * Ring::kBlockK, tile.row,
                         &full[stage]);
    rl::ptx::tma_load_2d(wgmma::b_tile<Ring>(ring, stage), b_map, kt * Ring::kBlockK, tile.col,
                         &full[stage]);
    unsigned char* slot = scale_slot(ring, stage);
    rl::ptx::bulk_load(slot, sa + kt * kScaleAtomBytes, kScaleAtomBytes, &full[stage]);
    for (int h = 0; h < kBAtoms; ++h)
      rl::ptx::bulk_load(slot + (1 + h) * kScaleAtomBytes, sb[h] + kt * kScaleAtomBytes,
                         kScaleAtomBytes, &full[stage]);
  }
}

// tcgen05.cp's source: an atom, 32 rows of 16 bytes, no swizzle (8-row core
// matrices of 128 bytes: LBO = SBO = 128).
__device__ __forceinline__ std::uint64_t atom_descriptor(std::uint32_t address) {
  return rl::ptx::tcgen05_smem_descriptor(address, 128, 128, rl::ptx::Tcgen05Swizzle::none);
}

// The MMA thread: the tcgen05 rung's (issue_mmas there), with the k-tile's
// scales copied into tensor memory ahead of its four block-scaled MMAs.
template <PipelineFault F>
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
      const std::uint32_t s = rl::ptx::shared_address(scale_slot(ring, read));
      rl::ptx::tmem_cp<rl::ptx::TmemCopyShape::s32x128b_warpx4>(d + kSfaColumn, atom_descriptor(s));
      RL_UNROLL
      for (int h = 0; h < kBAtoms; ++h)
        rl::ptx::tmem_cp<rl::ptx::TmemCopyShape::s32x128b_warpx4>(
            d + kSfbColumn + 4 * h, atom_descriptor(s + (1 + h) * kScaleAtomBytes));
      RL_UNROLL
      for (int step = 0; step < Ring::kBlockK / kMmaK; ++step) {
        const tcgen05::OperandDescriptors desc = tcgen05::operand_descriptors<Ring>(a, b, step);
        // k-block `step` of the atom: byte `step` of every scale cell.
        const std::uint32_t idesc = rl::ptx::tcgen05_idesc_mxf8f6f4(
            rl::ptx::Tcgen05F8F6F4Type::e4m3, rl::ptx::Tcgen05F8F6F4Type::e4m3, kBlockN,
            static_cast<unsigned>(step), static_cast<unsigned>(step));
        rl::ptx::tcgen05_mma_block_scaled<rl::ptx::Tcgen05ScaledKind::mxf8f6f4_1x>(
            d, desc.a, desc.b, idesc, d + kSfaColumn, d + kSfbColumn, kt > 0 || step > 0);
      }
    }
    rl::ptx::tmem_commit(&empty[stage]);  // the stage is free once its copies and MMAs completed
  }
  rl::ptx::tmem_commit(done);
}

}  // namespace

// Budgets as gemm_tcgen05's (its header): 80 bytes of static shared memory
// (9 mbarriers and the tensor-memory address; the 199 KiB ring is dynamic).
// On sm_100a and sm_103a the block-scaled MMA as the SASS spells it: UTCQMMA
// (kind::mxf8f6f4 is f8f6f4's opcode with a scale-factor operand) and the
// three UTCCP.T.S.4x32dp128bit copies a k-tile that tell it apart from the
// fp8 rung; UBLKCP (the scale atoms' bulk copies) beside UTMALDG.2D.  nvcc
// 13.0: 42 registers on sm_100a and sm_103a, no spills.  The MMA thread's
// loop is 137 instructions a k-tile for its 4 MMAs and 3 copies (the fp8
// rung's 96 plus the copies' descriptors and ELECTs): loop_share bounds it
// at 34 an MMA, still far below the ~128 clocks a 128 x 256 x 32 MMA takes.
// rl-static: kernel=gemm_tcgen05_mxfp8 max_regs=48 max_smem=80
// rl-static: kernel=gemm_tcgen05_mxfp8 arch=100a,103a sass=UTCQMMA,UTCCP.T.S.4x32dp128bit
// rl-static: kernel=gemm_tcgen05_mxfp8 arch=100a,103a sass=UTCBAR,UTMALDG.2D,UBLKCP.S.G,LDTM.x32
// rl-static: kernel=gemm_tcgen05_mxfp8 arch=100a,103a sass=SYNCS.PHASECHK loop_share=UTCQMMA:2
template <PipelineFault F = PipelineFault::none>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_tcgen05_mxfp8(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap a_map,
                       const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap b_map,
                       const std::uint8_t* __restrict__ scale_a,
                       const std::uint8_t* __restrict__ scale_b, float* __restrict__ C, int M,
                       int N, int K, int ldc) {
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ std::uint64_t full[Ring::kStages];   // stage s holds the next tiles and scales
  __shared__ std::uint64_t empty[Ring::kStages];  // stage s may be overwritten
  __shared__ std::uint64_t done;                  // D holds the whole product
  __shared__ std::uint32_t tmem_base;             // where tcgen05.alloc put D
  unsigned char* ring = wgmma::ring_start(dynamic_shared);
  const int thread = static_cast<int>(threadIdx.x);
  const std::uint32_t d = tcgen05::start<Ring>(&tmem_base, kColumns, full, empty, &done, thread);
  const wgmma::BlockTile tile = {(K + Ring::kBlockK - 1) / Ring::kBlockK,
                                 static_cast<int>(blockIdx.y) * kBlockM,
                                 static_cast<int>(blockIdx.x) * kBlockN};

  if (thread == 0) produce_tiles(&a_map, &b_map, scale_a, scale_b, full, empty, ring, tile, N, K);
  if (thread == 32) issue_mmas<F>(d, full, empty, &done, ring, tile.k_tiles);
  tcgen05::finish(d, kColumns, &done, thread, C, M, N, ldc, tile);
}

namespace {

template <PipelineFault F = PipelineFault::none>
void launch_gemm_tcgen05_mxfp8(const ScaledArgs& s, cudaStream_t stream) {
  const Args<__nv_fp8_e4m3>& a = s.gemm;
  const wgmma::OperandMaps<Ring, __nv_fp8_e4m3> maps = wgmma::operand_maps<Ring>(a);
  auto kernel = gemm_tcgen05_mxfp8<F>;
  RL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     kDynamicSharedBytes));
  rl::launch(kernel, tile_grid(a.M, a.N, kBlockM, kBlockN), dim3(kThreads), kDynamicSharedBytes,
             stream, maps.a, maps.b, s.scale_a, s.scale_b, a.C, a.M, a.N, a.K, a.ldc);
}

RL_DEVICE_INSTANCES(&launch_gemm_tcgen05_mxfp8<>);

}  // namespace

#if defined(RL_EMULATE)
ScaledLauncher faults::tcgen05_mxfp8(PipelineFault fault) {
  switch (fault) {
    case PipelineFault::none:
      return &launch_gemm_tcgen05_mxfp8<PipelineFault::none>;
    case PipelineFault::skip_one_k_tile:
      return &launch_gemm_tcgen05_mxfp8<PipelineFault::skip_one_k_tile>;
    case PipelineFault::read_stage_early:
      return &launch_gemm_tcgen05_mxfp8<PipelineFault::read_stage_early>;
  }
  return nullptr;
}
#endif

#if !defined(__CUDA_ARCH__)
namespace {

// Every k-tile's four MMAs over the whole 128 x 256 tile; A and B through
// TMA (in-bounds elements only, gemm_cost.hpp), the scales through three
// 512-byte bulk copies a k-tile a CTA.
void declare_counted_mxfp8(roofline::Cost& c, const Dims& d) {
  declare_counted(c, d, CountedTile{kBlockM, kBlockN, Ring::kBlockK}, 1, /*loads_counted=*/true,
                  /*c_stores_counted=*/false);
  const double ctas =
      ceil_div(static_cast<double>(d.M), kBlockM) * ceil_div(static_cast<double>(d.N), kBlockN);
  *c.bytes_l2_load += ctas * ceil_div(static_cast<double>(d.K), Ring::kBlockK) * kScaleStageBytes;
}

}  // namespace

// sm_100a code: compute capability 10.0 and 10.3 (the emulator as either).
RL_REGISTER_KERNEL(make_scaled_record(
    {.name = "gemm_tcgen05_mxfp8",
     .variant = "tcgen05",
     .baseline = "gemm_tcgen05_fp8",
     .precision = roofline::Precision::mxfp8,
     .unit = roofline::ComputeUnit::tc_mxfp8,
     .tile = {kBlockM, kBlockN},
     .launcher = launch_gemm_tcgen05_mxfp8<>,
     .min_cc = 100,
     .max_cc = 103,
     .gpu_only = !rl::ptx::emulator_runs_tcgen05(),
     .idea = "the tcgen05 rung block-scaled (MXFP8): ue8m0 scale atoms bulk-copied with each "
             "k-tile, tcgen05.cp into tensor memory, kind::mxf8f6f4 MMAs (sm_100a)",
     .declare_counted = declare_counted_mxfp8}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
