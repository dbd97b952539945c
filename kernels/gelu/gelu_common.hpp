// GELU forward: what every rung of the ladder shares (the math, the float64
// reference, the cost model, the shapes, the workload, the record builder).
//
// The ladder, one file per rung, each for both forms of GELU (the tanh
// approximation GPT-2 uses, and the exact erf form):
//   gelu_scalar.cu    one element per thread, grid-stride loop (the baseline)
//   gelu_vec128.cu    128-bit loads/stores: 4 floats, or 8 bf16 with fp32 math
//   (gelu_vec128.cu)  + the hardware tanh.approx.f32 (tanh form only)
// and, as a family of its own (bias_gelu), bias + GELU unfused vs fused in
// bias_gelu.cu: fusion on the memory-bound side of the roofline.
//
// GELU is a pure stream: each element is read once and written once, so no
// rung can change its arithmetic intensity except by shrinking the element
// (bf16 halves the bytes and doubles the intensity).  The fp32 rungs all sit at
// the same intensity; what the ladder buys is achieved bandwidth, i.e. how close
// the point gets to the measured hbm.copy roof.
#pragma once

#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/packed128.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl::gelu {

enum class Form { tanh, erf };

inline constexpr float kSqrt2OverPi = 0.7978845608028654f;
inline constexpr float kCubicCoeff = 0.044715f;
inline constexpr float kInvSqrt2 = 0.7071067811865476f;

// FLOPs per element: the arithmetic of the formula as written, a
// transcendental call counts 1.
//   tanh: 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))
//         x^3 (2 mul), *0.044715, +x, *sqrt(2/pi), tanh, 1+, 0.5*x, *(...)  = 9
//   erf:  0.5*x*(1 + erf(x/sqrt(2)))
//         *(1/sqrt2), erf, 1+, 0.5*x, *(...)                                 = 5
inline constexpr double flops_per_element(Form form) {
  return form == Form::tanh ? 9.0 : 5.0;
}

