// Hopper tensor-core ceilings through wgmma (sm_90a only): tc.bf16, tc.fp16,
// tc.tf32, tc.fp8 (e4m3) and tc.int8.
//
// The idea: mma.sync reaches only about two thirds of Hopper's tensor peak;
// the warpgroup-wide asynchronous wgmma with both operands in shared memory is
// the instruction the peak is quoted for.  Each block is one warpgroup (128
// threads) holding one 64 x 256 accumulator (f32, s32 for int8: 128 registers
// per thread); per iteration it issues kStepsPerGroup wgmma.m64n256kK on it
// (K = 16 for bf16/fp16, 8 for tf32, 32 for e4m3 and s8: always 32 bytes of K
// per operand row), commits them as one group and waits for the previous
// group only, so one group is always in flight.  Two blocks per SM keep the
// tensor pipe fed while one waits.  One loop for every precision (a template
// over the precision's traits); only the instruction and the bit pattern of
// 1 change.
//
// sm_90a only: the instructions (rl::ptx wrappers, rl/ptx_sm90.hpp) exist only
// in sm_90a code; on other GPU targets the kernels trap, and the records are
// for compute capability 9.0 exactly (min_cc = max_cc = 90: sm_90a code does
// not run on 10.x or 12.x).  The emulator runs them when it emulates a Hopper
// (RL_EMU_CC=90); at its default 8.9 they stay gpu_only.  Statically checked (the tensor
// instruction in the sm_90a SASS: HGMMA for bf16, fp16 and tf32, QGMMA for fp8, IGMMA for int8);
// not yet run on a GPU in this project (the bf16 loop included).
//
// The check: A and B are all ones (exact in every input type), so every
// accumulator element ends at iters * kStepsPerGroup * K whatever the
// fragment layout: each thread writes the minimum and the maximum of its 128
// accumulators, both must equal that value.  fp8 is the exception: Hopper
// adds fp8 products into the accumulator with fewer than 24 bits (DeepSeek-V3
// technical report, section 3.3.2, about 14 measured on H800), so a growing
// sum could not be checked exactly.  Its loop alternates B and -B (the
// imm-scale-b negation, free in the instruction), each group ending where it
// started, and issues one more +B wgmma after the loop: it ends at K = 32.
// That catches a wrong encoding of 1 or a missing instruction, not a
// miscounted loop (as the mma.sync fp8 check, tensor_mma_sync.cu).
// The shared-memory tiles use the no-swizzle K-major layout (8 x 16-byte core
// matrices, contiguous; LBO = 128 B between core matrices adjacent in K,
// SBO = 256 B between those adjacent in M or N): tf32, fp8 and s8 wgmma
// accept only K-major operands.
//
// FLOPs: 2 * 64 * 256 * K per wgmma (an integer multiply-add counts 2, as
// for floating point and the mma.sync int8 ceiling).  Bytes: the per-thread
// outputs only.
#include "ceilings/support.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/ptx.hpp"
#include "rl/registry.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rl::ceilings {
namespace {

constexpr int kWarpgroup = 128;
constexpr int kStepsPerGroup = 4;
constexpr int kTileM = 64, kTileN = 256;
// Every precision's wgmma reads 32 bytes of K per operand row.
constexpr int kRowBytes = 32;

// Per precision: the accumulator type, K of one wgmma, a 32-bit word of
// ones in the input type, and one wgmma (NegateB: -B, fp8 only).
struct WgmmaBf16 {
  using Acc = float;
  static constexpr int kK = 16;
  static constexpr std::uint32_t kOnes = 0x3F803F80u;  // two bf16 1.0
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_bf16;
  template <bool NegateB>
  __device__ static void mma(Acc (&d)[128], std::uint64_t a, std::uint64_t b) {
    static_assert(!NegateB);
    rl::ptx::wgmma_m64n256k16_f32<__nv_bfloat16, false>(d, a, b, 1);
  }
};

struct WgmmaFp16 {
  using Acc = float;
  static constexpr int kK = 16;
  static constexpr std::uint32_t kOnes = 0x3C003C00u;  // two fp16 1.0
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_fp16;
  template <bool NegateB>
  __device__ static void mma(Acc (&d)[128], std::uint64_t a, std::uint64_t b) {
    static_assert(!NegateB);
    rl::ptx::wgmma_m64n256k16_f32<__half, false>(d, a, b, 1);
  }
};

struct WgmmaTf32 {
  using Acc = float;
  static constexpr int kK = 8;
  static constexpr std::uint32_t kOnes = 0x3F800000u;  // fp32 1.0, exact in tf32
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_tf32;
  template <bool NegateB>
  __device__ static void mma(Acc (&d)[128], std::uint64_t a, std::uint64_t b) {
    rl::ptx::wgmma_m64n256k8_f32_tf32<NegateB>(d, a, b, 1);
  }
};

struct WgmmaFp8E4m3 {
  using Acc = float;
  static constexpr int kK = 32;
  static constexpr std::uint32_t kOnes = 0x38383838u;  // four e4m3 1.0 (exponent 7 = bias)
  static constexpr bool kAlternateSign = true;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_fp8;
  template <bool NegateB>
  __device__ static void mma(Acc (&d)[128], std::uint64_t a, std::uint64_t b) {
    rl::ptx::wgmma_m64n256k32_f32_e4m3<NegateB>(d, a, b, 1);
  }
};

struct WgmmaInt8 {
  using Acc = std::int32_t;
  static constexpr int kK = 32;
  static constexpr std::uint32_t kOnes = 0x01010101u;  // four s8 1
  static constexpr bool kAlternateSign = false;
  static constexpr roofline::ComputeUnit kUnit = roofline::ComputeUnit::tc_int8;
  template <bool NegateB>
  __device__ static void mma(Acc (&d)[128], std::uint64_t a, std::uint64_t b) {
    static_assert(!NegateB);
    rl::ptx::wgmma_m64n256k32_s32_s8(d, a, b, 1);
  }
};

template <typename P>
__device__ __forceinline__ void wgmma_loop(int iters, typename P::Acc* __restrict__ out) {
  using Acc = typename P::Acc;
  // 32-bit words of ones: 64 (A) and 256 (B) rows of 32 bytes.
  __shared__ __align__(128) std::uint32_t a_tile[kTileM * kRowBytes / 4];
  __shared__ __align__(128) std::uint32_t b_tile[kTileN * kRowBytes / 4];
  for (int i = threadIdx.x; i < kTileM * kRowBytes / 4; i += blockDim.x) a_tile[i] = P::kOnes;
  for (int i = threadIdx.x; i < kTileN * kRowBytes / 4; i += blockDim.x) b_tile[i] = P::kOnes;
  // Ordinary stores become visible to the async proxy (wgmma) only after this fence.
  rl::ptx::fence_proxy_async_shared();
  __syncthreads();

  // No swizzle, K-major: LBO = 128 B between core matrices adjacent in K,
  // SBO = 256 B between those adjacent in M or N.
  const std::uint64_t desc_a = rl::ptx::smem_descriptor(rl::ptx::shared_address(a_tile), 128, 256,
                                                        rl::ptx::SmemSwizzle::none);
  const std::uint64_t desc_b = rl::ptx::smem_descriptor(rl::ptx::shared_address(b_tile), 128, 256,
                                                        rl::ptx::SmemSwizzle::none);
  Acc d[128];
  for (int i = 0; i < 128; ++i) d[i] = 0;

  rl::ptx::wgmma_fence_operand(d);
  rl::ptx::wgmma_fence();
  for (int it = 0; it < iters; ++it) {
    // In pairs: for fp8 the second of each pair subtracts what the first added.
    for (int s = 0; s < kStepsPerGroup; s += 2) {
      P::template mma<false>(d, desc_a, desc_b);
      P::template mma<P::kAlternateSign>(d, desc_a, desc_b);
    }
    rl::ptx::wgmma_commit_group();
    rl::ptx::wgmma_wait_group<1>();
  }
  if constexpr (P::kAlternateSign) {
    P::template mma<false>(d, desc_a, desc_b);
    rl::ptx::wgmma_commit_group();
  }
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(d);

  Acc lo = d[0], hi = d[0];
  for (int i = 1; i < 128; ++i) {
    lo = d[i] < lo ? d[i] : lo;
    hi = d[i] > hi ? d[i] : hi;
  }
  const std::size_t thread = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  out[2 * thread] = lo;
  out[2 * thread + 1] = hi;
}

}  // namespace

