// Tensor-core ceilings of consumer Blackwell (sm_120a / sm_121a: RTX 50, RTX
// PRO 6000, GB10) through mma.sync: FP8, FP6 and FP4 inputs with
// kind::f8f6f4, and the block-scaled MX and NV formats (kind::mxf8f6f4,
// kind::mxf4, kind::mxf4nvf4).  Plain sm_120 code has none of these kinds, so
// the records run on compute capability 12.0 and 12.1 only, from an sm_120a /
// sm_121a build (a plain-sm_120 build's kernel writes NaN: validation fails,
// nothing traps).
//
// The idea is tensor_mma_sync.cu's: operands live in registers for the whole
// kernel, each warp keeps kAccumulators independent m16n8 accumulators and
// issues one mma per accumulator per iteration, so only the tensor pipe works.
//
// The check is exact.  A and B hold small integers (-2..2, exact in every
// input format); the scale factors are powers of two, 2^((m + j) % 3 - 1) for
// row m of A and 2^((n + 2j) % 3 - 1) for column n of B in k-block j, and every
// byte and lane the selectors do not pick holds a NaN scale, so a scale read
// from the wrong lane, byte or block turns the result into NaN.  As for fp8 in
// tensor_mma_sync.cu (the accumulation width of these pipes is not
// documented), the loop alternates B and -B and runs an odd number of steps:
// accumulator q ends at q + P(row, col), P the scaled product, so the output
// (the sum over q) checks the layouts, the scales and that the loop ran, not
// the count of its steps.
//
// FLOPs: 2 * 16 * 8 * K per mma, K = 32 (f8f6f4, mxf8f6f4) or 64 (mxf4,
// mxf4nvf4); the scaling is not counted.  Bytes: the per-thread outputs only.
#include "ceilings/support.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/ptx_sm120.hpp"
#include "rl/registry.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rl::ceilings {
namespace {

using rl::ptx::F8f6f4;
using rl::ptx::ScaleOperand;

constexpr int kMmaBlock = 128;
constexpr int kAccumulators = 8;

struct Coord {
  int row, col;
};

constexpr std::uint32_t encode(F8f6f4 type, int v) {
  switch (type) {
    case F8f6f4::e4m3:
      return encode_small_float(v, 3, 4, 7);
    case F8f6f4::e5m2:
      return encode_small_float(v, 2, 5, 15);
    case F8f6f4::e3m2:
      return encode_small_float(v, 2, 3, 3);
    case F8f6f4::e2m3:
      return encode_small_float(v, 3, 2, 1);
    case F8f6f4::e2m1:
      return encode_small_float(v, 1, 2, 1);
  }
  return 0;
}

// Scale formats: the byte of 2^power, and the NaN byte.
enum class ScaleType { none, ue8m0, ue4m3 };
constexpr std::uint32_t scale_byte(ScaleType type, int power) {
  return type == ScaleType::ue8m0 ? static_cast<std::uint32_t>(127 + power)
                                  : static_cast<std::uint32_t>(7 + power) << 3U;
}
constexpr std::uint32_t scale_nan(ScaleType type) {
  return type == ScaleType::ue8m0 ? 0xFFU : 0x7FU;
}

// Per instruction: K, the A/B fragment layouts (PTX ISA "Matrix Fragments
// for mma.m16n8k32 / m16n8k64"), the element encoding and the scales.  Element
// i of A (B) sits in register i / kPerReg at bit (i % kPerReg) * kBits.
template <F8f6f4 Type>
struct KindF8f6f4 {
  static constexpr int kK = 32, kPerReg = 4, kBits = 8;
  static constexpr ScaleType kScale = ScaleType::none;
  static constexpr int kScaleVec = 1;
  static Coord a(int i, int g, int t) {
    return {g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
  }
  static Coord b(int i, int g, int t) { return {4 * t + (i & 3) + 16 * (i >> 2), g}; }
  // e2m1 sits in bits 5:2 of its byte, the 6-bit types in bits 5:0.
  static std::uint32_t encode(int v) {
    return rl::ceilings::encode(Type, v) << (Type == F8f6f4::e2m1 ? 2U : 0U);
  }
  __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                             const std::uint32_t (&b)[2], ScaleOperand, ScaleOperand) {
    rl::ptx::mma_m16n8k32_f8f6f4_f32<Type, Type>(d, a, b, d);
  }
};

template <F8f6f4 Type>
struct KindMxf8f6f4 : KindF8f6f4<Type> {
  static constexpr ScaleType kScale = ScaleType::ue8m0;
  __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                             const std::uint32_t (&b)[2], ScaleOperand sa, ScaleOperand sb) {
    rl::ptx::mma_m16n8k32_mxf8f6f4_f32<Type, Type>(d, a, b, d, sa, sb);
  }
};

