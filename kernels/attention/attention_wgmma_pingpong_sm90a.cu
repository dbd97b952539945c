// Attention on Hopper, FlashAttention-3's pingpong (sm_90a only; BF16 and
// FP16 storage, FP32 accumulate): the rung above
// attention_wgmma_overlap_sm90a.cu, whose loop it keeps (the next tile's
// Q·Kᵀ with this tile's P·V, the softmax under P·V, a 3-stage ring).
//
// Run on an H200 (docs/gpu-runs/2026-11-26-attention.md; no H100 was free):
// it validates on the device at odd N; at N = 8k, d = 128, BF16 it ran 528.2
// TFLOP/s (85.2% of cuDNN SDPA, 498.6 for the rung below) in one run and
// 501.2 (the rung below 522.9) in another: its gain over the rung below is
// within the spread, not settled.  d = 64: 405.2 and 379.7 TFLOP/s, ahead
// of the rung below in both runs.
//
// What changes, one idea (FlashAttention-3 §3.1, "pingpong scheduling"):
// the two consumer warpgroups of a block take turns issuing their wgmmas.
// Without it both tend to issue at the same moments and then run their
// softmax at the same moments, so the tensor cores idle while both
// exponentiate.  With it, consumer 0 issues its GEMMs and hands the turn to
// consumer 1, whose GEMMs then run on the tensor cores while consumer 0 does
// its softmax, and so on:
//
//   consumer 0:  [GEMMs]  softmax  [GEMMs]  softmax ...
//   consumer 1:   wait   [GEMMs]  softmax  [GEMMs] ...
//
// The turn is two named barriers (rl::ptx::named_barrier_sync / _arrive,
// bar.sync / bar.arrive with 256 threads): consumer c waits at barrier 1 + c
// before issuing, and arrives at the other's barrier after; each phase
// completes with one warpgroup waiting and the other arriving.  Consumer 1
// hands consumer 0 the first turn; the last hand-on (consumer 1's) is left
// out, so no phase is left half-arrived.  Numerics are the rung below's
// exactly: only the moment of issue changes.
//
// Performance goal (issue 27, unmeasured on an H100 for this rung): >= 90%
// of cuDNN SDPA BF16 at d = 128, N = 8k on H100.
//
// SASS (sm_90a, nvcc 13): the rung below's, with BAR.SYNC and BAR.ARV around
// each group of HGMMA issues.
// rl-static: kernel=attention_wgmma_pingpong max_regs=168 max_smem=80
// rl-static: kernel=attention_wgmma_pingpong arch=90a sass=HGMMA.64x128x16.F32,UTMALDG,MUFU.EX2
// rl-static: kernel=attention_wgmma_pingpong arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=attention_wgmma_pingpong arch=90a sass=WARPGROUP.DEPBAR.LE,BAR.SYNC,BAR.ARV
// rl-static: kernel=*attention_wgmma_pingpong<*,?64,* arch=90a sass=HGMMA.64x64x16.F32
// Both products are wgmmas in the hot loop, per key tile 64 + 2 exp2s a thread: S = QKᵀ as
// d/16 m64n128k16 and O += P·V (P from registers) as 8 m64nDk16; at d = 128 both are
// m64n128k16, so 16 of them (8 would leave one product off the tensor cores).
// rl-static: kernel=*_pingpong<*,?64,* arch=90a loop_ratio=HGMMA.64x128x16/MUFU.EX2==4/66
// rl-static: kernel=*_pingpong<*,?64,* arch=90a loop_ratio=HGMMA.64x64x16/MUFU.EX2==8/66
// rl-static: kernel=*_pingpong<*,?128,* arch=90a loop_ratio=HGMMA.64x128x16/MUFU.EX2==16/66
#include "attention/attention_wgmma_parts.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace rl::attention {

