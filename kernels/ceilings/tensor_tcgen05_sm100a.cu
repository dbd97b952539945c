// Datacenter Blackwell tensor-core ceilings through tcgen05.mma (sm_100a /
// sm_103a): tc.bf16, tc.fp16, tc.tf32, tc.fp8 (e4m3, e5m2 through
// kind::f8f6f4) and tc.int8 (kind::i8).
//
// The idea: on a B200 mma.sync compiles to the legacy HMMA path, a fraction
// of the peak; tcgen05.mma is the instruction the datasheet's figures are for.
// The loop (tcgen05_loop.hpp): one CTA per SM, cta_group::1, M = 128, N = 256
// (the largest one CTA issues), the accumulator in 256 of tensor memory's 512
// columns, A and B in shared memory, batches of MMAs queued behind the one
// executing.  One loop for every kind; only the instruction descriptor and
// the bit pattern of 1 change.
//
// sm_100a / sm_103a only (rl/ptx_sm100_mma.hpp, rl/ptx_sm100_tmem.hpp): other
// GPU targets trap, the records run on compute capability 10.0 and 10.3 (an
// sm_100a cubin does not run on 10.3: the build compiles 103a for it), int8
// on 10.0 only (sm_103a has no kind::i8).  The
// emulator runs them when it emulates a datacenter Blackwell (RL_EMU_CC=100 or
// 103); elsewhere they stay gpu_only.  NOT YET RUN ON A GPU: compiled for
// sm_100a / sm_103a and their SASS checked statically (below); whether the
// hardware agrees with the emulator's model is for the first B200 run.
//
// The check: A and B are all ones (exact in every input type), so every
// element of D ends at iters * kStepsPerCommit * K; after the loop each warp
// reads its 32 lanes of D (tcgen05.ld 32x32b) and each thread writes the
// minimum and the maximum of its row, both must equal that value.  fp8 is
// checked as tensor_wgmma_sm90a.cu does (the accumulation width of the fp8
// pipe is not documented): its loop alternates B and -B (the descriptor's
// negate-B bit), each commit ending where it started, and issues one more +B
// MMA after the loop, ending at K.
//
// FLOPs: 2 * 128 * 256 * K per MMA (K = 16 bf16/fp16, 8 tf32, 32 fp8/int8;
// an integer multiply-add counts 2).  Bytes: the per-thread outputs only.
#include "ceilings/support.hpp"
#include "ceilings/tcgen05_loop.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rl::ceilings {
namespace {

using tcgen05::kBlockThreads;
using tcgen05::kRowBytes;
using tcgen05::kStepsPerCommit;
using tcgen05::kTileM;
using tcgen05::kTileN;
constexpr std::uint32_t kColumns = 256;  // one f32 / s32 column per element of a D row

using rl::ptx::Tcgen05Kind;

// Per precision: the accumulator type, the kind, K, a 32-bit word of ones in
// the input type, the instruction descriptor (negated B when NegateB).
struct Bf16 {
  using Acc = float;
  static constexpr Tcgen05Kind kKind = Tcgen05Kind::f16;
  static constexpr int kK = 16;
  static constexpr std::uint32_t kOnes = 0x3F803F80u;
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_bf16;
  static constexpr std::uint32_t idesc(bool) {
    return rl::ptx::tcgen05_idesc_f16(rl::ptx::Tcgen05F16Type::bf16, kTileM, kTileN);
  }
};
struct Fp16 {
  using Acc = float;
  static constexpr Tcgen05Kind kKind = Tcgen05Kind::f16;
  static constexpr int kK = 16;
  static constexpr std::uint32_t kOnes = 0x3C003C00u;
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_fp16;
  static constexpr std::uint32_t idesc(bool) {
    return rl::ptx::tcgen05_idesc_f16(rl::ptx::Tcgen05F16Type::f16, kTileM, kTileN);
  }
};
struct Tf32 {
  using Acc = float;
  static constexpr Tcgen05Kind kKind = Tcgen05Kind::tf32;
  static constexpr int kK = 8;
  static constexpr std::uint32_t kOnes = 0x3F800000u;
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_tf32;
  static constexpr std::uint32_t idesc(bool) { return rl::ptx::tcgen05_idesc_tf32(kTileM, kTileN); }
};
template <rl::ptx::Tcgen05F8F6F4Type T, std::uint32_t Ones>
struct Fp8 {
  using Acc = float;
  static constexpr Tcgen05Kind kKind = Tcgen05Kind::f8f6f4;
  static constexpr int kK = 32;
  static constexpr std::uint32_t kOnes = Ones;
  static constexpr bool kAlternateSign = true;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_fp8;
  static constexpr std::uint32_t idesc(bool negate_b) {
    return rl::ptx::tcgen05_idesc_f8f6f4(T, T, kTileM, kTileN) | (negate_b ? 1u << 14 : 0u);
  }
};
using Fp8E4m3 = Fp8<rl::ptx::Tcgen05F8F6F4Type::e4m3, 0x38383838u>;  // exponent 7 = bias
using Fp8E5m2 = Fp8<rl::ptx::Tcgen05F8F6F4Type::e5m2, 0x3C3C3C3Cu>;  // exponent 15 = bias
struct Int8 {
  using Acc = std::int32_t;
  static constexpr Tcgen05Kind kKind = Tcgen05Kind::i8;
  static constexpr int kK = 32;
  static constexpr std::uint32_t kOnes = 0x01010101u;
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_int8;
  static constexpr std::uint32_t idesc(bool) {
    return rl::ptx::tcgen05_idesc_i8(rl::ptx::Tcgen05I8Type::s8, rl::ptx::Tcgen05I8Type::s8, kTileM,
                                     kTileN);
  }
};

template <typename P>
__device__ __forceinline__ void tcgen05_loop(int iters, typename P::Acc* __restrict__ out) {
  using Acc = typename P::Acc;
  __shared__ __align__(128) std::uint32_t a_tile[kTileM * kRowBytes / 4];
  __shared__ __align__(128) std::uint32_t b_tile[kTileN * kRowBytes / 4];
  __shared__ std::uint32_t tmem_base;
  __shared__ std::uint64_t done[2];
  for (int i = threadIdx.x; i < kTileM * kRowBytes / 4; i += blockDim.x) a_tile[i] = P::kOnes;
  for (int i = threadIdx.x; i < kTileN * kRowBytes / 4; i += blockDim.x) b_tile[i] = P::kOnes;
  tcgen05::start(&tmem_base, done, kColumns);
  const std::uint32_t d = tmem_base;
  if (threadIdx.x == 0) {
    const std::uint64_t desc_a = tcgen05::operand_descriptor(a_tile);
    const std::uint64_t desc_b = tcgen05::operand_descriptor(b_tile);
    constexpr std::uint32_t plus = P::idesc(false), minus = P::idesc(true);
    tcgen05::issue<P::kAlternateSign>(iters, done, [&](bool negate, bool accumulate) {
      rl::ptx::tcgen05_mma<P::kKind>(d, desc_a, desc_b, negate ? minus : plus, accumulate);
    });
  }
  tcgen05::await_accumulator();

  // Warp w reads lanes 32 w .. 32 w + 31 (rows of D), 32 columns at a time.
  Acc lo = 0, hi = 0;
  for (int c = 0; c < kTileN; c += 32) {
    std::uint32_t r[32];
    tcgen05::read_row_chunk(d, c, r);
    for (int i = 0; i < 32; ++i) {
      const Acc v = __builtin_bit_cast(Acc, r[i]);
      lo = (c == 0 && i == 0) || v < lo ? v : lo;
      hi = (c == 0 && i == 0) || v > hi ? v : hi;
    }
  }
  const std::size_t thread = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  out[2 * thread] = lo;
  out[2 * thread + 1] = hi;
  tcgen05::finish(d, kColumns);
}

}  // namespace

