// Attention on Hopper, FlashAttention-3's intra-warpgroup overlap (sm_90a
// only; BF16 and FP16 storage, FP32 accumulate): the rung above
// attention_wgmma_tma_sm90a.cu, whose tiles, TMA producer, wgmmas and
// softmax it keeps (attention_wgmma_parts.hpp).
//
// Run on an H100 and an H200 (docs/gpu-runs/2026-11-26-attention.md): it
// validates on the device at odd N; at N = 8k, d = 128, BF16 it ran 530.4
// TFLOP/s on the H100 against the rung below's 481.8 in the same run (77.5%
// of cuDNN SDPA's 684.8), once on 3 stages (on 2 it was slower: below).
//
// What changes, one idea (FlashAttention-3 §3.2, "intra-warpgroup
// overlapping", Algorithm 2): the rung below runs each consumer's work for a
// key tile in series, S = Q·Kᵀ on the tensor cores, then the softmax on the
// FMA and MUFU units while the tensor cores idle, then P·V while those idle.
// Here a consumer issues the next tile's S = Q·K_{j+1}ᵀ and this tile's
// O += P_j·V_j together, and computes the softmax of S_{j+1} while P_j·V_j
// still runs:
//
//   S_0 = Q·K_0ᵀ, wait; softmax(S_0) -> P_0
//   for j = 1 .. key_tiles - 1:
//     issue S_j = Q·K_jᵀ            (group 1)
//     issue O += P_{j-1}·V_{j-1}     (group 2)
//     wait_group 1: S_j is done      (groups complete in order)
//     softmax statistics of S_j     <- overlaps P_{j-1}·V_{j-1}
//     wait_group 0: P_{j-1}·V_{j-1} is done; release stage j - 1
//     O *= 2^(m_old - m); pack P_j (P_{j-1}'s registers are free only now)
//   O += P_last·V_last, wait
//
// The exponentials, the row maxima and sums and the masking of tile j overlap
// the tensor cores' P·V of tile j - 1; only O's rescale and the packing of
// P wait for it (they write registers the in-flight wgmma reads or writes).
// The cost: S_j and P_{j-1} are alive at once, at d = 128 S (64 fp32) + P
// (32) + O_acc (64) registers per consumer thread, within setmaxnreg's 232.
// Numerics are the rung below's exactly: the same operations in the same
// order per element, only issued earlier.
//
// The ring grows from 2 stages to 3: while S_j and P_{j-1}·V_{j-1} run, a
// consumer holds two stages (K_j and V_{j-1}); with only two, the producer
// could start tile j + 1's loads only after P_{j-1}·V_{j-1} completed, and
// the next iteration would wait for them (the first H100 build, with 2
// stages, ran at 407 TFLOP/s against the rung below's 522: d = 128, N = 8k).
// Shared memory at d = 128: Q 32 KiB + 3 x 64 KiB + 1 KiB = 225 KiB of
// H100's 227.
//
// Left for the rung above: pingpong between the two consumer warpgroups
// (named barriers, so one's softmax runs under the other's GEMMs; the
// emulator has no named barriers yet).  Performance goal (issue 27,
// unmeasured until a GPU run): the FA3-style kernels >= 90% of cuDNN SDPA
// BF16 at d = 128, N = 8k on H100.
//
// SASS (sm_90a, nvcc 13): as the rung below, HGMMA.64x128x16.F32 for S and
// HGMMA.64x{64,128}x16.F32 with A from registers for P·V, now with
// WARPGROUP.DEPBAR.LE gsb0, 0x1 (wait_group 1) between them.
// rl-static: kernel=attention_wgmma_overlap max_regs=168 max_smem=80
// rl-static: kernel=attention_wgmma_overlap arch=90a sass=HGMMA.64x128x16.F32,UTMALDG,MUFU.EX2
// rl-static: kernel=attention_wgmma_overlap arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=attention_wgmma_overlap arch=90a sass=WARPGROUP.DEPBAR.LE
// rl-static: kernel=*attention_wgmma_overlap<*,?64,* arch=90a sass=HGMMA.64x64x16.F32
// Both products are wgmmas in the hot loop, per key tile 64 + 2 exp2s a thread: S = QKᵀ as
// d/16 m64n128k16 and O += P·V (P from registers) as 8 m64nDk16; at d = 128 both are
// m64n128k16, so 16 of them (8 would leave one product off the tensor cores).
// rl-static: kernel=*_overlap<*,?64,* arch=90a loop_ratio=HGMMA.64x128x16/MUFU.EX2==4/66
// rl-static: kernel=*_overlap<*,?64,* arch=90a loop_ratio=HGMMA.64x64x16/MUFU.EX2==8/66
// rl-static: kernel=*_overlap<*,?128,* arch=90a loop_ratio=HGMMA.64x128x16/MUFU.EX2==16/66
#include "attention/attention_wgmma_parts.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace rl::attention {