// The wgmma loops are the kernels' whole work.  Budgets for every architecture
// (elsewhere the body traps at its first Hopper instruction: BPT.TRAP, 4
// registers on sm_80); on sm_90a the tensor instruction of each precision as
// ptxas spells it (nvcc 13.0: HGMMA for 16-bit and tf32, QGMMA for fp8, IGMMA
// for int8; fp16 carries no type suffix), 154 registers (the 128
// accumulators), 10240 bytes of shared memory, no spills.
// rl-static: kernel=wgmma_loop_bf16_m64n256k16 max_regs=200 max_smem=10240
// rl-static: kernel=wgmma_loop_bf16_m64n256k16 arch=90a sass=HGMMA.64x256x16.F32.BF16
__global__ void wgmma_loop_bf16_m64n256k16(int iters, float* __restrict__ out) {
  wgmma_loop<WgmmaBf16>(iters, out);
}

// rl-static: kernel=wgmma_loop_fp16_m64n256k16 max_regs=200 max_smem=10240
// rl-static: kernel=wgmma_loop_fp16_m64n256k16 arch=90a sass=HGMMA.64x256x16.F32
// rl-static: kernel=wgmma_loop_fp16_m64n256k16 arch=90a sass_absent=HGMMA.64x256x16.F32.BF16
__global__ void wgmma_loop_fp16_m64n256k16(int iters, float* __restrict__ out) {
  wgmma_loop<WgmmaFp16>(iters, out);
}

