// Attention on FP8 e4m3 inputs (sm_90a only; e4m3 Q, K, V with per-tensor
// scales, fp32 accumulate, bf16 O): attention_wgmma_tma_sm90a.cu, the
// simplest wgmma rung and this one's baseline (attention_wgmma_tma_bf16), on
// 1-byte inputs, FlashAttention-3 §3.3's FP8 path without its pingpong and
// overlap.  Twice the tensor-core rate of bf16 on Hopper for half the bytes
// per input.
//
// Run:  RL_EMU_CC=90 bench_roofline_emu --family attention --size small
//         --benchmark_filter=attention_wgmma_fp8      (the emulator as a Hopper)
//       bench_roofline --family attention --benchmark_filter=attention_wgmma_fp8
//         (an H100; not run on one yet)
//
// The rung below's schedule, barriers, softmax and epilogue are reused
// unchanged (attention_wgmma_parts.hpp): a producer warpgroup (TMA into a
// two-stage mbarrier ring, setmaxnreg 40), two consumer warpgroups of 64
// query rows (232), BlockM = BlockN = 128, causal key tiles past the
// diagonal skipped.  What changes, one idea, fp8:
//
//  1. S = Q·Kᵀ by wgmma.m64n128k32.f32.e4m3.e4m3, D/32 per tile, both
//     operands K-major in shared memory.  A Q or K row is D bytes; the TMA
//     box is 128 rows x 128 bytes in the 128-byte swizzle (at D = 64 the box
//     runs past the row and TMA fills zeros the wgmmas never read), so the
//     descriptors are the rung below's (SBO 1024, +32 bytes per k32 step).
//  2. The descales.  s_Q·s_K·scale·log2 e is the one factor of the softmax's
//     FFMA (no extra instruction), and s_V / (2^8·ℓ) O's final factor.
//  3. P to e4m3 in registers, A of O += P·V (wgmma.m64nDk32, A from
//     registers).  P is multiplied by 2^8 before cvt.rn.satfinite.e4m3x2
//     (p <= 1, so at most 256 < 448): the small weights stay above e4m3's
//     subnormals down to 2^-14 instead of 2^-6 (attention_error_model.hpp).
//     The fp8 A fragment is not S's accumulator fragment: for its k32 step
//     kk a thread holds keys 32kk + {2c, 2c+1, 8+2c, 9+2c, 16+2c, ...} (c = t
//     % 4) of rows r and r + 8, but register i of A is read as keys 4c .. 4c
//     + 3 (+16 for i >= 2).  Instead of shuffling P across the quad, the
//     keys are permuted in V: the thread packs its own eight P values of a
//     row in order, and slot κ of a 32-key block of Vᵀ holds key π(κ) = 16
//     (κ / 16) + 2 ((κ / 4) % 4) + κ % 2 + 8 ((κ / 2) % 2), the key whose P
//     lands in slot κ.  (FlashAttention-3 does not permute V's keys: with
//     V row-major it swaps S's registers within each thread before the
//     conversion, permute_Cregs_fp8, transposes V in the kernel and
//     un-permutes O's registers before the epilogue, permute_output_fp8;
//     hopper/utils.h and mainloop_fwd_sm90_tma_gmma_ws.hpp.)
//  4. Vᵀ.  fp8 wgmma has no transpose bit: B must be K-major, i.e. Vᵀ (D
//     rows of keys).  A pre-pass kernel (attention_fp8_v_transpose, in the
//     timed launch) writes Vᵀ [B·H, D, N32] with the permutation above, N
//     rounded up to 32 with zeros (TMA's 16-byte pitch, whole 32-key
//     blocks); the producer loads D rows x 128 keys per tile.  Its bytes are
//     in the cost model.  FlashAttention-3 transposes in the producer
//     warpgroup instead (LDSM.T / STSM), saving the pre-pass's 2·N·D bytes.
//
// Shared memory: Q 16 KiB, per stage K 16 KiB and Vᵀ 8 or 16 KiB: 65 KiB (d
// = 64) or 81 KiB (d = 128) with the alignment.
//
// Cost model: Q read once (1 byte), O written once (bf16), K and Vᵀ once per
// 128-row query tile (fused_key_rows_read; causal skips the tiles past the
// diagonal), plus the pre-pass: V read and Vᵀ written (N32·D bytes).
// Performance goal (issue 27): >= 85% of cuDNN's FP8 SDPA
// (attention_cudnn_sdpa_fp8_e4m3, cuda_only/); unmeasured (no
// GPU run yet), and expected well below FlashAttention-3's FP8 (~1.2 PFLOP/s)
// without pingpong, overlap and the in-kernel transpose.
//
// SASS (sm_90a, nvcc 13, build/default/static/attention/): fp8 wgmma is
// QGMMA (HGMMA is the 16-bit spelling): S as QGMMA.64x128x32.F32.E4M3.E4M3
// with both operands gdesc, P·V as QGMMA.64x64x32 (d = 64) or .64x128x32
// (d = 128) with A in registers (QGMMA R88, R24, gdesc[..]); F2FP.SATFINITE
// .E4M3.F32.PACK_AB_MERGE_C (P to e4m3, 2 values each), UTMALDG.2D, USETMAXREG, MUFU.EX2;
// 168 registers at launch (the consumers take 232), no spills, no local
// memory.  The pre-pass: 40 registers.  Per key tile (the loop_ratio lines):
// 32 F2FP.SATFINITE (64 P values a thread), and at d = 64 2 QGMMA.64x128x32
// (S) and 4 QGMMA.64x64x32 (P·V), at d = 128 4 + 4 QGMMA.64x128x32.  At d =
// 64 the ratios count per F2FP: the loop with the most QGMMA.64x64x32 is, to
// the checker, the shorter span from an mbarrier retry block back into the
// P·V wgmmas (no F2FP in it).
// rl-static: kernel=attention_wgmma_fp8 max_regs=168 max_smem=64
// rl-static: kernel=attention_wgmma_fp8 arch=90a sass=QGMMA.64x128x32.F32.E4M3.E4M3,UTMALDG,MUFU.EX2
// rl-static: kernel=attention_wgmma_fp8 arch=90a sass=F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C
// rl-static: kernel=attention_wgmma_fp8 arch=90a sass=USETMAXREG.DEALLOC,USETMAXREG.TRY_ALLOC
// rl-static: kernel=*attention_wgmma_fp8<64,* arch=90a sass=QGMMA.64x64x32.F32.E4M3.E4M3
// rl-static: kernel=*attention_wgmma_fp8<64,* arch=90a loop_ratio=QGMMA.64x64x32/F2FP.SATFINITE==4/32
// rl-static: kernel=*attention_wgmma_fp8<64,* arch=90a loop_ratio=QGMMA.64x128x32/F2FP.SATFINITE==2/32
// rl-static: kernel=*attention_wgmma_fp8<128,* arch=90a loop_ratio=F2FP.SATFINITE/QGMMA.64x128x32==32/8
// rl-static: kernel=attention_fp8_v_transpose max_regs=48 max_smem=0
#include "attention/attention_fp8_workload.hpp"
#include "attention/attention_wgmma_parts.hpp"
#include "rl/device_instances.hpp"
#include "rl/ptx.hpp"
#include "rl/ptx_cvt_narrow.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rl::attention {