__device__ __forceinline__ float gelu_tanh_f32(float x) {
  const float inner = kSqrt2OverPi * (x + kCubicCoeff * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}

__device__ __forceinline__ float gelu_erf_f32(float x) {
  return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
}

template <Form F>
__device__ __forceinline__ float gelu_f32(float x) {
  if constexpr (F == Form::tanh)
    return gelu_tanh_f32(x);
  else
    return gelu_erf_f32(x);
}

inline double reference(Form form, double x) {
  if (form == Form::tanh) {
    const double inner = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(inner));
  }
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

// bytes_min = n reads + n writes.  Every rung moves exactly that
// (bytes_model = bytes_min): nothing is re-read, nothing is spilled to memory.
inline roofline::Cost cost(Form form, const Shape& shape, std::size_t element_bytes) {
  const auto n = static_cast<double>(shape.at("n"));
  const double bytes = 2.0 * n * static_cast<double>(element_bytes);
  return {.flops = flops_per_element(form) * n,
          .bytes_min = bytes,
          .bytes_model = bytes,
          .unit = roofline::ComputeUnit::fp32};
}

inline constexpr std::int64_t kLargeArrayBytes = std::int64_t{1} << 30;

// small: odd, so the vector rungs run their scalar tail (emulator-sized).
// large: 1 GiB per array (x and y), as the ceilings use: far beyond any L2,
// so the timing measures HBM, and the dirty lines the L2 flush leaves (up to
// the L2's size, written back inside the timed kernel) stay a few percent of
// the traffic.
inline std::vector<Shape> shapes(SizePreset preset, std::size_t element_bytes) {
  switch (preset) {
    case SizePreset::small:
      return {Shape{{{"n", 4097}}}};
    case SizePreset::medium:
      return {Shape{{{"n", (std::int64_t{1} << 22) + 3}}}};
    case SizePreset::large:
      return {Shape{{{"n", kLargeArrayBytes / static_cast<std::int64_t>(element_bytes)}}}};
  }
  return {};
}

// Grid for a grid-stride loop over `work_items`: enough blocks to cover the
// work once, capped so a huge n loops instead of launching millions of blocks
// (tests lower the cap to make every thread go round the loop).
inline constexpr std::int64_t kMaxGridStrideBlocks = 65535;
inline dim3 grid_stride_grid(std::int64_t work_items, int threads,
                             std::int64_t max_blocks = kMaxGridStrideBlocks) {
  const std::int64_t blocks = (std::max<std::int64_t>(work_items, 1) + threads - 1) / threads;
  return dim3(static_cast<unsigned>(std::min(blocks, max_blocks)));
}

template <typename T>
struct Args {
  T* y;
  const T* x;
  std::int64_t n;
};

template <typename T>
using Launcher = void (*)(const Args<T>&, cudaStream_t);

// Error model (rl::tolerance_for's policy, with GELU's operands).  y =
// 0.5 x (1 + t), t = tanh(...) or erf(...), in fp32 then rounded to T.  The
// math is accurate to M = tolerance_for(T).atol relative on each factor, but
// on the negative side 1 + t cancels: t's absolute error (at most M, |t| <= 1)
// reaches y as 0.5 |x| M, not as a relative error of y.  So element i may be
// off by
//   (u_T + M) |y_i|  +  (M + r) 0.5 |x_i|,
// with r = 0 for tanhf and erff, and r = 2^-10.987 for the hardware
// tanh.approx.f32 (its maximum relative error, PTX ISA "tanh"; see
// rl::ptx::tanh_approx): t off by r |t| <= r moves y by at most 0.5 |x| r.
// Both are far below the 11% by which the erf form differs from the tanh
// form at x = -3 (and more further out), so a wrong form fails in either
// storage type (the tests show it).
inline constexpr double kTanhApproxMaxRelError = 4.927009930882233e-4;  // 2^-10.987

inline double error_bound(std::string_view precision, double x, double y_reference,
                          double tanh_error) {
  const Tolerance tol = tolerance_for(precision);
  return tol.rtol * std::fabs(y_reference) + (tol.atol + tanh_error) * 0.5 * std::fabs(x);
}

// GELU inputs spread over the curve's interesting range: the negative tail
// (where 1 + tanh cancels), the bend near 0 and the linear positive side.
inline constexpr InputSpec kDefaultInputs{.mean = 0.0, .stddev = 2.0};

template <typename T>
class GeluWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (e.g. drop the last element to prove that
  // an unwritten output fails validation).
  std::function<void(const Args<T>&, cudaStream_t)> launch;

  GeluWorkload(Form form, Launcher<T> launcher, double tanh_error, std::int64_t n,
               std::uint64_t seed)
      : launch(launcher),
        form_(form),
        tanh_error_(tanh_error),
        x_(static_cast<std::size_t>(n)),
        y_(static_cast<std::size_t>(n)) {
    redraw_inputs(kDefaultInputs, seed);
  }

  void run(cudaStream_t stream) override { launch(Args<T>{y_.get(), x_.get(), n()}, stream); }

  Validation validate(cudaStream_t stream) override {
    y_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> got = download_outputs();
    return compare_with_bounds(got, reference_, bounds_);
  }

  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    std::vector<T> host(x_.size());
    reference_.resize(host.size());
    bounds_.resize(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      host[i] = from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
      const double x = to_f32(host[i]);  // the reference sees exactly what the kernel reads
      reference_[i] = reference(form_, x);
      bounds_[i] = error_bound(precision_name<T>(), x, reference_[i], tanh_error_);
    }
    x_.upload(host);
  }

  std::vector<float> download_outputs() const override { return download_as_float(y_); }

  std::vector<TensorDump> tensors() const override {
    return {tensor_dump("x", "input", {n()}, x_), tensor_dump("y", "output", {n()}, y_)};
  }

 private:
  std::int64_t n() const { return static_cast<std::int64_t>(x_.size()); }

  Form form_;
  double tanh_error_;
  DeviceBuffer<T> x_;
  DeviceBuffer<T> y_;
  std::vector<double> reference_;
  std::vector<double> bounds_;
};

// What differs between GELU records; the rest (family, shapes, cost,
// workload) follows from it.
template <typename T>
struct RecordSpec {
  std::string name;
  std::string variant;
  Form form;
  std::string baseline;
  Launcher<T> launcher;
  double tanh_error = 0;  // kTanhApproxMaxRelError for the hardware tanh (see error_bound)
};

template <typename T>
KernelRecord make_record(RecordSpec<T> spec) {
  const Form form = spec.form;
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "gelu",
      .variant = std::move(spec.variant),
      .precision = precision_name<T>(),
      .unit = roofline::ComputeUnit::fp32,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = false,
      .min_cc = 0,
      .shapes = [](SizePreset preset) { return shapes(preset, sizeof(T)); },
      .cost = [form](const Shape& shape) { return cost(form, shape, sizeof(T)); },
      .make_workload =
          [form, launcher = spec.launcher, tanh_error = spec.tanh_error](const Shape& shape,
                                                                         std::uint64_t seed) {
            return std::unique_ptr<Workload>(
                new GeluWorkload<T>(form, launcher, tanh_error, shape.at("n"), seed));
          },
  };
}

}  // namespace rl::gelu