// rl-static: kernel=wgmma_loop_tf32_m64n256k8 max_regs=200 max_smem=10240
// rl-static: kernel=wgmma_loop_tf32_m64n256k8 arch=90a sass=HGMMA.64x256x8.F32.TF32
__global__ void wgmma_loop_tf32_m64n256k8(int iters, float* __restrict__ out) {
  wgmma_loop<WgmmaTf32>(iters, out);
}

// rl-static: kernel=wgmma_loop_fp8_e4m3_m64n256k32 max_regs=200 max_smem=10240
// rl-static: kernel=wgmma_loop_fp8_e4m3_m64n256k32 arch=90a sass=QGMMA.64x256x32.F32.E4M3.E4M3
__global__ void wgmma_loop_fp8_e4m3_m64n256k32(int iters, float* __restrict__ out) {
  wgmma_loop<WgmmaFp8E4m3>(iters, out);
}

// rl-static: kernel=wgmma_loop_int8_m64n256k32 max_regs=200 max_smem=10240
// rl-static: kernel=wgmma_loop_int8_m64n256k32 arch=90a sass=IGMMA.64x256x32.S8.S8
__global__ void wgmma_loop_int8_m64n256k32(int iters, std::int32_t* __restrict__ out) {
  wgmma_loop<WgmmaInt8>(iters, out);
}

namespace {

// Each accumulator reaches at most iters * kStepsPerGroup * K <= 2^24 (exact
// in the float the check compares).
template <typename P>
constexpr std::int64_t kWgmmaMaxIters = (std::int64_t{1} << 24) / (kStepsPerGroup * P::kK);

// wgmmas per block: kStepsPerGroup per iteration, and fp8's closing one.
template <typename P>
double wgmmas_per_block(std::int64_t iters) {
  return static_cast<double>(iters) * kStepsPerGroup + (P::kAlternateSign ? 1 : 0);
}

template <typename P>
using WgmmaKernel = void (*)(int, typename P::Acc*);

template <typename P>
class WgmmaLoop final : public Workload {
 public:
  WgmmaLoop(const LoopShape& shape, WgmmaKernel<P> kernel)
      : shape_(shape),
        kernel_(kernel),
        out_(static_cast<std::size_t>(shape.blocks * shape.threads) * 2) {}