namespace fp8 {

constexpr int kStages = 2;
constexpr int kRowBytes = 128;                       // a box row: one 128-byte swizzle row
constexpr int kQBytes = wgmma::kBlockM * kRowBytes;  // 128 rows of Q
constexpr int kKBytes = wgmma::kBlockN * kRowBytes;  // 128 keys of K
constexpr int kKeyBlock = 32;                        // keys per k32 step: Vᵀ's permutation block
constexpr float kPScale = 256.0f;  // P·2^8 before rounding to e4m3 (header, item 3)

template <int D>
struct Layout {
  static constexpr int kVtBytes = D * kRowBytes;  // D rows of 128 keys
  static constexpr int kStageBytes = kKBytes + kVtBytes;
  static constexpr int kDynamicSharedBytes =
      kQBytes + kStages * kStageBytes + wgmma::kSwizzleRepeat;
};

// N rounded up to whole 32-key blocks: Vᵀ's row length.
__host__ __device__ constexpr int padded_keys(int N) {
  return (N + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
}

// The key whose P value the register-A fragment puts in slot kappa of a
// 32-key block (header, item 3).
__host__ __device__ constexpr int key_of_slot(int kappa) {
  return 16 * (kappa / 16) + 2 * ((kappa / 4) % 4) + kappa % 2 + 8 * ((kappa / 2) % 2);
}

}  // namespace fp8

// Cost model (header): the fused traffic at 1 byte per K/Vᵀ element, Q at 1
// byte, O at 2, and the pre-pass's V read and Vᵀ written.
inline double fp8_wgmma_bytes_model(const Dims& p) {
  const double kv = 2.0 * static_cast<double>(p.heads()) *
                    fused_key_rows_read(p, wgmma::kBlockM, wgmma::kBlockN) *
                    static_cast<double>(p.d);
  const double transpose = tensor_bytes(p, 1) + static_cast<double>(p.heads()) *
                                                    fp8::padded_keys(static_cast<int>(p.N)) *
                                                    static_cast<double>(p.d);
  return tensor_bytes(p, 1) + tensor_bytes(p, 2) + kv + transpose;
}

// The pre-pass: Vᵀ[head][c][32b + κ] = V[head][32b + π(κ)][c], 0 past N.
// grid (B·H, N32 / 32), block D: thread c writes its row's 32 bytes.
template <int D>
__global__ void __launch_bounds__(D)
    attention_fp8_v_transpose(const std::uint8_t* __restrict__ V, std::uint8_t* __restrict__ Vt,
                              int N) {
  const int head = static_cast<int>(blockIdx.x), block = static_cast<int>(blockIdx.y);
  const int c = static_cast<int>(threadIdx.x), row_length = fp8::padded_keys(N);
  const std::uint8_t* v = V + static_cast<std::int64_t>(head) * N * D + c;
  auto* out = reinterpret_cast<std::uint32_t*>(
      Vt + (static_cast<std::int64_t>(head) * D + c) * row_length + block * fp8::kKeyBlock);
  RL_UNROLL
  for (int word = 0; word < fp8::kKeyBlock / 4; ++word) {
    std::uint32_t w = 0;
    RL_UNROLL
    for (int b = 0; b < 4; ++b) {
      const int key = block * fp8::kKeyBlock + fp8::key_of_slot(4 * word + b);
      if (key < N) w |= std::uint32_t{v[static_cast<std::int64_t>(key) * D]} << (8 * b);
    }
    out[word] = w;
  }
}

namespace fp8 {

#if defined(__CUDACC__) || defined(RL_EMULATE)
// The producer (one thread): Q once, then per key tile j K (128 rows) and Vᵀ
// (D rows of keys 128j ..) into stage j % 2, as wgmma::produce does.
template <int D>
__device__ __forceinline__ void produce(const rl::ptx::TensorMap* q_map,
                                        const rl::ptx::TensorMap* k_map,
                                        const rl::ptx::TensorMap* vt_map,
                                        wgmma::Barriers<kStages>& b, unsigned char* q_tile,
                                        unsigned char* ring, wgmma::QueryTile tile, int head) {
  rl::ptx::mbarrier_arrive_expect_tx(&b.q_full, kQBytes);
  rl::ptx::tma_load_2d(q_tile, q_map, 0, tile.head_row + tile.m0, &b.q_full);
  for (int j = 0; j < tile.key_tiles; ++j) {
    const int stage = j % kStages, use = j / kStages;
    if (use > 0) rl::ptx::mbarrier_wait_parity(&b.empty[stage], (use - 1) & 1);
    unsigned char* const k_tile = ring + stage * Layout<D>::kStageBytes;
    rl::ptx::mbarrier_arrive_expect_tx(&b.k_full[stage], kKBytes);
    rl::ptx::tma_load_2d(k_tile, k_map, 0, tile.head_row + j * wgmma::kBlockN, &b.k_full[stage]);
    rl::ptx::mbarrier_arrive_expect_tx(&b.v_full[stage], Layout<D>::kVtBytes);
    rl::ptx::tma_load_2d(k_tile + kKBytes, vt_map, j * wgmma::kBlockN, head * D, &b.v_full[stage]);
  }
}

// S = Q·Kᵀ: D/32 e4m3 wgmmas, committed, not waited for.
template <int D>
__device__ __forceinline__ void issue_q_k(float (&s)[64], std::uint32_t q_slab,
                                          std::uint32_t k_tile) {
  rl::ptx::wgmma_fence_operand(s);
  rl::ptx::wgmma_fence();
  RL_UNROLL
  for (int step = 0; step < D / 32; ++step)
    rl::ptx::wgmma_m64n128k32_f32_e4m3(
        s, wgmma::swizzled_descriptor(q_slab + step * 32, wgmma::kUnusedLbo),
        wgmma::swizzled_descriptor(k_tile + step * 32, wgmma::kUnusedLbo), step > 0);
  rl::ptx::wgmma_commit_group();
}

// O_acc += P·V: 4 k32 wgmmas with A = P from registers, B = Vᵀ K-major.
template <int D>
__device__ __forceinline__ void issue_p_v(float (&o)[D / 2], const std::uint32_t (&p)[4][4],
                                          std::uint32_t vt_tile) {
  rl::ptx::wgmma_fence_operand(o);
  rl::ptx::wgmma_fence();
  RL_UNROLL
  for (int kk = 0; kk < 4; ++kk) {
    const std::uint64_t desc_vt = wgmma::swizzled_descriptor(vt_tile + kk * 32, wgmma::kUnusedLbo);
    if constexpr (D == 64)
      rl::ptx::wgmma_m64n64k32_f32_e4m3_rs(o, p[kk], desc_vt, 1);
    else
      rl::ptx::wgmma_m64n128k32_f32_e4m3_rs(o, p[kk], desc_vt, 1);
  }
  rl::ptx::wgmma_commit_group();
}

// P·2^8 to e4m3, register i of k32 step kk holding, low byte first, s[b],
// s[b + 1], s[b + 4], s[b + 5] with b = 16kk + 8 (i / 2) + 2 (i % 2): this
// thread's keys of row r + 8 (i % 2) in order (header, item 3).
template <SoftmaxFault F>
__device__ __forceinline__ void pack_p(std::uint32_t (&p)[4][4], const float (&s)[64]) {
  constexpr bool kSwap = F == SoftmaxFault::p_in_wrong_layout;
  RL_UNROLL
  for (int kk = 0; kk < 4; ++kk) {
    RL_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int b = 16 * kk + 8 * (i / 2) + 2 * (i % 2);
      const std::uint32_t lo = rl::ptx::cvt_rn_e4m3x2_f32(s[b + 1] * kPScale, s[b] * kPScale);
      const std::uint32_t hi = rl::ptx::cvt_rn_e4m3x2_f32(s[b + 5] * kPScale, s[b + 4] * kPScale);
      p[kk][kSwap && i > 0 && i < 3 ? 3 - i : i] = lo | hi << 16;
    }
  }
}
#endif  // __CUDACC__ || RL_EMULATE

}  // namespace fp8

