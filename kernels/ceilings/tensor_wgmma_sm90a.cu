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
// GPU-only: the instructions (rl::ptx wrappers, rl/ptx_sm90.hpp) exist only in
// sm_90a code; on other GPU targets the kernel traps and under the emulator it
// stops with a message, and the record is gpu_only for compute capability 9.0
// exactly (min_cc = max_cc = 90: sm_90a code does not run on 10.x or 12.x).
// Statically checked (HGMMA in the sm_90a SASS); not yet run on a GPU in this
// project.
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
constexpr int kTileM = 64, kTileN = 256, kTileK = 16;

}  // namespace

// The wgmma loop is the kernel's whole work.  Budgets for every architecture
// (elsewhere the body traps at its first Hopper instruction), HGMMA on sm_90a.
// rl-static: kernel=wgmma_loop_bf16_m64n256k16 max_regs=200 max_smem=10240
// rl-static: kernel=wgmma_loop_bf16_m64n256k16 arch=90a max_regs=200 max_smem=10240 sass=HGMMA
__global__ void wgmma_loop_bf16_m64n256k16(int iters, float* __restrict__ out) {
  __shared__ __align__(128) __nv_bfloat16 a_tile[kTileM * kTileK];
  __shared__ __align__(128) __nv_bfloat16 b_tile[kTileN * kTileK];
  for (int i = threadIdx.x; i < kTileM * kTileK; i += blockDim.x) a_tile[i] = __float2bfloat16(1.f);
  for (int i = threadIdx.x; i < kTileN * kTileK; i += blockDim.x) b_tile[i] = __float2bfloat16(1.f);
  // Ordinary stores become visible to the async proxy (wgmma) only after this fence.
  rl::ptx::fence_proxy_async_shared();
  __syncthreads();

  // No swizzle, K-major: LBO = 128 B between core matrices adjacent in K,
  // SBO = 256 B between those adjacent in M or N.
  const std::uint64_t desc_a = rl::ptx::smem_descriptor(rl::ptx::shared_address(a_tile), 128, 256,
                                                        rl::ptx::SmemSwizzle::none);
  const std::uint64_t desc_b = rl::ptx::smem_descriptor(rl::ptx::shared_address(b_tile), 128, 256,
                                                        rl::ptx::SmemSwizzle::none);
  float d[128];
  for (int i = 0; i < 128; ++i) d[i] = 0.f;

  rl::ptx::wgmma_fence_operand(d);
  rl::ptx::wgmma_fence();
  for (int it = 0; it < iters; ++it) {
    for (int s = 0; s < kStepsPerGroup; ++s)
      rl::ptx::wgmma_m64n256k16_f32_bf16<false>(d, desc_a, desc_b, 1);
    rl::ptx::wgmma_commit_group();
    rl::ptx::wgmma_wait_group<1>();
  }
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(d);

  float lo = d[0], hi = d[0];
  for (int i = 1; i < 128; ++i) {
    lo = fminf(lo, d[i]);
    hi = fmaxf(hi, d[i]);
  }
  const std::size_t thread = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  out[2 * thread] = lo;
  out[2 * thread + 1] = hi;
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
    .max_cc = 90,
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
