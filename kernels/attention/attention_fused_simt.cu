// Attention, fused (FP32 SIMT): one kernel, FlashAttention-2's forward pass.
// The rung above attention_naive.cu.
//
// The idea: never materialise S or P.  A block owns BlockM query rows of one
// head and walks over the keys in tiles of BlockN; each K and V tile goes
// through shared memory once and is used by all BlockM rows.  The softmax is
// computed online, as in FlashAttention-2's Algorithm 1:
//   - the block loads its Q tile once (Algorithm 1's outer loop over query
//     blocks is our grid; the inner loop over key blocks is the loop below);
//   - for each K tile: S = scale·Q·Kᵀ in registers; each row's running max m
//     is raised to the tile's max; the probabilities exp(S - m) go to shared
//     memory (on chip) as P;
//   - when the max grew from m_old to m, the row's running sum ℓ and its
//     output accumulator are first multiplied by exp(m_old - m), so everything
//     accumulated so far is expressed against the new max;
//   - O_acc += P·V with the V tile (which replaces K in the same buffer);
//   - after the last tile, O = O_acc / ℓ: one division per element, at the end.
// As in FlashAttention-2 §3, each warp owns its own 16 query rows, so the
// row statistics never cross warps (8 lanes share a row: shuffles only); and
// ℓ is kept per lane as a partial over the lane's keys, summed once at the end.
// Causal: key tiles wholly above the diagonal are never loaded; the tiles the
// diagonal crosses (and the ragged last tile, keys >= N) are masked per
// element.  Blocks are issued heaviest first (the last query tiles see the
// most keys) so the causal grid does not end on a tail of long blocks.
//
// Thread tile: 4 warps × 16 rows = BlockM = 64 rows, 128 threads.  Lane l of a
// warp works on rows warp·16 + l/8 + 4r (r < 4); for S on keys l%8 + 8c
// (c < BlockN/8), for O on head-dim columns 4·(l%8) + 32j (float4s, j < d/32).
// Per step of the Q·Kᵀ loop a thread reads 4 + 8 float4s from shared memory
// for 128 FMAs; the P·V loop 4 floats + d/32 float4s for d/2 FMAs.
//
// What it should buy: global traffic is Q and O once plus K and V once per
// query tile (half of that with the mask), so the intensity is about BlockM/2
// = 32 FLOP/B against the naive path's ~3, to the right of the FP32 ridge: the
// point leaves the bandwidth diagonal and heads for the fp32.fma roof.  Device
// memory stays O(N·d) (no N² scratch).  The head dim d is a template
// parameter (loops unroll, accumulators stay in registers), compiled for
// d = 64 and 128; any other d is refused with an error naming the supported
// ones (make_record's head_dims), never run generically.
#include "attention/attention_launch.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "attention/attention_cost.hpp"
#include "attention/attention_error_model.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_workload.hpp"
#endif

