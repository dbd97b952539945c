// LayerNorm workload and record builder: the device buffers of one instance
// (seeded x, weight, bias; y, mean, rstd), its validation against
// layernorm_reference.hpp's bounds, and make_record, which turns what differs
// between rungs (RecordSpec) into a KernelRecord.
#pragma once

#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "layernorm/layernorm_reference.hpp"
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

namespace rl::layernorm {

template <typename T>
class LayerNormWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (e.g. skip the last row to prove that an
  // unwritten output fails validation).
  std::function<void(const Args<T>&, cudaStream_t)> launch;

  LayerNormWorkload(Launcher<T> launcher, int rows, int C, std::uint64_t seed)
      : launch(std::move(launcher)),
        rows_(rows),
        C_(C),
        x_(count()),
        y_(count()),
        weight_(static_cast<std::size_t>(C)),
        bias_(static_cast<std::size_t>(C)),
        mean_(static_cast<std::size_t>(rows)),
        rstd_(static_cast<std::size_t>(rows)) {
    redraw_inputs(InputSpec{}, seed);
  }

  void run(cudaStream_t stream) override {
    launch(Args<T>{y_.get(), mean_.get(), rstd_.get(), x_.get(), weight_.get(), bias_.get(), rows_,
                   C_},
           stream);
  }

  Validation validate(cudaStream_t stream) override {
    y_.poison(stream);
    mean_.poison(stream);
    rstd_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    Validation v = compare_with_bounds(download_as_float(y_), ref_.y, bounds_.y);
    v = compare_with_bounds(download_as_float(mean_), ref_.mean, bounds_.mean, v);
    v = compare_with_bounds(download_as_float(rstd_), ref_.rstd, bounds_.rstd, v);
    return v;
  }

  // x ~ spec; weight in [0.5, 1.5) and bias in [-0.5, 0.5): never zero, never
  // trivial, so a kernel that drops either is caught.
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    std::vector<double> x(count()), w(static_cast<std::size_t>(C_)), b(w.size());
    x_.upload(draw(x, [&] { return rng.normal(spec.mean, spec.stddev); }));
    weight_.upload(draw(w, [&] { return rng.uniform(0.5, 1.5); }));
    bias_.upload(draw(b, [&] { return rng.uniform(-0.5, 0.5); }));
    ref_ = reference(x, w, b, rows_, C_);
    bounds_ = error_bounds(ref_, x, w, rows_, C_, precision_name<T>());
  }

  std::vector<float> download_outputs() const override {
    std::vector<float> out = download_as_float(y_);
    for (const auto* stat : {&mean_, &rstd_}) {
      const std::vector<float> s = stat->download();
      out.insert(out.end(), s.begin(), s.end());
    }
    return out;
  }

  std::vector<TensorDump> tensors() const override {
    return {tensor_dump("x", "input", {rows_, C_}, x_),
            tensor_dump("weight", "input", {C_}, weight_),
            tensor_dump("bias", "input", {C_}, bias_),
            tensor_dump("y", "output", {rows_, C_}, y_),
            tensor_dump("mean", "output", {rows_}, mean_),
            tensor_dump("rstd", "output", {rows_}, rstd_)};
  }

 private:
  std::size_t count() const {
    return static_cast<std::size_t>(rows_) * static_cast<std::size_t>(C_);
  }

  // Fills `rounded` with the storage-rounded draws and returns them in
  // storage type for upload.
  template <typename Draw>
  static std::vector<T> draw(std::vector<double>& rounded, Draw next) {
    std::vector<T> host(rounded.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
      host[i] = from_f32<T>(static_cast<float>(next()));
      rounded[i] = to_f32(host[i]);
    }
    return host;
  }

  int rows_;
  int C_;
  DeviceBuffer<T> x_, y_, weight_, bias_;
  DeviceBuffer<float> mean_, rstd_;
  Reference ref_;
  Bounds bounds_;
};

// What differs between LayerNorm records; the rest follows from it.
template <typename T>
struct RecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  Launcher<T> launcher;
  std::function<double(const Dims&)> bytes_model;
  std::int64_t min_C = 0;    // shapes narrower than this are not this rung's job
  bool gpu_only = false;     // a library baseline the emulator cannot run
  std::string idea = {};     // the report's one line: what it changes from its baseline
  std::string library = {};  // the library a baseline calls ("cuDNN"), "" if hand-written
  std::string fuses = {};    // the unfused record a fused one replaces (the fusion pair)
};

template <typename T>
KernelRecord make_record(RecordSpec<T> spec) {
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "layernorm",
      .variant = std::move(spec.variant),
      .precision = precision_of<T>(),
      .unit = roofline::ComputeUnit::fp32,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = spec.gpu_only,
      .min_cc = 0,
      .shapes = [min_C =
                     spec.min_C](SizePreset preset) { return shapes(preset, sizeof(T), min_C); },
      .cost =
          [bytes_model = spec.bytes_model](const Shape& shape) {
            const Dims d = dims(shape, sizeof(T));
            return cost(d, bytes_model(d));
          },
      .make_workload =
          [launcher = spec.launcher](const Shape& shape, std::uint64_t seed) {
            return std::unique_ptr<Workload>(
                new LayerNormWorkload<T>(launcher, static_cast<int>(shape.at("rows")),
                                         static_cast<int>(shape.at("C")), seed));
          },
      .idea = std::move(spec.idea),
      .library = std::move(spec.library),
      .refuse_on = {},
      .fuses = std::move(spec.fuses),
  };
}

}  // namespace rl::layernorm
