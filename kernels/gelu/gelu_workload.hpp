// GELU workload and record builder: the device buffers of one instance
// (seeded x, y), its validation against gelu_reference.hpp's bound, and
// make_record, which turns what differs between rungs (RecordSpec) into a
// KernelRecord.
#pragma once

#include "gelu/gelu_cost.hpp"
#include "gelu/gelu_forms.hpp"
#include "gelu/gelu_launch.hpp"
#include "gelu/gelu_reference.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/packed128.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rl::gelu {

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
      .precision = precision_of<T>(),
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
