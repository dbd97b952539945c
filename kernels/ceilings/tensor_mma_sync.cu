// Tensor-core ceilings through mma.sync: tc.tf32, tc.fp16, tc.bf16, tc.fp8
// (e4m3, sm_89+) and tc.int8.
//
// The idea: operands live in registers for the whole kernel, so nothing but
// the tensor pipe is exercised.  Each warp keeps kAccumulators independent
// m16n8 accumulators and issues one mma per accumulator per iteration,
// d[q] = A * B + d[q]: kAccumulators mmas in flight per warp, times several
// warps per SM sub-partition, cover the mma latency.  On Hopper mma.sync
// reaches only about two thirds of the tensor peak; wgmma
// (tensor_wgmma_sm90a.cu) is the Hopper ceiling.
//
// The check is exact: A and B hold small integers (-2..2, exact in every input
// type), so every product and sum is exact in fp32 / int32; accumulator q
// starts at q, so lane element (row, col) ends at
// sum_q q + kAccumulators * iters * (A B)(row, col).  The host places each
// expected value with the C-fragment layout (g, 2t), (g, 2t+1), (g+8, 2t),
// (g+8, 2t+1), so a wrong fragment layout fails as well as a missing mma.
//
// fp8 is the exception: Hopper accumulates fp8 products in fewer than 24 bits
// (DeepSeek-V3 technical report, section 3.3.2, measured about 14 on H800), so
// a growing accumulator could not be checked exactly.  Its loop alternates B
// and -B, keeping every accumulator within 4 K of its start, and runs an odd
// number of steps: it ends at q + (A B)(row, col).  That check catches a wrong
// layout or a loop that never ran, not a miscounted one.  On sm_90 and sm_100
// mma.sync e4m3 has no fp8 tensor instruction: nvcc unpacks to f16 (F2FP) and
// uses HMMA, and hoists the loop-invariant product out of the loop, leaving
// FADDs.  The workload refuses to run there; Hopper's tc.fp8 ceiling is the
// cuBLASLt FP8 one (cuda_only/cublaslt_gemm.cu).
//
// FLOPs: 2 * 16 * 8 * K per mma (an integer multiply-add counts 2, as for
// floating point).  Bytes: the per-thread outputs only.
#include "ceilings/support.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/ptx.hpp"
#include "rl/registry.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rl::ceilings {
namespace {

constexpr int kMmaBlock = 128;
constexpr int kAccumulators = 8;

struct Coord {
  int row, col;
};

// Per instruction: K, accumulator type, the A/B fragment layouts of the PTX
// ISA (shared/docs/ptx-emulation-reference.md sections 1-3) and the element
// encoding.  Element i of A (B) sits in register i / kPerReg, at bit offset
// (i % kPerReg) * kBits.
struct MmaF16 {
  using Acc = float;
  static constexpr int kK = 16, kPerReg = 2, kBits = 16;
  static constexpr bool kSignAlternating = false;
  static Coord a(int i, int g, int t) {
    return {g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)};
  }
  static Coord b(int i, int g, int t) { return {2 * t + (i & 1) + 8 * (i >> 1), g}; }
  static std::uint32_t encode(int v) { return encode_small_float(v, 10, 5, 15); }
  __device__ static void mma(Acc (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                             const Acc (&c)[4]) {
    rl::ptx::mma_m16n8k16_f16_f32(d, a, b, c);
  }
};

struct MmaBf16 : MmaF16 {
  static std::uint32_t encode(int v) { return encode_small_float(v, 7, 8, 127); }
  __device__ static void mma(Acc (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                             const Acc (&c)[4]) {
    rl::ptx::mma_m16n8k16_bf16_f32(d, a, b, c);
  }
};

struct MmaTf32 {
  using Acc = float;
  static constexpr int kK = 8, kPerReg = 1, kBits = 32;
  static constexpr bool kSignAlternating = false;
  static Coord a(int i, int g, int t) { return {g + 8 * (i & 1), t + 4 * (i >> 1)}; }
  static Coord b(int i, int g, int t) { return {t + 4 * i, g}; }
  // fp32 bit patterns; small integers have their low 13 bits zero (exact tf32).
  static std::uint32_t encode(int v) { return std::bit_cast<std::uint32_t>(static_cast<float>(v)); }
  __device__ static void mma(Acc (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                             const Acc (&c)[4]) {
    rl::ptx::mma_m16n8k8_tf32_f32(d, a, b, c);
  }
};

// m16n8k32 byte layout, shared by e4m3 and s8.
struct MmaBytesK32 {
  static constexpr int kK = 32, kPerReg = 4, kBits = 8;
  static Coord a(int i, int g, int t) {
    return {g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)};
  }
  static Coord b(int i, int g, int t) { return {4 * t + (i & 3) + 16 * (i >> 2), g}; }
};

struct MmaE4m3 : MmaBytesK32 {
  using Acc = float;
  static constexpr bool kSignAlternating = true;
  static std::uint32_t encode(int v) { return encode_small_float(v, 3, 4, 7); }
  __device__ static void mma(Acc (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                             const Acc (&c)[4]) {
    rl::ptx::mma_m16n8k32_e4m3_f32(d, a, b, c);
  }
};

struct MmaS8 : MmaBytesK32 {
  using Acc = std::int32_t;
  static constexpr bool kSignAlternating = false;
  static std::uint32_t encode(int v) { return static_cast<std::uint32_t>(v) & 0xFFu; }
  __device__ static void mma(Acc (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                             const Acc (&c)[4]) {
    rl::ptx::mma_m16n8k32_s8_s32(d, a, b, c);
  }
};

// The matrices: small integers in -2..2 whose product has no simple structure.
int a_value(int row, int k) {
  return (row + 2 * k) % 5 - 2;
}
int b_value(int k, int col) {
  return (3 * k + col) % 5 - 2;
}

template <typename Mma>
std::int64_t product_at(int row, int col) {
  std::int64_t sum = 0;
  for (int k = 0; k < Mma::kK; ++k) sum += a_value(row, k) * b_value(k, col);
  return sum;
}

// Registers of every lane, packed as the PTX fragment layouts say:
// A: a[lane * 4 + r]; B: b[lane * 4 + r], r = 0, 1 for B and r = 2, 3 for -B.
template <typename Mma>
std::vector<std::uint32_t> pack_a_fragments() {
  std::vector<std::uint32_t> out(32 * 4, 0u);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4 * Mma::kPerReg; ++i) {
      const Coord at = Mma::a(i, lane >> 2, lane & 3);
      const auto shift = static_cast<std::uint32_t>((i % Mma::kPerReg) * Mma::kBits);
      out[static_cast<std::size_t>(lane * 4 + i / Mma::kPerReg)] |=
          Mma::encode(a_value(at.row, at.col)) << shift;
    }
  return out;
}

template <typename Mma>
std::vector<std::uint32_t> pack_b_fragments() {
  std::vector<std::uint32_t> out(32 * 4, 0u);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 2 * Mma::kPerReg; ++i) {
      const Coord at = Mma::b(i, lane >> 2, lane & 3);
      const auto shift = static_cast<std::uint32_t>((i % Mma::kPerReg) * Mma::kBits);
      const auto reg = static_cast<std::size_t>(lane * 4 + i / Mma::kPerReg);
      out[reg] |= Mma::encode(b_value(at.row, at.col)) << shift;
      out[reg + 2] |= Mma::encode(-b_value(at.row, at.col)) << shift;
    }
  return out;
}

}  // namespace

// Kernels outside the anonymous namespace: their mangled names then carry
// them as plain identifiers (the static checks match on those).
// The tensor instructions exist from sm_80 on (fp8 from sm_89: QMMA on Ada;
// Hopper has no fp8 mma.sync, see the header).
// rl-static: kernel=mma_sync_loop max_regs=96 max_smem=0
// rl-static: kernel=*MmaTf32E* min_arch=80 max_regs=96 max_smem=0 sass=HMMA
// rl-static: kernel=*MmaF16E* min_arch=80 max_regs=96 max_smem=0 sass=HMMA
// rl-static: kernel=*MmaBf16E* min_arch=80 max_regs=96 max_smem=0 sass=HMMA
// rl-static: kernel=*MmaS8E* min_arch=80 max_regs=96 max_smem=0 sass=IMMA
// rl-static: kernel=*MmaE4m3E* arch=89,120 max_regs=96 max_smem=0 sass=QMMA
template <typename Mma>
__global__ void mma_sync_loop(const std::uint32_t* __restrict__ a_frag,
                              const std::uint32_t* __restrict__ b_frag, int iters,
                              typename Mma::Acc* __restrict__ out) {
  using Acc = typename Mma::Acc;
  const unsigned lane = threadIdx.x % 32u;
  std::uint32_t a[4];
  std::uint32_t b[2];
  std::uint32_t b_negated[2];
  for (int r = 0; r < 4; ++r) a[r] = a_frag[lane * 4 + r];
  for (int r = 0; r < 2; ++r) {
    b[r] = b_frag[lane * 4 + r];
    b_negated[r] = b_frag[lane * 4 + 2 + r];
  }
  Acc d[kAccumulators][4];
  for (int q = 0; q < kAccumulators; ++q)
    for (int i = 0; i < 4; ++i) d[q][i] = static_cast<Acc>(q);
  int it = 0;
  if constexpr (Mma::kSignAlternating) {
    for (; it + 1 < iters; it += 2) {
      for (int q = 0; q < kAccumulators; ++q) Mma::mma(d[q], a, b, d[q]);
      for (int q = 0; q < kAccumulators; ++q) Mma::mma(d[q], a, b_negated, d[q]);
    }
  }
  for (; it < iters; ++it) {
    for (int q = 0; q < kAccumulators; ++q) Mma::mma(d[q], a, b, d[q]);
  }
  const std::size_t thread = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (int i = 0; i < 4; ++i) {
    Acc sum = 0;
    for (int q = 0; q < kAccumulators; ++q) sum += d[q][i];
    out[thread * 4 + static_cast<std::size_t>(i)] = sum;
  }
}

namespace {

// |A B| <= 4 K per element; the folded sum kAccumulators * iters * 4 K must stay
// below 2^24 to be exact in fp32.
template <typename Mma>
constexpr std::int64_t kMmaMaxIters = (std::int64_t{1} << 24) / (kAccumulators * 4 * Mma::kK) - 1;

// Hopper (and sm_100) would time f16 HMMA with the product hoisted out of the
// loop; their tc.fp8 ceiling is the cuBLASLt FP8 one.
template <typename Mma>
void refuse_emulated_fp8() {
  if constexpr (std::is_same_v<Mma, MmaE4m3>)
    rl::ptx::refuse_emulated_fp8_mma_sync("tc.fp8 mma.sync ceiling (use the cuBLASLt FP8 one)");
}

template <typename Mma>
class MmaSyncLoop final : public Workload {
 public:
  explicit MmaSyncLoop(const LoopShape& shape)
      : shape_((refuse_emulated_fp8<Mma>(), shape)),
        a_(128),
        b_(128),
        out_(static_cast<std::size_t>(shape.blocks * shape.threads) * 4) {
    a_.upload(pack_a_fragments<Mma>());
    b_.upload(pack_b_fragments<Mma>());
  }