// m16n8k64, packed e2m1: eight per register.
struct KindMxf4 {
  static constexpr int kK = 64, kPerReg = 8, kBits = 4;
  static constexpr ScaleType kScale = ScaleType::ue8m0;
  static constexpr int kScaleVec = 2;
  static Coord a(int i, int g, int t) {
    return {g + 8 * ((i >> 3) & 1), 8 * t + (i & 7) + 32 * (i >> 4)};
  }
  static Coord b(int i, int g, int t) { return {8 * t + (i & 7) + 32 * (i >> 3), g}; }
  static std::uint32_t encode(int v) { return rl::ceilings::encode(F8f6f4::e2m1, v); }
  __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                             const std::uint32_t (&b)[2], ScaleOperand sa, ScaleOperand sb) {
    rl::ptx::mma_m16n8k64_mxf4_f32(d, a, b, d, sa, sb);
  }
};

struct KindMxf4nvf4Ue8m0 : KindMxf4 {
  __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                             const std::uint32_t (&b)[2], ScaleOperand sa, ScaleOperand sb) {
    rl::ptx::mma_m16n8k64_mxf4nvf4_ue8m0_f32(d, a, b, d, sa, sb);
  }
};

struct KindMxf4nvf4Ue4m3 : KindMxf4 {
  static constexpr ScaleType kScale = ScaleType::ue4m3;
  static constexpr int kScaleVec = 4;
  __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                             const std::uint32_t (&b)[2], ScaleOperand sa, ScaleOperand sb) {
    rl::ptx::mma_m16n8k64_mxf4nvf4_ue4m3_f32(d, a, b, d, sa, sb);
  }
};

// The matrices: small integers in -2..2 whose product has no simple
// structure; the scale factors' powers of two, per row / column and k-block.
int a_value(int row, int k) {
  return (row + 2 * k) % 5 - 2;
}
int b_value(int k, int col) {
  return (3 * k + col) % 5 - 2;
}
int scale_a_power(int row, int block) {
  return (row + block) % 3 - 1;
}
int scale_b_power(int col, int block) {
  return (col + 2 * block) % 3 - 1;
}

template <typename Mma>
double scaled_product_at(int row, int col) {
  constexpr int kBlockK = Mma::kK / Mma::kScaleVec;
  double sum = 0;
  for (int k = 0; k < Mma::kK; ++k) {
    double scale = 1;
    if constexpr (Mma::kScale != ScaleType::none)
      scale = std::ldexp(1.0, scale_a_power(row, k / kBlockK) + scale_b_power(col, k / kBlockK));
    sum += scale * a_value(row, k) * b_value(k, col);
  }
  return sum;
}

