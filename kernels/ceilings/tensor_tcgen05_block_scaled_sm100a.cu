// Datacenter Blackwell tensor-core ceilings of the narrow formats through
// tcgen05.mma (sm_100a / sm_103a): tc.fp6 and tc.fp4 (kind::f8f6f4 with e3m2,
// e2m3 and e2m1), and the block-scaled kinds: tc.mxfp8 and tc.mxfp6
// (kind::mxf8f6f4, ue8m0 scales per 32 elements), tc.mxfp4 (kind::mxf4, ue8m0
// per 32) and tc.nvfp4 (kind::mxf4nvf4, ue4m3 per 16).
//
// The loop is tensor_tcgen05_sm100a.cu's (tcgen05_loop.hpp: one CTA per SM,
// M = 128, N = 256, A and B in shared memory, K-major, 32 bytes of K per row:
// K = 32 for f8f6f4 / mxf8f6f4, whose 6- and 4-bit elements shared memory
// holds padded, 16 to a 16-byte unit; K = 64 for mxf4 / mxf4nvf4, two e2m1 a
// byte).  The block-scaled kinds read their scale factors from tensor memory,
// where thread 0 copies them with tcgen05.cp .32x128b.warpx4 before its
// first MMA (in the same queue: no wait between them): A's four columns after
// D's 256, then B's eight, 512 columns allocated in all.
//
// sm_100a / sm_103a only, run on compute capability 10.0 and 10.3; the
// emulator runs them with RL_EMU_CC=100 or 103.  NOT YET RUN ON A GPU.
//
// The check is exact and covers every element of D.  A and B hold small
// integers (-2..2, exact in every input format), the scale factors powers of
// two: 2^((m + j) % 3 - 1) for row m of A and 2^((n + 2j) % 3 - 1) for column
// n of B in k-block j; every scale byte the MMA must not read holds a NaN
// scale, so a scale read from the wrong lane, column or byte turns the result
// into NaN.  Products and sums stay small integers times powers of two, exact
// in fp32.  As for fp8 (the accumulation width of these pipes is not
// documented) the loop alternates B and -B and ends one +B MMA after, so D
// ends at the scaled product P = (A * scale_A)(B * scale_B)^T, which every
// thread writes for its row; validate() compares it with P in float64.
//
// FLOPs: 2 * 128 * 256 * K per MMA (the scaling is not counted).  Bytes: D
// written once per block.
#include "ceilings/support.hpp"
#include "ceilings/tcgen05_block_scaled.hpp"
#include "ceilings/tcgen05_loop.hpp"
#include "ceilings/tcgen05_narrow_operands.hpp"
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

using rl::ptx::Tcgen05F8F6F4Type;
using rl::ptx::Tcgen05ScaledKind;
using tcgen05::Format;
using tcgen05::kATileWords;
using tcgen05::kBlockThreads;
using tcgen05::kBTileWords;
using tcgen05::kOperandWords;
using tcgen05::kRowBytes;
using tcgen05::kScaleTileWords;
using tcgen05::kTileM;
using tcgen05::kTileN;
using tcgen05::ScaleType;

constexpr std::uint32_t kColumns = 512;    // D (256), then the scale factors
constexpr std::uint32_t kSfaColumn = 256;  // A: row m's scales in column + m / 32
constexpr std::uint32_t kSfbColumn = 260;  // B: column n's in column + n / 32

template <Tcgen05F8F6F4Type T, roofline::ComputeUnit Unit>
struct F8f6f4 {  // no scales
  static constexpr Format kFormat{T, T == Tcgen05F8F6F4Type::e2m1 ? 4 : 6, 16};
  static constexpr int kK = 32, kScaleVec = 0;
  static constexpr ScaleType kScale = ScaleType::none;
  static constexpr roofline::ComputeUnit kUnit = Unit;
  static constexpr std::uint32_t idesc(bool negate_b) {
    return rl::ptx::tcgen05_idesc_f8f6f4(T, T, kTileM, kTileN) | (negate_b ? 1u << 14 : 0u);
  }
  __device__ static void mma(std::uint32_t d, std::uint64_t a, std::uint64_t b, std::uint32_t idesc,
                             bool accumulate) {
    rl::ptx::tcgen05_mma<rl::ptx::Tcgen05Kind::f8f6f4>(d, a, b, idesc, accumulate);
  }
};

template <Tcgen05ScaledKind Kind>
__device__ __forceinline__ void scaled_mma(std::uint32_t d, std::uint64_t a, std::uint64_t b,
                                           std::uint32_t idesc, bool accumulate) {
  rl::ptx::tcgen05_mma_block_scaled<Kind>(d, a, b, idesc, d + kSfaColumn, d + kSfbColumn,
                                          accumulate);
}

