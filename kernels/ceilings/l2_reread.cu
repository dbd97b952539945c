// L2 bandwidth ceiling: l2.read.
//
// The idea: the hbm.read loop (16-byte loads, one resident wave, grid stride,
// kUnroll loads in flight) over a working set of about half the L2, read
// `passes` times.  After the first pass every load hits in L2.
//
// The L1 must not serve the re-reads: a per-SM slice of half the L2 (about
// 190 KB on H100) would fit in one SM's L1.  So each pass starts `kRotate`
// float4s further on (wrapping around): a thread then reads what a thread four
// blocks away read in the previous pass, which sits in another SM's L1.
//
// Bytes, by the cost-model convention (docs/architecture.md):
//   bytes_min   = n x 4: the compulsory DRAM traffic, the working set read
//                 once (the first pass fills the L2 from HBM; the per-thread
//                 partial sums written at the end, one float a thread, are a
//                 fraction of a percent of it and not counted);
//   bytes_model = n x 4 x passes: the traffic this kernel moves, here from L2
//                 to the SMs, which is what l2.read measures (a ceiling's
//                 value is bytes_model / time).  Counting the first pass as
//                 L2 traffic is a small, conservative error at passes >= 20.
#include "ceilings/stream_pattern.hpp"
#include "rl/cuda.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "ceilings/support.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>
#endif

#include <cstddef>
#include <cstdint>

namespace rl::ceilings {
namespace {

constexpr int kL2Block = 256;
constexpr int kUnroll = 4;
constexpr std::size_t kRotate = 4 * kL2Block;  // float4s: four blocks' worth of one pass

}  // namespace

// Kernels outside the anonymous namespace: their mangled names then carry
// them as plain identifiers (the static checks match on those).
__device__ inline std::size_t wrap(std::size_t i, std::size_t n) {
  return i >= n ? i - n : i;
}

// rl-static: kernel=l2_read_vec16_rotating max_regs=48 max_smem=0 sass=LDG.E.128
// rl-static: kernel=fill_stream_pattern max_regs=32 max_smem=0
__global__ void l2_read_vec16_rotating(const float4* __restrict__ in, std::size_t n4, int passes,
                                       float* __restrict__ partial) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  std::size_t offset = 0;
  for (int p = 0; p < passes; ++p) {
    std::size_t i = first;
    for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
      float4 v[kUnroll];
      for (int u = 0; u < kUnroll; ++u) v[u] = in[wrap(i + u * stride + offset, n4)];
      for (int u = 0; u < kUnroll; ++u) add_lanes(acc, v[u]);
    }
    for (; i < n4; i += stride) add_lanes(acc, in[wrap(i + offset, n4)]);
    offset = wrap(offset + kRotate % n4, n4);
  }
  partial[first] = lane_sum(acc);
}

#if !defined(__CUDA_ARCH__)
namespace {

// Half the L2 of the current device, in floats (whole 4 KiB pages).
std::int64_t half_l2_floats() {
  const std::int64_t pages = std::max<std::int64_t>(device_l2_bytes() / 2 / 4096, 1);
  return pages * 1024;
}

std::vector<Shape> l2_shapes(SizePreset preset) {
  const std::int64_t n = half_l2_floats();
  switch (preset) {
    case SizePreset::small:
      return {Shape{{{"n", n}, {"passes", 20}}}};
    case SizePreset::medium:
      return {Shape{{{"n", n}, {"passes", 50}}}};
    case SizePreset::large:
      return {Shape{{{"n", n}, {"passes", 100}}}};
  }
  return {};
}

roofline::Cost l2_cost(const Shape& shape) {
  const auto n = static_cast<double>(shape.at("n"));
  const double loads = n * static_cast<double>(shape.at("passes"));
  return {.flops = loads,
          .bytes_min = n * sizeof(float),
          .bytes_model = loads * sizeof(float),
          .unit = roofline::ComputeUnit::fp32};
}

class L2Read final : public Workload {
 public:
  L2Read(std::size_t n, int passes, std::uint64_t seed)
      : n_(n),
        passes_(passes),
        seed_(seed),
        in_(patterned(n, seed)),
        blocks_(resident_blocks(l2_read_vec16_rotating, kL2Block,
                                static_cast<std::int64_t>((n / 4 + kL2Block - 1) / kL2Block))),
        partial_(static_cast<std::size_t>(blocks_) * kL2Block) {}

  void run(cudaStream_t stream) override {
    rl::launch(l2_read_vec16_rotating, dim3(blocks_), dim3(kL2Block), 0, stream,
               reinterpret_cast<const float4*>(in_.get()), n_ / 4, passes_, partial_.get());
  }

  Validation validate(cudaStream_t stream) override {
    // Every pass reads every float4 exactly once, shifted by the pass's
    // offset: float4 v is read in pass p by thread (v - offset_p) mod threads.
    const std::size_t n4 = n_ / 4;
    const std::size_t threads = partial_.size();
    std::vector<double> vec_sum(n4);
    for (std::size_t v = 0; v < n4; ++v)
      for (std::size_t c = 0; c < 4; ++c) vec_sum[v] += stream_pattern(4 * v + c, seed_);
    std::vector<double> expected(threads, 0.0);
    std::size_t offset = 0;
    for (int p = 0; p < passes_; ++p) {
      for (std::size_t i = 0; i < n4; ++i) expected[i % threads] += vec_sum[(i + offset) % n4];
      offset = (offset + kRotate % n4) % n4;
    }
    return run_and_compare_exact(*this, partial_, stream,
                                 [&](std::size_t i) { return expected[i]; });
  }

 private:
  std::size_t n_;
  int passes_;
  std::uint64_t seed_;
  DeviceBuffer<float> in_;
  int blocks_;
  DeviceBuffer<float> partial_;
};

std::unique_ptr<Workload> make_l2_read(const Shape& shape, std::uint64_t seed) {
  const std::int64_t n = shape.at("n");
  const std::int64_t passes = shape.at("passes");
  if (n <= 0 || n % 4 != 0 || passes <= 0 || passes > 1'000'000)
    throw std::invalid_argument("l2.read needs n > 0, n % 4 == 0 and 0 < passes <= 1e6");
  return std::make_unique<L2Read>(static_cast<std::size_t>(n), static_cast<int>(passes), seed);
}

}  // namespace

// flops: the one add per element read (per pass).
RL_REGISTER_KERNEL(KernelRecord{
    .name = "l2_read_vec16_rotating",
    .family = "ceilings",
    .variant = "l2_read",
    .precision = roofline::Precision::fp32,
    .unit = roofline::ComputeUnit::fp32,
    .baseline = "",
    .ceiling = "l2.read",
    .gpu_only = false,
    .min_cc = 0,
    .shapes = l2_shapes,
    .cost = l2_cost,
    .make_workload = make_l2_read,
});
#endif  // !__CUDA_ARCH__

}  // namespace rl::ceilings