  void run(cudaStream_t stream) override {
    rl::launch(kernel_, dim3(static_cast<unsigned>(shape_.blocks)), dim3(kWarpgroup), 0, stream,
               static_cast<int>(shape_.iters), out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    const double expected = P::kAlternateSign
                                ? static_cast<double>(P::kK)
                                : static_cast<double>(shape_.iters) * kStepsPerGroup * P::kK;
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t) { return expected; });
  }

 private:
  LoopShape shape_;
  WgmmaKernel<P> kernel_;
  DeviceBuffer<typename P::Acc> out_;
};

std::vector<Shape> wgmma_shapes(SizePreset preset) {
  // Two warpgroups per SM; the fallback (no device) assumes 132 SMs.
  const int sms = device_attribute_or(cudaDevAttrMultiProcessorCount, 132);
  return loop_shapes(preset, std::int64_t{2} * sms, kWarpgroup, 4096);
}

template <typename P>
roofline::Cost wgmma_cost(const Shape& shape) {
  const LoopShape s = parse_loop_shape(shape, kWgmmaMaxIters<P>);
  const double wgmmas = static_cast<double>(s.blocks) * wgmmas_per_block<P>(s.iters);
  const double bytes = static_cast<double>(s.blocks * s.threads) * 2 * sizeof(typename P::Acc);
  return tensor_loop_cost(wgmmas, 2.0 * kTileM * kTileN * P::kK, bytes, P::kUnit);
}

template <typename P>
KernelRecord wgmma_record(const char* name, roofline::Precision precision, WgmmaKernel<P> kernel) {
  return KernelRecord{
      .name = name,
      .family = "ceilings",
      .variant = "wgmma_loop",
      .precision = precision,
      .unit = P::kUnit,
      .baseline = "",
      .ceiling = std::string(roofline::compute_ceiling_name(P::kUnit)),
      .gpu_only = !rl::ptx::emulator_runs_sm90a(),  // the emulator as a Hopper: RL_EMU_CC=90
      .min_cc = 90,
      .max_cc = 90,
      .shapes = wgmma_shapes,
      .cost = wgmma_cost<P>,
      .make_workload = [kernel](const Shape& shape, std::uint64_t) -> std::unique_ptr<Workload> {
        const LoopShape s = parse_loop_shape(shape, kWgmmaMaxIters<P>);
        if (s.threads != kWarpgroup)
          throw std::invalid_argument("wgmma loop: threads must be one warpgroup (128)");
        return std::make_unique<WgmmaLoop<P>>(s, kernel);
      },
      .instruction = "wgmma.mma_async, warpgroup",
  };
}

}  // namespace

RL_REGISTER_KERNEL(wgmma_record<WgmmaBf16>("wgmma_loop_bf16_m64n256k16", roofline::Precision::bf16,
                                           wgmma_loop_bf16_m64n256k16));
RL_REGISTER_KERNEL(wgmma_record<WgmmaFp16>("wgmma_loop_fp16_m64n256k16", roofline::Precision::fp16,
                                           wgmma_loop_fp16_m64n256k16));
RL_REGISTER_KERNEL(wgmma_record<WgmmaTf32>("wgmma_loop_tf32_m64n256k8", roofline::Precision::tf32,
                                           wgmma_loop_tf32_m64n256k8));
RL_REGISTER_KERNEL(wgmma_record<WgmmaFp8E4m3>("wgmma_loop_fp8_e4m3_m64n256k32",
                                              roofline::Precision::fp8,
                                              wgmma_loop_fp8_e4m3_m64n256k32));
RL_REGISTER_KERNEL(wgmma_record<WgmmaInt8>("wgmma_loop_int8_m64n256k32", roofline::Precision::int8,
                                           wgmma_loop_int8_m64n256k32));

}  // namespace rl::ceilings