template <Tcgen05F8F6F4Type T, roofline::ComputeUnit Unit>
struct Mxf8f6f4 {  // ue8m0 per 32: one scale per row and column an MMA
  static constexpr Format kFormat{T, T == Tcgen05F8F6F4Type::e4m3 ? 8 : 6, 16};
  static constexpr int kK = 32, kScaleVec = 1;
  static constexpr ScaleType kScale = ScaleType::ue8m0;
  static constexpr roofline::ComputeUnit kUnit = Unit;
  static constexpr std::uint32_t idesc(bool negate_b) {
    return rl::ptx::tcgen05_idesc_mxf8f6f4(T, T, kTileN) | (negate_b ? 1u << 14 : 0u);
  }
  __device__ static void mma(std::uint32_t d, std::uint64_t a, std::uint64_t b, std::uint32_t idesc,
                             bool accumulate) {
    scaled_mma<Tcgen05ScaledKind::mxf8f6f4_1x>(d, a, b, idesc, accumulate);
  }
};

template <ScaleType Scale, int ScaleVec, Tcgen05ScaledKind Kind, roofline::ComputeUnit Unit>
struct Mxf4 {  // packed e2m1, K = 64: ue8m0 per 32 (mxf4) or ue4m3 per 16 (mxf4nvf4 4X)
  static constexpr Format kFormat{Tcgen05F8F6F4Type::e2m1, 4, 32};
  static constexpr int kK = 64, kScaleVec = ScaleVec;
  static constexpr ScaleType kScale = Scale;
  static constexpr roofline::ComputeUnit kUnit = Unit;
  static constexpr std::uint32_t idesc(bool negate_b) {
    return rl::ptx::tcgen05_idesc_mxf4(kTileN, Scale == ScaleType::ue8m0) |
           (negate_b ? 1u << 14 : 0u);
  }
  __device__ static void mma(std::uint32_t d, std::uint64_t a, std::uint64_t b, std::uint32_t idesc,
                             bool accumulate) {
    scaled_mma<Kind>(d, a, b, idesc, accumulate);
  }
};

// Named types (not aliases), so that the kernels' demangled names carry them
// for the static checks.
struct F8f6f4E3m2 : F8f6f4<Tcgen05F8F6F4Type::e3m2, roofline::ComputeUnit::tc_fp6> {};
struct F8f6f4E2m3 : F8f6f4<Tcgen05F8F6F4Type::e2m3, roofline::ComputeUnit::tc_fp6> {};
struct F8f6f4E2m1 : F8f6f4<Tcgen05F8F6F4Type::e2m1, roofline::ComputeUnit::tc_fp4> {};
struct Mxf8f6f4E4m3 : Mxf8f6f4<Tcgen05F8F6F4Type::e4m3, roofline::ComputeUnit::tc_mxfp8> {};
struct Mxf8f6f4E3m2 : Mxf8f6f4<Tcgen05F8F6F4Type::e3m2, roofline::ComputeUnit::tc_mxfp6> {};
struct Mxf4Ue8m0
    : Mxf4<ScaleType::ue8m0, 2, Tcgen05ScaledKind::mxf4_2x, roofline::ComputeUnit::tc_mxfp4> {};
struct Mxf4nvf4Ue4m3
    : Mxf4<ScaleType::ue4m3, 4, Tcgen05ScaledKind::mxf4nvf4_4x, roofline::ComputeUnit::tc_nvfp4> {};

