// Attention, flash on tensor cores (BF16 and FP16 storage, FP32 accumulate):
// FlashAttention-2's forward pass with mma.sync.  The rung above
// attention_fused_simt.cu, which has the same algorithm on the FP32 pipe.
//
// The algorithm does not change: a block owns BlockM query rows of one head
// (b, h) and walks the keys in tiles of BlockN; per tile S = Q·Kᵀ, the online
// softmax raises each row's running max m, rescales the running sum ℓ and
// the accumulator by exp(m_old - m), and O_acc += P·V; O = O_acc / ℓ once at
// the end (FlashAttention-2, Algorithm 1).  Each warp owns its own 32 query
// rows, so row statistics never cross warps (§3.2).  Causal: key tiles wholly
// above the diagonal are never loaded, the diagonal ones are masked per
// element.  What changes from the SIMT kernel, and why each matters:
//
//  1. Tensor cores.  Both products are mma.sync.m16n8k16 (bf16 or fp16 in,
//     fp32 accumulators): one warp instruction does 16·8·16 multiply-adds, so
//     the math roof is the tensor cores' (on A100's datasheet 312 dense BF16
//     TFLOP/s against 19.5 FP32), not fp32.fma.  16-bit storage also halves
//     the bytes of Q, K, V and O.
//  2. P never leaves the registers.  The SIMT kernel writes P to shared
//     memory and reads it back for P·V, behind a barrier.  Here S's
//     accumulator fragment is, pair for pair, the A fragment P·V needs (see
//     "P as the A operand" below): exponentiate in place, convert to T, feed
//     the next mma.  No shared-memory round trip and no barrier for P.
//  3. ldmatrix.  A warp loads a whole 16×16 operand fragment (four 8×8
//     matrices) with one instruction, each lane receiving exactly the
//     registers the mma wants; K with the plain form (Kᵀ's column is K's row),
//     V with .trans (P·V reads V down its columns).
//  4. A swizzled shared-memory layout (swizzled_index in attention_swizzle.hpp):
//     ldmatrix's 8 row reads per phase hit 8 different bank quads, where the
//     plain row-major tile would serialise them 8-way.  No padding, so the
//     tile stays a power of two and cp.async chunks stay 16-byte aligned.
//  5. cp.async pipelining.  K and V tiles are double-buffered: while the warps
//     compute on tile j, tile j + 1 is already on its way from global memory
//     into the other stage, without passing through registers.  Rows past N
//     are zero-filled by the copy.
//
// And what FlashAttention-2 does beyond that, each against the kernel's
// first version (16 query rows per warp), whose key loop held 10.6 (d = 128)
// to 16.2 (d = 64) SASS instructions per HMMA on sm_80 (its masked and
// unmasked softmax both; issue 27 reads ~7 executed on an unmasked tile):
//
//  6. 32 query rows per warp (BlockM = 128, 4 warps), as two 16-row slabs:
//     every K or V fragment a warp loads with ldmatrix feeds both slabs, so
//     each K/V ldmatrix.x4 feeds four HMMA instead of two.  Q is re-read from
//     shared memory per k-step (2 ldmatrix.x4 per 2·BlockN/8 HMMA): kept in
//     registers it would cost D/2 more per thread, which d = 128 cannot
//     spare next to O_acc's 128.
//  7. cp.async addresses hoisted: each thread's shared and global offsets
//     are computed once (TileCopy), the key loop only advances the source by
//     a tile, where the first version recomputed both for every copy.
//  8. Softmax in one FFMA and one MUFU.EX2 per element: p = 2^(s·scale_log2 -
//     m·scale_log2), the max kept in raw-score units and scaled once per row
//     (as FlashAttention-2), and rl::ptx::ex2_approx_ftz (ex2.approx.ftz.f32,
//     what exp2f becomes under FlashAttention-2's --use_fast_math): a lone
//     MUFU.EX2, where the non-ftz form adds a compare and two predicated
//     multiplies to keep results below 2^-126 (flushed to 0 here: next to
//     the row's largest p, 1, they lie far below the error model's
//     kExpError).
//  9. One barrier per key tile, not two: K_j and V_j are one commit group,
//     waited for together before the tile's barrier (which the next stage's
//     prefetch needs anyway), so P·V starts without a second one.  Tiles that
//     need no mask (all keys < N and, causal, none right of the block's first
//     row) run in a loop of their own, compiled without the mask: the hot
//     loop carries no per-element compare (FlashAttention-2's masking steps).
//
// Thread tile: 4 warps, BlockM = 128 query rows (32 per warp), BlockN = 64
// keys per tile (32 at d = 128: see flash_block_n), head dim D = 64 or 128
// (a template parameter: the fragment arrays are fixed-size and stay in
// registers; other d are refused).  Per thread: S 2·BlockN/8 × 4 fp32 (64,
// or 32 at d = 128), O_acc 2·D/8 × 4 fp32 (64 or 128).  Shared memory: Q
// plus two stages of K and V, 48 KB (d = 64) or 64 KB (d = 128; above the 48
// KB default: the launcher opts in).
//
// What its SASS shows (nvcc 13, cuobjdump -sass; the hot loop is the
// unmasked key loop, NOPs left out; bf16 and fp16 alike):
//   registers (d = 64 / 128): sm_80 and sm_89 220 / 249, sm_90a 236 / 249,
//     sm_100a 196 / 255, sm_120 207 / 254; no spills, no local memory.
//   per 128 HMMA (one key tile): 1 BAR, 8 LDGSTS (cp.async), 40 (d = 64) or
//     48 (d = 128) LDSM (ldmatrix, .MT88 for .trans), 68 or 36 MUFU.EX2 (one
//     per element of P plus 4 rescales), 4 FSETP (the -inf max checks, no
//     subnormal fix-ups); 4.4 to 5.1 instructions per HMMA in all (d = 64:
//     4.95 on sm_80, 89 and 90a, 4.87 sm_100a, 5.12 sm_120; d = 128: 4.74,
//     4.38, 4.52), the rest mostly softmax: at d = 64 FMNMX, FFMA, FMUL,
//     FADD, F2FP; at d = 128 the rescale of O_acc, 128 FMUL per 32 keys.
//   The rl-static lines above the kernel hold these figures.
//
// What it should buy on the roofline: the same traffic pattern as the fused
// SIMT kernel at half the bytes, with K and V re-read half as often
// (intensity ≈ BlockM = 128 FLOP/B), far right of the bandwidth diagonal, so
// the tensor-core roof is the limit.  Left out, and measured by the cuDNN
// baseline and attention_wgmma_tma_sm90a: splitting the softmax from the
// matmuls across warps (FlashAttention-3), Hopper's wgmma and TMA.
// Performance goals: ≥ 50% of cuDNN SDPA on H100, ≥ 70% on A100 at d = 128,
// N = 4k (issue 11); ≥ 0.9× FlashAttention-2's published figure (issue 27).
// Run on an H100 (docs/gpu-runs/2026-11-26-attention.md, N = 8k, BF16): this
// version 333.3 TFLOP/s at d = 128 (48.7% of cuDNN SDPA in the same run; the
// first version ran 253.7 in an earlier run) and 334.4 at d = 64 (first
// version 234.3); on an H200 341.1 and 317.9.  Unmeasured on an A100; no
// sourced FlashAttention-2 figure is kept here, so that goal is not judged.
#include "attention/attention_fragments.hpp"
#include "attention/attention_launch.hpp"
#include "attention/attention_swizzle.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "attention/attention_cost.hpp"
#include "attention/attention_error_model.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_workload.hpp"
#endif

