// GEMM gemm_mma_sync_multistage_{tf32,fp16,bf16,fp8} (tensor-core ladder,
// baselines gemm_wmma_<precision>; fp8's is gemm_mma_sync_multistage_bf16):
// mma.sync fed by ldmatrix from swizzled shared memory, filled by a multistage
// cp.async pipeline (fp8 e4m3 enters the ladder here: wmma has no fp8
// fragments).
//
// What changes from the wmma rung (gemm_wmma.cu), and why each matters:
//  - mma.sync instead of wmma: the fragment layout is the PTX ISA's, known,
//    so the kernel loads fragments itself (below) and stores C straight from
//    the accumulator registers, without wmma's opaque layout and its staging
//    of C through shared memory;
//  - ldmatrix: one instruction loads a warp's 16 x 16 (16-bit) operand block
//    from shared memory, four 8 x 8 matrices, 16 bytes per lane, instead of
//    element loads; .trans turns row-major B into the "col" B fragment;
//  - the swizzle (gemm_swizzle.hpp, swizzled_offset): each 16-byte chunk is
//    stored at chunk ^ x(row), which spreads the 8 rows an ldmatrix phase
//    reads over the 8 bank groups.  Without it those rows sit in the same
//    group (8-way conflicts on B's 128-byte-multiple rows, 4-way on A's
//    64-byte rows).  The swizzle needs no padding, so a stage is exactly
//    BlockM x BlockK + BlockK x BlockN elements (16 KB here);
//  - cp.async with Stages = 3 buffers: global -> shared copies bypass the
//    registers and complete asynchronously, so the loads of K tiles kt + 1
//    and kt + 2 are in flight while the tensor cores work on tile kt.  With
//    2 stages only one tile's compute hides a load's latency (several hundred
//    cycles, about that of one 128 x 128 x 32 tile of mma); the third stage
//    gives two.  A 4th stage needs more than the 48 KB of static shared
//    memory (dynamic shared memory with an opt-in); not taken here.
//    Per K tile: wait for the oldest stage, one barrier (which also frees
//    the stage read in the previous iteration), issue the next load into
//    that freed stage, compute.  Tails: cp.async's zero-filling form reads
//    only the in-bounds bytes of a chunk and zeroes the rest (src_bytes = 0
//    for a chunk wholly outside), so every tile is full-size and zero terms
//    add nothing.  cp.async needs 16-byte-aligned sources: when a matrix's
//    rows are not (lda or ldb not a multiple of 16 bytes, e.g. odd K), that
//    operand falls back to element loads and stores into the same swizzled
//    slots (correct, and slow; every large shape is aligned).
//  - a lean hot loop (issue 26 item 4): each thread's cp.async chunks
//    (global element offsets, swizzled shared offsets and zero-fill byte
//    counts for the M and N edges) are computed once (TileCopies,
//    gemm_mma_sync_staging.hpp), and so are its ldmatrix offsets; per
//    k-tile the loop advances two source pointers and the ring's two stage
//    offsets (a wrap, no modulo), an A k step is an XOR, everything else an
//    immediate.  The loop is peeled: the steady state loads only k-tiles
//    wholly inside K, without a bounds check; the last Stages - 1 tiles and
//    the partial one (and every tile of an unaligned operand) run in a tail
//    loop through the general copy.
//
// What its SASS shows (nvcc 13, cuobjdump -sass; the steady-state k-loop,
// NOPs left out; per iteration 64 HMMA (QMMA for fp8), 8 LDGSTS (cp.async),
// 1 BAR, 16 LDSM (tf32: 8, 32 LDS.32 for B and 8 LDS.128 + 8 STS.128 to
// round the landed stage)):
//   instructions per HMMA, before -> after this change (registers after):
//              sm_80          sm_89          sm_90a         sm_100a        sm_120
//   fp16/bf16  10.36->2.25    10.36->2.25    10.50->2.41    9.91->2.08     9.86->1.97
//              (248 regs)     (248)          (252)          (224)          (218)
//   tf32       12.03->4.41    12.03->4.41    12.83->4.62    10.25->5.09    10.22->5.05
//              (242)          (242)          (245)          (223)          (210)
//   fp8        --             15.59->3.53    --             --             15.12->2.47
//                             (235)                                        (214)
//   No spills, no local memory.  "Before" counts the loop's code on both
//   sides of its branches (the old loop held the bounds-checked and the
//   element-load staging); the issue's 358 per 64 HMMA was one path.  The
//   rest of a 16-bit loop: 8 x 5 for the zero-fill copies (ptxas turns a
//   run-time src_bytes into a predicate and an address adjustment), the
//   pointer and stage updates, the loop counter.  tf32 rounds its inputs
//   once, in shared memory (round_own_chunks_to_tf32): cvt.rna.tf32 is
//   about 3 instructions per element on these targets, 32 elements per
//   thread and k-tile (it was 64, at each fragment load).  fp8's 32 PRMT per
//   64 QMMA are the B byte permutes below.  The rl-static lines above the
//   kernel hold these figures.  Speed: unmeasured since this change (no GPU).
//   BlockK 64 with 4 stages does not fit everywhere: a stage would be
//   128 x 64 + 64 x 128 16-bit elements = 32 KB, 4 stages 128 KB, above the
//   99 KB a block may have on sm_89 and sm_120 (3 stages of 32 KB would fit
//   with the dynamic-shared-memory opt-in; not tried, as A's 128-byte rows
//   need another swizzle).
//
// Tiles (CUTLASS names): BlockM x BlockN x BlockK = 128 x 128 x (64 bytes of
// k: 16 tf32, 32 fp16/bf16, 64 fp8), 4 warps of WarpM x WarpN = 64 x 64, 3
// stages.  A warp's 64 x 64 tile is 4 x 8 mma tiles of m16n8, 128 fp32
// accumulators per lane; each BlockK step is two mma k steps (k8 tf32, k16
// fp16/bf16, k32 fp8).
//
// How each operand's fragments are read (ldmatrix is .b16 only):
//  - A, every type: ldmatrix.x4 from row-major A.  A .b16 matrix row hands
//    lane L bytes 4 (L % 4)..+3 of row L / 4, which is exactly the m16n8k8
//    tf32 (g, t) element and the m16n8k32 e4m3 (g, 4t..4t+3) bytes, so one
//    scheme serves all types.  tf32 inputs are rounded (cvt.rna, u =
//    2^-11) once, in shared memory, when their stage has landed.
//  - B fp16/bf16: ldmatrix.x4.trans from row-major B: b0, b1 of two n8 tiles.
//  - B tf32: the fragment wants (k = t, n = g) and (t + 4, g), 32-bit
//    elements: 2 LDS.32 per n8 tile (no transposing ldmatrix for 32 bits).
//    Rows k..k+3 at the 2 chunks of 8 n columns: the tf32_b swizzle puts
//    those 8 chunks in 8 bank groups, 32 distinct banks per warp load.
//  - B fp8: the fragment wants 4 consecutive k of one n in a register, B
//    is row-major (n fastest).  Chosen: ldmatrix.x4.trans as 16-bit pairs
//    (lane gets k = 4t, 4t+1 and, from the second matrix, 4t+2, 4t+3, of
//    columns 2g and 2g+1; the lanes choose those rows, see
//    fp8_b_ldmatrix_x4_trans_source), then byte permutes (PRMT) form
//    column 2g's four k in one register and column 2g+1's in another.  So
//    one ldmatrix.x4 + 4 PRMT give the B fragments of two n8 tiles whose
//    columns interleave (even and odd columns of a 16-column group), and the
//    epilogue stores accordingly.  Why: it keeps B on cp.async (a transpose
//    in staging would need register staging of B) and costs 2 PRMT per
//    fragment register.  The alternative, a byte-wise LDS per k, costs 4
//    LDS.U8 + 3 PRMT per register.
//
// fp8 on the GPU: mma.sync e4m3 is a tensor instruction (QMMA) on sm_89 and
// sm_120; on sm_90a and sm_100a nvcc emulates it with f16 HMMA, so that
// record has min_cc = 89 and refuses to run where it would be emulated
// (rl::ptx::refuse_emulated_fp8_mma_sync).  Hopper's fp8 GEMM is wgmma's.
//
// Roofline: the same 128 x 128 reuse tile as the wmma rung (same intensity
// per precision); the climb is towards the tensor roof, not to the right.
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_mma_sync_precisions.hpp"
#include "gemm/gemm_mma_sync_staging.hpp"
#include "gemm/gemm_pipeline_fault.hpp"
#include "gemm/gemm_swizzle.hpp"
#include "gemm/gemm_tiles.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_problem.hpp"
#include "gemm/gemm_workload.hpp"
#endif