template <typename P>
__device__ __forceinline__ void block_scaled_loop(const std::uint32_t* __restrict__ operands,
                                                  int iters, float* __restrict__ out) {
  __shared__ __align__(128) std::uint32_t a_tile[kATileWords];
  __shared__ __align__(128) std::uint32_t b_tile[kBTileWords];
  __shared__ __align__(128) std::uint32_t scale_tiles[3 * kScaleTileWords];
  __shared__ std::uint32_t tmem_base;
  __shared__ std::uint64_t done[2];
  for (int i = threadIdx.x; i < kATileWords; i += blockDim.x) a_tile[i] = operands[i];
  for (int i = threadIdx.x; i < kBTileWords; i += blockDim.x) b_tile[i] = operands[kATileWords + i];
  if constexpr (P::kScale != ScaleType::none)
    for (int i = threadIdx.x; i < 3 * kScaleTileWords; i += blockDim.x)
      scale_tiles[i] = operands[kATileWords + kBTileWords + i];
  constexpr std::uint32_t columns = P::kScale != ScaleType::none ? kColumns : kTileN;
  tcgen05::start(&tmem_base, done, columns);
  const std::uint32_t d = tmem_base;
  if (threadIdx.x == 0) {
    if constexpr (P::kScale != ScaleType::none) {
      // 32 rows of 16 bytes each: row i lands in lanes i, 32 + i, 64 + i, 96 + i.
      auto copy = [&](std::uint32_t column, const std::uint32_t* tile) {
        rl::ptx::tmem_cp<rl::ptx::TmemCopyShape::s32x128b_warpx4>(
            d + column, rl::ptx::tcgen05_smem_descriptor(rl::ptx::shared_address(tile), 128, 128,
                                                         rl::ptx::Tcgen05Swizzle::none));
      };
      copy(kSfaColumn, scale_tiles);
      copy(kSfbColumn, scale_tiles + kScaleTileWords);
      copy(kSfbColumn + 4, scale_tiles + 2 * kScaleTileWords);
    }
    const std::uint64_t desc_a = tcgen05::operand_descriptor(a_tile);
    const std::uint64_t desc_b = tcgen05::operand_descriptor(b_tile);
    constexpr std::uint32_t plus = P::idesc(false), minus = P::idesc(true);
    tcgen05::issue<true>(iters, done, [&](bool negate, bool accumulate) {
      P::mma(d, desc_a, desc_b, negate ? minus : plus, accumulate);
    });
  }
  tcgen05::await_accumulator();

  // This thread's row of D, 32 columns at a time.
  float* row = out + (std::size_t{blockIdx.x} * kTileM + threadIdx.x) * kTileN;
  for (int c = 0; c < kTileN; c += 32) {
    std::uint32_t r[32];
    tcgen05::read_row_chunk(d, c, r);
    for (int i = 0; i < 32; ++i) row[c + i] = __builtin_bit_cast(float, r[i]);
  }
  tcgen05::finish(d, columns);
}

}  // namespace

// The loops are the kernels' whole work.  nvcc 13.0 gives, on sm_100a and
// sm_103a: UTCQMMA for kind::f8f6f4 and kind::mxf8f6f4 (the block-scaled form
// is the same opcode with the scale-factor operand: the three UTCCP.T.S
// .4x32dp128bit copies tell them apart), UTCOMMA for kind::mxf4, and for
// kind::mxf4nvf4 with scale_vec::4X UTCOMMA.4X on sm_100a but
// UTCOMMA.BLOCK16 on sm_103a; 40 registers, 12312 bytes of shared memory
// (13848 with the scale sources), no spills; the hot loop is 4 MMAs in 62
// instructions (66 block-scaled): loop_share bounds it at 16 an MMA.  Other
// targets trap.
// rl-static: kernel=tcgen05_narrow_loop max_regs=64 max_smem=13848
// rl-static: kernel=tcgen05_narrow_loop arch=100a,103a sass=SYNCS.PHASECHK
// rl-static: kernel=F8f6f4E3m2 arch=100a,103a sass=UTCQMMA sass_absent=UTCCP
// rl-static: kernel=F8f6f4E2m3 arch=100a,103a sass=UTCQMMA sass_absent=UTCCP
// rl-static: kernel=F8f6f4E2m1 arch=100a,103a sass=UTCQMMA sass_absent=UTCCP
// rl-static: kernel=Mxf8f6f4E4m3 arch=100a,103a sass=UTCQMMA,UTCCP
// rl-static: kernel=Mxf8f6f4E3m2 arch=100a,103a sass=UTCQMMA,UTCCP
// rl-static: kernel=Mxf4Ue8m0 arch=100a,103a sass=UTCOMMA,UTCCP sass_absent=UTCOMMA.4X
// rl-static: kernel=Mxf4nvf4Ue4m3 arch=100a sass=UTCOMMA.4X,UTCCP
// rl-static: kernel=Mxf4nvf4Ue4m3 arch=103a sass=UTCOMMA.BLOCK16,UTCCP
// rl-static: kernel=F8f6f4E3m2 arch=100a,103a loop_share=UTCQMMA:6
// rl-static: kernel=F8f6f4E2m3 arch=100a,103a loop_share=UTCQMMA:6
// rl-static: kernel=F8f6f4E2m1 arch=100a,103a loop_share=UTCQMMA:6
// rl-static: kernel=Mxf8f6f4E4m3 arch=100a,103a loop_share=UTCQMMA:6
// rl-static: kernel=Mxf8f6f4E3m2 arch=100a,103a loop_share=UTCQMMA:6
// rl-static: kernel=Mxf4Ue8m0 arch=100a,103a loop_share=UTCOMMA:6
// rl-static: kernel=Mxf4nvf4Ue4m3 arch=100a,103a loop_share=UTCOMMA:6
template <typename P>
__global__ void tcgen05_narrow_loop(const std::uint32_t* __restrict__ operands, int iters,
                                    float* __restrict__ out) {
  block_scaled_loop<P>(operands, iters, out);
}