// Registers of every lane: A in a[lane * 4 + r]; B in b[lane * 4 + r], r = 0,
// 1 for B and 2, 3 for -B; the scale data in scales[lane] (A) and
// scales[32 + lane] (B), selectors {0, 0}: thread-id-a 0 picks lanes 4g (row
// g) and 4g + 1 (row g + 8), thread-id-b 0 picks lane 4n (column n); block j
// reads byte j.  Everything else holds NaN scales.
template <typename Mma>
std::vector<std::uint32_t> pack_fragments() {
  std::vector<std::uint32_t> out(32 * 4 * 2 + 64, 0U);
  std::uint32_t* a = out.data();
  std::uint32_t* b = a + 32 * 4;
  std::uint32_t* scales = b + 32 * 4;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4 * Mma::kPerReg; ++i) {
      const Coord at = Mma::a(i, g, t);
      a[lane * 4 + i / Mma::kPerReg] |= Mma::encode(a_value(at.row, at.col))
                                        << ((i % Mma::kPerReg) * Mma::kBits);
    }
    for (int i = 0; i < 2 * Mma::kPerReg; ++i) {
      const Coord at = Mma::b(i, g, t);
      const auto shift = static_cast<std::uint32_t>((i % Mma::kPerReg) * Mma::kBits);
      b[lane * 4 + i / Mma::kPerReg] |= Mma::encode(b_value(at.row, at.col)) << shift;
      b[lane * 4 + 2 + i / Mma::kPerReg] |= Mma::encode(-b_value(at.row, at.col)) << shift;
    }
    if constexpr (Mma::kScale != ScaleType::none) {
      for (int byte = 0; byte < 4; ++byte) {
        const auto shift = static_cast<std::uint32_t>(8 * byte);
        const bool used = byte < Mma::kScaleVec;
        const std::uint32_t sa = used && t < 2
                                     ? scale_byte(Mma::kScale, scale_a_power(g + 8 * t, byte))
                                     : scale_nan(Mma::kScale);
        const std::uint32_t sb = used && t == 0 ? scale_byte(Mma::kScale, scale_b_power(g, byte))
                                                : scale_nan(Mma::kScale);
        scales[lane] |= sa << shift;
        scales[32 + lane] |= sb << shift;
      }
    }
  }
  return out;
}

}  // namespace

// Kernels outside the anonymous namespace: their mangled names then carry
// them as plain identifiers (the static checks match on those).  sm_120a
// SASS (nvcc 13.0): kind::f8f6f4 is QMMA.16832.F32.<A>.<B> (e.g. .E2M1.E2M1),
// kind::mxf8f6f4 QMMA.SF.16832.F32.<A>.<B>.E8, kind::mxf4 and kind::mxf4nvf4
// with ue8m0 OMMA.SF.16864.F32.E2M1.E2M1.E8, with ue4m3
// OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X.  The hot loop is 128 MMAs in 131
// instructions (97.7%: the counter, compare and branch); 48 registers.  sm_121a
// (DGX Spark's GB10) is checked for the same SASS.  Without a GPU this file is
// compiled for 120a and 121a only; a given list's other architectures compile
// the NaN stub (8 registers).
// rl-static: kernel=mma_sync_sm120a_loop max_regs=64 max_smem=0
// rl-static: kernel=KindF8f6f4 arch=120a,121a sass=QMMA.16832 sass_absent=QMMA.SF loop_share=QMMA:97
// rl-static: kernel=KindMxf8f6f4 arch=120a,121a sass=QMMA.SF.16832 loop_share=QMMA:97
// rl-static: kernel=KindMxf4 arch=120a,121a sass=OMMA.SF.16864.F32.E2M1.E2M1.E8 loop_share=OMMA:97
// rl-static: kernel=KindMxf4nvf4Ue8m0 arch=120a,121a sass=OMMA.SF.16864.F32.E2M1.E2M1.E8
// rl-static: kernel=KindMxf4nvf4Ue8m0 arch=120a,121a loop_share=OMMA:97
// rl-static: kernel=KindMxf4nvf4Ue4m3 arch=120a,121a sass=OMMA.SF.16864.F32.E2M1.E2M1.UE4M3.4X
// rl-static: kernel=KindMxf4nvf4Ue4m3 arch=120a,121a loop_share=OMMA:97
template <typename Mma>
__global__ void mma_sync_sm120a_loop(const std::uint32_t* __restrict__ fragments, int iters,
                                     float* __restrict__ out) {
  const std::size_t thread = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
#if !defined(__CUDA_ARCH__) || RL_PTX_SM120A
  const unsigned lane = threadIdx.x % 32U;
  std::uint32_t a[4];
  std::uint32_t b[2];
  std::uint32_t b_negated[2];
  for (int r = 0; r < 4; ++r) a[r] = fragments[lane * 4 + r];
  for (int r = 0; r < 2; ++r) {
    b[r] = fragments[128 + lane * 4 + r];
    b_negated[r] = fragments[128 + lane * 4 + 2 + r];
  }
  const ScaleOperand scale_a{fragments[256 + lane], 0, 0};
  const ScaleOperand scale_b{fragments[288 + lane], 0, 0};
  float d[kAccumulators][4];
  for (int q = 0; q < kAccumulators; ++q)
    for (int i = 0; i < 4; ++i) d[q][i] = static_cast<float>(q);
  int it = 0;
  for (; it + 1 < iters; it += 2) {
    for (int q = 0; q < kAccumulators; ++q) Mma::mma(d[q], a, b, scale_a, scale_b);
    for (int q = 0; q < kAccumulators; ++q) Mma::mma(d[q], a, b_negated, scale_a, scale_b);
  }
  for (; it < iters; ++it)
    for (int q = 0; q < kAccumulators; ++q) Mma::mma(d[q], a, b, scale_a, scale_b);
  for (int i = 0; i < 4; ++i) {
    float sum = 0;
    for (int q = 0; q < kAccumulators; ++q) sum += d[q][i];
    out[thread * 4 + static_cast<std::size_t>(i)] = sum;
  }
#else
  // No sm_120a code in this build: nothing to time; NaN fails validation.
  (void)fragments, (void)iters, (void)&Mma::mma;
  for (int i = 0; i < 4; ++i)
    out[thread * 4 + static_cast<std::size_t>(i)] = __int_as_float(0x7FFFFFFF);
#endif
}

