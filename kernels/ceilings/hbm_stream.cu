// HBM bandwidth ceilings: hbm.read, hbm.write, hbm.copy, hbm.triad (the
// BabelStream set, plus a read-only reduction).
//
// The idea: the simplest access pattern the memory system likes best.  Every
// access is a 16-byte vector (float4, one LDG.E.128 / STG.E.128 per thread);
// the grid is exactly one resident wave (SM count x occupancy) and each thread
// walks the arrays with a grid stride, issuing kUnroll independent 16-byte
// loads before it uses any of them, so enough bytes are in flight per SM to
// cover DRAM latency (Little's law).
//
// Sizes: the large preset uses 1 GiB per array (2 GiB for copy, 3 GiB for
// triad): at least 8x the L2 of every GPU we target (50 MB on H100, 126 MB on
// B200), so the L2 holds no useful fraction of the working set.
//
// Bytes are bytes read + bytes written (the STREAM convention, no
// write-allocate term).  hbm.read also writes one float per thread (its
// partial sum, so the compiler cannot drop the loads); that is about 1 MB
// against 1 GiB and is left out of the count, which makes the ceiling
// conservative by < 0.1%.
#include "ceilings/stream_pattern.hpp"
#include "rl/cuda.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "ceilings/support.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#endif

#include <cstddef>
#include <cstdint>

namespace rl::ceilings {
namespace {

constexpr int kUnroll = 4;  // independent 16-byte loads in flight per thread

}  // namespace

// Kernels outside the anonymous namespace: their mangled names then carry
// them as plain identifiers (the static checks match on those).
// The pattern fill is set-up, not measured: a budget only.
// rl-static: kernel=fill_stream_pattern max_regs=32 max_smem=0
// hbm.read: sum of every element, one partial per thread.
// rl-static: kernel=hbm_read_vec16 max_regs=48 max_smem=0 sass=LDG.E.128
__global__ void hbm_read_vec16(const float4* __restrict__ in, std::size_t n4,
                               float* __restrict__ partial) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 v[kUnroll];
    for (int u = 0; u < kUnroll; ++u) v[u] = in[i + u * stride];
    for (int u = 0; u < kUnroll; ++u) add_lanes(acc, v[u]);
  }
  for (; i < n4; i += stride) add_lanes(acc, in[i]);
  partial[std::size_t{blockIdx.x} * blockDim.x + threadIdx.x] = lane_sum(acc);
}

// hbm.write: fill with one vector value.
// rl-static: kernel=hbm_write_vec16 max_regs=32 max_smem=0 sass=STG.E.128
__global__ void hbm_write_vec16(float4* __restrict__ out, std::size_t n4, float4 value) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n4; i += stride)
    out[i] = value;
}

// hbm.copy: out = in.
// rl-static: kernel=hbm_copy_vec16 max_regs=48 max_smem=0 sass=LDG.E.128,STG.E.128
__global__ void hbm_copy_vec16(const float4* __restrict__ in, float4* __restrict__ out,
                               std::size_t n4) {
  copy_vec16<kUnroll>(in, out, n4);
}

// hbm.triad: a = b + scalar * c.
// rl-static: kernel=hbm_triad_vec16 max_regs=56 max_smem=0 sass=LDG.E.128,STG.E.128
__global__ void hbm_triad_vec16(float4* __restrict__ a, const float4* __restrict__ b,
                                const float4* __restrict__ c, float scalar, std::size_t n4) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 vb[kUnroll];
    float4 vc[kUnroll];
    for (int u = 0; u < kUnroll; ++u) {
      vb[u] = b[i + u * stride];
      vc[u] = c[i + u * stride];
    }
    for (int u = 0; u < kUnroll; ++u)
      a[i + u * stride] = make_float4(vb[u].x + scalar * vc[u].x, vb[u].y + scalar * vc[u].y,
                                      vb[u].z + scalar * vc[u].z, vb[u].w + scalar * vc[u].w);
  }
  for (; i < n4; i += stride) {
    const float4 vb = b[i];
    const float4 vc = c[i];
    a[i] = make_float4(vb.x + scalar * vc.x, vb.y + scalar * vc.y, vb.z + scalar * vc.z,
                       vb.w + scalar * vc.w);
  }
}