// The loops are the kernels' whole work.  nvcc 13.0 gives on sm_100a and
// sm_103a UTCHMMA for bf16, fp16 and tf32, UTCQMMA for fp8, UTCIMMA for int8
// (sm_100a only: sm_103a has no kind::i8, so there the int8 loop holds no
// MMA and the record refuses 10.3), 40-46 registers, 12312 bytes of shared
// memory, no spills; the mbarrier waits are SYNCS.PHASECHK.  The hot loop
// (a batch: 4 MMAs, each in its elect-one retry, the commit and the wait for
// the batch before) is 59 instructions, 62 for fp8: loop_share bounds it at
// 16 instructions an MMA.  On the other targets every tcgen05 wrapper traps
// (the records refuse them by min_cc).
// rl-static: kernel=tcgen05_loop_bf16_m128n256k16 max_regs=64 max_smem=12312
// rl-static: kernel=tcgen05_loop_bf16_m128n256k16 arch=100a,103a loop_share=UTCHMMA:6
// rl-static: kernel=tcgen05_loop_bf16_m128n256k16 arch=100a,103a sass=UTCHMMA,SYNCS.PHASECHK
__global__ void tcgen05_loop_bf16_m128n256k16(int iters, float* __restrict__ out) {
  tcgen05_loop<Bf16>(iters, out);
}
// rl-static: kernel=tcgen05_loop_fp16_m128n256k16 max_regs=64 max_smem=12312
// rl-static: kernel=tcgen05_loop_fp16_m128n256k16 arch=100a,103a loop_share=UTCHMMA:6
// rl-static: kernel=tcgen05_loop_fp16_m128n256k16 arch=100a,103a sass=UTCHMMA,SYNCS.PHASECHK
__global__ void tcgen05_loop_fp16_m128n256k16(int iters, float* __restrict__ out) {
  tcgen05_loop<Fp16>(iters, out);
}
// rl-static: kernel=tcgen05_loop_tf32_m128n256k8 max_regs=64 max_smem=12312
// rl-static: kernel=tcgen05_loop_tf32_m128n256k8 arch=100a,103a loop_share=UTCHMMA:6
// rl-static: kernel=tcgen05_loop_tf32_m128n256k8 arch=100a,103a sass=UTCHMMA,SYNCS.PHASECHK
__global__ void tcgen05_loop_tf32_m128n256k8(int iters, float* __restrict__ out) {
  tcgen05_loop<Tf32>(iters, out);
}
// rl-static: kernel=tcgen05_loop_fp8_e4m3_m128n256k32 max_regs=64 max_smem=12312
// rl-static: kernel=tcgen05_loop_fp8_e4m3_m128n256k32 arch=100a,103a loop_share=UTCQMMA:6
// rl-static: kernel=tcgen05_loop_fp8_e4m3_m128n256k32 arch=100a,103a sass=UTCQMMA,SYNCS.PHASECHK
__global__ void tcgen05_loop_fp8_e4m3_m128n256k32(int iters, float* __restrict__ out) {
  tcgen05_loop<Fp8E4m3>(iters, out);
}
// rl-static: kernel=tcgen05_loop_fp8_e5m2_m128n256k32 max_regs=64 max_smem=12312
// rl-static: kernel=tcgen05_loop_fp8_e5m2_m128n256k32 arch=100a,103a loop_share=UTCQMMA:6
// rl-static: kernel=tcgen05_loop_fp8_e5m2_m128n256k32 arch=100a,103a sass=UTCQMMA,SYNCS.PHASECHK
__global__ void tcgen05_loop_fp8_e5m2_m128n256k32(int iters, float* __restrict__ out) {
  tcgen05_loop<Fp8E5m2>(iters, out);
}
// rl-static: kernel=tcgen05_loop_int8_m128n256k32 max_regs=64 max_smem=12312
// rl-static: kernel=tcgen05_loop_int8_m128n256k32 arch=100a loop_share=UTCIMMA:6
// rl-static: kernel=tcgen05_loop_int8_m128n256k32 arch=100a sass=UTCIMMA,SYNCS.PHASECHK
__global__ void tcgen05_loop_int8_m128n256k32(int iters, std::int32_t* __restrict__ out) {
  tcgen05_loop<Int8>(iters, out);
}

