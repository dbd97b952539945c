// Attention, FlashAttention-3's first step on Hopper (sm_90a only; BF16 and
// FP16 storage, FP32 accumulate): both products on wgmma, Q, K and V brought
// in by TMA, a producer warpgroup and two consumer warpgroups.  The rung
// above attention_flash_mma_sync.cu (the same online softmax on mma.sync).
//
// The algorithm does not change (FlashAttention-2, Algorithm 1): a block owns
// BlockM query rows of one head and walks the keys in tiles of BlockN; per
// tile S = Q·Kᵀ, the online softmax raises each row's running max m, rescales
// ℓ and the accumulator by 2^(m_old - m), and O_acc += P·V; O = O_acc / ℓ at
// the end.  What changes, one idea (FlashAttention-3 §3.1, its first
// ingredient, without pingpong or intra-warpgroup overlap, the rungs above):
// let the Hopper instructions do the work that mma.sync made the warps do.
//
//  1. wgmma.  A consumer warpgroup (4 warps, 64 query rows) computes its S
//     tile (64 x 128) with D/16 wgmma.m64n128k16, both operands read by the
//     tensor cores straight from shared memory through descriptors: no
//     ldmatrix, no per-warp fragments of K.  P·V is D/64 x 8 wgmmas of
//     m64nDk16 with A = P from registers (the register-A form): S's
//     accumulator is, pair for pair, the A fragment P·V needs (below), the
//     same identity the mma.sync kernel uses, now per warpgroup.
//  2. TMA.  One producer thread loads Q once and each K and V tile as
//     64-column boxes in the 128-byte swizzle that wgmma's descriptors read,
//     into a two-stage ring on mbarriers (K and V of a stage each on their own
//     "full" barrier, so S starts while V is still arriving); the consumers
//     release a stage on its "empty" barrier.  No thread computes a copy
//     address.
//  3. Warp specialisation and setmaxnreg.  The producer warpgroup gives its
//     registers back (40), the consumers take them (232): at d = 128 a
//     consumer thread holds S (64 fp32), O_acc (64 fp32) and P (32 registers
//     of bf16 pairs), more than the 168 of __launch_bounds__(384, 1).
//       at launch   384 x 168 = 64512; producer 128 x 40 + consumers 256 x 232
//                   = 64512 <= 65536.
//
// Left for the rungs above (FlashAttention-3 §3.1-3.2): the consumers wait
// for each wgmma group before the softmax, so the softmax's MUFU and FMUL
// work does not overlap the tensor cores (pingpong between the two consumer
// warpgroups; the next tile's Q·Kᵀ issued before this tile's softmax).
//
// Tiles: BlockM = 128 (two consumers of 64 rows), BlockN = 128 keys, head dim
// D = 64 or 128 (a template parameter; other d are refused).  Q, K and V are
// read as one [B·H·N, D] row-major matrix each: a tile of a head's last rows
// runs into the next head's first rows, which the mask hides (keys >= N get
// -inf, so their P is exactly 0 and their V rows add 0) or which are never
// stored (query rows >= N); past the last head TMA fills zeros.  Shared
// memory: Q 128 x D, two stages of K and V (128 x D each), 16-bit: 80 KiB
// (d = 64) or 160 KiB (d = 128), + 1 KiB to align to the swizzle's repeat.
//
// Descriptors (PTX "Shared Memory Matrix Layout", 128-byte swizzle): a box is
// 64 columns (128 bytes) x its rows.  S's A = Q and B = K are both K-major
// (the head dim contiguous): k16 step s of D reads box s / 4 at byte 32 (s %
// 4), SBO = 1024 (8 rows), LBO unused; consumer c's Q rows start 64c rows
// (8 KiB) into each box.  P·V's B = V is N-major (V's rows are the keys, K of
// the product; its columns, the head dim, contiguous): k16 step s starts 16
// rows (2 KiB) further, LBO = the distance between 64-column boxes (16 KiB),
// the transpose bit set.
//
// P as the A operand: thread t of a warpgroup holds, for each 8-key block j,
// S(r, 8j + c .. +1) in s[4j], s[4j + 1] and S(r + 8, ...) in s[4j + 2],
// s[4j + 3] (r = 16 (t / 32) + (t % 32) / 4, c = 2 (t % 4)); A's k16 step kk
// wants (r, 16kk + c ..), (r + 8, same), (r, 16kk + 8 + c ..), (r + 8, same)
// in its four registers: s[8kk .. 8kk + 7] in order, two to a register.
//
// Cost model: fused_bytes_model with BlockM = BlockN = 128 (Q read and O
// written once, K and V once per 128-row query tile; causal skips the tiles
// above the diagonal).  Performance goal (issue 27, unmeasured until a GPU
// run): the FA3-style kernels >= 90% of cuDNN SDPA BF16 at d = 128, N = 8k on
// H100; this first rung is expected well below that (no overlap of softmax
// and wgmma).
//
// SASS (sm_90a, nvcc 13): HGMMA.64x128x16.F32 for S, HGMMA.64x64x16.F32 (d =
// 64) or .64x128x16 (d = 128) with A from registers for P·V, UTMALDG,
// USETMAXREG, SYNCS (mbarrier), MUFU.EX2; no local memory.
// rl-static: kernel=attention_wgmma_tma max_regs=168 max_smem=64
// rl-static: kernel=attention_wgmma_tma arch=90a sass=HGMMA.64x128x16.F32,UTMALDG,MUFU.EX2
// rl-static: kernel=attention_wgmma_tma arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=*attention_wgmma_tma<*,?64,* arch=90a sass=HGMMA.64x64x16.F32
#include "attention/attention_cost.hpp"
#include "attention/attention_fragments.hpp"
#include "attention/attention_launch.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_wgmma_fault.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "attention/attention_error_model.hpp"
#include "attention/attention_workload.hpp"
#endif

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace rl::attention {
namespace wgmma_tma {

constexpr int kWarpgroupThreads = 128;
constexpr int kBlockM = 128;   // query rows per block
constexpr int kBlockN = 128;   // keys per K/V tile
constexpr int kStages = 2;     // K/V ring
constexpr int kConsumers = 2;  // warpgroups, 64 query rows each
constexpr int kSlabRows = kBlockM / kConsumers;
constexpr int kConsumerThreads = kConsumers * kWarpgroupThreads;
constexpr int kThreads = kWarpgroupThreads + kConsumerThreads;  // + the producer
constexpr int kLaunchRegisters = 168;  // what __launch_bounds__(384, 1) allots a thread
constexpr int kProducerRegisters = 40, kConsumerRegisters = 232;
static_assert(kWarpgroupThreads * (kProducerRegisters + kConsumers * kConsumerRegisters) <=
                  kThreads * kLaunchRegisters,
              "the consumers take no more registers than the producer gives back");

constexpr int kSwizzleBytes = 128;  // the 128B swizzle's row: 64 16-bit elements
constexpr int kBoxCols = kSwizzleBytes / 2;
constexpr int kSwizzleRepeat = 1024;  // 8 rows of 128 bytes: boxes start on this
constexpr std::uint32_t kRowGroupBytes = 8 * kSwizzleBytes;  // SBO: 8 rows
constexpr std::uint32_t kUnusedLbo = 16;   // K-major swizzled: not used (encodes 1)
constexpr std::uint32_t kKStepBytes = 32;  // +32 bytes per k16 step of a K-major operand
constexpr std::uint32_t kVStepBytes = 16 * kSwizzleBytes;  // +16 rows per k16 step of V

template <int D>
struct Layout {
  static_assert(D == 64 || D == 128, "head dims 64 and 128");
  static constexpr int kBoxes = D / kBoxCols;  // 64-column boxes across the head dim
  static constexpr int kQBoxBytes = kBlockM * kSwizzleBytes;
  static constexpr int kKVBoxBytes = kBlockN * kSwizzleBytes;
  static constexpr int kQBytes = kBoxes * kQBoxBytes;
  static constexpr int kKVTileBytes = kBoxes * kKVBoxBytes;  // K or V of one stage
  static constexpr int kStageBytes = 2 * kKVTileBytes;       // K, then V
  static constexpr int kDynamicSharedBytes = kQBytes + kStages * kStageBytes + kSwizzleRepeat;
  static_assert(kDynamicSharedBytes <= 227 * 1024, "H100: 227 KiB of dynamic shared memory");
  static constexpr int kSAccumulators = kBlockN / 2;  // 64 x 128 fp32 per warpgroup
  static constexpr int kOAccumulators = D / 2;        // 64 x D fp32 per warpgroup
  static constexpr int kPSteps = kBlockN / 16;        // k16 steps of P·V
};

// Cost model (fused_bytes_model, attention_cost.hpp) with the block tiles above.
template <typename T>
double bytes_model(const Dims& p) {
  return fused_bytes_model(p, kBlockM, kBlockN, sizeof(T));
}

// The boxes start on the swizzle repeat, in the shared window's addresses
// (what TMA and the descriptors see); the dynamic base is 16-byte aligned.
__device__ __forceinline__ unsigned char* aligned_start(unsigned char* dynamic_shared) {
  const std::uint32_t misalignment = rl::ptx::shared_address(dynamic_shared) % kSwizzleRepeat;
  return dynamic_shared + (kSwizzleRepeat - misalignment) % kSwizzleRepeat;
}

__device__ __forceinline__ std::uint64_t swizzled_descriptor(std::uint32_t address,
                                                             std::uint32_t lbo) {
  return rl::ptx::smem_descriptor(address, lbo, kRowGroupBytes, rl::ptx::SmemSwizzle::b128);
}

// The D / 64 boxes of `rows` rows starting at `row` of a [B·H·N, D] tensor,
// counted on `full`.
template <int D>
__device__ __forceinline__ void load_boxes(unsigned char* tile, const rl::ptx::TensorMap* map,
                                           int row, int box_bytes, std::uint64_t* full) {
  RL_ATTENTION_UNROLL
  for (int box = 0; box < Layout<D>::kBoxes; ++box)
    rl::ptx::tma_load_2d(tile + box * box_bytes, map, box * kBoxCols, row, full);
}

// S = Q·Kᵀ for consumer `consumer`: D/16 wgmmas, issued and waited for.
template <typename T, int D>
__device__ __forceinline__ void multiply_q_k(float (&s)[Layout<D>::kSAccumulators],
                                             std::uint32_t q_slab, std::uint32_t k_tile) {
  using L = Layout<D>;
  rl::ptx::wgmma_fence_operand(s);
  rl::ptx::wgmma_fence();
  RL_ATTENTION_UNROLL
  for (int step = 0; step < D / 16; ++step) {
    const std::uint32_t offset = (step % 4) * kKStepBytes;
    const std::uint64_t desc_q =
        swizzled_descriptor(q_slab + step / 4 * L::kQBoxBytes + offset, kUnusedLbo);
    const std::uint64_t desc_k =
        swizzled_descriptor(k_tile + step / 4 * L::kKVBoxBytes + offset, kUnusedLbo);
    rl::ptx::wgmma_m64n128k16_f32<T, /*TransposeB=*/false>(s, desc_q, desc_k, step > 0);
  }
  rl::ptx::wgmma_commit_group();
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(s);
}

// O_acc += P·V: kBlockN / 16 wgmmas with A = P from registers, waited for.
template <typename T, int D>
__device__ __forceinline__ void multiply_p_v(float (&o)[Layout<D>::kOAccumulators],
                                             const std::uint32_t (&p)[Layout<D>::kPSteps][4],
                                             std::uint32_t v_tile) {
  using L = Layout<D>;
  rl::ptx::wgmma_fence_operand(o);
  rl::ptx::wgmma_fence();
  RL_ATTENTION_UNROLL
  for (int step = 0; step < L::kPSteps; ++step) {
    const std::uint64_t desc_v = swizzled_descriptor(v_tile + step * kVStepBytes, L::kKVBoxBytes);
    if constexpr (D == 64)
      rl::ptx::wgmma_m64n64k16_f32_rs<T, /*TransposeB=*/true>(o, p[step], desc_v, 1);
    else
      rl::ptx::wgmma_m64n128k16_f32_rs<T, /*TransposeB=*/true>(o, p[step], desc_v, 1);
  }
  rl::ptx::wgmma_commit_group();
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(o);
}

// The online softmax of one S tile, in place: s becomes 2^(x·scale_log2 -
// m) (P, fp32), O_acc and this thread's share of ℓ are rescaled, and P is
// packed into the A registers of P·V.  `row` is this thread's first row (its
// second is row + 8), `c` its first key column within the tile (2 (t % 4)).
template <typename T, int D, SoftmaxFault F>
__device__ __forceinline__ void online_softmax(float (&s)[Layout<D>::kSAccumulators],
                                               float (&o)[Layout<D>::kOAccumulators],
                                               std::uint32_t (&p)[Layout<D>::kPSteps][4],
                                               float (&row_max)[2], float (&row_sum)[2], int row,
                                               int n0, int c, int N, bool causal, bool masked_tile,
                                               float scale_log2) {
  using L = Layout<D>;
  constexpr int kVisibleAhead = F == SoftmaxFault::causal_off_by_one ? 1 : 0;
  RL_ATTENTION_UNROLL
  for (int h = 0; h < 2; ++h) {
    float tile_max = -INFINITY;
    RL_ATTENTION_UNROLL
    for (int j = 0; j < kBlockN / 8; ++j) {
      RL_ATTENTION_UNROLL
      for (int e = 0; e < 2; ++e) {
        float& x = s[4 * j + 2 * h + e];
        x *= scale_log2;
        const int key = n0 + 8 * j + c + e;
        if (masked_tile && (key >= N || (causal && key > row + 8 * h + kVisibleAhead)))
          x = -INFINITY;
        tile_max = fmaxf(tile_max, x);
      }
    }
    const float new_max = fmaxf(row_max[h], quad_max(tile_max));
    // A row with no visible key so far keeps max -inf: subtract 0 instead, so
    // that 2^(-inf) gives 0, not NaN.
    const float base = new_max == -INFINITY ? 0.0f : new_max;
    const float rescale = rl::ptx::ex2_approx(row_max[h] - base);  // 0 on the first tile
    row_max[h] = new_max;
    row_sum[h] *= rescale;
    if constexpr (F != SoftmaxFault::skip_rescale) {
      RL_ATTENTION_UNROLL
      for (int j = 0; j < D / 8; ++j) {
        o[4 * j + 2 * h] *= rescale;
        o[4 * j + 2 * h + 1] *= rescale;
      }
    }
    RL_ATTENTION_UNROLL
    for (int j = 0; j < kBlockN / 8; ++j) {
      RL_ATTENTION_UNROLL
      for (int e = 0; e < 2; ++e) {
        float& x = s[4 * j + 2 * h + e];
        x = rl::ptx::ex2_approx(x - base);
        row_sum[h] += x;  // from the fp32 p, before rounding to T
      }
    }
  }
  constexpr bool kSwap = F == SoftmaxFault::p_in_wrong_layout;
  RL_ATTENTION_UNROLL
  for (int kk = 0; kk < L::kPSteps; ++kk) {
    p[kk][0] = pack_pair<T>(s[8 * kk], s[8 * kk + 1]);
    p[kk][kSwap ? 2 : 1] = pack_pair<T>(s[8 * kk + 2], s[8 * kk + 3]);
    p[kk][kSwap ? 1 : 2] = pack_pair<T>(s[8 * kk + 4], s[8 * kk + 5]);
    p[kk][3] = pack_pair<T>(s[8 * kk + 6], s[8 * kk + 7]);
  }
}

// grid (B·H, ⌈N / BlockM⌉), block kThreads, dynamic shared memory
// Layout<D>::kDynamicSharedBytes.  scale_log2 = scale·log2(e).
template <typename T, int D, SoftmaxFault F = SoftmaxFault::none>
__global__ void __launch_bounds__(kThreads, 1)
    attention_wgmma_tma(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap q_map,
                        const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap k_map,
                        const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap v_map, T* __restrict__ O,
                        int N, bool causal, float scale_log2) {
  using L = Layout<D>;
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ std::uint64_t q_full;
  __shared__ std::uint64_t k_full[kStages], v_full[kStages];  // stage s holds tile's K, V
  __shared__ std::uint64_t empty[kStages];                    // stage s may be overwritten
  unsigned char* const q_tile = aligned_start(dynamic_shared);
  unsigned char* const ring = q_tile + L::kQBytes;  // stage s: K at s·kStageBytes, then V

  const int thread = static_cast<int>(threadIdx.x);
  const int warpgroup = thread / kWarpgroupThreads;
  const int head_row = static_cast<int>(blockIdx.x) * N;  // the head's row 0 in [B·H·N, D]
  const int m0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kBlockM;  // heaviest first
  const int last_row = min(m0 + kBlockM, N) - 1;
  // Key tiles past the one holding last_row lie wholly above the diagonal.
  const int key_tiles = causal ? last_row / kBlockN + 1 : (N + kBlockN - 1) / kBlockN;

  if (thread == 0) {
    rl::ptx::mbarrier_init(&q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      rl::ptx::mbarrier_init(&k_full[s], 1);
      rl::ptx::mbarrier_init(&v_full[s], 1);
      rl::ptx::mbarrier_init(&empty[s], kConsumerThreads);
    }
    rl::ptx::fence_mbarrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {  // the producer: every warp gives registers back, thread 0 loads
    rl::ptx::setmaxnreg_dec<kProducerRegisters>();
    if (thread == 0) {
      rl::ptx::mbarrier_arrive_expect_tx(&q_full, L::kQBytes);
      load_boxes<D>(q_tile, &q_map, head_row + m0, L::kQBoxBytes, &q_full);
      for (int tile = 0; tile < key_tiles; ++tile) {
        const int stage = tile % kStages, use = tile / kStages;
        if (use > 0) rl::ptx::mbarrier_wait_parity(&empty[stage], (use - 1) & 1);
        unsigned char* const k_tile = ring + stage * L::kStageBytes;
        const int key_row = head_row + tile * kBlockN;
        rl::ptx::mbarrier_arrive_expect_tx(&k_full[stage], L::kKVTileBytes);
        load_boxes<D>(k_tile, &k_map, key_row, L::kKVBoxBytes, &k_full[stage]);
        rl::ptx::mbarrier_arrive_expect_tx(&v_full[stage], L::kKVTileBytes);
        load_boxes<D>(k_tile + L::kKVTileBytes, &v_map, key_row, L::kKVBoxBytes, &v_full[stage]);
      }
    }
    return;
  }

  // Consumer c = warpgroup - 1: query rows m0 + 64c .. + 63.
  rl::ptx::setmaxnreg_inc<kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const int t = thread % kWarpgroupThreads;
  const int slab_row = m0 + consumer * kSlabRows;           // the warpgroup's first query row
  const int row = slab_row + 16 * (t / 32) + (t % 32) / 4;  // this thread's rows: row, row + 8
  const int c = 2 * (t % 4);
  const std::uint32_t q_slab =
      rl::ptx::shared_address(q_tile) + consumer * kSlabRows * kSwizzleBytes;

  float s[L::kSAccumulators];
  RL_ATTENTION_UNROLL
  for (float& x : s) x = 0.0f;
  float o[L::kOAccumulators];
  RL_ATTENTION_UNROLL
  for (float& x : o) x = 0.0f;
  std::uint32_t p[L::kPSteps][4];
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};  // this lane's share of ℓ, summed over the quad at the end

  rl::ptx::mbarrier_wait_parity(&q_full, 0);
  for (int tile = 0; tile < key_tiles; ++tile) {
    const int stage = tile % kStages, use = tile / kStages;
    const int n0 = tile * kBlockN;
    const std::uint32_t k_tile = rl::ptx::shared_address(ring + stage * L::kStageBytes);
    rl::ptx::mbarrier_wait_parity(&k_full[stage], use & 1);
    multiply_q_k<T, D>(s, q_slab, k_tile);
    const bool masked_tile = n0 + kBlockN > N || (causal && n0 + kBlockN - 1 > slab_row);
    online_softmax<T, D, F>(s, o, p, row_max, row_sum, row, n0, c, N, causal, masked_tile,
                            scale_log2);
    rl::ptx::mbarrier_wait_parity(&v_full[stage], use & 1);
    multiply_p_v<T, D>(o, p, k_tile + L::kKVTileBytes);
    rl::ptx::mbarrier_arrive(&empty[stage]);  // this thread's reads of K and V are done
  }

  // O = O_acc / ℓ, rounded to T; rows past N are not stored.
  RL_ATTENTION_UNROLL
  for (int h = 0; h < 2; ++h) {
    const float inv_sum = 1.0f / quad_sum(row_sum[h]);
    if (row + 8 * h >= N) continue;
    T* out = O + (static_cast<std::int64_t>(head_row) + row + 8 * h) * D + c;
    RL_ATTENTION_UNROLL
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<Pair<T>*>(out + 8 * j) =
          make_pair_rn<T>(o[4 * j + 2 * h] * inv_sum, o[4 * j + 2 * h + 1] * inv_sum);
  }
}

// The tensor maps are encoded on the host at every launch (a few microseconds
// of host work), then passed by value as kernel parameters: Q, K and V as
// [B·H·N, D] matrices, boxes of 128 rows x 64 columns.
template <typename T, SoftmaxFault F = SoftmaxFault::none>
void launch_kernel(const Args<T>& a, cudaStream_t stream) {
  const std::string name = "attention_wgmma_tma";
  const std::int64_t rows = static_cast<std::int64_t>(a.B) * a.H * a.N;
  if (rows > 0x7FFFFFFF)
    throw std::invalid_argument(name + ": B·H·N = " + std::to_string(rows) +
                                " rows is beyond TMA's 32-bit coordinates");
  dispatch_head_dim(name, a.d, [&](auto head_dim) {
    constexpr int D = decltype(head_dim)::value;
    constexpr auto element = std::is_same_v<T, __half> ? rl::ptx::TensorMapElement::fp16
                                                       : rl::ptx::TensorMapElement::bf16;
    const auto map = [&](const T* x) {
      return rl::ptx::encode_tensor_map_2d(
          rl::ptx::tensor_map_2d(rows, D, D, sizeof(T), kBlockM, kBoxCols), element, x);
    };
    const int query_tiles = (a.N + kBlockM - 1) / kBlockM;
    if (query_tiles > 65535)
      throw std::invalid_argument(name + ": N = " + std::to_string(a.N) +
                                  " needs more than 65535 query tiles");
    constexpr auto kernel = &attention_wgmma_tma<T, D, F>;
    static const bool opted_in = [] {
      RL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         Layout<D>::kDynamicSharedBytes));
      return true;
    }();
    (void)opted_in;
    rl::launch(kernel, dim3(static_cast<unsigned>(a.B * a.H), static_cast<unsigned>(query_tiles)),
               dim3(kThreads), Layout<D>::kDynamicSharedBytes, stream, map(a.Q), map(a.K), map(a.V),
               a.O, a.N, a.causal, a.scale * kLog2e);
  });
}

}  // namespace wgmma_tma

