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
#include "rl/host_parallel.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/packed128.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rl::layernorm {

// The host side of one instance: the inputs in storage type, the float64
// reference and the error bounds.
template <typename T>
struct HostData {
  std::vector<T> x, weight, bias;
  Reference ref;
  Bounds bounds;
};

// Copies a block's `part` into `whole` from element `offset` on.
inline void place(std::vector<double>& whole, const std::vector<double>& part, std::size_t offset) {
  std::copy(part.begin(), part.end(), whole.begin() + static_cast<std::ptrdiff_t>(offset));
}

// x ~ spec; weight in [0.5, 1.5) and bias in [-0.5, 0.5): never zero, never
// trivial, so a kernel that drops either is caught.  Each tensor has its own
// streams (seed's stream 0 for x, 1 for the weight, 2 for the bias), drawn in
// chunks on all cores (rl::draw_in_chunks), and the reference and bounds are
// computed in blocks of whole rows on all cores: nothing depends on the thread
// count.
template <typename T>
HostData<T> draw_host_data(const InputSpec& spec, std::uint64_t seed, int rows, int C) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(C);
  const auto width = static_cast<std::size_t>(C);
  HostData<T> data{std::vector<T>(n), std::vector<T>(width), std::vector<T>(width), {}, {}};
  // The storage-rounded values, which the reference sees exactly as the kernel does.
  std::vector<double> x(n), w(width), b(width);
  const auto draw = [seed](std::uint64_t stream, std::vector<T>& stored,
                           std::vector<double>& rounded, auto next) {
    draw_in_chunks(stored.size(), SeededRng::stream_seed(seed, stream),
                   [&](SeededRng& rng, std::size_t i) {
                     stored[i] = from_f32<T>(static_cast<float>(next(rng)));
                     rounded[i] = to_f32(stored[i]);
                   });
  };
  draw(0, data.x, x, [&spec](SeededRng& rng) { return rng.normal(spec.mean, spec.stddev); });
  draw(1, data.weight, w, [](SeededRng& rng) { return rng.uniform(0.5, 1.5); });
  draw(2, data.bias, b, [](SeededRng& rng) { return rng.uniform(-0.5, 0.5); });

  const auto row_count = static_cast<std::size_t>(rows);
  data.ref = {std::vector<double>(n), std::vector<double>(row_count),
              std::vector<double>(row_count), std::vector<double>(row_count)};
  data.bounds = {std::vector<double>(n), std::vector<double>(row_count),
                 std::vector<double>(row_count)};
  const std::size_t rows_per_block = std::max<std::size_t>(1, kLoopChunk / width);
  parallel_chunks(row_count, rows_per_block, [&](std::size_t first, std::size_t last) {
    const std::span<const double> block_x(x.data() + first * width, (last - first) * width);
    const int block_rows = static_cast<int>(last - first);
    const Reference ref = reference(block_x, w, b, block_rows, C);
    const Bounds bounds = error_bounds(ref, block_x, w, block_rows, C, precision_name<T>());
    place(data.ref.y, ref.y, first * width);
    place(data.bounds.y, bounds.y, first * width);
    place(data.ref.mean, ref.mean, first);
    place(data.ref.rstd, ref.rstd, first);
    place(data.ref.condition, ref.condition, first);
    place(data.bounds.mean, bounds.mean, first);
    place(data.bounds.rstd, bounds.rstd, first);
  });
  return data;
}

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

  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    // Free the old arrays first: at the large preset each is 2-4 GiB.
    ref_ = {};
    bounds_ = {};
    HostData<T> data = draw_host_data<T>(spec, seed, rows_, C_);
    x_.upload(data.x);
    weight_.upload(data.weight);
    bias_.upload(data.bias);
    ref_ = std::move(data.ref);
    bounds_ = std::move(data.bounds);
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