namespace rl::attention {

constexpr int kFusedBlockM = 64;  // query rows per block
constexpr int kFusedBlockN = 64;  // keys per K/V tile

constexpr int kLanesPerRow = 8;                            // lanes sharing a query row
constexpr int kRowGroups = 32 / kLanesPerRow;              // row groups per warp (4)
constexpr int kRowsPerWarp = 16;                           // FlashAttention-2: a warp owns its rows
constexpr int kRowsPerThread = kRowsPerWarp / kRowGroups;  // 4

template <int D, int BlockM, int BlockN>
struct FusedLayout {
  static_assert(BlockM % kRowsPerWarp == 0 && BlockN % kLanesPerRow == 0 &&
                D % (4 * kLanesPerRow) == 0);
  static constexpr int kThreads = 32 * (BlockM / kRowsPerWarp);
  static constexpr int kKeysPerThread = BlockN / kLanesPerRow;
  static constexpr int kChunksPerThread = D / (4 * kLanesPerRow);  // float4s of a row of O
  // Row pitches in floats.  Q/K/V rows are padded by 16 bytes: the 8 lanes of
  // a quarter-warp read 8 different rows at the same column, which then fall
  // in 8 different 16-byte bank groups.  P rows are padded by 8 floats so the
  // 4 row groups of a warp write to different banks.
  static constexpr int kPitchD = D + 4;
  static constexpr int kPitchP = BlockN + 8;
  static constexpr std::size_t kSharedBytes =
      sizeof(float) * static_cast<std::size_t>((BlockM + BlockN) * kPitchD + BlockM * kPitchP);
  // The opt-in limit of sm_86, sm_89 and sm_120 (99 KB), the smallest we build for.
  static_assert(kSharedBytes <= 101376, "the fused tiles must fit 99 KB of shared memory");
};

// Rows row0 .. row0 + Rows - 1 of a head's [N][D] matrix into a [Rows][D + 4]
// tile, float4 by float4 (coalesced: a row is contiguous); rows >= N become
// zeros, so a ragged last tile adds nothing to S and nothing to O.
template <int D, int Rows, int Threads>
__device__ __forceinline__ void load_rows(float* tile, const float* __restrict__ src, int row0,
                                          int N) {
  constexpr int kVecsPerRow = D / 4;
  for (int i = static_cast<int>(threadIdx.x); i < Rows * kVecsPerRow; i += Threads) {
    const int r = i / kVecsPerRow;
    const int c = (i % kVecsPerRow) * 4;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (row0 + r < N)
      v = *reinterpret_cast<const float4*>(src + static_cast<std::int64_t>(row0 + r) * D + c);
    *reinterpret_cast<float4*>(tile + r * (D + 4) + c) = v;
  }
}

// Max or sum over the 8 lanes that share a row (lanes differing in bits 0-2).
__device__ __forceinline__ float row_group_max(float v) {
  for (int offset = kLanesPerRow / 2; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}
__device__ __forceinline__ float row_group_sum(float v) {
  for (int offset = kLanesPerRow / 2; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// grid (B·H, ⌈N/BlockM⌉), block FusedLayout::kThreads, dynamic shared memory
// FusedLayout::kSharedBytes.  scale_log2 = scale·log2(e): exp(x) = exp2(x·log2 e).
//
// Shared memory is dynamic (kSharedBytes, checked against 99 KB above), so
// the static budget is 0.  Registers: 128 (d = 64) and 168 (d = 128) measured
// with nvcc 13 on sm_80 to sm_120, no spills.
// rl-static: kernel=*attention_fused_simt<64,* max_regs=136 max_smem=0 sass=LDS.128,MUFU.EX2
// rl-static: kernel=*attention_fused_simt<128,* max_regs=176 max_smem=0 sass=LDS.128,MUFU.EX2
template <int D, int BlockM, int BlockN>
__global__ void __launch_bounds__(FusedLayout<D, BlockM, BlockN>::kThreads)
    attention_fused_simt(float* __restrict__ O, const float* __restrict__ Q,
                         const float* __restrict__ K, const float* __restrict__ V, int N,
                         bool causal, float scale_log2) {
  using L = FusedLayout<D, BlockM, BlockN>;
  constexpr int R = kRowsPerThread;
  constexpr int C = L::kKeysPerThread;
  constexpr int J = L::kChunksPerThread;
  RL_DYNAMIC_SHARED(float, shared);
  float* q_tile = shared;                         // [BlockM][kPitchD]
  float* kv_tile = q_tile + BlockM * L::kPitchD;  // [BlockN][kPitchD]: K, then V
  float* p_tile = kv_tile + BlockN * L::kPitchD;  // [BlockM][kPitchP]

  const std::int64_t head_offset = static_cast<std::int64_t>(blockIdx.x) * N * D;
  const int m0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * BlockM;  // heaviest first
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int group = lane / kLanesPerRow;
  const int col = lane % kLanesPerRow;
  const auto local_row = [&](int r) { return warp * kRowsPerWarp + group + kRowGroups * r; };

  load_rows<D, BlockM, L::kThreads>(q_tile, Q + head_offset, m0, N);

  float acc[R][J][4] = {};
  float row_max[R], row_sum[R];  // running max (log2 units), this lane's share of ℓ
  for (int r = 0; r < R; ++r) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.0f;
  }

  const int last_row = min(m0 + BlockM, N) - 1;
  const int key_end = causal ? last_row + 1 : N;  // tiles past it lie wholly above the diagonal
  for (int n0 = 0; n0 < key_end; n0 += BlockN) {
    __syncthreads();  // the previous P·V is done with kv_tile (and q_tile is in)
    load_rows<D, BlockN, L::kThreads>(kv_tile, K + head_offset, n0, N);
    __syncthreads();

    // S = Q·Kᵀ for this thread's R rows × C keys.
    float s[R][C] = {};
    for (int k = 0; k < D; k += 4) {
      float4 q[R];
      for (int r = 0; r < R; ++r)
        q[r] = *reinterpret_cast<const float4*>(q_tile + local_row(r) * L::kPitchD + k);
      for (int c = 0; c < C; ++c) {
        const float4 kv =
            *reinterpret_cast<const float4*>(kv_tile + (col + kLanesPerRow * c) * L::kPitchD + k);
        for (int r = 0; r < R; ++r) {
          s[r][c] += q[r].x * kv.x;
          s[r][c] += q[r].y * kv.y;
          s[r][c] += q[r].z * kv.z;
          s[r][c] += q[r].w * kv.w;
        }
      }
    }

    // Online softmax: mask, raise the running max, rescale, P to shared memory.
    const bool masked_tile = n0 + BlockN > N || (causal && n0 + BlockN - 1 > m0);
    for (int r = 0; r < R; ++r) {
      const int row = m0 + local_row(r);
      float tile_max = -INFINITY;
      for (int c = 0; c < C; ++c) {
        const int key = n0 + col + kLanesPerRow * c;
        s[r][c] *= scale_log2;
        if (masked_tile && (key >= N || (causal && key > row))) s[r][c] = -INFINITY;
        tile_max = fmaxf(tile_max, s[r][c]);
      }
      const float new_max = fmaxf(row_max[r], row_group_max(tile_max));
      // A row with no visible key so far keeps max -inf: subtract 0 instead so
      // that exp2 gives 0, not NaN.
      const float base = new_max == -INFINITY ? 0.0f : new_max;
      const float rescale = exp2f(row_max[r] - base);  // exp(m_old - m_new); 0 on the first tile
      row_max[r] = new_max;
      row_sum[r] *= rescale;
      for (int j = 0; j < J; ++j)
        for (int e = 0; e < 4; ++e) acc[r][j][e] *= rescale;
      for (int c = 0; c < C; ++c) {
        const float p = exp2f(s[r][c] - base);
        row_sum[r] += p;
        p_tile[local_row(r) * L::kPitchP + col + kLanesPerRow * c] = p;
      }
    }
    __syncthreads();  // every warp is done with K (and P is written)
    load_rows<D, BlockN, L::kThreads>(kv_tile, V + head_offset, n0, N);
    __syncthreads();

    // O_acc += P·V: this thread's R rows × J float4 columns.
    for (int n = 0; n < BlockN; ++n) {
      float p[R];
      for (int r = 0; r < R; ++r) p[r] = p_tile[local_row(r) * L::kPitchP + n];
      for (int j = 0; j < J; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(kv_tile + n * L::kPitchD +
                                                          4 * (col + kLanesPerRow * j));
        for (int r = 0; r < R; ++r) {
          acc[r][j][0] += p[r] * v.x;
          acc[r][j][1] += p[r] * v.y;
          acc[r][j][2] += p[r] * v.z;
          acc[r][j][3] += p[r] * v.w;
        }
      }
    }
  }

  // O = O_acc / ℓ, ℓ summed over the row's 8 lanes.
  for (int r = 0; r < R; ++r) {
    const float inv_sum = 1.0f / row_group_sum(row_sum[r]);
    const int row = m0 + local_row(r);
    if (row >= N) continue;
    float* out = O + head_offset + static_cast<std::int64_t>(row) * D;
    for (int j = 0; j < J; ++j)
      *reinterpret_cast<float4*>(out + 4 * (col + kLanesPerRow * j)) =
          make_float4(acc[r][j][0] * inv_sum, acc[r][j][1] * inv_sum, acc[r][j][2] * inv_sum,
                      acc[r][j][3] * inv_sum);
  }
}

void launch_attention_fused(const Args<float>& a, cudaStream_t stream) {
  dispatch_head_dim("attention_f32_fused", a.d, [&](auto head_dim) {
    constexpr int D = decltype(head_dim)::value;
    using L = FusedLayout<D, kFusedBlockM, kFusedBlockN>;
    launch_fused<&attention_fused_simt<D, kFusedBlockM, kFusedBlockN>>(
        "attention_f32_fused", a, kFusedBlockM, L::kThreads, L::kSharedBytes, stream);
  });
}

#if !defined(__CUDA_ARCH__)
// Cost model: fused_bytes_model (attention_cost.hpp) with the tiles above.
double bytes_model_fused(const Dims& p) {
  return fused_bytes_model(p, kFusedBlockM, kFusedBlockN, sizeof(float));
}

RL_REGISTER_KERNEL(make_record<float>({.name = "attention_f32_fused",
                                       .variant = "fused_simt",
                                       .baseline = "attention_f32_naive",
                                       .launcher = &launch_attention_fused,
                                       .needs_scores = false,
                                       .bytes_model = &bytes_model_fused,
                                       .error = kErrorSimtFp32,
                                       .head_dims = {64, 128},
                                       .idea = "one kernel: K/V tiles in shared memory and the "
                                               "online softmax, S and P never leave the chip",
                                       .fuses = "attention_f32_naive"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