// grid (B·H, ⌈N / 128⌉), block 384, dynamic shared memory
// fp8::Layout<D>::kDynamicSharedBytes.  scale_log2 = scale·log2(e)·s_Q·s_K,
// o_scale = s_V / 2^8.  F: a deliberately wrong build (emulator only).
template <int D, SoftmaxFault F = SoftmaxFault::none>
__global__ void __launch_bounds__(wgmma::kThreads, 1)
    attention_wgmma_fp8(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap q_map,
                        const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap k_map,
                        const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap vt_map,
                        __nv_bfloat16* __restrict__ O, int N, bool causal, float scale_log2,
                        float o_scale) {
  using L = fp8::Layout<D>;
  using SL = wgmma::Layout<D>;  // the accumulator counts (those of the bf16 rungs)
  RL_DYNAMIC_SHARED(unsigned char, dynamic_shared);
  __shared__ wgmma::Barriers<fp8::kStages> bars;
  unsigned char* const q_tile = wgmma::aligned_start(dynamic_shared);
  unsigned char* const ring = q_tile + fp8::kQBytes;  // stage s: K, then Vᵀ
  const int thread = static_cast<int>(threadIdx.x);
  const int warpgroup = thread / wgmma::kWarpgroupThreads;
  const int head = static_cast<int>(blockIdx.x);
  const wgmma::QueryTile tile =  // the heaviest (causal) query tiles first
      wgmma::query_tile(head, static_cast<int>(gridDim.y - 1 - blockIdx.y), N, causal);
  wgmma::init_barriers(bars, thread == 0);

  if (warpgroup == 0) {
    rl::ptx::setmaxnreg_dec<wgmma::kProducerRegisters>();
    if (thread == 0) fp8::produce<D>(&q_map, &k_map, &vt_map, bars, q_tile, ring, tile, head);
    return;
  }

  rl::ptx::setmaxnreg_inc<wgmma::kConsumerRegisters>();
  // Q rows of 128 bytes, as the 16-bit rungs' boxes: the slab offset is theirs.
  const wgmma::ConsumerThread me =
      wgmma::consumer_thread(tile, warpgroup - 1, thread % wgmma::kWarpgroupThreads, q_tile);
  float s[SL::kSAccumulators];
  for (float& x : s) x = 0.0f;
  float o[SL::kOAccumulators];
  for (float& x : o) x = 0.0f;
  std::uint32_t p[4][4];
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.0f, 0.0f};

  rl::ptx::mbarrier_wait_parity(&bars.q_full, 0);
  for (int j = 0; j < tile.key_tiles; ++j) {
    const int stage = j % fp8::kStages, use = j / fp8::kStages;
    const std::uint32_t k_tile = rl::ptx::shared_address(ring + stage * L::kStageBytes);
    rl::ptx::mbarrier_wait_parity(&bars.k_full[stage], use & 1);
    fp8::issue_q_k<D>(s, me.q_slab, k_tile);
    rl::ptx::wgmma_wait_group<0>();
    rl::ptx::wgmma_fence_operand(s);
    float rescale[2];
    wgmma::softmax_tile<D, F>(s, row_max, row_sum, rescale, me, j * wgmma::kBlockN, N, causal,
                              scale_log2);
    wgmma::rescale_o<D, F>(o, rescale);
    fp8::pack_p<F>(p, s);
    rl::ptx::mbarrier_wait_parity(&bars.v_full[stage], use & 1);
    fp8::issue_p_v<D>(o, p, k_tile + fp8::kKBytes);
    rl::ptx::wgmma_wait_group<0>();
    rl::ptx::wgmma_fence_operand(o);
    rl::ptx::mbarrier_arrive(&bars.empty[stage]);
  }
  // O = o_acc·s_V / (2^8·ℓ): the factor folded into ℓ, then the rung below's store.
  for (float& l : row_sum) l /= o_scale;
  wgmma::store_o<__nv_bfloat16, D>(O, o, row_sum, me, tile, N);
}

