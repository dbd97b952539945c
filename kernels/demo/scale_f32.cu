// scale_f32: y = a * x in fp32, the foundation's demo kernel.  It exists to
// carry the harness end to end (registered, validated, timed, in results.json)
// on both backends; the real ladders live in their own families.
//
// Rungs:
//   scale_f32_scalar  one element per thread, grid-stride loop: 4-byte loads
//                     and stores.
//   scale_f32_vec4    float4 loads and stores (16 bytes per instruction) and a
//                     scalar tail for n % 4: a quarter of the memory
//                     instructions for the same bytes.  Both sit at the same
//                     intensity (1/8 FLOP/B, far left of every ridge), so the
//                     chart shows vec4 closer to the HBM roof, not to the right.
//
// Cost model (per element): 1 multiply -> flops = n; read x once and write y
// once -> bytes_min = bytes_model = 8n.  No variant moves extra traffic.
#include "rl/cuda.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "rl/device_buffer.hpp"
#include "rl/host_parallel.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#endif

#include <cstdint>

// Everything is in rl::demo, not an anonymous namespace: the static checks match
// kernel names in the mangled symbol, which an anonymous namespace obscures.
namespace rl::demo {

// Budgets from ptxas (nvcc 13.0): 30-32 registers on sm_75..sm_120.
// rl-static: kernel=scale_f32_scalar max_regs=40 max_smem=0 sass=LDG.E,STG.E
__global__ void scale_f32_scalar(const float* __restrict__ x, float* __restrict__ y, float a,
                                 std::int64_t n) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = a * x[i];
}

// 32-48 registers (sm_120 takes the most); the point of the rung is 128-bit accesses.
// rl-static: kernel=scale_f32_vec4 max_regs=56 max_smem=0 sass=LDG.E.128,STG.E.128
__global__ void scale_f32_vec4(const float* __restrict__ x, float* __restrict__ y, float a,
                               std::int64_t n) {
  const std::int64_t thread = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  // cudaMalloc returns 256-byte aligned pointers, so x and y are float4-aligned.
  const auto* x4 = reinterpret_cast<const float4*>(x);
  auto* y4 = reinterpret_cast<float4*>(y);
  const std::int64_t n4 = n / 4;
  for (std::int64_t i = thread; i < n4; i += stride) {
    float4 v = x4[i];
    v.x *= a;
    v.y *= a;
    v.z *= a;
    v.w *= a;
    y4[i] = v;
  }
  // The last n % 4 elements, one per thread of the first block.
  if (const std::int64_t i = 4 * n4 + thread; i < n) y[i] = a * x[i];
}

// The kernels are not templates, so the device passes emit them without the
// record that names them (no RL_DEVICE_INSTANCES needed).
#if !defined(__CUDA_ARCH__)
roofline::Cost scale_f32_cost(const Shape& shape) {
  const auto n = static_cast<double>(shape.at("n"));
  return {
      .flops = n, .bytes_min = 8 * n, .bytes_model = 8 * n, .unit = roofline::ComputeUnit::fp32};
}

// small: odd sizes (partial blocks, a vec4 tail of 1 and of 3) that the
// emulator runs in well under a second; medium: 2 x 64 MiB; large: 2 x 256 MiB,
// a working set far beyond any L2 (>= 256 MB, as the presets require).
std::vector<Shape> scale_f32_shapes(SizePreset preset) {
  switch (preset) {
    case SizePreset::small:
      return {Shape{{{"n", 1000}}}, Shape{{{"n", 4097}}}};
    case SizePreset::medium:
      return {Shape{{{"n", (std::int64_t{1} << 24) + 3}}}};
    case SizePreset::large:
      return {Shape{{{"n", (std::int64_t{1} << 26) + 3}}}};
  }
  return {};
}

using ScaleKernel = void (*)(const float*, float*, float, std::int64_t);

constexpr unsigned kBlockThreads = 256;
// Grid-stride with at most this many blocks: several waves on any current GPU
// (an H100's 132 SMs hold 8 such blocks each), while every thread of a large
// problem loops, keeping the launch itself cheap.
constexpr std::int64_t kMaxBlocks = 4096;

class ScaleWorkload final : public Workload {
 public:
  ScaleWorkload(ScaleKernel kernel, std::int64_t elements_per_thread, std::int64_t n,
                std::uint64_t seed)
      : kernel_(kernel), n_(n), x_(static_cast<std::size_t>(n)), y_(static_cast<std::size_t>(n)) {
    // Drawn in chunks on all cores (rl::draw_in_chunks), as the elementwise
    // families' inputs: the values do not depend on the thread count.
    std::vector<float> x(x_.size());
    draw_in_chunks(x.size(), seed, [&x](SeededRng& rng, std::size_t i) {
      x[i] = static_cast<float>(rng.uniform(-1.0, 1.0));
    });
    x_.upload(x);
    SeededRng rng(seed ^ 0x5CA1Eull);
    a_ = static_cast<float>(rng.uniform(0.5, 2.0));
    const std::int64_t threads = (n + elements_per_thread - 1) / elements_per_thread;
    blocks_ = static_cast<unsigned>(
        std::clamp<std::int64_t>((threads + kBlockThreads - 1) / kBlockThreads, 1, kMaxBlocks));
  }

  void run(cudaStream_t stream) override {
    rl::launch(kernel_, dim3(blocks_), dim3(kBlockThreads), 0, stream, x_.get(), y_.get(), a_, n_);
  }

  Validation validate(cudaStream_t stream) override {
    y_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> x = x_.download();
    const std::vector<float> y = y_.download();
    std::vector<double> reference(x.size());
    parallel_chunks(x.size(), kLoopChunk, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i)
        reference[i] = static_cast<double>(a_) * static_cast<double>(x[i]);
    });
    return compare_to_reference(y, reference, tolerance_for("fp32"));
  }

  std::vector<TensorDump> tensors() const override {
    return {{"x", "input", "fp32", {n_}, x_.download()},
            {"a", "input", "fp32", {1}, {a_}},
            {"y", "output", "fp32", {n_}, y_.download()}};
  }

 private:
  ScaleKernel kernel_;
  std::int64_t n_;
  DeviceBuffer<float> x_;
  DeviceBuffer<float> y_;
  float a_ = 1;
  unsigned blocks_ = 1;
};

KernelRecord scale_f32_record(std::string name, std::string variant, std::string baseline,
                              ScaleKernel kernel, std::int64_t elements_per_thread) {
  return KernelRecord{
      .name = std::move(name),
      .family = "demo",
      .variant = std::move(variant),
      .precision = roofline::Precision::fp32,
      .unit = roofline::ComputeUnit::fp32,
      .baseline = std::move(baseline),
      .ceiling = "",
      .gpu_only = false,
      .min_cc = 0,
      .shapes = scale_f32_shapes,
      .cost = scale_f32_cost,
      .make_workload = [kernel, elements_per_thread](
                           const Shape& shape, std::uint64_t seed) -> std::unique_ptr<Workload> {
        return std::make_unique<ScaleWorkload>(kernel, elements_per_thread, shape.at("n"), seed);
      }};
}

RL_REGISTER_KERNEL(scale_f32_record("scale_f32_scalar", "scalar", "", scale_f32_scalar, 1));
RL_REGISTER_KERNEL(scale_f32_record("scale_f32_vec4", "vec4", "scale_f32_scalar", scale_f32_vec4,
                                    4));
#endif  // !__CUDA_ARCH__

}  // namespace rl::demo