namespace {

constexpr std::int64_t kMaxIters = std::int64_t{1} << 24;  // D stays at 0 or P: only int

template <typename P>
class BlockScaledLoop final : public Workload {
 public:
  BlockScaledLoop(const LoopShape& shape, Tcgen05ScaleFault fault)
      : shape_(shape),
        operands_(kOperandWords),
        out_(static_cast<std::size_t>(shape.blocks) * kTileM * kTileN),
        expected_(tcgen05::scaled_product<P>()) {
    operands_.upload(tcgen05::pack_operands<P>(fault));
  }

  void run(cudaStream_t stream) override {
    rl::launch(tcgen05_narrow_loop<P>, dim3(static_cast<unsigned>(shape_.blocks)),
               dim3(kBlockThreads), 0, stream, operands_.get(), static_cast<int>(shape_.iters),
               out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t index) {
      return expected_[index % expected_.size()];
    });
  }

 private:
  LoopShape shape_;
  DeviceBuffer<std::uint32_t> operands_;
  DeviceBuffer<float> out_;
  std::vector<double> expected_;
};

template <typename P>
std::unique_ptr<Workload> make_loop(const Shape& shape, Tcgen05ScaleFault fault) {
  return std::make_unique<BlockScaledLoop<P>>(tcgen05::parse_shape(shape, kMaxIters), fault);
}

template <typename P>
roofline::Cost narrow_cost(const Shape& shape) {
  const LoopShape s = parse_loop_shape(shape, kMaxIters);
  const double mmas =
      static_cast<double>(s.blocks) * (static_cast<double>(s.iters) * tcgen05::kStepsPerCommit + 1);
  const double bytes = static_cast<double>(s.blocks) * kTileM * kTileN * sizeof(float);
  return tensor_loop_cost(mmas, 2.0 * kTileM * kTileN * P::kK, bytes, P::kUnit);
}

template <typename P>
KernelRecord narrow_record(const char* name, roofline::Precision precision) {
  return tcgen05::roof_record(name, precision, P::kUnit, narrow_cost<P>,
                              [](const Shape& shape, std::uint64_t) {
                                return make_loop<P>(shape, Tcgen05ScaleFault::none);
                              });
}

struct FaultableRecord {
  const char* name;
  std::unique_ptr<Workload> (*make)(const Shape&, Tcgen05ScaleFault);
};
const FaultableRecord kScaledRecords[] = {
    {"tcgen05_loop_mxf8f6f4_e4m3", make_loop<Mxf8f6f4E4m3>},
    {"tcgen05_loop_mxf8f6f4_e3m2", make_loop<Mxf8f6f4E3m2>},
    {"tcgen05_loop_mxf4", make_loop<Mxf4Ue8m0>},
    {"tcgen05_loop_mxf4nvf4_ue4m3", make_loop<Mxf4nvf4Ue4m3>},
};

}  // namespace

std::unique_ptr<Workload> make_tcgen05_scaled_workload_with_fault(const std::string& name,
                                                                  const Shape& shape,
                                                                  Tcgen05ScaleFault fault) {
  for (const FaultableRecord& r : kScaledRecords)
    if (name == r.name) return r.make(shape, fault);
  return nullptr;
}

RL_REGISTER_KERNEL(narrow_record<F8f6f4E3m2>("tcgen05_loop_f8f6f4_e3m2", roofline::Precision::fp6));
RL_REGISTER_KERNEL(narrow_record<F8f6f4E2m3>("tcgen05_loop_f8f6f4_e2m3", roofline::Precision::fp6));
RL_REGISTER_KERNEL(narrow_record<F8f6f4E2m1>("tcgen05_loop_f8f6f4_e2m1", roofline::Precision::fp4));
RL_REGISTER_KERNEL(narrow_record<Mxf8f6f4E4m3>("tcgen05_loop_mxf8f6f4_e4m3",
                                               roofline::Precision::mxfp8));
RL_REGISTER_KERNEL(narrow_record<Mxf8f6f4E3m2>("tcgen05_loop_mxf8f6f4_e3m2",
                                               roofline::Precision::mxfp6));
RL_REGISTER_KERNEL(narrow_record<Mxf4Ue8m0>("tcgen05_loop_mxf4", roofline::Precision::mxfp4));
RL_REGISTER_KERNEL(narrow_record<Mxf4nvf4Ue4m3>("tcgen05_loop_mxf4nvf4_ue4m3",
                                                roofline::Precision::nvfp4));

}  // namespace rl::ceilings