#include <type_traits>

namespace rl::attention {

constexpr int kFlashBlockM = 128;  // query rows per block
// Keys per K/V tile: 64, but 32 from d = 128 on, where O_acc alone takes
// 128 fp32 registers per thread and a 64-key S (64 more) spilled on every
// architecture (nvcc 13); FlashAttention-2 runs 128 × 32 tiles at d = 128
// on sm_86 and sm_89 too.
constexpr int flash_block_n(std::int64_t d) {
  return d >= 128 ? 32 : 64;
}
constexpr int kFlashWarps = 4;
constexpr int kFlashWarpRows = kFlashBlockM / kFlashWarps;  // 32 rows per warp ...
constexpr int kFlashSlabs = kFlashWarpRows / 16;            // ... as two m16 slabs
constexpr int kFlashThreads = 32 * kFlashWarps;
constexpr int kFlashStages = 2;  // K/V double buffer

template <int D>
struct FlashLayout {
  static_assert(D % 64 == 0, "8 swizzle chunks per row, D/16 k-steps");
  static constexpr int kQElements = kFlashBlockM * D;
  static constexpr int kBlockN = flash_block_n(D);
  static constexpr int kKVElements = kBlockN * D;
  // Q, then per stage K and V; 16-bit elements.
  static constexpr std::size_t kSharedBytes =
      2 * static_cast<std::size_t>(kQElements + 2 * kFlashStages * kKVElements);
  // The opt-in limit of sm_86, sm_89 and sm_120 (99 KB), the smallest we build for.
  static_assert(kSharedBytes <= 101376, "the flash tiles must fit 99 KB of shared memory");
};

// D = A·B + D, m16n8k16, fp32 accumulators, A and B in T.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4],
                                          const std::uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    rl::ptx::mma_m16n8k16_bf16_f32(d, a, b, d);
  else
    rl::ptx::mma_m16n8k16_f16_f32(d, a, b, d);
}

