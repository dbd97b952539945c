// SIMT compute ceilings: fp32.fma (FFMA; on sm_100 and later also FFMA2, two
// fp32 FMAs per instruction), fp64.fma (DFMA), fp16.hfma2 and bf16.hfma2
// (HFMA2, HFMA2.BF16: two FMAs per instruction).
//
// The idea: each thread runs Chain::kChains independent FMA chains
// x <- x * a + b, unrolled, so a scheduler always has an independent FMA to
// issue (chains x warps per scheduler >> FMA latency).  A scheduler issues
// one instruction per clock, so the loop's own instructions (counter,
// compare, branch: 3 to 6 of them) take issue slots from the FMAs: one trip
// of the hot loop runs kStepsPerTrip steps of every chain, 896 FMA
// instructions, which keeps that overhead below 1% on every architecture
// (the static check's loop_share; 4 steps a trip gave 128 FFMA in 134
// instructions on sm_90a, 95.5% of the FP32 peak at best).  a and b are kernel arguments
// (a = 1, b = 1), so the compiler cannot fold the chain; each thread folds its
// chains into one output per lane, so it cannot drop them either.
//
// The check is exact: with a = 1 and b = 1 a chain started at x0 ends at
// x0 + iters, and every intermediate value is an integer the type represents
// exactly (|x| <= 2048 for fp16, <= 256 for bf16, so their chains start at
// -2048 and -256 and their iteration counts stay below 4096 and 512).  A
// missing or extra FMA changes the output.  The bf16 and fp16 shapes launch
// several full waves to make up for their short chains.
//
// FLOPs: 2 per FMA, 4 per FFMA2 and HFMA2.  Bytes: the per-thread outputs only.
#include "ceilings/support.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/ptx.hpp"
#include "rl/registry.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rl::ceilings {
namespace {

constexpr int kFmaBlock = 256;

struct Fp32Chain {
  using Value = float;
  using Out = float;
  static constexpr int kChains = 16;
  static constexpr int kStepsPerTrip = 56;
  static constexpr int kLanes = 1;
  static constexpr float kStart = 0.f;
  static constexpr std::int64_t kMaxIters = std::int64_t{1} << 19;  // sums stay < 2^24
  __host__ __device__ static Value make(float lo, float) { return lo; }
  __device__ static Value fma(Value x, Value a, Value b) { return fmaf(x, a, b); }
  __device__ static Out lane(Value x, int) { return x; }
};

// Packed fp32 (fma.rn.f32x2, sm_100 and later): one FFMA2 does two of
// Fp32Chain's FMAs, so the FP32 peak of a GPU that pairs FMAs (datacenter
// Blackwell) is reachable; sm_120 compiles the same PTX to two FFMAs.  Each
// lane is an fmaf, so the check is Fp32Chain's.
struct Fp32x2Chain {
  using Value = float2;
  using Out = float;
  static constexpr int kChains = 16;  // two registers per value
  static constexpr int kStepsPerTrip = 56;
  static constexpr int kLanes = 2;
  static constexpr float kStart = 0.f;
  static constexpr std::int64_t kMaxIters = std::int64_t{1} << 19;  // sums stay < 2^24
  __host__ __device__ static Value make(float lo, float hi) { return make_float2(lo, hi); }
  __device__ static Value fma(Value x, Value a, Value b) { return rl::ptx::fma_rn_f32x2(x, a, b); }
  __device__ static Out lane(Value x, int l) { return l == 0 ? x.x : x.y; }
};

struct Fp64Chain {
  using Value = double;
  using Out = double;
  static constexpr int kChains = 8;  // two registers per value
  static constexpr int kStepsPerTrip = 112;
  static constexpr int kLanes = 1;
  static constexpr float kStart = 0.f;
  static constexpr std::int64_t kMaxIters = std::int64_t{1} << 19;
  __host__ __device__ static Value make(float lo, float) { return lo; }
  __device__ static Value fma(Value x, Value a, Value b) { return ::fma(x, a, b); }
  __device__ static Out lane(Value x, int) { return x; }
};

struct Fp16Chain {
  using Value = __half2;
  using Out = float;
  static constexpr int kChains = 16;
  static constexpr int kStepsPerTrip = 56;
  static constexpr int kLanes = 2;
  static constexpr float kStart = -2048.f;  // integers are exact in [-2048, 2048]
  static constexpr std::int64_t kMaxIters = 4096 - 8;
  __host__ __device__ static Value make(float lo, float hi) { return __floats2half2_rn(lo, hi); }
  __device__ static Value fma(Value x, Value a, Value b) { return __hfma2(x, a, b); }
  __device__ static Out lane(Value x, int l) { return l == 0 ? __low2float(x) : __high2float(x); }
};

struct Bf16Chain {
  using Value = __nv_bfloat162;
  using Out = float;
  static constexpr int kChains = 16;
  static constexpr int kStepsPerTrip = 56;
  static constexpr int kLanes = 2;
  static constexpr float kStart = -256.f;  // integers are exact in [-256, 256]
  static constexpr std::int64_t kMaxIters = 512 - 8;
  __host__ __device__ static Value make(float lo, float hi) {
    return __floats2bfloat162_rn(lo, hi);
  }
  __device__ static Value fma(Value x, Value a, Value b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // sm_75 has no bf16 FMA instruction (cuda_bf16.h offers no __hfma2 there):
    // compute in fp32 and round to bf16 (exact for this loop's small integers).
    const float2 xf = __bfloat1622float2(x), af = __bfloat1622float2(a), bf = __bfloat1622float2(b);
    return __floats2bfloat162_rn(fmaf(xf.x, af.x, bf.x), fmaf(xf.y, af.y, bf.y));
#else
    return __hfma2(x, a, b);
#endif
  }
  __device__ static Out lane(Value x, int l) {
    return l == 0 ? __low2float(x) : __high2float(x);
  }
};

// Chain j of thread `thread`, lane `lane` starts at kStart + (0..7): different
// starts per chain and lane, so an output that mixes up chains or lanes fails.
template <typename Chain>
__host__ __device__ inline float chain_start(std::uint32_t thread, int j, int lane) {
  return Chain::kStart + static_cast<float>((thread + 3u * static_cast<std::uint32_t>(j) +
                                             5u * static_cast<std::uint32_t>(lane)) %
                                            8u);
}

// One step of every chain (a constant-count loop: nvcc unrolls it and keeps
// x[] in registers; the static check's no-local-memory rule guards that).
template <typename Chain>
__device__ __forceinline__ void fma_step(typename Chain::Value (&x)[Chain::kChains],
                                         typename Chain::Value a, typename Chain::Value b) {
  for (int j = 0; j < Chain::kChains; ++j) x[j] = Chain::fma(x[j], a, b);
}

// One trip of the hot loop: kStepsPerTrip steps, unrolled by the fold itself
// (no pragma, so both compilers see the same code and nvcc cannot choose a
// shorter body).
template <typename Chain, int... Step>
__device__ __forceinline__ void fma_trip(typename Chain::Value (&x)[Chain::kChains],
                                         typename Chain::Value a, typename Chain::Value b,
                                         std::integer_sequence<int, Step...>) {
  ((static_cast<void>(Step), fma_step<Chain>(x, a, b)), ...);
}

// Each instance's hot loop is its FMA opcode, at least 99% of the loop's
// instructions; bf16 arithmetic is native from sm_80 on (sm_75 computes it in
// fp32).
// rl-static: kernel=Fp32Chain max_regs=64 max_smem=0 sass_dominant=FFMA loop_share=FFMA:99
// rl-static: kernel=Fp32x2Chain max_regs=64 max_smem=0
// rl-static: kernel=Fp32x2Chain arch=100a sass=FFMA2 loop_share=FFMA2:99
// rl-static: kernel=Fp64Chain max_regs=64 max_smem=0 sass_dominant=DFMA loop_share=DFMA:99
// rl-static: kernel=Fp16Chain max_regs=64 max_smem=0 sass_dominant=HFMA2 loop_share=HFMA2:99
// rl-static: kernel=Bf16Chain max_regs=64 max_smem=0
// rl-static: kernel=Bf16Chain min_arch=80 sass_dominant=HFMA2 loop_share=HFMA2:99
template <typename Chain>
__global__ void fma_chains(float a, float b, int iters, typename Chain::Out* __restrict__ out) {
  using Value = typename Chain::Value;
  const std::uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  const Value va = Chain::make(a, a);
  const Value vb = Chain::make(b, b);
  Value x[Chain::kChains];
  for (int j = 0; j < Chain::kChains; ++j)
    x[j] = Chain::make(chain_start<Chain>(thread, j, 0), chain_start<Chain>(thread, j, 1));
  int it = 0;
  for (; it + Chain::kStepsPerTrip <= iters; it += Chain::kStepsPerTrip)
    fma_trip<Chain>(x, va, vb, std::make_integer_sequence<int, Chain::kStepsPerTrip>{});
  // The remainder (none at the large preset, whose counts are whole trips).
  for (; it < iters; ++it) fma_step<Chain>(x, va, vb);
  for (int l = 0; l < Chain::kLanes; ++l) {
    typename Chain::Out sum = 0;
    for (int j = 0; j < Chain::kChains; ++j) sum += Chain::lane(x[j], l);
    out[std::size_t{thread} * Chain::kLanes + static_cast<std::size_t>(l)] = sum;
  }
}

template <typename Chain>
std::vector<Shape> fma_shapes(SizePreset preset, std::int64_t large_iters, std::int64_t waves) {
  return loop_shapes(preset, one_wave_blocks(fma_chains<Chain>, kFmaBlock, 1024) * waves, kFmaBlock,
                     large_iters);
}

template <typename Chain>
roofline::Cost fma_cost(const Shape& shape, roofline::ComputeUnit unit) {
  const LoopShape s = parse_loop_shape(shape, Chain::kMaxIters);
  const double threads = static_cast<double>(s.blocks) * static_cast<double>(s.threads);
  const double fmas = threads * Chain::kChains * Chain::kLanes * static_cast<double>(s.iters);
  const double bytes = threads * Chain::kLanes * sizeof(typename Chain::Out);
  return {2.0 * fmas, bytes, bytes, unit};
}

template <typename Chain>
class FmaChains final : public Workload {
 public:
  explicit FmaChains(const LoopShape& shape)
      : shape_(shape),
        out_(static_cast<std::size_t>(shape.blocks * shape.threads) * Chain::kLanes) {}