namespace {
constexpr int kStages = 3;  // of the K/V ring, as the rung below
constexpr unsigned kPairThreads = 2 * wgmma::kWarpgroupThreads;  // one phase: both consumers

// The turn to issue wgmmas: consumer c waits at barrier 1 + c (bar.sync)
// and hands the turn to the other with bar.arrive at the other's barrier;
// a phase completes with one warpgroup waiting and the other arriving.
__device__ __forceinline__ void wait_for_turn(int consumer) {
  rl::ptx::named_barrier_sync(1 + consumer, kPairThreads);
}
__device__ __forceinline__ void hand_turn_on(int consumer) {
  rl::ptx::named_barrier_arrive(1 + (1 - consumer), kPairThreads);
}
}  // namespace

// grid (B·H, ⌈N / BlockM⌉), block kThreads, dynamic shared memory
// Layout<D, kStages>::kDynamicSharedBytes.  scale_log2 = scale·log2(e).  F: a
// deliberately wrong build for the validation tests, emulator only.
template <typename T, int D, SoftmaxFault F = SoftmaxFault::none>
__global__ void __launch_bounds__(wgmma::kThreads, 1)
    attention_wgmma_pingpong(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap q_map,
                             const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap k_map,
                             const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap v_map, T* __restrict__ O,
                             int N, bool causal, float scale_log2) {
  using L = wgmma::Layout<D, kStages>;
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ wgmma::Barriers<kStages> bars;
  unsigned char* const q_tile = wgmma::aligned_start(dynamic_shared);
  unsigned char* const ring = q_tile + L::kQBytes;  // stage s: K at s·kStageBytes, then V
  const int thread = static_cast<int>(threadIdx.x);
  const int warpgroup = thread / wgmma::kWarpgroupThreads;
  const wgmma::QueryTile tile =  // the heaviest (causal) query tiles first
      wgmma::query_tile(static_cast<int>(blockIdx.x), static_cast<int>(gridDim.y - 1 - blockIdx.y),
                        N, causal);
  wgmma::init_barriers(bars, thread == 0);

  if (warpgroup == 0) {  // the producer: every warp gives registers back, thread 0 loads
    rl::ptx::setmaxnreg_dec<wgmma::kProducerRegisters>();
    if (thread == 0) wgmma::produce<L>(&q_map, &k_map, &v_map, bars, q_tile, ring, tile);
    return;
  }

  rl::ptx::setmaxnreg_inc<wgmma::kConsumerRegisters>();
  const int consumer = warpgroup - 1;
  const wgmma::ConsumerThread me =
      wgmma::consumer_thread(tile, consumer, thread % wgmma::kWarpgroupThreads, q_tile);
  // Every consumer issues key_tiles + 1 times (S_0; S_j with P_{j-1}·V_{j-1};
  // the last P·V), taking turns; consumer 0 goes first, so consumer 1 hands
  // it the first turn, and does not hand on after its own last issue (no one
  // would take it).
  if (consumer == 1) hand_turn_on(consumer);
  const auto k_tile = [&](int stage) {
    return rl::ptx::shared_address(ring + stage * L::kStageBytes);
  };
  float s[L::kSAccumulators];
  for (float& x : s) x = 0.0f;
  float o[L::kOAccumulators];
  for (float& x : o) x = 0.0f;
  std::uint32_t p[L::kPSteps][4];
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};  // this lane's share of ℓ, summed over the quad at the end
  float rescale[2];

  // Key tile 0: S_0 and its softmax, nothing to overlap yet (O_acc is 0).
  rl::ptx::mbarrier_wait_parity(&bars.q_full, 0);
  rl::ptx::mbarrier_wait_parity(&bars.k_full[0], 0);
  wait_for_turn(consumer);
  wgmma::issue_q_k<T, D>(s, me.q_slab, k_tile(0));
  hand_turn_on(consumer);
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(s);
  wgmma::softmax_tile<D, F>(s, row_max, row_sum, rescale, me, 0, N, causal, scale_log2);
  wgmma::pack_p<T, D, F>(p, s);

  for (int j = 1; j < tile.key_tiles; ++j) {
    const int stage = j % kStages, use = j / kStages;
    const int previous = (j - 1) % kStages, previous_use = (j - 1) / kStages;
    rl::ptx::mbarrier_wait_parity(&bars.k_full[stage], use & 1);
    rl::ptx::mbarrier_wait_parity(&bars.v_full[previous], previous_use & 1);
    wait_for_turn(consumer);
    wgmma::issue_q_k<T, D>(s, me.q_slab, k_tile(stage));
    wgmma::issue_p_v<T, D>(o, p, k_tile(previous) + L::kKVTileBytes);
    hand_turn_on(consumer);
    rl::ptx::wgmma_wait_group<1>();  // S_j is complete; P_{j-1}·V_{j-1} may run on
    rl::ptx::wgmma_fence_operand(s);
    wgmma::softmax_tile<D, F>(s, row_max, row_sum, rescale, me, j * wgmma::kBlockN, N, causal,
                              scale_log2);
    rl::ptx::wgmma_fence_operand(s);
    rl::ptx::wgmma_fence_operand(row_sum);
    rl::ptx::wgmma_wait_group<0>();  // P_{j-1}·V_{j-1} is complete
    rl::ptx::wgmma_fence_operand(o);
    rl::ptx::mbarrier_arrive(&bars.empty[previous]);  // K and V of tile j - 1 are read
    wgmma::rescale_o<D, F>(o, rescale);
    wgmma::pack_p<T, D, F>(p, s);
  }

  const int last = (tile.key_tiles - 1) % kStages;
  rl::ptx::mbarrier_wait_parity(&bars.v_full[last], ((tile.key_tiles - 1) / kStages) & 1);
  wait_for_turn(consumer);
  wgmma::issue_p_v<T, D>(o, p, k_tile(last) + L::kKVTileBytes);
  if (consumer == 0) hand_turn_on(consumer);
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(o);
  rl::ptx::mbarrier_arrive(&bars.empty[last]);
  wgmma::store_o<T, D>(O, o, row_sum, me, tile, N);
}