  void run(cudaStream_t stream) override {
    rl::launch(mma_sync_loop<Mma>, dim3(static_cast<unsigned>(shape_.blocks)),
               dim3(static_cast<unsigned>(shape_.threads)), 0, stream, a_.get(), b_.get(),
               static_cast<int>(shape_.iters), out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    constexpr std::int64_t kInitSum = kAccumulators * (kAccumulators - 1) / 2;
    const std::int64_t net_steps = Mma::kSignAlternating ? shape_.iters % 2 : shape_.iters;
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t index) {
      const int lane = static_cast<int>((index / 4) % 32);
      const int i = static_cast<int>(index % 4);
      const int row = (lane >> 2) + 8 * (i >> 1);
      const int col = 2 * (lane & 3) + (i & 1);
      return static_cast<double>(kInitSum + kAccumulators * net_steps * product_at<Mma>(row, col));
    });
  }

 private:
  LoopShape shape_;
  DeviceBuffer<std::uint32_t> a_;
  DeviceBuffer<std::uint32_t> b_;
  DeviceBuffer<typename Mma::Acc> out_;
};

template <typename Mma>
KernelRecord mma_record(std::string name, roofline::Precision precision, roofline::ComputeUnit unit,
                        int min_cc, std::int64_t large_iters) {
  return KernelRecord{
      .name = std::move(name),
      .family = "ceilings",
      .variant = "mma_sync_loop",
      .precision = precision,
      .unit = unit,
      .baseline = "",
      .ceiling = std::string(roofline::compute_ceiling_name(unit)),
      .gpu_only = false,
      .min_cc = min_cc,
      .shapes =
          [=](SizePreset preset) {
            std::vector<Shape> shapes =
                loop_shapes(preset, one_wave_blocks(mma_sync_loop<Mma>, kMmaBlock, 1024), kMmaBlock,
                            large_iters);
            // An even count would end where it started (see the header).
            if (Mma::kSignAlternating)
              for (auto& shape : shapes) shape.dims.back().second |= 1;
            return shapes;
          },
      .cost =
          [=](const Shape& shape) {
            const LoopShape s = parse_loop_shape(shape, kMmaMaxIters<Mma>);
            const double warps =
                static_cast<double>(s.blocks) * static_cast<double>(s.threads) / 32;
            const double mmas = warps * kAccumulators * static_cast<double>(s.iters);
            const double bytes = warps * 32 * 4 * sizeof(typename Mma::Acc);
            return tensor_loop_cost(mmas, 2.0 * 16 * 8 * Mma::kK, bytes, unit);
          },
      .make_workload = [=](const Shape& shape, std::uint64_t) -> std::unique_ptr<Workload> {
        return std::make_unique<MmaSyncLoop<Mma>>(parse_loop_shape(shape, kMmaMaxIters<Mma>));
      },
      // fp8 only where mma.sync e4m3 is a tensor instruction (skipped with
      // the reason elsewhere, not run as an emulation).
      .refuse_on = std::is_same_v<Mma, MmaE4m3> ? std::function<std::optional<std::string>(int)>(
                                                      rl::ptx::fp8_mma_sync_refusal)
                                                : nullptr,
      .instruction = "mma.sync, warp-level; on sm_100/103 the legacy path below tcgen05",
  };
}

}  // namespace

// Launch lengths aim at a few milliseconds on a large GPU at the large preset.
RL_REGISTER_KERNEL(mma_record<MmaTf32>("mma_sync_loop_tf32", roofline::Precision::tf32,
                                       roofline::ComputeUnit::tc_tf32, 80, 8192));
RL_REGISTER_KERNEL(mma_record<MmaF16>("mma_sync_loop_fp16", roofline::Precision::fp16,
                                      roofline::ComputeUnit::tc_fp16, 80, 8192));
RL_REGISTER_KERNEL(mma_record<MmaBf16>("mma_sync_loop_bf16", roofline::Precision::bf16,
                                       roofline::ComputeUnit::tc_bf16, 80, 8192));
RL_REGISTER_KERNEL(mma_record<MmaE4m3>("mma_sync_loop_fp8_e4m3", roofline::Precision::fp8,
                                       roofline::ComputeUnit::tc_fp8, 89, 8000));
RL_REGISTER_KERNEL(mma_record<MmaS8>("mma_sync_loop_int8", roofline::Precision::int8,
                                     roofline::ComputeUnit::tc_int8, 80, 8000));

}  // namespace rl::ceilings