  void run(cudaStream_t stream) override {
    rl::launch(fma_chains<Chain>, dim3(static_cast<unsigned>(shape_.blocks)),
               dim3(static_cast<unsigned>(shape_.threads)), 0, stream, 1.0f, 1.0f,
               static_cast<int>(shape_.iters), out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t i) {
      const auto thread = static_cast<std::uint32_t>(i / Chain::kLanes);
      const int lane = static_cast<int>(i % Chain::kLanes);
      double sum = 0;
      for (int j = 0; j < Chain::kChains; ++j)
        sum += chain_start<Chain>(thread, j, lane) + static_cast<double>(shape_.iters);
      return sum;
    });
  }

 private:
  LoopShape shape_;
  DeviceBuffer<typename Chain::Out> out_;
};

template <typename Chain>
KernelRecord fma_record(std::string name, roofline::Precision precision, roofline::ComputeUnit unit,
                        std::string ceiling, int min_cc, std::int64_t large_iters,
                        std::int64_t waves) {
  return KernelRecord{
      .name = std::move(name),
      .family = "ceilings",
      .variant = "fma_chains",
      .precision = precision,
      .unit = unit,
      .baseline = "",
      .ceiling = std::move(ceiling),
      .gpu_only = false,
      .min_cc = min_cc,
      .shapes = [=](SizePreset preset) { return fma_shapes<Chain>(preset, large_iters, waves); },
      .cost = [=](const Shape& shape) { return fma_cost<Chain>(shape, unit); },
      .make_workload = [=](const Shape& shape, std::uint64_t) -> std::unique_ptr<Workload> {
        return std::make_unique<FmaChains<Chain>>(parse_loop_shape(shape, Chain::kMaxIters));
      },
  };
}

}  // namespace

