// Attention, FlashAttention-3's first step on Hopper (sm_90a only; BF16 and
// FP16 storage, FP32 accumulate): both products on wgmma, Q, K and V brought
// in by TMA, a producer warpgroup and two consumer warpgroups.  The rung
// above attention_flash_mma_sync.cu (the same online softmax on mma.sync).
//
// Run on an H100 (docs/gpu-runs/2026-11-26-attention.md): it validates on the
// device at odd N (tests/hopper, label gpu) and, at N = 8k, d = 128, BF16,
// ran 485.5 TFLOP/s (1.9x the mma.sync rung's 253.7 in the same run), then
// 522.1 with the folded-scale ftz softmax (81% of cuDNN SDPA's 641.1).
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
// Both products are wgmmas in the hot loop, per key tile 64 + 2 exp2s a thread: S = QKᵀ as
// d/16 m64n128k16 and O += P·V (P from registers) as 8 m64nDk16; at d = 128 both are
// m64n128k16, so 16 of them (8 would leave one product off the tensor cores).
// rl-static: kernel=*_tma<*,?64,* arch=90a loop_ratio=HGMMA.64x128x16/MUFU.EX2==4/66
// rl-static: kernel=*_tma<*,?64,* arch=90a loop_ratio=HGMMA.64x64x16/MUFU.EX2==8/66
// rl-static: kernel=*_tma<*,?128,* arch=90a loop_ratio=HGMMA.64x128x16/MUFU.EX2==16/66
#include "attention/attention_wgmma_parts.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace rl::attention {

namespace {
constexpr int kStages = 2;  // of the K/V ring
}  // namespace

// grid (B·H, ⌈N / BlockM⌉), block kThreads, dynamic shared memory
// Layout<D, kStages>::kDynamicSharedBytes.  scale_log2 = scale·log2(e).  F: a
// deliberately wrong build for the validation tests, emulator only
// (attention_wgmma_fault.hpp).
template <typename T, int D, SoftmaxFault F = SoftmaxFault::none>
__global__ void __launch_bounds__(wgmma::kThreads, 1)
    attention_wgmma_tma(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap q_map,
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

  // Consumer c = warpgroup - 1: query rows m0 + 64c .. + 63.
  rl::ptx::setmaxnreg_inc<wgmma::kConsumerRegisters>();
  const wgmma::ConsumerThread me =
      wgmma::consumer_thread(tile, warpgroup - 1, thread % wgmma::kWarpgroupThreads, q_tile);
  float s[L::kSAccumulators];
  for (float& x : s) x = 0.0f;
  float o[L::kOAccumulators];
  for (float& x : o) x = 0.0f;
  std::uint32_t p[L::kPSteps][4];
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};  // this lane's share of ℓ, summed over the quad at the end

  rl::ptx::mbarrier_wait_parity(&bars.q_full, 0);
  for (int j = 0; j < tile.key_tiles; ++j) {
    const int stage = j % kStages, use = j / kStages;
    const std::uint32_t k_tile = rl::ptx::shared_address(ring + stage * L::kStageBytes);
    rl::ptx::mbarrier_wait_parity(&bars.k_full[stage], use & 1);
    wgmma::issue_q_k<T, D>(s, me.q_slab, k_tile);
    rl::ptx::wgmma_wait_group<0>();
    rl::ptx::wgmma_fence_operand(s);
    float rescale[2];
    wgmma::softmax_tile<D, F>(s, row_max, row_sum, rescale, me, j * wgmma::kBlockN, N, causal,
                              scale_log2);
    wgmma::rescale_o<D, F>(o, rescale);
    wgmma::pack_p<T, D, F>(p, s);
    rl::ptx::mbarrier_wait_parity(&bars.v_full[stage], use & 1);
    wgmma::issue_p_v<T, D>(o, p, k_tile + L::kKVTileBytes);
    rl::ptx::wgmma_wait_group<0>();
    rl::ptx::wgmma_fence_operand(o);
    rl::ptx::mbarrier_arrive(&bars.empty[stage]);  // this thread's reads of K and V are done
  }
  wgmma::store_o<T, D>(O, o, row_sum, me, tile, N);
}

template <typename T, SoftmaxFault F = SoftmaxFault::none>
void launch_attention_wgmma_tma(const Args<T>& a, cudaStream_t stream) {
  wgmma::launch_attention<kStages>("attention_wgmma_tma", a, stream, [](auto head_dim) {
    return &attention_wgmma_tma<T, decltype(head_dim)::value, F>;
  });
}

RL_DEVICE_INSTANCES(&launch_attention_wgmma_tma<__nv_bfloat16>,
                    &launch_attention_wgmma_tma<__half>);

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> faults::attention_wgmma_tma_bf16(SoftmaxFault fault) {
  return launcher_with_fault(fault, [](auto f) -> Launcher<__nv_bfloat16> {
    return &launch_attention_wgmma_tma<__nv_bfloat16, decltype(f)::value>;
  });
}
#endif

#if !defined(__CUDA_ARCH__)
// The arrow starts at the mma.sync flash kernel of the same precision (the
// same online softmax).
constexpr const char* kWgmmaTmaIdea =
    "wgmma for both products (P from registers), Q/K/V by TMA into a swizzled mbarrier ring, a "
    "producer warpgroup and two consumers with setmaxnreg";
RL_REGISTER_KERNEL(wgmma::sm90a_record<__nv_bfloat16>("attention_wgmma_tma_bf16", "wgmma_tma",
                                                      "attention_flash_mma_sync_bf16",
                                                      &launch_attention_wgmma_tma<__nv_bfloat16>,
                                                      kWgmmaTmaIdea));
RL_REGISTER_KERNEL(wgmma::sm90a_record<__half>("attention_wgmma_tma_fp16", "wgmma_tma",
                                               "attention_flash_mma_sync_fp16",
                                               &launch_attention_wgmma_tma<__half>, kWgmmaTmaIdea));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