template <typename T>
void launch_attention_wgmma_tma(const Args<T>& a, cudaStream_t stream) {
  wgmma_tma::launch_kernel<T>(a, stream);
}

RL_DEVICE_INSTANCES(&launch_attention_wgmma_tma<__nv_bfloat16>,
                    &launch_attention_wgmma_tma<__half>);

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::attention_wgmma_tma_bf16(SoftmaxFault fault) {
  switch (fault) {
    case SoftmaxFault::none:
      return &wgmma_tma::launch_kernel<__nv_bfloat16>;
    case SoftmaxFault::skip_rescale:
      return &wgmma_tma::launch_kernel<__nv_bfloat16, SoftmaxFault::skip_rescale>;
    case SoftmaxFault::causal_off_by_one:
      return &wgmma_tma::launch_kernel<__nv_bfloat16, SoftmaxFault::causal_off_by_one>;
    case SoftmaxFault::p_in_wrong_layout:
      return &wgmma_tma::launch_kernel<__nv_bfloat16, SoftmaxFault::p_in_wrong_layout>;
  }
  return nullptr;
}
#endif

#if !defined(__CUDA_ARCH__)
// The records: the arrow starts at the mma.sync flash kernel of the same
// precision (the same online softmax); sm_90a code runs on compute
// capability 9.0 only, under the emulator only as a Hopper (RL_EMU_CC=90).
template <typename T>
KernelRecord wgmma_tma_record(std::string name, std::string baseline) {
  KernelRecord record = make_record<T>(
      {.name = std::move(name),
       .variant = "wgmma_tma",
       .baseline = std::move(baseline),
       .launcher = &launch_attention_wgmma_tma<T>,
       .needs_scores = false,
       .bytes_model = &wgmma_tma::bytes_model<T>,
       .error = kErrorFlashTensorCore,
       .head_dims = {64, 128},
       .gpu_only = !rl::ptx::emulator_runs_sm90a(),
       .min_cc = 90,
       .idea = "wgmma for both products (P from registers), Q/K/V by TMA into a swizzled "
               "mbarrier ring, a producer warpgroup and two consumers with setmaxnreg"});
  record.max_cc = 90;
  return record;
}

RL_REGISTER_KERNEL(wgmma_tma_record<__nv_bfloat16>("attention_wgmma_tma_bf16",
                                                   "attention_flash_mma_sync_bf16"));
RL_REGISTER_KERNEL(wgmma_tma_record<__half>("attention_wgmma_tma_fp16",
                                            "attention_flash_mma_sync_fp16"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