#include <cstddef>

namespace rl::gemm {

// ------------------------------------------------------------- kernel

// The block's 128 x 128 tile of C (the kernel's body).
template <typename P, int BlockM, int BlockN, int BlockK, int WarpM, int WarpN, int Stages,
          PipelineFault F>
__device__ __forceinline__ void mma_sync_block_tile(float* __restrict__ C,
                                                    const typename P::Storage* __restrict__ A,
                                                    const typename P::Storage* __restrict__ B,
                                                    int M, int N, int K, int lda, int ldb,
                                                    int ldc) {
  using T = typename P::Storage;
  constexpr int kThreads = (BlockM / WarpM) * (BlockN / WarpN) * 32;
  constexpr int kBytes = static_cast<int>(sizeof(T));
  constexpr int kARowBytes = BlockK * kBytes, kBRowBytes = BlockN * kBytes;
  constexpr int kAStageBytes = BlockM * kARowBytes, kBStageBytes = BlockK * kBRowBytes;
  constexpr int kStageBytes = kAStageBytes + kBStageBytes;
  constexpr int kMmaChunks = P::kMmaK * kBytes / 16;  // chunks of k per mma k step: 2
  constexpr int kTilesM = WarpM / 16, kTilesN = WarpN / 8;
  static_assert(Stages >= 2, "a pipeline has at least 2 stages");
  static_assert(kARowBytes == 64, "A rows of 64 bytes: the rows64B swizzle");
  static_assert(kBRowBytes % 128 == 0, "B rows of whole 128-byte lines");
  static_assert(kMmaChunks == 2 && BlockK % P::kMmaK == 0, "mma k step of 32 bytes");
  static_assert(kTilesN % 2 == 0, "B fragments are loaded for pairs of n8 tiles");
  // A fragment 16 rows further down, and B's next mma k step, keep the
  // swizzle's XOR: immediate offsets from the lane's offsets below.
  static_assert(swizzle_repeats_every(Swizzle::rows64B, 16), "A's m16 tiles");
  static_assert(swizzle_repeats_every(P::kBSwizzle, P::kMmaK), "B's k steps");
  using ACopies = TileCopies<T, BlockM, kARowBytes / 16, kThreads, Swizzle::rows64B>;
  using BCopies = TileCopies<T, BlockK, kBRowBytes / 16, kThreads, P::kBSwizzle>;

  __shared__ __align__(128) unsigned char smem[Stages * kStageBytes];

  const int thread = static_cast<int>(threadIdx.x);
  const int lane = thread % 32, warp = thread / 32;
  const int g = lane / 4, t = lane % 4;
  const int block_row = static_cast<int>(blockIdx.y) * BlockM;
  const int block_col = static_cast<int>(blockIdx.x) * BlockN;
  const int warp_row = (warp / (BlockN / WarpN)) * WarpM;
  const int warp_col = (warp % (BlockN / WarpN)) * WarpN;
  const bool a_aligned =
      (reinterpret_cast<std::uintptr_t>(A) & 15u) == 0 && (lda * kBytes) % 16 == 0;
  const bool b_aligned =
      (reinterpret_cast<std::uintptr_t>(B) & 15u) == 0 && (ldb * kBytes) % 16 == 0;

  // k-tiles [0, full_tiles) lie wholly inside K and are loaded by the
  // precomputed copies (both operands aligned); the rest (the partial last
  // tile, or all of them when an operand is unaligned) by stage_tile.
  const int k_tiles = (K + BlockK - 1) / BlockK;
  const int full_tiles = a_aligned && b_aligned ? K / BlockK : 0;
  const ACopies a_copies(thread, lda, M - block_row, BlockK);
  const BCopies b_copies(thread, ldb, BlockK, N - block_col);
  const T* a_next = A + static_cast<std::ptrdiff_t>(block_row) * lda;  // k-tile 0's first elements
  const T* b_next = B + block_col;
  auto load_full = [&](unsigned char* stage) {
    a_copies.issue(stage, a_next);
    b_copies.issue(stage + kAStageBytes, b_next);
  };
  auto load_edge = [&](unsigned char* stage, int kt) {
    stage_tile<T, BlockM, kARowBytes / 16, kThreads, Swizzle::rows64B>(
        stage, A, lda, block_row, kt * BlockK, M, K, a_aligned);
    stage_tile<T, BlockK, kBRowBytes / 16, kThreads, P::kBSwizzle>(
        stage + kAStageBytes, B, ldb, kt * BlockK, block_col, K, N, b_aligned);
  };
  auto advance_sources = [&] {
    a_next += BlockK;
    b_next += static_cast<std::ptrdiff_t>(BlockK) * ldb;
  };

  // This lane's ldmatrix offsets (bytes in a stage's tile) at mma k step 0
  // and its warp's first m16 or n16 tile: A's k step is one XOR (chunk
  // 2 ks + c with c < 2 is (c ^ x) ^ 2 ks, see swizzled_advance in
  // attention_swizzle.hpp), B's k step and A's m16 tiles are immediates.
  const int a_lane = [&] {
    const ChunkAt at = ldmatrix_x4_source(lane, warp_row, 0);
    return swizzled_offset(Swizzle::rows64B, kARowBytes, at.row, at.chunk);
  }();
  int b_lane[kTilesN];
  RL_UNROLL
  for (int jn = 0; jn < kTilesN; ++jn) {
    if constexpr (std::is_same_v<P, MmaTf32>) {
      // (k, n) = (t, g) and (t + 4, g) of tile jn: one 32-bit element each.
      const int n = warp_col + jn * 8 + g;
      b_lane[jn] = swizzled_offset(Swizzle::tf32_b, kBRowBytes, t, n / 4) + (n % 4) * 4;
    } else if constexpr (std::is_same_v<P, MmaE4m3>) {
      const ChunkAt at = fp8_b_ldmatrix_x4_trans_source(lane, 0, (warp_col + jn / 2 * 16) / 16);
      b_lane[jn] = swizzled_offset(Swizzle::fp8_b, kBRowBytes, at.row, at.chunk);
    } else {
      const ChunkAt at = ldmatrix_x4_source(lane, 0, (warp_col + jn / 2 * 16) * kBytes / 16);
      b_lane[jn] = swizzled_offset(P::kBSwizzle, kBRowBytes, at.row, at.chunk);
    }
  }

  float acc[kTilesM][kTilesN][4] = {};

  // The mma of k-tile kt from the stage at stage_offset.
  auto multiply = [&](int stage_offset, int kt) {
    if constexpr (F != PipelineFault::none) {  // test builds only (gemm_pipeline_fault.hpp)
      if (!multiplies<F>(kt, k_tiles)) return;
      stage_offset = stage_read<F>(kt, k_tiles, Stages) * kStageBytes;
    }
    const unsigned char* As = smem + stage_offset;
    const unsigned char* Bs = As + kAStageBytes;
    RL_UNROLL
    for (int ks = 0; ks < BlockK / P::kMmaK; ++ks) {
      const unsigned char* Bk = Bs + ks * P::kMmaK * kBRowBytes;
      std::uint32_t a[kTilesM][4];
      RL_UNROLL
      for (int im = 0; im < kTilesM; ++im) {
        ptx::ldmatrix_x4(a[im], As + (a_lane ^ (ks * kMmaChunks * 16)) + im * 16 * kARowBytes);
      }
      std::uint32_t b[kTilesN][2];
      if constexpr (std::is_same_v<P, MmaTf32>) {
        RL_UNROLL
        for (int jn = 0; jn < kTilesN; ++jn) {
          RL_UNROLL
          for (int h = 0; h < 2; ++h)  // rows t and t + 4: the same XOR (tf32_b's period 4)
            b[jn][h] =
                *reinterpret_cast<const std::uint32_t*>(Bk + b_lane[jn] + 4 * h * kBRowBytes);
        }
      } else if constexpr (std::is_same_v<P, MmaE4m3>) {
        // Columns 2g and 2g + 1 of a 16-column chunk: the even tile 2jp takes
        // the chunk's even columns, the odd tile 2jp + 1 the odd ones.
        RL_UNROLL
        for (int jp = 0; jp < kTilesN / 2; ++jp) {
          std::uint32_t r[4];
          ptx::ldmatrix_x4_trans(r, Bk + b_lane[2 * jp]);
          // r[0]: (k 4t, n 2g) (4t, 2g+1) (4t+1, 2g) (4t+1, 2g+1), r[1] the same
          // at k + 2, r[2] and r[3] at k + 16 (low byte first).
          b[2 * jp][0] = __byte_perm(r[0], r[1], 0x6420);
          b[2 * jp][1] = __byte_perm(r[2], r[3], 0x6420);
          b[2 * jp + 1][0] = __byte_perm(r[0], r[1], 0x7531);
          b[2 * jp + 1][1] = __byte_perm(r[2], r[3], 0x7531);
        }
      } else {
        RL_UNROLL
        for (int jp = 0; jp < kTilesN / 2; ++jp) {
          std::uint32_t r[4];
          ptx::ldmatrix_x4_trans(r, Bk + b_lane[2 * jp]);
          b[2 * jp][0] = r[0];
          b[2 * jp][1] = r[1];
          b[2 * jp + 1][0] = r[2];
          b[2 * jp + 1][1] = r[3];
        }
      }
      RL_UNROLL
      for (int im = 0; im < kTilesM; ++im) {
        RL_UNROLL
        for (int jn = 0; jn < kTilesN; ++jn) P::mma(acc[im][jn], a[im], b[jn]);
      }
    }
  };

  // The ring: k-tile kt in stage kt % Stages, tracked as byte offsets that
  // wrap (no division in the loop).
  auto next_stage = [](int offset) {
    return offset + kStageBytes == Stages * kStageBytes ? 0 : offset + kStageBytes;
  };
  RL_UNROLL
  for (int s = 0; s < Stages - 1; ++s) {
    if (s < full_tiles)
      load_full(smem + s * kStageBytes);
    else if (s < k_tiles)
      load_edge(smem + s * kStageBytes, s);
    advance_sources();
    ptx::cp_async_commit();  // an empty group past the end keeps the count uniform
  }
  int read_stage = 0, write_stage = (Stages - 1) * kStageBytes;
  auto round_landed_stage = [&](int stage_offset) {
    if constexpr (P::kRoundToTf32) {
      round_own_chunks_to_tf32(smem + stage_offset, a_copies);
      round_own_chunks_to_tf32(smem + stage_offset + kAStageBytes, b_copies);
    }
  };

  // Steady state: the tile loaded ahead is a full one, so the loop carries
  // no bounds check (its per-thread bounds are in the copies' byte counts).
  // Per k-tile: wait for the oldest stage, one barrier (which also frees the
  // stage read in the previous iteration), issue the next load into that
  // freed stage, compute.
  int kt = 0;
  RL_NO_UNROLL
  for (; kt + Stages - 1 < full_tiles; ++kt) {
    ptx::cp_async_wait<Stages - 2>();  // this thread's copies of tile kt have landed
    round_landed_stage(read_stage);
    __syncthreads();  // everyone's have; and tile kt - 1 is no longer read
    load_full(smem + write_stage);
    advance_sources();
    ptx::cp_async_commit();
    multiply(read_stage, kt);
    read_stage = next_stage(read_stage);
    write_stage = next_stage(write_stage);
  }
  // Tail: the last Stages - 1 tiles, and the edge tile's load.
  RL_NO_UNROLL
  for (; kt < k_tiles; ++kt) {
    ptx::cp_async_wait<Stages - 2>();
    round_landed_stage(read_stage);
    __syncthreads();
    if (kt + Stages - 1 < k_tiles) load_edge(smem + write_stage, kt + Stages - 1);
    ptx::cp_async_commit();
    multiply(read_stage, kt);
    read_stage = next_stage(read_stage);
    write_stage = next_stage(write_stage);
  }

  // Epilogue: accumulator i of tile (im, jn) is row g + 8 (i / 2), logical
  // column 2t + i % 2 of the tile; fp8 tiles interleave (see above).  The
  // two columns of a pair are adjacent except for fp8.
  const bool c_aligned = (reinterpret_cast<std::uintptr_t>(C) & 7u) == 0 && ldc % 2 == 0;
  RL_UNROLL
  for (int im = 0; im < kTilesM; ++im) {
    RL_UNROLL
    for (int jn = 0; jn < kTilesN; ++jn) {
      RL_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = block_row + warp_row + im * 16 + g + 8 * h;
        if (row >= M) continue;
        const float v0 = acc[im][jn][2 * h], v1 = acc[im][jn][2 * h + 1];
        if constexpr (std::is_same_v<P, MmaE4m3>) {
          const int col = block_col + warp_col + (jn / 2) * 16 + 4 * t + jn % 2;
          if (col < N) C[row * ldc + col] = v0;
          if (col + 2 < N) C[row * ldc + col + 2] = v1;
        } else {
          const int col = block_col + warp_col + jn * 8 + 2 * t;
          float* dst = C + row * ldc + col;
          if (c_aligned && col + 2 <= N) {
            *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
          } else {
            if (col < N) dst[0] = v0;
            if (col + 1 < N) dst[1] = v1;
          }
        }
      }
    }
  }
}