#if !defined(__CUDA_ARCH__)
namespace {

constexpr int kStreamBlock = 256;

// ---------------------------------------------------------------------------
// Shapes and cost models.  n = floats per array, a multiple of 4 (whole float4s).

std::vector<Shape> stream_shapes(SizePreset preset) {
  switch (preset) {
    // The small preset is what the emulator runs: 8x the device's L2 per
    // array (an L2-sized array would measure the cache, not HBM), at least
    // 16 MiB, at most 256 MiB.
    case SizePreset::small: {
      const std::int64_t bytes = std::clamp<std::int64_t>(
          8 * device_l2_bytes(), std::int64_t{16} << 20, std::int64_t{256} << 20);
      return {Shape{{{"n", bytes / 16 * 4}}}};  // whole float4s
    }
    case SizePreset::medium:
      return {Shape{{{"n", std::int64_t{1} << 27}}}};  // 512 MiB
    case SizePreset::large:
      return {Shape{{{"n", std::int64_t{1} << 28}}}};  // 1 GiB
  }
  return {};
}

std::size_t floats_of(const Shape& shape) {
  const std::int64_t n = shape.at("n");
  if (n <= 0 || n % 4 != 0) throw std::invalid_argument("stream ceilings need n > 0, n % 4 == 0");
  return static_cast<std::size_t>(n);
}

// arrays_read + arrays_written float arrays of n elements; flops per element.
roofline::Cost stream_cost(const Shape& shape, int arrays_moved, double flops_per_element) {
  const double n = static_cast<double>(floats_of(shape));
  const double bytes = n * sizeof(float) * arrays_moved;
  return {flops_per_element * n, bytes, bytes, roofline::ComputeUnit::fp32};
}

float4* as_vec4(DeviceBuffer<float>& b) {
  return reinterpret_cast<float4*>(b.get());
}

std::int64_t blocks_for(std::size_t n4) {
  return static_cast<std::int64_t>((n4 + kStreamBlock - 1) / kStreamBlock);
}

// ---------------------------------------------------------------------------
// Workloads

class HbmRead final : public Workload {
 public:
  HbmRead(std::size_t n, std::uint64_t seed)
      : n_(n),
        seed_(seed),
        in_(patterned(n, seed)),
        blocks_(resident_blocks(hbm_read_vec16, kStreamBlock, blocks_for(n / 4))),
        partial_(static_cast<std::size_t>(blocks_) * kStreamBlock) {}

  void run(cudaStream_t stream) override {
    rl::launch(hbm_read_vec16, dim3(blocks_), dim3(kStreamBlock), 0, stream, as_vec4(in_), n_ / 4,
               partial_.get());
  }

  Validation validate(cudaStream_t stream) override {
    // Thread t owns float4s t, t + threads, t + 2*threads, ...: its expected
    // partial is the exact sum of those elements.
    const std::size_t threads = partial_.size();
    std::vector<double> expected(threads, 0.0);
    for (std::size_t v = 0; v < n_ / 4; ++v)
      for (std::size_t c = 0; c < 4; ++c) expected[v % threads] += stream_pattern(4 * v + c, seed_);
    return run_and_compare_exact(*this, partial_, stream,
                                 [&](std::size_t i) { return expected[i]; });
  }

 private:
  std::size_t n_;
  std::uint64_t seed_;
  DeviceBuffer<float> in_;
  int blocks_;
  DeviceBuffer<float> partial_;
};

class HbmWrite final : public Workload {
 public:
  HbmWrite(std::size_t n, std::uint64_t seed)
      : n_(n),
        value_(make_float4(stream_pattern(0, seed), stream_pattern(1, seed),
                           stream_pattern(2, seed), stream_pattern(3, seed))),
        out_(n),
        blocks_(resident_blocks(hbm_write_vec16, kStreamBlock, blocks_for(n / 4))) {}

  void run(cudaStream_t stream) override {
    rl::launch(hbm_write_vec16, dim3(blocks_), dim3(kStreamBlock), 0, stream, as_vec4(out_), n_ / 4,
               value_);
  }