// Scratch: Vᵀ, B·H·D rows of N32 keys.
inline std::size_t fp8_wgmma_scratch_bytes(const Dims& p) {
  return static_cast<std::size_t>(p.heads() * p.d * fp8::padded_keys(static_cast<int>(p.N)));
}

#if defined(__CUDACC__) || defined(RL_EMULATE)

template <SoftmaxFault F = SoftmaxFault::none>
void launch_attention_wgmma_fp8(const Fp8Args& a, cudaStream_t stream) {
  const std::string name = "attention_wgmma_fp8";
  const std::int64_t heads = static_cast<std::int64_t>(a.B) * a.H, rows = heads * a.N;
  if (rows > 0x7FFFFFFF || heads * a.d > 0x7FFFFFFF)
    throw std::invalid_argument(name + ": B·H·N = " + std::to_string(rows) +
                                " rows is beyond TMA's 32-bit coordinates");
  const int query_tiles = (a.N + wgmma::kBlockM - 1) / wgmma::kBlockM;
  if (query_tiles > 65535 || fp8::padded_keys(a.N) / fp8::kKeyBlock > 65535)
    throw std::invalid_argument(name + ": N = " + std::to_string(a.N) + " is too long");
  dispatch_head_dim(name, a.d, [&](auto head_dim) {
    constexpr int D = decltype(head_dim)::value;
    const int n32 = fp8::padded_keys(a.N);
    auto* vt = reinterpret_cast<std::uint8_t*>(a.scratch);
    rl::launch(attention_fp8_v_transpose<D>,
               dim3(static_cast<unsigned>(heads), static_cast<unsigned>(n32 / fp8::kKeyBlock)),
               dim3(D), 0, stream, reinterpret_cast<const std::uint8_t*>(a.V), vt, a.N);
    const auto map = [](const void* x, std::int64_t map_rows, std::int64_t cols, int box_rows) {
      return rl::ptx::encode_tensor_map_2d(
          rl::ptx::tensor_map_2d(map_rows, cols, cols, 1, box_rows, fp8::kRowBytes),
          rl::ptx::TensorMapElement::uint8, x);
    };
    const auto kernel = &attention_wgmma_fp8<D, F>;
    static const bool opted_in = [kernel] {
      RL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         fp8::Layout<D>::kDynamicSharedBytes));
      return true;
    }();
    (void)opted_in;
    rl::launch(kernel, dim3(static_cast<unsigned>(heads), static_cast<unsigned>(query_tiles)),
               dim3(wgmma::kThreads), fp8::Layout<D>::kDynamicSharedBytes, stream,
               map(a.Q, rows, D, wgmma::kBlockM), map(a.K, rows, D, wgmma::kBlockN),
               map(vt, heads * D, n32, D), a.O, a.N, a.causal,
               a.scale * kLog2e * a.q_descale * a.k_descale, a.v_descale / fp8::kPScale);
  });
}