// fp8 is compiled only for the targets where its mma.sync is a tensor
// instruction (elsewhere nvcc's emulation also spills); the host refuses to
// launch it on the others, so there the kernel only traps.
template <typename P>
__device__ constexpr bool compiled_for_this_target() {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<P, MmaE4m3>)
    return ptx::fp8_mma_sync_is_native(__CUDA_ARCH__ / 100, __CUDA_ARCH__ % 100 / 10);
#endif
  return true;
}

// rl-static: kernel=gemm_mma_sync_multistage max_regs=255 max_smem=49152
// rl-static: kernel=*MmaTf32* min_arch=80 sass=HMMA,LDSM.16.M88.4,LDGSTS.E.BYPASS.128.ZFILL
// rl-static: kernel=*MmaF16* min_arch=80 sass=HMMA,LDSM.16.MT88.4,LDGSTS.E.BYPASS.128.ZFILL
// rl-static: kernel=*MmaBf16* min_arch=80 sass=HMMA,LDSM.16.MT88.4,LDGSTS.E.BYPASS.128.ZFILL
// rl-static: kernel=*MmaE4m3* arch=89,120 sass=QMMA,LDSM.16.MT88.4,LDGSTS.E.BYPASS.128.ZFILL
// rl-static: kernel=*MmaE4m3* arch=80,90,100 sass_absent=QMMA,HMMA,LDGSTS
// The steady-state k-loop (header): per 64 mma, 8 cp.async, 1 barrier, 16
// ldmatrix (8 for tf32), and at most this many instructions per mma.
// rl-static: kernel=*Mma[BF]*16* arch=80,89 loop_ratio=*/HMMA<=2.3
// rl-static: kernel=*Mma[BF]*16* arch=90a loop_ratio=*/HMMA<=2.45
// rl-static: kernel=*Mma[BF]*16* arch=100a loop_ratio=*/HMMA<=2.1
// rl-static: kernel=*Mma[BF]*16* arch=120 loop_ratio=*/HMMA<=2
// rl-static: kernel=*Mma[BF]*16* min_arch=80 loop_ratio=LDSM/HMMA==16/64
// rl-static: kernel=*Mma[BF]*16* min_arch=80 loop_ratio=LDGSTS/HMMA==8/64
// rl-static: kernel=*Mma[BF]*16* min_arch=80 loop_ratio=BAR/HMMA==1/64
// rl-static: kernel=*MmaTf32* arch=80,89 loop_ratio=*/HMMA<=4.45
// rl-static: kernel=*MmaTf32* arch=90a loop_ratio=*/HMMA<=4.65
// rl-static: kernel=*MmaTf32* arch=100a,120 loop_ratio=*/HMMA<=5.1
// rl-static: kernel=*MmaTf32* min_arch=80 loop_ratio=LDSM/HMMA==8/64
// rl-static: kernel=*MmaTf32* min_arch=80 loop_ratio=LDGSTS/HMMA==8/64
// rl-static: kernel=*MmaE4m3* arch=89 loop_ratio=*/QMMA<=3.55
// rl-static: kernel=*MmaE4m3* arch=120 loop_ratio=*/QMMA<=2.5
// rl-static: kernel=*MmaE4m3* arch=89,120 loop_ratio=LDGSTS/QMMA==8/64
// rl-static: kernel=*MmaE4m3* arch=89,120 loop_ratio=LDSM/QMMA==16/64
template <typename P, int BlockM, int BlockN, int BlockK, int WarpM, int WarpN, int Stages,
          PipelineFault F = PipelineFault::none>