namespace {

// Each element reaches at most iters * kStepsPerCommit * K <= 2^24 (exact in f32).
template <typename P>
constexpr std::int64_t kMaxIters = (std::int64_t{1} << 24) / (kStepsPerCommit * P::kK);

template <typename P>
double mmas_per_block(std::int64_t iters) {
  return static_cast<double>(iters) * kStepsPerCommit + (P::kAlternateSign ? 1 : 0);
}

template <typename P>
using LoopKernel = void (*)(int, typename P::Acc*);

template <typename P>
class Tcgen05Loop final : public Workload {
 public:
  Tcgen05Loop(const LoopShape& shape, LoopKernel<P> kernel)
      : shape_(shape),
        kernel_(kernel),
        out_(static_cast<std::size_t>(shape.blocks * shape.threads) * 2) {}

  void run(cudaStream_t stream) override {
    rl::launch(kernel_, dim3(static_cast<unsigned>(shape_.blocks)), dim3(kBlockThreads), 0, stream,
               static_cast<int>(shape_.iters), out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    const double expected = P::kAlternateSign
                                ? static_cast<double>(P::kK)
                                : static_cast<double>(shape_.iters) * kStepsPerCommit * P::kK;
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t) { return expected; });
  }

 private:
  LoopShape shape_;
  LoopKernel<P> kernel_;
  DeviceBuffer<typename P::Acc> out_;
};

