// Bias + GELU (tanh form): the cost model, shapes and workload of
// bias_gelu.cu (the kernels and the idea are there).  A header so the tests
// can reach the workload's launch hook.
#pragma once

#include "gelu/bias_gelu_launch.hpp"
#include "gelu/gelu_cost.hpp"
#include "gelu/gelu_forms.hpp"
#include "gelu/gelu_launch.hpp"
#include "gelu/gelu_reference.hpp"
#include "gelu/gelu_workload.hpp"

#include <type_traits>

namespace rl::gelu {

// Cost model.
// FLOPs per element: the tanh GELU's 9 (flops_per_element) + 1 for the bias add.
// bytes_min   = (2N + C) elements: x read, y written, the bias read once (its
//               re-reads per row hit in L1/L2, a C-element vector).
// bytes_model = bytes_min for the fused rung; the unfused pair also writes and
//               re-reads t: (4N + C) elements.
inline roofline::Cost bias_gelu_cost(const Shape& shape, std::size_t element_bytes, bool fused) {
  const auto rows = static_cast<double>(shape.at("rows"));
  const auto c = static_cast<double>(shape.at("C"));
  const double n = rows * c;
  const auto e = static_cast<double>(element_bytes);
  return {.flops = (flops_per_element(Form::tanh) + 1.0) * n,
          .bytes_min = (2.0 * n + c) * e,
          .bytes_model = ((fused ? 2.0 : 4.0) * n + c) * e,
          .unit = roofline::ComputeUnit::fp32};
}

// C = 3072 is GPT-2 small's MLP width (4 x 768).  small: odd C, so vectors
// straddle rows and the scalar tail runs (emulator-sized).  large: 1 GiB per
// array (kLargeArrayBytes, as GELU's), beyond any L2.
inline std::vector<Shape> bias_gelu_shapes(SizePreset preset, std::size_t element_bytes) {
  constexpr std::int64_t kWidth = 3072;
  switch (preset) {
    case SizePreset::small:
      return {Shape{{{"rows", 5}, {"C", 1003}}}};
    case SizePreset::medium:
      return {Shape{{{"rows", 1027}, {"C", kWidth}}}};
    case SizePreset::large: {
      const std::int64_t per_row = kWidth * static_cast<std::int64_t>(element_bytes);
      return {Shape{{{"rows", (kLargeArrayBytes + per_row - 1) / per_row}, {"C", kWidth}}}};
    }
  }
  return {};
}

// GELU's error model (error_bound, with t = x + bias for x; the fp32 sum's
// rounding, at most u32 |t| |gelu'(t)| <= 1.2 u32 |t|, is inside its
// 0.5 |t| M).  The unfused bf16 pair also rounds t to bf16 between its two
// kernels (`t_in_storage`): gelu moves by up to |gelu(t (1 +- u_T)) -
// gelu(t)|, which on the negative side (|gelu'(t) t| >> |gelu(t)|) is many
// times u_T |y|; the fused kernel is checked without that term.
inline double bias_gelu_error_bound(std::string_view precision, double t, double y_reference,
                                    bool t_in_storage) {
  double bound = error_bound(precision, t, y_reference, 0.0);
  if (t_in_storage) {
    const double u = unit_roundoff(precision);
    bound += std::max(std::fabs(reference(Form::tanh, t * (1 + u)) - y_reference),
                      std::fabs(reference(Form::tanh, t * (1 - u)) - y_reference));
  }
  return bound;
}

// The host side of one instance: the inputs as uploaded, the bias as the
// kernels read it, and the float64 reference of each output element.
template <typename T>
struct BiasGeluHostData {
  std::vector<T> x, bias;
  std::vector<double> bias_seen;
  std::vector<double> reference;
  bool t_in_storage = false;  // see bias_gelu_error_bound