// A thread's share of copying rows row0 .. row0 + Rows - 1 of a head's [N][D]
// matrix into a swizzled [Rows][D] tile, by cp.async of 16 bytes (8
// elements).  Thread i copies chunk i % (D/8) of rows i / (D/8) + c·kRowStep:
// consecutive threads copy consecutive chunks of a row, so the global reads
// are coalesced, and kRowStep is a multiple of 8, so every copy of a thread
// has the same row % 8, the swizzle's XOR.  Both offsets are therefore
// computed once per thread, each copy adds a constant, and the key loop only
// advances the source by a tile.  Rows at or past rows_left (= N - row0) are
// zero-filled without reading global memory: a zero key row gives a logit 0
// that the mask then hides, a zero V row adds nothing.
template <typename T, int D>
struct TileCopy {
  static constexpr int kChunksPerRow = D / kSwizzleChunkElements;
  static constexpr int kRowStep = kFlashThreads / kChunksPerRow;
  static_assert(kRowStep % 8 == 0, "the swizzle's row % 8 must not change between copies");

  int row;            // this thread's first row of the tile
  int shared_offset;  // swizzled_index<D>(row, its column)
  int global_offset;  // row·D + its column

  __device__ explicit TileCopy(int thread)
      : row(thread / kChunksPerRow),
        shared_offset(swizzled_index<D>(row, thread % kChunksPerRow * kSwizzleChunkElements)),
        global_offset(row * D + thread % kChunksPerRow * kSwizzleChunkElements) {}

  // src: the tile's row 0 (row0 < N, so the pointer is inside the head).
  template <int Rows>
  __device__ __forceinline__ void issue(T* tile, const T* __restrict__ src, int rows_left) const {
    static_assert(Rows % kRowStep == 0);
    RL_UNROLL
    for (int copy = 0; copy < Rows / kRowStep; ++copy) {
      const bool inside = row + copy * kRowStep < rows_left;
      const int from = inside ? global_offset + copy * kRowStep * D : 0;  // never past N
      rl::ptx::cp_async_16_zfill(tile + shared_offset + copy * kRowStep * D, src + from,
                                 inside ? 16u : 0u);
    }
  }
};