namespace {
constexpr int kStages = 3;  // of the K/V ring: two held while the next tile loads (header)
}  // namespace

// grid (B·H, ⌈N / BlockM⌉), block kThreads, dynamic shared memory
// Layout<D, kStages>::kDynamicSharedBytes.  scale_log2 = scale·log2(e).  F: a
// deliberately wrong build for the validation tests, emulator only.
template <typename T, int D, SoftmaxFault F = SoftmaxFault::none>
__global__ void __launch_bounds__(wgmma::kThreads, 1)
    attention_wgmma_overlap(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap q_map,
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
  const wgmma::ConsumerThread me =
      wgmma::consumer_thread(tile, warpgroup - 1, thread % wgmma::kWarpgroupThreads, q_tile);
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
  wgmma::issue_q_k<T, D>(s, me.q_slab, k_tile(0));
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(s);
  wgmma::softmax_tile<D, F>(s, row_max, row_sum, rescale, me, 0, N, causal, scale_log2);
  wgmma::pack_p<T, D, F>(p, s);

  for (int j = 1; j < tile.key_tiles; ++j) {
    const int stage = j % kStages, use = j / kStages;
    const int previous = (j - 1) % kStages, previous_use = (j - 1) / kStages;
    rl::ptx::mbarrier_wait_parity(&bars.k_full[stage], use & 1);
    wgmma::issue_q_k<T, D>(s, me.q_slab, k_tile(stage));
    rl::ptx::mbarrier_wait_parity(&bars.v_full[previous], previous_use & 1);
    wgmma::issue_p_v<T, D>(o, p, k_tile(previous) + L::kKVTileBytes);
    rl::ptx::wgmma_wait_group<1>();  // S_j is complete; P_{j-1}·V_{j-1} may run on
    rl::ptx::wgmma_fence_operand(s);
    wgmma::softmax_tile<D, F>(s, row_max, row_sum, rescale, me, j * wgmma::kBlockN, N, causal,
                              scale_log2);
    // The softmax's results are needed before the wait below, or nvcc sinks
    // half of it (one row's exponentials, 32 MUFU.EX2) past the wait, out of
    // the overlap (seen in the SASS of the first build).
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
  wgmma::issue_p_v<T, D>(o, p, k_tile(last) + L::kKVTileBytes);
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(o);
  rl::ptx::mbarrier_arrive(&bars.empty[last]);
  wgmma::store_o<T, D>(O, o, row_sum, me, tile, N);
}

template <typename T, SoftmaxFault F = SoftmaxFault::none>
void launch_attention_wgmma_overlap(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_attention<kStages>("attention_wgmma_overlap", a, stream, [](auto head_dim) {
    return &attention_wgmma_overlap<T, decltype(head_dim)::value, F>;
  });
}

RL_DEVICE_INSTANCES(&launch_attention_wgmma_overlap<__nv_bfloat16>,
                    &launch_attention_wgmma_overlap<__half>);

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::attention_wgmma_overlap_bf16(SoftmaxFault fault) {
  return launcher_with_fault(fault, [](auto f) -> Launcher<__nv_bfloat16> {
    return &launch_attention_wgmma_overlap<__nv_bfloat16, decltype(f)::value>;
  });
}
#endif

#if !defined(__CUDA_ARCH__)
constexpr const char* kWgmmaOverlapIdea =
    "the next key tile's Q·Kᵀ and this tile's P·V issued together, the softmax computed while "
    "P·V runs (FlashAttention-3's intra-warpgroup overlap)";

RL_REGISTER_KERNEL(wgmma::sm90a_record<__nv_bfloat16>(
    "attention_wgmma_overlap_bf16", "wgmma_overlap", "attention_wgmma_tma_bf16",
    &launch_attention_wgmma_overlap<__nv_bfloat16>, kWgmmaOverlapIdea));
RL_REGISTER_KERNEL(wgmma::sm90a_record<__half>("attention_wgmma_overlap_fp16", "wgmma_overlap",
                                               "attention_wgmma_tma_fp16",
                                               &launch_attention_wgmma_overlap<__half>,
                                               kWgmmaOverlapIdea));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
