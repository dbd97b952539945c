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
#include "rl/host_parallel.hpp"
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

// The host side of one instance: the inputs x as uploaded and the float64
// reference of each output element.
template <typename T>
struct HostData {
  std::vector<T> x;
  std::vector<double> reference;
  double tanh_error = 0;  // see error_bound

  // The error bound on output element i.  Computed during the comparison
  // rather than stored: at the large preset an array of bounds would be
  // another 2-4 GiB to fill and to read, where x is 1 GiB.
  double bound(std::size_t i) const {
    // The reference and the bound see exactly what the kernel reads.
    return error_bound(precision_name<T>(), to_f32(x[i]), reference[i], tanh_error);
  }
};

// x ~ N(spec.mean, spec.stddev) rounded to T, drawn in chunks on all cores
// (rl::draw_in_chunks: the values do not depend on the thread count).
template <typename T>
HostData<T> draw_host_data(Form form, const InputSpec& spec, std::uint64_t seed, std::size_t n,
                           double tanh_error) {
  HostData<T> data{std::vector<T>(n), std::vector<double>(n), tanh_error};
  draw_in_chunks(n, seed, [&](SeededRng& rng, std::size_t i) {
    data.x[i] = from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
    data.reference[i] = reference(form, to_f32(data.x[i]));
  });
  return data;
}

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
    return compare_with_bounds(got, host_.reference,
                               [this](std::size_t i) { return host_.bound(i); });
  }

  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    host_ = {};  // free the old arrays first: 3-5 GiB at the large preset
    host_ = draw_host_data<T>(form_, spec, seed, x_.size(), tanh_error_);
    x_.upload(host_.x);
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
  HostData<T> host_;
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
  // Every full vector through rl::load128 / rl::store128: the cost declares
  // the L2 bytes (declare_vec128_stream).
  bool vec128 = false;
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
      .cost =
          [form, vec128 = spec.vec128](const Shape& shape) {
            const roofline::Cost c = cost(form, shape, sizeof(T));
            return vec128 ? declare_vec128_stream(c, shape, sizeof(T)) : c;
          },
      .make_workload =
          [form, launcher = spec.launcher, tanh_error = spec.tanh_error](const Shape& shape,
                                                                         std::uint64_t seed) {
            return std::unique_ptr<Workload>(
                new GeluWorkload<T>(form, launcher, tanh_error, shape.at("n"), seed));
          },
  };
}

}  // namespace rl::gelu
