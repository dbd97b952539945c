// Attention, flash on tensor cores (BF16 and FP16 storage, FP32 accumulate):
// FlashAttention-2's forward pass with mma.sync.  The rung above
// attention_fused_simt.cu, which has the same algorithm on the FP32 pipe.
//
// The algorithm does not change: a block owns BlockM query rows of one head
// (b, h) and walks the keys in tiles of BlockN; per tile S = Q·Kᵀ, the online
// softmax raises each row's running max m, rescales the running sum ℓ and
// the accumulator by exp(m_old - m), and O_acc += P·V; O = O_acc / ℓ once at
// the end (FlashAttention-2, Algorithm 1).  Each warp owns its own 16 query
// rows, so row statistics never cross warps (§3.2).  Causal: key tiles wholly
// above the diagonal are never loaded, the diagonal tile is masked per
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
//     into the other stage, without passing through registers.  K and V are
//     separate commit groups, so Q·Kᵀ starts as soon as K has landed, and
//     the copy of V overlaps it.  Rows past N are zero-filled by the copy.
//
// Thread tile: 4 warps, BlockM = 64 query rows (16 per warp), BlockN = 64
// keys per tile, head dim D = 64 or 128 (a template parameter: the fragment
// arrays are fixed-size and stay in registers; other d are refused).  Per
// thread: Q fragments D/16 × 4 registers (loaded once), S 8 × 4 fp32, O_acc
// D/8 × 4 fp32.  Shared memory: Q plus two stages of K and V, 40 KB (d = 64)
// or 80 KB (d = 128, above the 48 KB default: the launcher opts in).
//
// The exponentials are rl::ptx::ex2_approx (ex2.approx.f32): scale·log2(e)
// is folded into one multiply, so exp(x) = 2^(x·log2 e) is one SFU
// instruction, MUFU.EX2, plus (as ptxas compiles the non-ftz form, nvcc 13,
// sm_80 SASS) a compare and two predicated multiplies that keep results
// below 2^-126 — the same sequence exp2f gives.  Its error is within the
// error model's kExpError.  FlashAttention-2 builds with --use_fast_math,
// where exp2f is ex2.approx.ftz, a lone MUFU.EX2: an ftz wrapper (not in
// rl::ptx yet) would save those three instructions per element, part of the
// non-matmul work FlashAttention-2 §3.1 says to keep small.
//
// What it should buy on the roofline: the same traffic pattern as the fused
// SIMT kernel at half the bytes (intensity ≈ BlockM = 64 FLOP/B), far right
// of the bandwidth diagonal, so the tensor-core roof is the limit.  Left out,
// and measured by the cuDNN baseline: BlockM = 128 with 8 warps, splitting
// the softmax from the matmuls across warps (FlashAttention-3), Hopper's
// wgmma and TMA.  Performance goals (issue 11, unmeasured): ≥ 50% of cuDNN
// SDPA on H100, ≥ 70% on A100 at d = 128, N = 4k.
#include "attention/attention_cost.hpp"
#include "attention/attention_launch.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_swizzle.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "attention/attention_error_model.hpp"
#include "attention/attention_workload.hpp"
#endif

#include <cstring>
#include <type_traits>

namespace rl::attention {

constexpr int kFlashBlockM = 64;  // query rows per block
constexpr int kFlashBlockN = 64;  // keys per K/V tile
constexpr int kFlashWarps = kFlashBlockM / 16;
constexpr int kFlashThreads = 32 * kFlashWarps;
constexpr int kFlashStages = 2;  // K/V double buffer

// Cost model: fused_bytes_model (attention_cost.hpp) with the tiles above,
// at T's size: Q read and O written once, K and V once per 64-row query tile
// (the causal mask skips the tiles above the diagonal).
template <typename T>
double bytes_model_flash(const Dims& p) {
  return fused_bytes_model(p, kFlashBlockM, kFlashBlockN, sizeof(T));
}

template <int D>
struct FlashLayout {
  static_assert(D % 64 == 0, "8 swizzle chunks per row, D/16 k-steps");
  static constexpr int kQElements = kFlashBlockM * D;
  static constexpr int kKVElements = kFlashBlockN * D;
  // Q, then per stage K and V; 16-bit elements.
  static constexpr std::size_t kSharedBytes =
      2 * static_cast<std::size_t>(kQElements + 2 * kFlashStages * kKVElements);
  // The opt-in limit of sm_86, sm_89 and sm_120 (99 KB), the smallest we build for.
  static_assert(kSharedBytes <= 101376, "the flash tiles must fit 99 KB of shared memory");
};

// Two T in one 32-bit register, the lower index in the low half (the mma
// fragment order): __nv_bfloat162 or __half2.
template <typename T>
using Pair = std::conditional_t<std::is_same_v<T, __nv_bfloat16>, __nv_bfloat162, __half2>;

template <typename T>
__device__ __forceinline__ Pair<T> make_pair_rn(float lo, float hi) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __floats2bfloat162_rn(lo, hi);
  else
    return __floats2half2_rn(lo, hi);
}