__global__ void __launch_bounds__((BlockM / WarpM) * (BlockN / WarpN) * 32)
    gemm_mma_sync_multistage(float* __restrict__ C, const typename P::Storage* __restrict__ A,
                             const typename P::Storage* __restrict__ B, int M, int N, int K,
                             int lda, int ldb, int ldc) {
  if constexpr (compiled_for_this_target<P>()) {
    mma_sync_block_tile<P, BlockM, BlockN, BlockK, WarpM, WarpN, Stages, F>(C, A, B, M, N, K, lda,
                                                                            ldb, ldc);
  } else {
#if defined(__CUDA_ARCH__)
    __trap();
#endif
  }
}

// ------------------------------------------------------------- launchers, records

constexpr int kMmaBlockM = 128, kMmaBlockN = 128, kMmaWarpM = 64, kMmaWarpN = 64, kMmaStages = 3;
constexpr int kMmaThreads = (kMmaBlockM / kMmaWarpM) * (kMmaBlockN / kMmaWarpN) * 32;

template <typename P, PipelineFault F = PipelineFault::none>
void launch_gemm_mma_sync_multistage(const Args<typename P::Storage>& a, cudaStream_t stream) {
  constexpr int kBlockK = 64 / static_cast<int>(sizeof(typename P::Storage));
  launch_gemm(gemm_mma_sync_multistage<P, kMmaBlockM, kMmaBlockN, kBlockK, kMmaWarpM, kMmaWarpN,
                                       kMmaStages, F>,
              tile_grid(a.M, a.N, kMmaBlockM, kMmaBlockN), dim3(kMmaThreads), a, stream);
}

