// Hopper tensor-core ceiling: tc.bf16 through wgmma (sm_90a only).
//
// The idea: mma.sync reaches only about two thirds of Hopper's tensor peak;
// the warpgroup-wide asynchronous wgmma with both operands in shared memory is
// the instruction the peak is quoted for.  Each block is one warpgroup (128
// threads) holding one 64 x 256 fp32 accumulator (128 registers per thread);
// per iteration it issues kStepsPerGroup wgmma.m64n256k16 on it, commits them
// as one group and waits for the previous group only, so one group is always
// in flight.  Two blocks per SM keep the tensor pipe fed while one waits.
//
// GPU-only: the instruction exists only in sm_90a code (behind
// __CUDA_ARCH_FEAT_SM90_ALL); other targets and the emulator compile an empty
// body, and the record is gpu_only with min_cc 90.  Statically checked
// (HGMMA in the sm_90a SASS); it has not run on a GPU in this project yet.
//
// The check: A and B are all ones (bf16 1.0), so every accumulator element
// ends at iters * kStepsPerGroup * 16 whatever the fragment layout: each
// thread writes the minimum and the maximum of its 128 accumulators, both
// must equal that value.  The shared-memory tiles use the no-swizzle K-major
// layout (8 x 16-byte core matrices, contiguous; LBO = 128 B between core
// matrices adjacent in K, SBO = 256 B between those adjacent in M or N).
//
// FLOPs: 2 * 64 * 256 * 16 per wgmma.  Bytes: the per-thread outputs only.
#include "ceilings/support.hpp"
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

constexpr int kWarpgroup = 128;
constexpr int kStepsPerGroup = 4;
constexpr int kTileM = 64, kTileN = 256, kTileK = 16;

}  // namespace

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Shared-memory matrix descriptor, no swizzle (PTX ISA "Matrix Descriptor
// Format"): start address, LBO and SBO in 16-byte units.
__device__ inline std::uint64_t wgmma_descriptor(const void* smem, std::uint32_t lbo,
                                                 std::uint32_t sbo) {
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  return std::uint64_t{(addr & 0x3FFFFu) >> 4} | (std::uint64_t{lbo >> 4} << 16) |
         (std::uint64_t{sbo >> 4} << 32);
}

// D(64x256, f32) += A(64x16, bf16, smem) * B(16x256, bf16, smem).
__device__ inline void wgmma_m64n256k16_bf16(float (&d)[128], std::uint64_t desc_a,
                                             std::uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
      "%127"
      "}, %128, %129, accumulate, 1, 1, 0, 0;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}
#endif

// The wgmma loop is the kernel's whole work; budgets for every architecture
// (an empty body outside sm_90a), HGMMA where it exists.
// rl-static: kernel=wgmma_loop_bf16_m64n256k16 max_regs=200 max_smem=10240
// rl-static: kernel=wgmma_loop_bf16_m64n256k16 arch=90a max_regs=200 max_smem=10240 sass=HGMMA
__global__ void wgmma_loop_bf16_m64n256k16([[maybe_unused]] int iters,
                                           [[maybe_unused]] float* __restrict__ out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __shared__ alignas(128) __nv_bfloat16 a_tile[kTileM * kTileK];
  __shared__ alignas(128) __nv_bfloat16 b_tile[kTileN * kTileK];
  for (int i = threadIdx.x; i < kTileM * kTileK; i += blockDim.x) a_tile[i] = __float2bfloat16(1.f);
  for (int i = threadIdx.x; i < kTileN * kTileK; i += blockDim.x) b_tile[i] = __float2bfloat16(1.f);
  // Ordinary stores become visible to the async proxy (wgmma) only after this fence.
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const std::uint64_t desc_a = wgmma_descriptor(a_tile, 128, 256);
  const std::uint64_t desc_b = wgmma_descriptor(b_tile, 128, 256);
  float d[128];
  for (int i = 0; i < 128; ++i) d[i] = 0.f;

  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  for (int it = 0; it < iters; ++it) {
    for (int s = 0; s < kStepsPerGroup; ++s) wgmma_m64n256k16_bf16(d, desc_a, desc_b);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");

  float lo = d[0], hi = d[0];
  for (int i = 1; i < 128; ++i) {
    lo = fminf(lo, d[i]);
    hi = fmaxf(hi, d[i]);
  }
  const std::size_t thread = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  out[2 * thread] = lo;
  out[2 * thread + 1] = hi;
#endif
}

namespace {

// Each accumulator reaches iters * kStepsPerGroup * 16 <= 2^24.
constexpr std::int64_t kWgmmaMaxIters = (std::int64_t{1} << 24) / (kStepsPerGroup * kTileK);

class WgmmaLoop final : public Workload {
 public:
  explicit WgmmaLoop(const LoopShape& shape)
      : shape_(shape), out_(static_cast<std::size_t>(shape.blocks * shape.threads) * 2) {}

  void run(cudaStream_t stream) override {
    rl::launch(wgmma_loop_bf16_m64n256k16, dim3(static_cast<unsigned>(shape_.blocks)),
               dim3(kWarpgroup), 0, stream, static_cast<int>(shape_.iters), out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    const double expected = static_cast<double>(shape_.iters) * kStepsPerGroup * kTileK;
    return run_and_compare_exact(*this, out_, stream, [&](std::size_t) { return expected; });
  }

 private:
  LoopShape shape_;
  DeviceBuffer<float> out_;
};

std::vector<Shape> wgmma_shapes(SizePreset preset) {
  // Two warpgroups per SM; the fallback (no device) assumes 132 SMs.
  const int sms = device_attribute_or(cudaDevAttrMultiProcessorCount, 132);
  return loop_shapes(preset, std::int64_t{2} * sms, kWarpgroup, 4096);
}

roofline::Cost wgmma_cost(const Shape& shape) {
  const LoopShape s = parse_loop_shape(shape, kWgmmaMaxIters);
  const double wgmmas =
      static_cast<double>(s.blocks) * static_cast<double>(s.iters) * kStepsPerGroup;
  const double bytes = static_cast<double>(s.blocks * s.threads) * 2 * sizeof(float);
  return {wgmmas * 2.0 * kTileM * kTileN * kTileK, bytes, bytes, roofline::ComputeUnit::tc_bf16};
}

}  // namespace

RL_REGISTER_KERNEL(KernelRecord{
    .name = "wgmma_loop_bf16_m64n256k16",
    .family = "ceilings",
    .variant = "wgmma_loop",
    .precision = "bf16",
    .unit = roofline::ComputeUnit::tc_bf16,
    .baseline = "",
    .ceiling = "tc.bf16",
    .gpu_only = true,
    .min_cc = 90,
    .shapes = wgmma_shapes,
    .cost = wgmma_cost,
    .make_workload = [](const Shape& shape, std::uint64_t) -> std::unique_ptr<Workload> {
      const LoopShape s = parse_loop_shape(shape, kWgmmaMaxIters);
      if (s.threads != kWarpgroup)
        throw std::invalid_argument("wgmma loop: threads must be one warpgroup (128)");
      return std::make_unique<WgmmaLoop>(s);
    },
});

}  // namespace rl::ceilings