// grid (B·H, ⌈N/BlockM⌉), block kFlashThreads, dynamic shared memory
// FlashLayout<D>::kSharedBytes (so the static budget is 0).
// scale_log2 = scale·log2(e) > 0 (scale = 1/√d).
//
// Fragment notation (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane =
// 4g + t.  A (16×16, row-major) a0..a3 = rows g | g+8, columns 2t..2t+1 |
// +8, two T per register; B (16×8) b0, b1 = rows (k) 2t..2t+1 | +8, column
// (n) g; C (16×8 fp32) c0, c1 = (g, 2t), (g, 2t+1); c2, c3 = (g+8, 2t),
// (g+8, 2t+1).  A warp's 32 rows are two such 16-row slabs.
//
// rl-static: kernel=attention_flash_mma_sync max_regs=255 max_smem=0 sass=HMMA,LDGSTS,LDSM,MUFU.EX2
// The hot loop: at most 5.2 instructions per HMMA (d = 128: 4.8; NOPs left
// out), one barrier and 8 cp.async per key tile, the ldmatrix counts of the
// header, no subnormal fix-up (4 FSETP per tile).
// rl-static: kernel=attention_flash_mma_sync loop_ratio=BAR/HMMA==1/128
// rl-static: kernel=attention_flash_mma_sync loop_ratio=LDGSTS/HMMA==1/16
// rl-static: kernel=attention_flash_mma_sync loop_ratio=FSETP/HMMA==1/32
// rl-static: kernel=*attention_flash_mma_sync<*64>* loop_ratio=*/HMMA<=5.2
// rl-static: kernel=*attention_flash_mma_sync<*64>* loop_ratio=LDSM/HMMA==5/16
// rl-static: kernel=*attention_flash_mma_sync<*128>* loop_ratio=*/HMMA<=4.8
// rl-static: kernel=*attention_flash_mma_sync<*128>* loop_ratio=LDSM/HMMA==3/8
template <typename T, int D>
__global__ void __launch_bounds__(kFlashThreads)
    attention_flash_mma_sync(T* __restrict__ O, const T* __restrict__ Q, const T* __restrict__ K,
                             const T* __restrict__ V, int N, bool causal, float scale_log2) {
  using L = FlashLayout<D>;
  constexpr int kHeadSteps = D / 16;       // k-steps of Q·Kᵀ (over the head dim)
  constexpr int kBlockN = L::kBlockN;      // keys per K/V tile
  constexpr int kKeyTiles = kBlockN / 8;   // 8-key n-tiles of S
  constexpr int kKeySteps = kBlockN / 16;  // k-steps of P·V (over the keys)
  constexpr int kDimTiles = D / 8;         // 8-column n-tiles of O

  RL_DYNAMIC_SHARED(T, shared);
  T* q_tile = shared;
  const auto k_tile = [&](int stage) {
    return shared + L::kQElements + stage * 2 * L::kKVElements;
  };
  const auto v_tile = [&](int stage) { return k_tile(stage) + L::kKVElements; };

  const std::int64_t head_offset = static_cast<std::int64_t>(blockIdx.x) * N * D;
  const int m0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kFlashBlockM;  // heaviest first
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4, t = lane % 4;
  const int last_row = min(m0 + kFlashBlockM, N) - 1;
  // Key tiles past the one holding last_row lie wholly above the diagonal.
  const int key_tiles = causal ? last_row / kBlockN + 1 : (N + kBlockN - 1) / kBlockN;
  // Tiles before unmasked_tiles need no mask: all their keys exist (< N)
  // and, causal, none lies right of the block's first row m0.  They run a
  // loop of their own, compiled without the mask (FlashAttention-2 too
  // separates its masking steps), so the hot loop carries no compare.
  const int unmasked_tiles = min(N / kBlockN, causal ? (m0 + 1) / kBlockN : N);

  // This lane's ldmatrix offsets at k-step (or pair) 0, in the layout the
  // products below describe; a 16-column step along a row is an XOR
  // (swizzled_advance), a 16-row step a constant, so the loop adds little.
  const int q_lane = swizzled_index<D>(warp * kFlashWarpRows + lane % 16, lane / 16 * 8);
  const int k_lane = swizzled_index<D>(8 * (lane / 16) + lane % 8, (lane / 8) % 2 * 8);
  const int v_lane = swizzled_index<D>(lane % 16, lane / 16 * 8);

  // One commit group per stage: Q with K_0 and V_0, then K_{j+1} with
  // V_{j+1} issued during tile j.
  const TileCopy<T, D> copy(static_cast<int>(threadIdx.x));
  const T* k_src = K + head_offset;  // row 0 of the next K tile to copy
  const T* v_src = V + head_offset;
  copy.template issue<kFlashBlockM>(q_tile, Q + head_offset + static_cast<std::int64_t>(m0) * D,
                                    N - m0);
  copy.template issue<kBlockN>(k_tile(0), k_src, N);
  copy.template issue<kBlockN>(v_tile(0), v_src, N);
  rl::ptx::cp_async_commit();

  float o_acc[kFlashSlabs][kDimTiles][4] = {};  // O_acc, C fragments
  // Rows g (h = 0) and g + 8 (h = 1) of each slab: the running max of the
  // raw scores (the same in the 4 lanes of the quad) and this lane's share
  // of ℓ (summed across the quad once, at the end).
  static_assert(kFlashSlabs == 2);
  float row_max[kFlashSlabs][2] = {{-INFINITY, -INFINITY}, {-INFINITY, -INFINITY}};
  float row_sum[kFlashSlabs][2] = {};

  const auto key_tile = [&](int tile, auto masked) {
    constexpr bool kMasked = decltype(masked)::value;
    const int stage = tile % kFlashStages;
    const int n0 = tile * kBlockN;
    // This thread's copies of this stage (and Q) have landed: the only group
    // in flight, as the next stage is issued only below.
    rl::ptx::cp_async_wait<0>();
    // The tile's one barrier, needed twice over: a thread's wait covers its
    // own copies only, so every warp sees all of K_tile and V_tile (and Q)
    // only after it; and every warp is past tile - 1, whose stage the
    // prefetch below overwrites.  P·V needs no barrier of its own: V landed
    // with K.
    __syncthreads();
    if (tile + 1 < key_tiles) {
      k_src += kBlockN * D;
      v_src += kBlockN * D;
      copy.template issue<kBlockN>(k_tile(1 - stage), k_src, N - n0 - kBlockN);
      copy.template issue<kBlockN>(v_tile(1 - stage), v_src, N - n0 - kBlockN);
      rl::ptx::cp_async_commit();
    }

    // S = Q·Kᵀ (32 rows × BlockN keys per warp).  A = Q, re-read from shared
    // memory per k-step (in registers it would take D/2 more per thread,
    // which d = 128 cannot spare): lane L addresses row L % 16 of a slab,
    // chunk 2·step + L / 16, so matrices 0..3 are a0..a3.  B = Kᵀ, so B's
    // column n is K's row n, contiguous in shared memory: plain ldmatrix.
    // One x4 loads two 8-key n-tiles: lane L addresses key 16·pair + 8·(L /
    // 16) + L % 8, chunk 2·step + (L / 8) % 2, so matrices 0, 1 are b0, b1
    // of the first n-tile and 2, 3 of the second; each feeds both slabs.
    float s[kFlashSlabs][kKeyTiles][4] = {};
    RL_UNROLL
    for (int step = 0; step < kHeadSteps; ++step) {
      std::uint32_t a[kFlashSlabs][4];
      RL_UNROLL
      for (int slab = 0; slab < kFlashSlabs; ++slab)
        rl::ptx::ldmatrix_x4(a[slab], q_tile + swizzled_advance(q_lane, step) + 16 * slab * D);
      RL_UNROLL
      for (int pair = 0; pair < kKeyTiles / 2; ++pair) {
        std::uint32_t b[4];
        rl::ptx::ldmatrix_x4(b, k_tile(stage) + swizzled_advance(k_lane, step) + 16 * pair * D);
        RL_UNROLL
        for (int slab = 0; slab < kFlashSlabs; ++slab) {
          mma_16816<T>(s[slab][2 * pair], a[slab], {b[0], b[1]});
          mma_16816<T>(s[slab][2 * pair + 1], a[slab], {b[2], b[3]});
        }
      }
    }

    // Online softmax on the accumulators, in log2 units: p = 2^(s·scale_log2
    // - max·scale_log2), one FFMA and one MUFU.EX2 (ftz) per element, the
    // max kept in raw-score units (scale_log2 > 0 keeps its order).  This
    // lane holds keys n0 + 8·nt + 2t + e (nt < BlockN/8, e < 2) of rows g and g + 8
    // of each slab: element s[slab][nt][2h + e].
    RL_UNROLL
    for (int slab = 0; slab < kFlashSlabs; ++slab) {
      RL_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp * kFlashWarpRows + 16 * slab + g + 8 * h;
        float tile_max = -INFINITY;
        RL_UNROLL
        for (int nt = 0; nt < kKeyTiles; ++nt) {
          RL_UNROLL
          for (int e = 0; e < 2; ++e) {
            float& x = s[slab][nt][2 * h + e];
            if constexpr (kMasked) {
              const int key = n0 + 8 * nt + 2 * t + e;
              if (key >= N || (causal && key > row)) x = -INFINITY;
            }
            tile_max = fmaxf(tile_max, x);
          }
        }
        const float new_max = fmaxf(row_max[slab][h], quad_max(tile_max));
        // A row with no visible key so far keeps max -inf: subtract 0
        // instead, so that 2^(-inf) gives 0, not NaN.
        const float max_scaled = new_max == -INFINITY ? 0.0f : new_max * scale_log2;
        const float rescale =  // 0 on the first tile (row_max -inf)
            rl::ptx::ex2_approx_ftz(fmaf(row_max[slab][h], scale_log2, -max_scaled));
        row_max[slab][h] = new_max;
        row_sum[slab][h] *= rescale;
        RL_UNROLL
        for (int dt = 0; dt < kDimTiles; ++dt) {
          o_acc[slab][dt][2 * h] *= rescale;
          o_acc[slab][dt][2 * h + 1] *= rescale;
        }
        RL_UNROLL
        for (int nt = 0; nt < kKeyTiles; ++nt) {
          RL_UNROLL
          for (int e = 0; e < 2; ++e) {
            float& x = s[slab][nt][2 * h + e];
            x = rl::ptx::ex2_approx_ftz(fmaf(x, scale_log2, -max_scaled));
            row_sum[slab][h] += x;  // from the fp32 p, before rounding to T
          }
        }
      }
    }

    // O_acc += P·V.
    //
    // P as the A operand, without leaving the registers: the A fragment of
    // keys 16·step .. +15 holds, per lane, rows g | g+8 × keys 2t..2t+1 | +8.
    // S's C fragments of n-tiles 2·step (keys +0..7) and 2·step + 1 (keys
    // +8..15) hold rows g | g+8 × keys 2t, 2t+1 of each.  So, pair by pair:
    //   a0 = (g,   2t..2t+1)   = c0, c1 of n-tile 2·step
    //   a1 = (g+8, 2t..2t+1)   = c2, c3 of n-tile 2·step
    //   a2 = (g,   2t+8..2t+9) = c0, c1 of n-tile 2·step + 1
    //   a3 = (g+8, 2t+8..2t+9) = c2, c3 of n-tile 2·step + 1
    // Every lane already holds exactly its own A elements: convert two fp32
    // to a T pair per register, no shuffle, no shared memory.
    //
    // B = V, whose column (a head-dim column) is strided in shared memory:
    // ldmatrix.trans delivers b0 = V[2t..2t+1][g].  Lane L addresses key
    // 16·step + L % 16, chunk 2·pair + L / 16: matrices 0, 1 are b0, b1 of
    // the 8-column n-tile 2·pair, 2, 3 of n-tile 2·pair + 1; each feeds both
    // slabs.
    RL_UNROLL
    for (int step = 0; step < kKeySteps; ++step) {
      std::uint32_t p[kFlashSlabs][4];
      RL_UNROLL
      for (int slab = 0; slab < kFlashSlabs; ++slab) {
        const auto& lo = s[slab][2 * step];
        const auto& hi = s[slab][2 * step + 1];
        p[slab][0] = pack_pair<T>(lo[0], lo[1]);
        p[slab][1] = pack_pair<T>(lo[2], lo[3]);
        p[slab][2] = pack_pair<T>(hi[0], hi[1]);
        p[slab][3] = pack_pair<T>(hi[2], hi[3]);
      }
      RL_UNROLL
      for (int pair = 0; pair < kDimTiles / 2; ++pair) {
        std::uint32_t b[4];
        rl::ptx::ldmatrix_x4_trans(b,
                                   v_tile(stage) + swizzled_advance(v_lane, pair) + 16 * step * D);
        RL_UNROLL
        for (int slab = 0; slab < kFlashSlabs; ++slab) {
          mma_16816<T>(o_acc[slab][2 * pair], p[slab], {b[0], b[1]});
          mma_16816<T>(o_acc[slab][2 * pair + 1], p[slab], {b[2], b[3]});
        }
      }
    }
  };
  int tile = 0;
  for (; tile < unmasked_tiles; ++tile) key_tile(tile, std::false_type{});
  for (; tile < key_tiles; ++tile) key_tile(tile, std::true_type{});

  // O = O_acc / ℓ, rounded to T; rows past N are not stored.  Each lane
  // writes T pairs (4 bytes); a quad covers 16 contiguous bytes of a row.  O
  // is written once, a small share of the traffic next to the K/V re-reads,
  // so it is not staged through shared memory for wider stores.
  RL_UNROLL
  for (int slab = 0; slab < kFlashSlabs; ++slab) {
    RL_UNROLL
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + warp * kFlashWarpRows + 16 * slab + g + 8 * h;
      const float inv_sum = 1.0f / quad_sum(row_sum[slab][h]);
      if (row >= N) continue;
      T* out = O + head_offset + static_cast<std::int64_t>(row) * D + 2 * t;
      RL_UNROLL
      for (int dt = 0; dt < kDimTiles; ++dt)
        *reinterpret_cast<Pair<T>*>(out + 8 * dt) =
            make_pair_rn<T>(o_acc[slab][dt][2 * h] * inv_sum, o_acc[slab][dt][2 * h + 1] * inv_sum);
    }
  }
}