namespace {

// The accumulators stay within a few K of their start (alternating signs);
// the bound only keeps the iteration count an int.
constexpr std::int64_t kMaxIters = std::int64_t{1} << 24;

template <typename Mma>
class MmaSm120aLoop final : public Workload {
 public:
  explicit MmaSm120aLoop(const LoopShape& shape)
      : shape_(shape),
        fragments_(32 * 4 * 2 + 64),
        out_(static_cast<std::size_t>(shape.blocks * shape.threads) * 4) {
    fragments_.upload(pack_fragments<Mma>());
  }

  void run(cudaStream_t stream) override {
    rl::launch(mma_sync_sm120a_loop<Mma>, dim3(static_cast<unsigned>(shape_.blocks)),
               dim3(static_cast<unsigned>(shape_.threads)), 0, stream, fragments_.get(),
               static_cast<int>(shape_.iters), out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    constexpr double kInitSum = kAccumulators * (kAccumulators - 1) / 2;
    const std::int64_t net_steps = shape_.iters % 2;
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t index) {
      const int lane = static_cast<int>((index / 4) % 32);
      const int i = static_cast<int>(index % 4);
      const int row = (lane >> 2) + 8 * (i >> 1);
      const int col = 2 * (lane & 3) + (i & 1);
      return kInitSum +
             static_cast<double>(kAccumulators * net_steps) * scaled_product_at<Mma>(row, col);
    });
  }

 private:
  LoopShape shape_;
  DeviceBuffer<std::uint32_t> fragments_;
  DeviceBuffer<float> out_;
};

template <typename Mma>
KernelRecord sm120a_record(std::string name, roofline::Precision precision,
                           roofline::ComputeUnit unit, std::string idea) {
  return KernelRecord{
      .name = std::move(name),
      .family = "ceilings",
      .variant = "mma_sync_loop",
      .precision = precision,
      .unit = unit,
      .baseline = "",
      .ceiling = std::string(roofline::compute_ceiling_name(unit)),
      // The emulator runs them as an sm_120a (RL_EMU_CC=120 or 121).
      .gpu_only = !rl::ptx::emulator_runs_sm120a(),
      .min_cc = 120,
      .max_cc = 121,
      .shapes =
          [](SizePreset preset) {
            std::vector<Shape> shapes =
                loop_shapes(preset, one_wave_blocks(mma_sync_sm120a_loop<Mma>, kMmaBlock, 1024),
                            kMmaBlock, Mma::kK == 64 ? 4000 : 8000);
            for (auto& shape : shapes) shape.dims.back().second |= 1;  // odd: see the header
            return shapes;
          },
      .cost =
          [unit](const Shape& shape) {
            const LoopShape s = parse_loop_shape(shape, kMaxIters);
            const double warps =
                static_cast<double>(s.blocks) * static_cast<double>(s.threads) / 32;
            const double mmas = warps * kAccumulators * static_cast<double>(s.iters);
            const double bytes = warps * 32 * 4 * sizeof(float);
            return tensor_loop_cost(mmas, 2.0 * 16 * 8 * Mma::kK, bytes, unit);
          },
      .make_workload = [](const Shape& shape, std::uint64_t) -> std::unique_ptr<Workload> {
        return std::make_unique<MmaSm120aLoop<Mma>>(parse_loop_shape(shape, kMaxIters));
      },
      .idea = std::move(idea),
      .instruction = "mma.sync, sm_120a kinds (QMMA, OMMA)",
  };
}

}  // namespace