RL_DEVICE_INSTANCES(&launch_attention_wgmma_fp8<>);
#endif

#if defined(RL_EMULATE)
Fp8Launcher faults::attention_wgmma_fp8(SoftmaxFault fault) {
  using Fault = SoftmaxFault;
  switch (fault) {
    case Fault::none:
      return &launch_attention_wgmma_fp8<Fault::none>;
    case Fault::skip_rescale:
      return &launch_attention_wgmma_fp8<Fault::skip_rescale>;
    case Fault::causal_off_by_one:
      return &launch_attention_wgmma_fp8<Fault::causal_off_by_one>;
    case Fault::p_in_wrong_layout:
      return &launch_attention_wgmma_fp8<Fault::p_in_wrong_layout>;
  }
  return nullptr;
}
#endif

#if !defined(__CUDA_ARCH__)
static_assert(fp8::kPScale == kFp8PScale, "the error model's P scale is the kernel's");
RL_REGISTER_KERNEL(make_fp8_record(
    {.name = "attention_wgmma_fp8_e4m3",
     .variant = "wgmma_fp8",
     .baseline = "attention_wgmma_tma_bf16",
     .launcher = &launch_attention_wgmma_fp8<>,
     .bytes_model = &fp8_wgmma_bytes_model,
     .scratch_bytes = &fp8_wgmma_scratch_bytes,
     .idea = "the wgmma + TMA rung on e4m3 Q, K, V with per-tensor scales: k32 wgmmas, P to e4m3 "
             "in registers, V transposed (keys permuted for P's fragment) by a pre-pass",
     .library = "",
     .gpu_only = !rl::ptx::emulator_runs_sm90a()}));  // a Hopper, or the emulator as one
#endif                                                // !__CUDA_ARCH__

}  // namespace rl::attention