  // The kernels' t = x + bias, exactly as they read the operands.
  double t(std::size_t i) const { return to_f32(x[i]) + bias_seen[i % bias_seen.size()]; }
  // The error bound on output element i.  Computed during the comparison
  // rather than stored: at the large preset an array of bounds would be
  // another 2-4 GiB to fill and to read, where x is 1 GiB.
  double bound(std::size_t i) const {
    return bias_gelu_error_bound(precision_name<T>(), t(i), reference[i], t_in_storage);
  }
};

// x from `spec` (the tests' large offsets apply to the activations); the bias
// is always N(0, 1), as a trained layer's bias is small.  Each tensor has its
// own streams (seed's stream 0 for the bias, 1 for x), drawn in chunks on all
// cores (rl::draw_in_chunks: the values do not depend on the thread count).
// `unfused`: the launcher stores the intermediate t in T.
template <typename T>
BiasGeluHostData<T> draw_bias_gelu_host_data(const InputSpec& spec, std::uint64_t seed,
                                             std::int64_t rows, std::int64_t width, bool unfused) {
  const auto n = static_cast<std::size_t>(rows * width);
  const auto c = static_cast<std::size_t>(width);
  BiasGeluHostData<T> data{std::vector<T>(n), std::vector<T>(c), std::vector<double>(c),
                           std::vector<double>(n), unfused && !std::is_same_v<T, float>};
  draw_in_chunks(c, SeededRng::stream_seed(seed, 0), [&](SeededRng& rng, std::size_t i) {
    data.bias[i] = from_f32<T>(static_cast<float>(rng.normal(0.0, 1.0)));
    data.bias_seen[i] = to_f32(data.bias[i]);
  });
  draw_in_chunks(n, SeededRng::stream_seed(seed, 1), [&](SeededRng& rng, std::size_t i) {
    data.x[i] = from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
    data.reference[i] = reference(Form::tanh, data.t(i));
  });
  return data;
}

template <typename T>
class BiasGeluWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (skip the last row, cap the grid).
  std::function<void(const BiasGeluArgs<T>&, cudaStream_t)> launch;

  // `unfused`: the launcher stores the intermediate t in T (and needs scratch).
  BiasGeluWorkload(BiasGeluLauncher<T> launcher, bool unfused, std::int64_t rows,
                   std::int64_t width, std::uint64_t seed)
      : launch(launcher),
        unfused_(unfused),
        rows_(rows),
        width_(static_cast<int>(width)),
        x_(static_cast<std::size_t>(rows * width)),
        bias_(static_cast<std::size_t>(width)),
        y_(static_cast<std::size_t>(rows * width)),
        scratch_(unfused ? static_cast<std::size_t>(rows * width) : 0) {
    redraw_inputs(kDefaultInputs, seed);
  }

  void run(cudaStream_t stream) override {
    launch({y_.get(), scratch_.get(), x_.get(), bias_.get(), rows_, width_}, stream);
  }

  Validation validate(cudaStream_t stream) override {
    y_.poison(stream);
    if (scratch_.size() != 0) scratch_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return compare_with_bounds(download_outputs(), host_.reference,
                               [this](std::size_t i) { return host_.bound(i); });
  }

  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    host_ = {};  // free the old arrays first: 3-5 GiB at the large preset
    host_ = draw_bias_gelu_host_data<T>(spec, seed, rows_, width_, unfused_);
    x_.upload(host_.x);
    bias_.upload(host_.bias);
  }

  std::vector<float> download_outputs() const override { return download_as_float(y_); }

  std::vector<TensorDump> tensors() const override {
    return {tensor_dump("x", "input", {rows_, width_}, x_),
            tensor_dump("bias", "input", {width_}, bias_),
            tensor_dump("y", "output", {rows_, width_}, y_)};
  }

 private:
  bool unfused_;
  std::int64_t rows_;
  int width_;
  DeviceBuffer<T> x_;
  DeviceBuffer<T> bias_;
  DeviceBuffer<T> y_;
  DeviceBuffer<T> scratch_;
  BiasGeluHostData<T> host_;
};

}  // namespace rl::gelu