template <typename T>
__device__ __forceinline__ std::uint32_t pack_pair(float lo, float hi) {
  const Pair<T> pair = make_pair_rn<T>(lo, hi);
  std::uint32_t bits;
  memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

// D = A·B + D, m16n8k16, fp32 accumulators, A and B in T.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4],
                                          const std::uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    rl::ptx::mma_m16n8k16_bf16_f32(d, a, b, d);
  else
    rl::ptx::mma_m16n8k16_f16_f32(d, a, b, d);
}

// Rows row0 .. row0 + Rows - 1 of a head's [N][D] matrix into a swizzled
// [Rows][D] tile, by cp.async of 16 bytes (8 elements): consecutive threads
// copy consecutive chunks of a row, so the global reads are coalesced.  Rows
// >= N are zero-filled without reading global memory: a zero key row gives a
// logit 0 that the mask then hides, a zero V row adds nothing.
template <typename T, int D, int Rows>
__device__ __forceinline__ void copy_tile_async(T* tile, const T* __restrict__ src, int row0,
                                                int N) {
  constexpr int kChunksPerRow = D / kSwizzleChunkElements;
  constexpr int kCopiesPerThread = Rows * kChunksPerRow / kFlashThreads;
  static_assert(kCopiesPerThread * kFlashThreads == Rows * kChunksPerRow);
  for (int copy = 0; copy < kCopiesPerThread; ++copy) {
    const int i = static_cast<int>(threadIdx.x) + copy * kFlashThreads;
    const int r = i / kChunksPerRow;
    const int col = (i % kChunksPerRow) * kSwizzleChunkElements;
    const bool inside = row0 + r < N;
    const T* from = inside ? src + static_cast<std::int64_t>(row0 + r) * D + col : src;
    rl::ptx::cp_async_16_zfill(tile + swizzled_index<D>(r, col), from, inside ? 16u : 0u);
  }
}