// Launch lengths aim at a few milliseconds on a large GPU at the large preset.
RL_REGISTER_KERNEL(sm120a_record<KindF8f6f4<F8f6f4::e4m3>>(
    "mma_sync_loop_f8f6f4_e4m3", roofline::Precision::fp8, roofline::ComputeUnit::tc_fp8,
    "sm_120a kind::f8f6f4 mma.sync, e4m3 x e4m3"));
RL_REGISTER_KERNEL(sm120a_record<KindF8f6f4<F8f6f4::e5m2>>(
    "mma_sync_loop_f8f6f4_e5m2", roofline::Precision::fp8, roofline::ComputeUnit::tc_fp8,
    "sm_120a kind::f8f6f4 mma.sync, e5m2 x e5m2"));
RL_REGISTER_KERNEL(sm120a_record<KindF8f6f4<F8f6f4::e3m2>>(
    "mma_sync_loop_f8f6f4_e3m2", roofline::Precision::fp6, roofline::ComputeUnit::tc_fp6,
    "sm_120a kind::f8f6f4 mma.sync, e3m2 x e3m2"));
RL_REGISTER_KERNEL(sm120a_record<KindF8f6f4<F8f6f4::e2m3>>(
    "mma_sync_loop_f8f6f4_e2m3", roofline::Precision::fp6, roofline::ComputeUnit::tc_fp6,
    "sm_120a kind::f8f6f4 mma.sync, e2m3 x e2m3"));
RL_REGISTER_KERNEL(sm120a_record<KindF8f6f4<F8f6f4::e2m1>>(
    "mma_sync_loop_f8f6f4_e2m1", roofline::Precision::fp4, roofline::ComputeUnit::tc_fp4,
    "sm_120a kind::f8f6f4 mma.sync, e2m1 x e2m1 in byte containers"));
RL_REGISTER_KERNEL(sm120a_record<KindMxf8f6f4<F8f6f4::e4m3>>(
    "mma_sync_loop_mxf8f6f4_e4m3", roofline::Precision::mxfp8, roofline::ComputeUnit::tc_mxfp8,
    "sm_120a kind::mxf8f6f4 mma.sync, e4m3 with ue8m0 scales per 32"));
RL_REGISTER_KERNEL(sm120a_record<KindMxf8f6f4<F8f6f4::e3m2>>(
    "mma_sync_loop_mxf8f6f4_e3m2", roofline::Precision::mxfp6, roofline::ComputeUnit::tc_mxfp6,
    "sm_120a kind::mxf8f6f4 mma.sync, e3m2 with ue8m0 scales per 32"));
RL_REGISTER_KERNEL(sm120a_record<KindMxf4>("mma_sync_loop_mxf4", roofline::Precision::mxfp4,
                                           roofline::ComputeUnit::tc_mxfp4,
                                           "sm_120a kind::mxf4 mma.sync m16n8k64, e2m1 with "
                                           "ue8m0 scales per 32"));
RL_REGISTER_KERNEL(sm120a_record<KindMxf4nvf4Ue8m0>(
    "mma_sync_loop_mxf4nvf4_ue8m0", roofline::Precision::mxfp4, roofline::ComputeUnit::tc_mxfp4,
    "sm_120a kind::mxf4nvf4 mma.sync m16n8k64, e2m1 with ue8m0 scales per 32"));
RL_REGISTER_KERNEL(sm120a_record<KindMxf4nvf4Ue4m3>(
    "mma_sync_loop_mxf4nvf4_ue4m3", roofline::Precision::nvfp4, roofline::ComputeUnit::tc_nvfp4,
    "sm_120a kind::mxf4nvf4 mma.sync m16n8k64, e2m1 with ue4m3 scales per 16 (NVFP4)"));

}  // namespace rl::ceilings