// Launch lengths aim at about a millisecond on a large GPU at the large preset,
// in whole trips of the hot loop (146, 146, 36, 73 and 9 trips).
RL_REGISTER_KERNEL(fma_record<Fp32Chain>("fma_chains_fp32", roofline::Precision::fp32,
                                         roofline::ComputeUnit::fp32, "fp32.fma", 0, 8176, 1));
// Packed: the same FMAs in half the instructions (refused below 10.0, where
// fma.rn.f32x2 does not exist).
RL_REGISTER_KERNEL([] {
  KernelRecord record =
      fma_record<Fp32x2Chain>("ffma2_chains_fp32", roofline::Precision::fp32,
                              roofline::ComputeUnit::fp32, "fp32.fma", 100, 8176, 1);
  // The emulator runs it as a Blackwell (RL_EMU_CC=100), as it runs wgmma as a Hopper.
  record.gpu_only = !rl::ptx::emulator_runs_fma_f32x2();
  return record;
}());
RL_REGISTER_KERNEL(fma_record<Fp64Chain>("fma_chains_fp64", roofline::Precision::fp64,
                                         roofline::ComputeUnit::fp64, "fp64.fma", 0, 4032, 1));
RL_REGISTER_KERNEL(fma_record<Fp16Chain>("hfma2_chains_fp16", roofline::Precision::fp16,
                                         roofline::ComputeUnit::fp16, "fp16.hfma2", 0, 4088, 2));
RL_REGISTER_KERNEL(fma_record<Bf16Chain>("hfma2_chains_bf16", roofline::Precision::bf16,
                                         roofline::ComputeUnit::bf16, "bf16.hfma2", 80, 504, 16));

}  // namespace rl::ceilings