// Max or sum over the 4 lanes of a quad (lanes 4g .. 4g + 3 hold row g of a
// fragment, and row g + 8).
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// grid (B·H, ⌈N/BlockM⌉), block kFlashThreads, dynamic shared memory
// FlashLayout<D>::kSharedBytes (so the static budget is 0).
// scale_log2 = scale·log2(e).
//
// Fragment notation (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane =
// 4g + t.  A (16×16, row-major) a0..a3 = rows g | g+8, columns 2t..2t+1 |
// +8, two T per register; B (16×8) b0, b1 = rows (k) 2t..2t+1 | +8, column
// (n) g; C (16×8 fp32) c0, c1 = (g, 2t), (g, 2t+1); c2, c3 = (g+8, 2t),
// (g+8, 2t+1).
//
// Registers measured with nvcc 13: 152 (d = 64) and 221 (d = 128) on sm_80
// and sm_89, 156 / 227 on sm_90a, 128 / 168 on sm_100a, 128 / 206 on
// sm_120; no spills, no local memory, on every architecture we build.  The
// tensor-core path in SASS: HMMA (mma.sync), LDGSTS (cp.async), LDSM
// (ldmatrix, .MT88 for .trans), MUFU.EX2 (ex2.approx).
// rl-static: kernel=*attention_flash_mma_sync<*64>* max_regs=168 max_smem=0
// rl-static: kernel=*attention_flash_mma_sync<*128>* max_regs=240 max_smem=0
// rl-static: kernel=attention_flash_mma_sync max_regs=240 max_smem=0 sass=HMMA,LDGSTS,LDSM,MUFU.EX2
template <typename T, int D>
__global__ void __launch_bounds__(kFlashThreads)
    attention_flash_mma_sync(T* __restrict__ O, const T* __restrict__ Q, const T* __restrict__ K,
                             const T* __restrict__ V, int N, bool causal, float scale_log2) {
  using L = FlashLayout<D>;
  constexpr int kHeadSteps = D / 16;            // k-steps of Q·Kᵀ (over the head dim)
  constexpr int kKeyTiles = kFlashBlockN / 8;   // 8-key n-tiles of S
  constexpr int kKeySteps = kFlashBlockN / 16;  // k-steps of P·V (over the keys)
  constexpr int kDimTiles = D / 8;              // 8-column n-tiles of O

  RL_DYNAMIC_SHARED(T, shared);
  T* q_tile = shared;
  const auto k_tile = [&](int stage) {
    return shared + L::kQElements + stage * 2 * L::kKVElements;
  };
  const auto v_tile = [&](int stage) { return k_tile(stage) + L::kKVElements; };

  const std::int64_t head_offset = static_cast<std::int64_t>(blockIdx.x) * N * D;
  const T* q_head = Q + head_offset;
  const T* k_head = K + head_offset;
  const T* v_head = V + head_offset;
  const int m0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kFlashBlockM;  // heaviest first
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int g = lane / 4, t = lane % 4;
  const int last_row = min(m0 + kFlashBlockM, N) - 1;
  // Key tiles past the one holding last_row lie wholly above the diagonal.
  const int key_tiles =
      causal ? last_row / kFlashBlockN + 1 : (N + kFlashBlockN - 1) / kFlashBlockN;

  // Commit groups, oldest first: Q, K_0, V_0, then K_{j+1}, V_{j+1} per tile
  // j (empty at the end, so the counts below hold for every j).
  copy_tile_async<T, D, kFlashBlockM>(q_tile, q_head, m0, N);
  rl::ptx::cp_async_commit();
  copy_tile_async<T, D, kFlashBlockN>(k_tile(0), k_head, 0, N);
  rl::ptx::cp_async_commit();
  copy_tile_async<T, D, kFlashBlockN>(v_tile(0), v_head, 0, N);
  rl::ptx::cp_async_commit();

  std::uint32_t q_frag[kHeadSteps][4];  // the warp's 16 rows of Q, A fragments
  float o_acc[kDimTiles][4] = {};       // O_acc, C fragments
  // Rows g (h = 0) and g + 8 (h = 1) of the warp's slab: the running max
  // (log2 units, the same in the 4 lanes of the quad) and this lane's share
  // of ℓ (summed across the quad once, at the end).
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};

  for (int tile = 0; tile < key_tiles; ++tile) {
    const int stage = tile % kFlashStages;
    const int n0 = tile * kFlashBlockN;
    rl::ptx::cp_async_wait<1>();  // this thread's Q and K_tile have landed (V_tile may not)
    __syncthreads();              // everyone's have; and every warp is done with tile - 1
    if (tile == 0) {
      // Q once: lane L addresses row L % 16 of the slab, chunk 2·step + L / 16,
      // so matrices 0..3 are (rows 0-7 | 8-15) × (columns 0-7 | 8-15) = a0..a3.
      for (int step = 0; step < kHeadSteps; ++step)
        rl::ptx::ldmatrix_x4(q_frag[step], q_tile + swizzled_index<D>(warp * 16 + lane % 16,
                                                                      (2 * step + lane / 16) * 8));
    }
    // Prefetch tile + 1 into the other stage, which tile - 1 used: the
    // barrier above is what makes overwriting it safe.
    if (tile + 1 < key_tiles)
      copy_tile_async<T, D, kFlashBlockN>(k_tile(1 - stage), k_head, n0 + kFlashBlockN, N);
    rl::ptx::cp_async_commit();
    if (tile + 1 < key_tiles)
      copy_tile_async<T, D, kFlashBlockN>(v_tile(1 - stage), v_head, n0 + kFlashBlockN, N);
    rl::ptx::cp_async_commit();

    // S = Q·Kᵀ (16 rows × 64 keys per warp).  B = Kᵀ, so B's column n is K's
    // row n, contiguous in shared memory: plain ldmatrix gives b0, b1.  One
    // x4 loads two 8-key n-tiles: lane L addresses key 16·pair + 8·(L / 16) +
    // L % 8, chunk 2·step + (L / 8) % 2, so matrices 0, 1 are b0, b1 of the
    // first n-tile and 2, 3 of the second.
    float s[kKeyTiles][4] = {};
    for (int step = 0; step < kHeadSteps; ++step) {
      for (int pair = 0; pair < kKeyTiles / 2; ++pair) {
        std::uint32_t b[4];
        rl::ptx::ldmatrix_x4(
            b, k_tile(stage) + swizzled_index<D>(16 * pair + 8 * (lane / 16) + lane % 8,
                                                 (2 * step + (lane / 8) % 2) * 8));
        mma_16816<T>(s[2 * pair], q_frag[step], {b[0], b[1]});
        mma_16816<T>(s[2 * pair + 1], q_frag[step], {b[2], b[3]});
      }
    }

    // Online softmax on the accumulators.  This lane holds keys n0 + 8·nt +
    // 2t + e (nt < 8, e < 2) of rows g and g + 8: element s[nt][2h + e].
    const bool masked_tile = n0 + kFlashBlockN > N || (causal && n0 + kFlashBlockN - 1 > m0);
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + warp * 16 + g + 8 * h;
      float tile_max = -INFINITY;
      for (int nt = 0; nt < kKeyTiles; ++nt) {
        for (int e = 0; e < 2; ++e) {
          float& x = s[nt][2 * h + e];
          x *= scale_log2;
          const int key = n0 + 8 * nt + 2 * t + e;
          if (masked_tile && (key >= N || (causal && key > row))) x = -INFINITY;
          tile_max = fmaxf(tile_max, x);
        }
      }
      const float new_max = fmaxf(row_max[h], quad_max(tile_max));
      // A row with no visible key so far keeps max -inf: subtract 0 instead,
      // so that 2^(-inf) gives 0, not NaN.
      const float base = new_max == -INFINITY ? 0.0f : new_max;
      const float rescale = rl::ptx::ex2_approx(row_max[h] - base);  // 0 on the first tile
      row_max[h] = new_max;
      row_sum[h] *= rescale;
      for (int dt = 0; dt < kDimTiles; ++dt) {
        o_acc[dt][2 * h] *= rescale;
        o_acc[dt][2 * h + 1] *= rescale;
      }
      for (int nt = 0; nt < kKeyTiles; ++nt) {
        for (int e = 0; e < 2; ++e) {
          float& x = s[nt][2 * h + e];
          x = rl::ptx::ex2_approx(x - base);
          row_sum[h] += x;  // from the fp32 p, before rounding to T
        }
      }
    }

    rl::ptx::cp_async_wait<2>();  // V_tile has landed (only the prefetch may be pending)
    __syncthreads();

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
    // the 8-column n-tile 2·pair, 2, 3 of n-tile 2·pair + 1.
    for (int step = 0; step < kKeySteps; ++step) {
      const std::uint32_t p[4] = {
          pack_pair<T>(s[2 * step][0], s[2 * step][1]),
          pack_pair<T>(s[2 * step][2], s[2 * step][3]),
          pack_pair<T>(s[2 * step + 1][0], s[2 * step + 1][1]),
          pack_pair<T>(s[2 * step + 1][2], s[2 * step + 1][3]),
      };
      for (int pair = 0; pair < kDimTiles / 2; ++pair) {
        std::uint32_t b[4];
        rl::ptx::ldmatrix_x4_trans(
            b,
            v_tile(stage) + swizzled_index<D>(16 * step + lane % 16, (2 * pair + lane / 16) * 8));
        mma_16816<T>(o_acc[2 * pair], p, {b[0], b[1]});
        mma_16816<T>(o_acc[2 * pair + 1], p, {b[2], b[3]});
      }
    }
  }

  // O = O_acc / ℓ, rounded to T; rows past N are not stored.  Each lane
  // writes T pairs (4 bytes); a quad covers 16 contiguous bytes of a row.  O
  // is written once, a small share of the traffic next to the K/V re-reads,
  // so it is not staged through shared memory for wider stores.
  for (int h = 0; h < 2; ++h) {
    const int row = m0 + warp * 16 + g + 8 * h;
    const float inv_sum = 1.0f / quad_sum(row_sum[h]);
    if (row >= N) continue;
    T* out = O + head_offset + static_cast<std::int64_t>(row) * D + 2 * t;
    for (int dt = 0; dt < kDimTiles; ++dt)
      *reinterpret_cast<Pair<T>*>(out + 8 * dt) =
          make_pair_rn<T>(o_acc[dt][2 * h] * inv_sum, o_acc[dt][2 * h + 1] * inv_sum);
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
                         .error = kErrorFlashTensorCore,
                         .head_dims = {64, 128},
                         .min_cc = 80,
                         .idea = "tensor cores (mma.sync) fed by ldmatrix from swizzled shared "
                                 "memory, P kept in registers, K/V double-buffered with cp.async"});
}

RL_REGISTER_KERNEL(flash_record<__nv_bfloat16>("attention_flash_mma_sync_bf16"));
RL_REGISTER_KERNEL(flash_record<__half>("attention_flash_mma_sync_fp16"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