RL_DEVICE_INSTANCES(&launch_gemm_mma_sync_multistage<MmaTf32>,
                    &launch_gemm_mma_sync_multistage<MmaF16>,
                    &launch_gemm_mma_sync_multistage<MmaBf16>,
                    &launch_gemm_mma_sync_multistage<MmaE4m3>);

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::mma_sync_multistage_bf16(PipelineFault fault) {
  switch (fault) {
    case PipelineFault::none:
      return &launch_gemm_mma_sync_multistage<MmaBf16>;
    case PipelineFault::skip_one_k_tile:
      return &launch_gemm_mma_sync_multistage<MmaBf16, PipelineFault::skip_one_k_tile>;
    case PipelineFault::read_stage_early:
      return &launch_gemm_mma_sync_multistage<MmaBf16, PipelineFault::read_stage_early>;
  }
  return nullptr;
}
#endif

#if !defined(__CUDA_ARCH__)
// What the counters check (declare_counted): every block issues all its
// mma k steps over the 128 x 128 x BlockK tile, edges padded; A and B go
// through cp.async (src-size: in-bounds bytes only) when their rows are
// 16-byte aligned (lda = K, ldb = N here), else through element loads.
bool mma_sync_loads_counted(const Dims& d, std::size_t input_bytes) {
  return static_cast<std::size_t>(d.K) * input_bytes % 16 == 0 &&
         static_cast<std::size_t>(d.N) * input_bytes % 16 == 0;
}

