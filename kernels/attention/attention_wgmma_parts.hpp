// The parts the wgmma attention rungs share (attention_wgmma_tma_sm90a.cu and
// the rungs above it; sm_90a, bf16 or fp16 storage, fp32 accumulate): the
// tiles and the shared-memory layout, the TMA producer and its mbarriers,
// each product's wgmmas (issued and committed; the rung decides when to wait),
// the online softmax on the accumulator fragment in three steps (the tile's
// statistics, O's rescale, P packed for the register-A wgmma), the epilogue,
// the launch with its tensor maps and (host) the record.  The layouts and the
// descriptor strides are explained in attention_wgmma_tma_sm90a.cu's header;
// a rung's own header says what it does differently.
#pragma once

#include "attention/attention_cost.hpp"
#include "attention/attention_fragments.hpp"
#include "attention/attention_launch.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_wgmma_fault.hpp"
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)
#include "attention/attention_error_model.hpp"
#include "attention/attention_workload.hpp"
#endif

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace rl::attention::wgmma {

constexpr int kWarpgroupThreads = 128;
constexpr int kBlockM = 128;   // query rows per block
constexpr int kBlockN = 128;   // keys per K/V tile
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

// Stages: of the K/V ring, 2 by default; a rung that holds two stages while
// the next loads needs 3 (its header says why).
template <int D, int Stages = 2>
struct Layout {
  static_assert(D == 64 || D == 128, "head dims 64 and 128");
  static constexpr int kStages = Stages, kHeadDim = D;
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

// The counters (declare_flattened_tma_counts): Q, K and V through TMA boxes of
// 128 rows of the [B·H·N, d] maps, every visited key tile's wgmmas whole.
template <typename T>
void declare_counts(const Dims& p, roofline::Cost& c) {
  declare_flattened_tma_counts(c, p, kBlockM, kBlockN, sizeof(T));
}

// The barriers of a block: Q's, and per stage K's and V's "full" (the
// producer's arrive_expect_tx plus the bytes) and the stage's "empty" (every
// consumer thread has read K and V).
template <int Stages>
struct Barriers {
  std::uint64_t q_full;
  std::uint64_t k_full[Stages], v_full[Stages];
  std::uint64_t empty[Stages];
};

// A block's query tile: its head's row 0 in the [B·H·N, D] view, its first
// query row within the head, and the key tiles it reads (those past the one
// holding its last row lie wholly above the causal diagonal).
struct QueryTile {
  int head_row, m0, key_tiles;
};

__host__ __device__ constexpr QueryTile query_tile(int head, int tile, int N, bool causal) {
  const int m0 = tile * kBlockM;
  const int last_row = (m0 + kBlockM < N ? m0 + kBlockM : N) - 1;
  return {head * N, m0, causal ? last_row / kBlockN + 1 : (N + kBlockN - 1) / kBlockN};
}

// Device code only: the host compiler sees this header too.
#if defined(__CUDACC__) || defined(RL_EMULATE)

// The boxes start on the swizzle repeat, in the shared window's addresses
// (what TMA and the descriptors see); the dynamic base is 16-byte aligned.
__device__ __forceinline__ unsigned char* aligned_start(unsigned char* dynamic_shared) {
  const std::uint32_t misalignment = rl::ptx::shared_address(dynamic_shared) % kSwizzleRepeat;
  return dynamic_shared + (kSwizzleRepeat - misalignment) % kSwizzleRepeat;
}

// Every thread of the block calls it; the leader initialises.
template <int Stages>
__device__ __forceinline__ void init_barriers(Barriers<Stages>& b, bool leader) {
  if (leader) {
    rl::ptx::mbarrier_init(&b.q_full, 1);
    for (int s = 0; s < Stages; ++s) {
      rl::ptx::mbarrier_init(&b.k_full[s], 1);
      rl::ptx::mbarrier_init(&b.v_full[s], 1);
      rl::ptx::mbarrier_init(&b.empty[s], kConsumerThreads);
    }
    rl::ptx::fence_mbarrier_init();
  }
  __syncthreads();
}

__device__ __forceinline__ std::uint64_t swizzled_descriptor(std::uint32_t address,
                                                             std::uint32_t lbo) {
  return rl::ptx::smem_descriptor(address, lbo, kRowGroupBytes, rl::ptx::SmemSwizzle::b128);
}

// The D / 64 boxes of the rows from `row` of a [B·H·N, D] tensor, counted on `full`.
template <int D>
__device__ __forceinline__ void load_boxes(unsigned char* tile, const rl::ptx::TensorMap* map,
                                           int row, int box_bytes, std::uint64_t* full) {
  RL_UNROLL
  for (int box = 0; box < Layout<D>::kBoxes; ++box)
    rl::ptx::tma_load_2d(tile + box * box_bytes, map, box * kBoxCols, row, full);
}

// The producer (one thread) of a ring laid out as L: Q once, then key tile
// j's K and V into stage j % kStages on its use j / kStages, from the second
// use on after the consumers released the previous one (empty's phase use - 1).
template <typename L>
__device__ __forceinline__ void produce(const rl::ptx::TensorMap* q_map,
                                        const rl::ptx::TensorMap* k_map,
                                        const rl::ptx::TensorMap* v_map, Barriers<L::kStages>& b,
                                        unsigned char* q_tile, unsigned char* ring,
                                        QueryTile tile) {
  constexpr int D = L::kHeadDim;
  rl::ptx::mbarrier_arrive_expect_tx(&b.q_full, L::kQBytes);
  load_boxes<D>(q_tile, q_map, tile.head_row + tile.m0, L::kQBoxBytes, &b.q_full);
  for (int j = 0; j < tile.key_tiles; ++j) {
    const int stage = j % L::kStages, use = j / L::kStages;
    if (use > 0) rl::ptx::mbarrier_wait_parity(&b.empty[stage], (use - 1) & 1);
    unsigned char* const k_tile = ring + stage * L::kStageBytes;
    const int key_row = tile.head_row + j * kBlockN;
    rl::ptx::mbarrier_arrive_expect_tx(&b.k_full[stage], L::kKVTileBytes);
    load_boxes<D>(k_tile, k_map, key_row, L::kKVBoxBytes, &b.k_full[stage]);
    rl::ptx::mbarrier_arrive_expect_tx(&b.v_full[stage], L::kKVTileBytes);
    load_boxes<D>(k_tile + L::kKVTileBytes, v_map, key_row, L::kKVBoxBytes, &b.v_full[stage]);
  }
}

// Where a consumer thread works: its warpgroup's first query row (slab_row),
// its own rows (row, row + 8), its first key column in a tile (c), and its
// warpgroup's 64 rows of Q in the window.
struct ConsumerThread {
  int slab_row, row, c;
  std::uint32_t q_slab;
};

__device__ __forceinline__ ConsumerThread consumer_thread(QueryTile tile, int consumer, int t,
                                                          unsigned char* q_tile) {
  const int slab_row = tile.m0 + consumer * kSlabRows;
  return {slab_row, slab_row + 16 * (t / 32) + (t % 32) / 4, 2 * (t % 4),
          rl::ptx::shared_address(q_tile) + consumer * kSlabRows * kSwizzleBytes};
}

// S = Q·Kᵀ of a consumer: D/16 wgmmas, committed as one group, not waited for.
template <typename T, int D>
__device__ __forceinline__ void issue_q_k(float (&s)[Layout<D>::kSAccumulators],
                                          std::uint32_t q_slab, std::uint32_t k_tile) {
  using L = Layout<D>;
  rl::ptx::wgmma_fence_operand(s);
  rl::ptx::wgmma_fence();
  RL_UNROLL
  for (int step = 0; step < D / 16; ++step) {
    const std::uint32_t offset = (step % 4) * kKStepBytes;
    const std::uint64_t desc_q =
        swizzled_descriptor(q_slab + step / 4 * L::kQBoxBytes + offset, kUnusedLbo);
    const std::uint64_t desc_k =
        swizzled_descriptor(k_tile + step / 4 * L::kKVBoxBytes + offset, kUnusedLbo);
    rl::ptx::wgmma_m64n128k16_f32<T, /*TransposeB=*/false>(s, desc_q, desc_k, step > 0);
  }
  rl::ptx::wgmma_commit_group();
}

// O_acc += P·V: kBlockN / 16 wgmmas with A = P from registers, committed as
// one group, not waited for (p must not change until it completes).
template <typename T, int D>
__device__ __forceinline__ void issue_p_v(float (&o)[Layout<D>::kOAccumulators],
                                          const std::uint32_t (&p)[Layout<D>::kPSteps][4],
                                          std::uint32_t v_tile) {
  using L = Layout<D>;
  rl::ptx::wgmma_fence_operand(o);
  rl::ptx::wgmma_fence();
  RL_UNROLL
  for (int step = 0; step < L::kPSteps; ++step) {
    const std::uint64_t desc_v = swizzled_descriptor(v_tile + step * kVStepBytes, L::kKVBoxBytes);
    if constexpr (D == 64)
      rl::ptx::wgmma_m64n64k16_f32_rs<T, /*TransposeB=*/true>(o, p[step], desc_v, 1);
    else
      rl::ptx::wgmma_m64n128k16_f32_rs<T, /*TransposeB=*/true>(o, p[step], desc_v, 1);
  }
  rl::ptx::wgmma_commit_group();
}

// The online softmax's statistics of one S tile (key tile from n0), in place:
// s becomes P = 2^(x·scale_log2 - m·scale_log2) in fp32, the running max m
// (of the unscaled scores) and this thread's share of ℓ move on, and
// rescale[h] is what O_acc's rows (row + 8h) must be multiplied by
// (2^((m_old - m)·scale_log2); 0 on the first tile).  The scale is folded
// into one FFMA per element and the exponential is ex2.approx.ftz, a lone
// MUFU.EX2 (FlashAttention-2 §3.1: keep the non-matmul work small); the
// max is taken before scaling, which picks the same element (scale > 0).
template <int D, SoftmaxFault F>
__device__ __forceinline__ void softmax_tile(float (&s)[Layout<D>::kSAccumulators],
                                             float (&row_max)[2], float (&row_sum)[2],
                                             float (&rescale)[2], const ConsumerThread& me, int n0,
                                             int N, bool causal, float scale_log2) {
  constexpr int kVisibleAhead = F == SoftmaxFault::causal_off_by_one ? 1 : 0;
  const bool masked_tile = n0 + kBlockN > N || (causal && n0 + kBlockN - 1 > me.slab_row);
  RL_UNROLL
  for (int h = 0; h < 2; ++h) {
    float tile_max = -INFINITY;
    RL_UNROLL
    for (int j = 0; j < kBlockN / 8; ++j) {
      RL_UNROLL
      for (int e = 0; e < 2; ++e) {
        float& x = s[4 * j + 2 * h + e];
        const int key = n0 + 8 * j + me.c + e;
        if (masked_tile && (key >= N || (causal && key > me.row + 8 * h + kVisibleAhead)))
          x = -INFINITY;
        tile_max = fmaxf(tile_max, x);
      }
    }
    const float new_max = fmaxf(row_max[h], quad_max(tile_max));
    // A row with no visible key so far keeps max -inf: subtract 0 instead, so
    // that 2^(-inf) gives 0, not NaN.
    const float base = new_max == -INFINITY ? 0.0f : new_max * scale_log2;
    rescale[h] = rl::ptx::ex2_approx_ftz(fmaf(row_max[h], scale_log2, -base));
    row_max[h] = new_max;
    row_sum[h] *= rescale[h];
    RL_UNROLL
    for (int j = 0; j < kBlockN / 8; ++j) {
      RL_UNROLL
      for (int e = 0; e < 2; ++e) {
        float& x = s[4 * j + 2 * h + e];
        x = rl::ptx::ex2_approx_ftz(fmaf(x, scale_log2, -base));
        row_sum[h] += x;  // from the fp32 p, before rounding to T
      }
    }
  }
}

template <int D, SoftmaxFault F>
__device__ __forceinline__ void rescale_o(float (&o)[Layout<D>::kOAccumulators],
                                          const float (&rescale)[2]) {
  if constexpr (F == SoftmaxFault::skip_rescale) return;
  RL_UNROLL
  for (int j = 0; j < D / 8; ++j) {
    RL_UNROLL
    for (int i = 0; i < 4; ++i) o[4 * j + i] *= rescale[i / 2];
  }
}

// P (fp32, in S's accumulator layout) rounded to T into the A registers of
// P·V: k16 step kk takes s[8kk .. 8kk + 7] in order, two to a register
// (attention_wgmma_tma_sm90a.cu's header says why no shuffle is needed).
template <typename T, int D, SoftmaxFault F>
__device__ __forceinline__ void pack_p(std::uint32_t (&p)[Layout<D>::kPSteps][4],
                                       const float (&s)[Layout<D>::kSAccumulators]) {
  constexpr bool kSwap = F == SoftmaxFault::p_in_wrong_layout;
  RL_UNROLL
  for (int kk = 0; kk < Layout<D>::kPSteps; ++kk) {
    p[kk][0] = pack_pair<T>(s[8 * kk], s[8 * kk + 1]);
    p[kk][kSwap ? 2 : 1] = pack_pair<T>(s[8 * kk + 2], s[8 * kk + 3]);
    p[kk][kSwap ? 1 : 2] = pack_pair<T>(s[8 * kk + 4], s[8 * kk + 5]);
    p[kk][3] = pack_pair<T>(s[8 * kk + 6], s[8 * kk + 7]);
  }
}

// O = O_acc / ℓ, rounded to T; rows past N are not stored.
template <typename T, int D>
__device__ __forceinline__ void store_o(T* __restrict__ O,
                                        const float (&o)[Layout<D>::kOAccumulators],
                                        const float (&row_sum)[2], const ConsumerThread& me,
                                        QueryTile tile, int N) {
  RL_UNROLL
  for (int h = 0; h < 2; ++h) {
    const float inv_sum = 1.0f / quad_sum(row_sum[h]);
    if (me.row + 8 * h >= N) continue;
    T* out = O + (static_cast<std::int64_t>(tile.head_row) + me.row + 8 * h) * D + me.c;
    RL_UNROLL
    for (int j = 0; j < D / 8; ++j)
      *reinterpret_cast<Pair<T>*>(out + 8 * j) =
          make_pair_rn<T>(o[4 * j + 2 * h] * inv_sum, o[4 * j + 2 * h + 1] * inv_sum);
  }
}

// The launch of a rung's kernel, kernel_of(std::integral_constant<int, D>)
// for the head dim: the tensor maps are encoded on the host at every launch
// (a few microseconds of host work), then passed by value: Q, K and V as
// [B·H·N, D] matrices, boxes of 128 rows x 64 columns.  The kernel takes
// (q_map, k_map, v_map, O, N, causal, scale·log2 e) on the grid (B·H, ⌈N /
// BlockM⌉).
template <int Stages, typename T, typename KernelOf>
void launch_attention(const std::string& name, const Args<T>& a, cudaStream_t stream,
                      KernelOf kernel_of) {
  const std::int64_t rows = static_cast<std::int64_t>(a.B) * a.H * a.N;
  if (rows > 0x7FFFFFFF)
    throw std::invalid_argument(name + ": B·H·N = " + std::to_string(rows) +
                                " rows is beyond TMA's 32-bit coordinates");
  const int query_tiles = (a.N + kBlockM - 1) / kBlockM;
  if (query_tiles > 65535)
    throw std::invalid_argument(name + ": N = " + std::to_string(a.N) +
                                " needs more than 65535 query tiles");
  dispatch_head_dim(name, a.d, [&](auto head_dim) {
    constexpr int D = decltype(head_dim)::value;
    constexpr auto element = std::is_same_v<T, __half> ? rl::ptx::TensorMapElement::fp16
                                                       : rl::ptx::TensorMapElement::bf16;
    const auto map = [&](const T* x) {
      return rl::ptx::encode_tensor_map_2d(
          rl::ptx::tensor_map_2d(rows, D, D, sizeof(T), kBlockM, kBoxCols), element, x);
    };
    const auto kernel = kernel_of(head_dim);
    static const bool opted_in = [kernel] {
      RL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         Layout<D, Stages>::kDynamicSharedBytes));
      return true;
    }();
    (void)opted_in;
    rl::launch(kernel, dim3(static_cast<unsigned>(a.B * a.H), static_cast<unsigned>(query_tiles)),
               dim3(kThreads), Layout<D, Stages>::kDynamicSharedBytes, stream, map(a.Q), map(a.K),
               map(a.V), a.O, a.N, a.causal, a.scale * kLog2e);
  });
}

#endif  // __CUDACC__ || RL_EMULATE

#if !defined(__CUDA_ARCH__)
// The record of a wgmma rung: sm_90a code runs on compute capability 9.0
// only, under the emulator only as a Hopper (RL_EMU_CC=90); compiled for
// head dims 64 and 128; the flash error model (S in fp32, P rounded to T).
template <typename T>
KernelRecord sm90a_record(std::string name, std::string variant, std::string baseline,
                          Launcher<T> launcher, std::string idea) {
  KernelRecord record = make_record<T>({.name = std::move(name),
                                        .variant = std::move(variant),
                                        .baseline = std::move(baseline),
                                        .launcher = std::move(launcher),
                                        .needs_scores = false,
                                        .bytes_model = &bytes_model<T>,
                                        .declare_counts = &declare_counts<T>,
                                        .error = kErrorFlashTensorCore,
                                        .head_dims = {64, 128},
                                        .gpu_only = !rl::ptx::emulator_runs_sm90a(),
                                        .min_cc = 90,
                                        .idea = std::move(idea)});
  record.max_cc = 90;
  return record;
}
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention::wgmma