template <typename T, SoftmaxFault F = SoftmaxFault::none>
void launch_attention_wgmma_pingpong(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_attention<kStages>("attention_wgmma_pingpong", a, stream, [](auto head_dim) {
    return &attention_wgmma_pingpong<T, decltype(head_dim)::value, F>;
  });
}

RL_DEVICE_INSTANCES(&launch_attention_wgmma_pingpong<__nv_bfloat16>,
                    &launch_attention_wgmma_pingpong<__half>);

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::attention_wgmma_pingpong_bf16(SoftmaxFault fault) {
  return launcher_with_fault(fault, [](auto f) -> Launcher<__nv_bfloat16> {
    return &launch_attention_wgmma_pingpong<__nv_bfloat16, decltype(f)::value>;
  });
}
#endif

#if !defined(__CUDA_ARCH__)
constexpr const char* kWgmmaPingpongIdea =
    "the two consumer warpgroups take turns issuing their wgmmas (named barriers), so one's "
    "softmax runs while the other's GEMMs do (FlashAttention-3's pingpong)";

RL_REGISTER_KERNEL(wgmma::sm90a_record<__nv_bfloat16>(
    "attention_wgmma_pingpong_bf16", "wgmma_pingpong", "attention_wgmma_overlap_bf16",
    &launch_attention_wgmma_pingpong<__nv_bfloat16>, kWgmmaPingpongIdea));
RL_REGISTER_KERNEL(wgmma::sm90a_record<__half>("attention_wgmma_pingpong_fp16", "wgmma_pingpong",
                                               "attention_wgmma_overlap_fp16",
                                               &launch_attention_wgmma_pingpong<__half>,
                                               kWgmmaPingpongIdea));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