  Validation validate(cudaStream_t stream) override {
    const float lanes[4] = {value_.x, value_.y, value_.z, value_.w};
    return run_and_compare_exact(*this, out_, stream,
                                 [&](std::size_t i) { return double{lanes[i % 4]}; });
  }

 private:
  std::size_t n_;
  float4 value_;
  DeviceBuffer<float> out_;
  int blocks_;
};

class HbmCopy final : public Workload {
 public:
  HbmCopy(std::size_t n, std::uint64_t seed)
      : n_(n),
        seed_(seed),
        in_(patterned(n, seed)),
        out_(n),
        blocks_(resident_blocks(hbm_copy_vec16, kStreamBlock, blocks_for(n / 4))) {}

  void run(cudaStream_t stream) override {
    rl::launch(hbm_copy_vec16, dim3(blocks_), dim3(kStreamBlock), 0, stream, as_vec4(in_),
               as_vec4(out_), n_ / 4);
  }

  Validation validate(cudaStream_t stream) override {
    return run_and_compare_exact(*this, out_, stream,
                                 [&](std::size_t i) { return double{stream_pattern(i, seed_)}; });
  }

 private:
  std::size_t n_;
  std::uint64_t seed_;
  DeviceBuffer<float> in_;
  DeviceBuffer<float> out_;
  int blocks_;
};

class HbmTriad final : public Workload {
 public:
  // b and c hold different patterns (c's is shifted by 7) so a kernel that
  // reads one array twice fails validation.
  static constexpr float kScalar = 3.0f;
  HbmTriad(std::size_t n, std::uint64_t seed)
      : n_(n),
        seed_(seed),
        a_(n),
        b_(patterned(n, seed)),
        c_(patterned(n, seed + 7)),
        blocks_(resident_blocks(hbm_triad_vec16, kStreamBlock, blocks_for(n / 4))) {}

  void run(cudaStream_t stream) override {
    rl::launch(hbm_triad_vec16, dim3(blocks_), dim3(kStreamBlock), 0, stream, as_vec4(a_),
               as_vec4(b_), as_vec4(c_), kScalar, n_ / 4);
  }

  Validation validate(cudaStream_t stream) override {
    return run_and_compare_exact(*this, a_, stream, [&](std::size_t i) {
      return double{stream_pattern(i, seed_)} + kScalar * double{stream_pattern(i, seed_ + 7)};
    });
  }

 private:
  std::size_t n_;
  std::uint64_t seed_;
  DeviceBuffer<float> a_;
  DeviceBuffer<float> b_;
  DeviceBuffer<float> c_;
  int blocks_;
};

// One record per stream ceiling: `arrays` float arrays of n moved (read or
// written), `flops_per_element` as the kernel's arithmetic.
template <typename W>
KernelRecord stream_record(std::string name, std::string variant, std::string ceiling, int arrays,
                           double flops_per_element) {
  return KernelRecord{
      .name = std::move(name),
      .family = "ceilings",
      .variant = std::move(variant),
      .precision = roofline::Precision::fp32,
      .unit = roofline::ComputeUnit::fp32,
      .baseline = "",
      .ceiling = std::move(ceiling),
      .gpu_only = false,
      .min_cc = 0,
      .shapes = stream_shapes,
      .cost = [=](const Shape& s) { return stream_cost(s, arrays, flops_per_element); },
      .make_workload = [](const Shape& shape, std::uint64_t seed) -> std::unique_ptr<Workload> {
        return std::make_unique<W>(floats_of(shape), seed);
      },
  };
}

}  // namespace

// flops: hbm.read counts its one add per element, triad its multiply-add (2).
RL_REGISTER_KERNEL(stream_record<HbmRead>("hbm_read_vec16", "read", "hbm.read", 1, 1.0));
RL_REGISTER_KERNEL(stream_record<HbmWrite>("hbm_write_vec16", "write", "hbm.write", 1, 0.0));
RL_REGISTER_KERNEL(stream_record<HbmCopy>("hbm_copy_vec16", "copy", "hbm.copy", 2, 0.0));
RL_REGISTER_KERNEL(stream_record<HbmTriad>("hbm_triad_vec16", "triad", "hbm.triad", 3, 2.0));
#endif  // !__CUDA_ARCH__

}  // namespace rl::ceilings