template <typename P>
KernelRecord mma_sync_record(roofline::Precision precision, roofline::ComputeUnit unit,
                             std::string baseline, ErrorModel error, int min_cc = 0,
                             void (*refuse)() = nullptr,
                             std::optional<std::string> (*refuse_on)(int) = nullptr) {
  std::string name = "gemm_mma_sync_multistage_" + std::string(to_string(precision));
  return make_record<typename P::Storage>(
      {.name = std::move(name),
       .variant = "mma_sync_multistage",
       .baseline = std::move(baseline),
       .precision = precision,
       .unit = unit,
       .tile = {.M = kMmaBlockM, .N = kMmaBlockN},
       .launcher = &launch_gemm_mma_sync_multistage<P>,
       .error = error,
       .min_cc = min_cc,
       .idea = "mma.sync fed by ldmatrix from swizzled shared memory, 3-stage cp.async pipeline",
       .refuse = refuse,
       .refuse_on = refuse_on,
       .counted_tile =
           CountedTile{kMmaBlockM, kMmaBlockN, 64 / static_cast<int>(sizeof(typename P::Storage))},
       .loads_counted = &mma_sync_loads_counted});
}

void refuse_emulated_fp8_gemm() {
  ptx::refuse_emulated_fp8_mma_sync("gemm_mma_sync_multistage_fp8");
}

RL_REGISTER_KERNEL(mma_sync_record<MmaTf32>(roofline::Precision::tf32,
                                            roofline::ComputeUnit::tc_tf32, "gemm_wmma_tf32",
                                            kTensorCoreTf32Error));
RL_REGISTER_KERNEL(mma_sync_record<MmaF16>(roofline::Precision::fp16,
                                           roofline::ComputeUnit::tc_fp16, "gemm_wmma_fp16",
                                           kTensorCoreError));
RL_REGISTER_KERNEL(mma_sync_record<MmaBf16>(roofline::Precision::bf16,
                                            roofline::ComputeUnit::tc_bf16, "gemm_wmma_bf16",
                                            kTensorCoreError));
RL_REGISTER_KERNEL(mma_sync_record<MmaE4m3>(roofline::Precision::fp8, roofline::ComputeUnit::tc_fp8,
                                            "gemm_mma_sync_multistage_bf16", kTensorCoreError, 89,
                                            &refuse_emulated_fp8_gemm, &ptx::fp8_mma_sync_refusal));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
