// LayerNorm forward: what every rung of the ladder shares (the float64
// reference, the cost model, shapes, the reductions, the workload, the record
// builder).  Interface as llm.c's layernorm_forward: x[rows, C] -> y[rows, C],
// plus the per-row statistics mean[rows] and rstd[rows] (fp32) that the
// backward pass needs; weight and bias of length C in the storage type.
//
//   y = (x - mean) * rstd * weight + bias,   rstd = 1 / sqrt(var + 1e-5),
//   var = mean((x - mean)^2)   (biased, as PyTorch and llm.c)
//
// The ladder, one file per rung, each in fp32 and bf16 storage (fp32 math):
//   layernorm_thread_per_row_naive.cu   a thread per row, three passes
//   layernorm_unfused.cu                mean, variance, normalise: 3 kernels
//   layernorm_warp_per_row_twopass.cu   a warp per row, shuffle reductions
//   layernorm_block_per_row.cu          a block per row (wide rows)
//   layernorm_vec128_rowcached.cu       128-bit, row held in registers
//   cuda_only/layernorm_cudnn.cpp       cuDNN's norm-forward graph (GPU only)
//
// Variance is always the centred two-pass form; E[x^2] - E[x]^2 cancels
// catastrophically when |mean| >> std, which the tests check.
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
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rl::layernorm {

inline constexpr float kEps = 1e-5f;

// ---------------------------------------------------------------- cost model
//
// FLOPs per row, the arithmetic of the formula as written (sqrt counts 1):
//   mean: C adds + 1 div;  var: C x (sub, mul, add) + 1 div;
//   rstd: add eps, sqrt, reciprocal;  y: C x (sub, mul, mul, add)
//   = 8C + 5.
//
// bytes_min: x read once, y written once, weight and bias read once, mean and
// rstd written once.
//
// bytes_model: what each rung moves from DRAM.  A rung that reads its row
// several times gets the re-reads from cache only while the rows in flight
// fit there.  Assumed machine for that judgement (the cost model must not
// depend on the GPU that happens to run it): an H100 SXM, 132 SMs x 2048
// resident threads, 50 MB of L2 (NVIDIA H100 Tensor Core GPU Architecture
// whitepaper, datasheet figures).  Weight and bias are shared by all rows and
// stay in L2: counted once.
inline constexpr double kAssumedResidentThreads = 132.0 * 2048.0;
inline constexpr double kAssumedCacheBytes = 50e6;

struct Dims {
  double rows;
  double C;
  double element_bytes;
};

inline Dims dims(const Shape& shape, std::size_t element_bytes) {
  return {static_cast<double>(shape.at("rows")), static_cast<double>(shape.at("C")),
          static_cast<double>(element_bytes)};
}

// DRAM reads of x for a rung that sweeps its row `passes` times with
// `threads_per_row` threads on each row.
inline double x_read_bytes(const Dims& d, int passes, double threads_per_row) {
  const double row_bytes = d.C * d.element_bytes;
  const double rows_in_flight = std::min(d.rows, kAssumedResidentThreads / threads_per_row);
  const bool rereads_hit_cache = rows_in_flight * row_bytes <= kAssumedCacheBytes;
  return (rereads_hit_cache ? 1 : passes) * d.rows * row_bytes;
}

// The compulsory traffic except the reads of x.
inline double bytes_except_x(const Dims& d) {
  return d.rows * d.C * d.element_bytes   // y
         + 2.0 * d.C * d.element_bytes    // weight, bias
         + 2.0 * d.rows * sizeof(float);  // mean, rstd
}

inline roofline::Cost cost(const Dims& d, double bytes_model) {
  return {.flops = d.rows * (8.0 * d.C + 5.0),
          .bytes_min = d.rows * d.C * d.element_bytes + bytes_except_x(d),
          .bytes_model = bytes_model,
          .unit = roofline::ComputeUnit::fp32};
}

// ---------------------------------------------------------------- shapes
//
// small: odd row counts and a C that is not a multiple of the vector width
// (emulator-sized).  large: C in {768, 1024, 4096, 8192, 12288} with enough
// rows that x + y >= 256 MiB, far beyond L2, so the timing measures HBM.
inline std::vector<Shape> shapes(SizePreset preset, std::size_t element_bytes,
                                 std::int64_t min_C = 0) {
  std::vector<Shape> out;
  auto add = [&](std::int64_t rows, std::int64_t C) {
    if (C >= min_C) out.push_back(Shape{{{"rows", rows}, {"C", C}}});
  };
  switch (preset) {
    case SizePreset::small:
      add(37, 768);
      add(9, 4100);
      break;
    case SizePreset::medium:
      add(4096, 768);
      add(1024, 4096);
      break;
    case SizePreset::large:
      for (std::int64_t C : {768, 1024, 4096, 8192, 12288}) {
        const std::int64_t io_bytes_per_row = C * 2 * static_cast<std::int64_t>(element_bytes);
        add(((std::int64_t{1} << 28) + io_bytes_per_row - 1) / io_bytes_per_row, C);
      }
      break;
  }
  return out;
}

// ---------------------------------------------------------------- reductions

// Device code only: the host compiler sees this header too, from the tests
// of the CUDA backend.
#if defined(__CUDACC__) || defined(RL_EMULATE)

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the whole block (blockDim.x a multiple of 32, at most 1024); every
// thread gets the total.  Warps reduce in registers, lane 0 of each parks its
// partial in `scratch` (32 floats of shared memory), then every warp reduces
// the partials itself instead of waiting for a broadcast.  The trailing
// barrier lets the caller reuse `scratch` for the next reduction.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>(blockDim.x / 32);
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = warp_sum(lane < warps ? scratch[lane] : 0.0f);
  __syncthreads();
  return v;
}