template <typename P>
roofline::Cost tcgen05_cost(const Shape& shape) {
  const LoopShape s = parse_loop_shape(shape, kMaxIters<P>);
  const double mmas = static_cast<double>(s.blocks) * mmas_per_block<P>(s.iters);
  const double bytes = static_cast<double>(s.blocks * s.threads) * 2 * sizeof(typename P::Acc);
  return tensor_loop_cost(mmas, 2.0 * kTileM * kTileN * P::kK, bytes, P::kUnit);
}

template <typename P>
KernelRecord tcgen05_record(const char* name, roofline::Precision precision, LoopKernel<P> kernel) {
  KernelRecord record = tcgen05::roof_record(
      name, precision, P::kUnit, tcgen05_cost<P>,
      [kernel](const Shape& shape, std::uint64_t) -> std::unique_ptr<Workload> {
        return std::make_unique<Tcgen05Loop<P>>(tcgen05::parse_shape(shape, kMaxIters<P>), kernel);
      });
  if constexpr (P::kKind == Tcgen05Kind::i8) record.max_cc = 100;  // sm_103a has no kind::i8
  return record;
}

}  // namespace

RL_REGISTER_KERNEL(tcgen05_record<Bf16>("tcgen05_loop_bf16", roofline::Precision::bf16,
                                        tcgen05_loop_bf16_m128n256k16));
RL_REGISTER_KERNEL(tcgen05_record<Fp16>("tcgen05_loop_fp16", roofline::Precision::fp16,
                                        tcgen05_loop_fp16_m128n256k16));
RL_REGISTER_KERNEL(tcgen05_record<Tf32>("tcgen05_loop_tf32", roofline::Precision::tf32,
                                        tcgen05_loop_tf32_m128n256k8));
RL_REGISTER_KERNEL(tcgen05_record<Fp8E4m3>("tcgen05_loop_fp8_e4m3", roofline::Precision::fp8,
                                           tcgen05_loop_fp8_e4m3_m128n256k32));
RL_REGISTER_KERNEL(tcgen05_record<Fp8E5m2>("tcgen05_loop_fp8_e5m2", roofline::Precision::fp8,
                                           tcgen05_loop_fp8_e5m2_m128n256k32));
RL_REGISTER_KERNEL(tcgen05_record<Int8>("tcgen05_loop_int8", roofline::Precision::int8,
                                        tcgen05_loop_int8_m128n256k32));

}  // namespace rl::ceilings