template <typename T>
void launch_attention_flash(const Args<T>& a, cudaStream_t stream) {
  dispatch_head_dim("attention_flash_mma_sync", a.d, [&](auto head_dim) {
    constexpr int D = decltype(head_dim)::value;
    launch_fused<&attention_flash_mma_sync<T, D>>("attention_flash_mma_sync", a, kFlashBlockM,
                                                  kFlashThreads, FlashLayout<D>::kSharedBytes,
                                                  stream);
  });
}

RL_DEVICE_INSTANCES(&launch_attention_flash<__nv_bfloat16>, &launch_attention_flash<__half>);

#if !defined(__CUDA_ARCH__)
// Cost model: fused_bytes_model (attention_cost.hpp) with the tiles above,
// at T's size: Q read and O written once, K and V once per 128-row query
// tile (the causal mask skips the tiles above the diagonal).
template <typename T>
double bytes_model_flash(const Dims& p) {
  return fused_bytes_model(p, kFlashBlockM, flash_block_n(p.d), sizeof(T));
}

// The counters (declare_fused_counts): Q, K and V through cp.async with
// src-size 0 past row N, every visited key tile's mma.syncs whole.
template <typename T>
void declare_counts_flash(const Dims& p, roofline::Cost& c) {
  declare_fused_counts(c, p, kFlashBlockM, flash_block_n(p.d), sizeof(T));
}

// The records: the arrow starts at the fp32 fused kernel (same algorithm,
// FP32 pipe); min_cc 80 for mma.sync with bf16 and cp.async.
template <typename T>
KernelRecord flash_record(std::string name) {
  return make_record<T>({.name = std::move(name),
                         .variant = "flash_mma_sync",
                         .baseline = "attention_f32_fused",
                         .launcher = &launch_attention_flash<T>,
                         .needs_scores = false,
                         .bytes_model = &bytes_model_flash<T>,
                         .declare_counts = &declare_counts_flash<T>,
                         .error = kErrorFlashTensorCore,
                         .head_dims = {64, 128},
                         .min_cc = 80,
                         .idea = "tensor cores (mma.sync) fed by ldmatrix from swizzled shared "
                                 "memory, 32 query rows per warp, P kept in registers, K/V "
                                 "double-buffered with cp.async"});
}

RL_REGISTER_KERNEL(flash_record<__nv_bfloat16>("attention_flash_mma_sync_bf16"));
RL_REGISTER_KERNEL(flash_record<__half>("attention_flash_mma_sync_fp16"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