#endif  // __CUDACC__ || RL_EMULATE

// ---------------------------------------------------------------- workload

template <typename T>
struct Args {
  T* y;
  float* mean;
  float* rstd;
  const T* x;
  const T* weight;
  const T* bias;
  int rows;
  int C;
};

// Launches a rung on `stream`: a kernel launcher, or a stateful library call
// (the cuDNN baseline keeps its execution plan).
template <typename T>
using Launcher = std::function<void(const Args<T>&, cudaStream_t)>;

struct Reference {
  std::vector<double> y, mean, rstd;
  double condition = 1;  // max over rows of (|mean| + std) * rstd, at least 1
};

// float64 reference on the exact (storage-rounded) inputs the kernel reads.
inline Reference reference(std::span<const double> x, std::span<const double> weight,
                           std::span<const double> bias, int rows, int C) {
  Reference ref{.y = std::vector<double>(x.size()),
                .mean = std::vector<double>(static_cast<std::size_t>(rows)),
                .rstd = std::vector<double>(static_cast<std::size_t>(rows))};
  for (int r = 0; r < rows; ++r) {
    const double* xr = x.data() + static_cast<std::size_t>(r) * static_cast<std::size_t>(C);
    double sum = 0;
    for (int c = 0; c < C; ++c) sum += xr[c];
    const double mean = sum / C;
    double var = 0;
    for (int c = 0; c < C; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    var /= C;
    const double rstd = 1.0 / std::sqrt(var + static_cast<double>(kEps));
    for (int c = 0; c < C; ++c)
      ref.y[static_cast<std::size_t>(r) * static_cast<std::size_t>(C) +
            static_cast<std::size_t>(c)] =
          (xr[c] - mean) * rstd * weight[static_cast<std::size_t>(c)] +
          bias[static_cast<std::size_t>(c)];
    ref.mean[static_cast<std::size_t>(r)] = mean;
    ref.rstd[static_cast<std::size_t>(r)] = rstd;
    ref.condition = std::max(ref.condition, (std::fabs(mean) + std::sqrt(var)) * rstd);
  }
  return ref;
}

// y and rstd depend on x - mean: an fp32 mean carries an error of about
// eps32 * |mean|, which reaches y amplified by rstd.  Even a backward-stable
// kernel is then only accurate to about eps32 * condition, with condition =
// (|mean| + std) * rstd (1e4 for inputs of mean 1e4 and std 1).  So y and rstd
// are checked at tolerance_for(precision) scaled by that condition number;
// the mean at the plain fp32 tolerance.  E[x^2] - E[x]^2 still fails by
// orders of magnitude (its error is eps32 * condition^2).
inline Tolerance scaled(Tolerance tol, double condition) {
  return {tol.rtol * condition, tol.atol * condition};
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
    const Tolerance storage = tolerance_for(precision_name<T>());
    const Tolerance stats = tolerance_for("fp32");
    Validation v =
        compare_to_reference(download_as_float(y_), ref_.y, scaled(storage, ref_.condition));
    v = compare_to_reference(download_as_float(mean_), ref_.mean, stats, v);
    v = compare_to_reference(download_as_float(rstd_), ref_.rstd, scaled(stats, ref_.condition), v);
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
};

// What differs between LayerNorm records; the rest follows from it.
template <typename T>
struct RecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  Launcher<T> launcher;
  std::function<double(const Dims&)> bytes_model;
  std::int64_t min_C = 0;  // shapes narrower than this are not this rung's job
  bool gpu_only = false;   // a library baseline the emulator cannot run
};

template <typename T>
KernelRecord make_record(RecordSpec<T> spec) {
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "layernorm",
      .variant = std::move(spec.variant),
      .precision = precision_name<T>(),
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
  };
}

}  // namespace rl::layernorm
