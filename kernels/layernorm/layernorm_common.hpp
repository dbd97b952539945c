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
//   layernorm_vec128_block_per_row.cu   + 128-bit accesses
//   layernorm_vec128_rowcached.cu       + the row held in registers
//   layernorm_vec128_rows_per_block.cu  + many rows a block, weight and bias
//                                       loaded once per block
//   layernorm_vec128_rows_per_block_streaming.cu
//                                       + x read and y written with streaming
//                                       (evict-first) cache hints
//   cuda_only/layernorm_cudnn.cpp       cuDNN's norm-forward graph (GPU only)
//
// Variance is always the centred two-pass form; E[x^2] - E[x]^2 cancels
// catastrophically when |mean| >> std, which the tests check (error model:
// error_bounds below).
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
#include <string_view>
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
// rows for 1 GiB per array (x and y), as the ceilings use: far beyond L2, so
// the timing measures HBM, and the dirty lines the L2 flush leaves behind
// stay a few percent of the traffic.
inline constexpr std::int64_t kLargeArrayBytes = std::int64_t{1} << 30;

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
        const std::int64_t row_bytes = C * static_cast<std::int64_t>(element_bytes);
        add((kLargeArrayBytes + row_bytes - 1) / row_bytes, C);
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

// How whole 16-byte chunks cross the memory bus: plain 128-bit accesses (and
// plain scalar loads at a row's ragged end).  The streaming rung passes
// cache-hinted ones instead (StreamingChunks in layernorm_rows_per_block.hpp).
struct PlainChunks {
  template <typename T>
  __device__ __forceinline__ static Packed128<T> load(const T* address) {
    return load128(address);
  }
  template <typename T>
  __device__ __forceinline__ static T load_scalar(const T* row, int i) {
    return row[i];
  }
  template <typename T>
  __device__ __forceinline__ static void store(T* address, const Packed128<T>& value) {
    store128(address, value);
  }
};

// Elements e .. e + kVec - 1 of a row of C: one 128-bit load when the row is
// 16-byte aligned (`aligned`: C a multiple of kVec) and the chunk is whole,
// else scalar loads, zero past the end of the row.
template <typename Chunks = PlainChunks, typename T>
__device__ __forceinline__ Packed128<T> load_chunk(const T* row, int e, int C, bool aligned) {
  constexpr int kVec = Packed128<T>::size;
  if (aligned && e + kVec <= C) return Chunks::load(row + e);
  Packed128<T> v;
  for (int j = 0; j < kVec; ++j)
    v[j] = e + j < C ? Chunks::load_scalar(row, e + j) : from_f32<T>(0.0f);
  return v;
}

// The counterpart of load_chunk: stores the elements that lie inside the row.
template <typename Chunks = PlainChunks, typename T>
__device__ __forceinline__ void store_chunk(T* row, int e, int C, bool aligned,
                                            const Packed128<T>& v) {
  constexpr int kVec = Packed128<T>::size;
  if (aligned && e + kVec <= C) {
    Chunks::store(row + e, v);
  } else {
    for (int j = 0; j < kVec && e + j < C; ++j) row[e + j] = v[j];
  }
}

// A row of C held in registers by the block: this thread's chunk k is
// elements (k * blockDim.x + threadIdx.x) * kVec onwards (the block's loads
// of one k are contiguous: fully coalesced), zero past the end of the row.
template <typename Chunks = PlainChunks, typename T, int kChunks>
__device__ __forceinline__ void load_cached_row(Packed128<T> (&cached)[kChunks], const T* row,
                                                int C, bool aligned) {
  constexpr int kVec = Packed128<T>::size;
  for (int k = 0; k < kChunks; ++k) {
    const int e = (k * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x)) * kVec;
    cached[k] = load_chunk<Chunks>(row, e, C, aligned);
  }
}

struct RowStats {
  float mean;
  float rstd;
};

// Mean and rstd of a row held as load_cached_row leaves it: the centred
// two-pass variance over registers, two block reductions.
template <typename T, int kChunks>
__device__ __forceinline__ RowStats cached_row_stats(const Packed128<T> (&cached)[kChunks], int C,
                                                     float* scratch) {
  constexpr int kVec = Packed128<T>::size;
  float sum = 0.0f;
  for (int k = 0; k < kChunks; ++k)
    for (int j = 0; j < kVec; ++j) sum += to_f32(cached[k][j]);
  const float m = block_sum(sum, scratch) / static_cast<float>(C);
  float var = 0.0f;
  for (int k = 0; k < kChunks; ++k) {
    const int e = (k * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x)) * kVec;
    for (int j = 0; j < kVec; ++j) {
      const float d = e + j < C ? to_f32(cached[k][j]) - m : 0.0f;
      var += d * d;
    }
  }
  return {m, rsqrtf(block_sum(var, scratch) / static_cast<float>(C) + kEps)};
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
  // Grid cap of the rung whose blocks loop over rows (a resident wave by
  // default); tests lower it so that blocks go round that loop.
  std::int64_t max_blocks = std::int64_t{1} << 31;
};

// Launches a rung on `stream`: a kernel launcher, or a stateful library call
// (the cuDNN baseline keeps its execution plan).
template <typename T>
using Launcher = std::function<void(const Args<T>&, cudaStream_t)>;

struct Reference {
  std::vector<double> y, mean, rstd;
  std::vector<double> condition;  // per row: (|mean| + std) * rstd
};

// float64 reference on the exact (storage-rounded) inputs the kernel reads.
inline Reference reference(std::span<const double> x, std::span<const double> weight,
                           std::span<const double> bias, int rows, int C) {
  Reference ref{.y = std::vector<double>(x.size()),
                .mean = std::vector<double>(static_cast<std::size_t>(rows)),
                .rstd = std::vector<double>(static_cast<std::size_t>(rows)),
                .condition = std::vector<double>(static_cast<std::size_t>(rows))};
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
    ref.condition[static_cast<std::size_t>(r)] = (std::fabs(mean) + std::sqrt(var)) * rstd;
  }
  return ref;
}

// Error model (rl::tolerance_for's policy with LayerNorm's sums).  All
// rungs compute in fp32 with the centred two-pass variance.
//  - A C-term fp32 sum is off by at most S_C = 6 sqrt(C) u32 relative to the
//    sum of the magnitudes (probabilistic bound, Higham & Mary 2019, as the
//    attention family uses), so the mean is off by S_C (|mean| + std).
//  - That error reaches y through x - mean amplified by rstd: S_C kappa_r,
//    kappa_r = (|mean_r| + std_r) rstd_r the row's condition number (1e4 for
//    rows of mean 1e4 and std 1: a backward-stable kernel can do no better).
//  - The variance, a sum of squares of the values centred on the computed
//    mean, is the true variance plus the mean's error squared, (S_C kappa_r)^2
//    in units of var, and its own sum and rsqrt are off by S_C + M relative
//    (M = rl::kMathRoundoffs units of u32).  So rstd is off by
//    (S_C + M + (S_C kappa_r)^2 / 2) rstd, and y = xhat w + b by
//    ((S_C + M) kappa_r + (S_C + M + (S_C kappa_r)^2 / 2) |xhat|) |w|
//    before the rounding to T, which tolerance_for adds as (u_T + M) |y|.
// The one-pass E[x^2] - E[x]^2 is off by about S_C kappa^2 and fails by
// orders of magnitude at large offsets; the tests show it, and that dividing
// by C - 1 fails too.
inline double sum_error_factor(int C) {
  return 6.0 * std::sqrt(static_cast<double>(C)) * math_roundoff("fp32");
}

struct Bounds {
  std::vector<double> y, mean, rstd;
};

inline Bounds error_bounds(const Reference& ref, std::span<const double> x,
                           std::span<const double> weight, int rows, int C,
                           std::string_view precision) {
  const double sums = sum_error_factor(C);
  const Tolerance math = tolerance_for("fp32");
  const Tolerance storage = tolerance_for(precision);
  Bounds b{.y = std::vector<double>(ref.y.size()),
           .mean = std::vector<double>(ref.mean.size()),
           .rstd = std::vector<double>(ref.rstd.size())};
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    const double rstd = ref.rstd[r];
    const double kappa = ref.condition[r];
    const double centring = sums * kappa;  // the mean's error, in units of the row's spread
    const double rstd_error = sums + math.rtol + 0.5 * centring * centring;
    b.mean[r] = centring / rstd + math.rtol * std::fabs(ref.mean[r]);
    b.rstd[r] = rstd_error * rstd;
    for (std::size_t c = 0; c < static_cast<std::size_t>(C); ++c) {
      const std::size_t i = r * static_cast<std::size_t>(C) + c;
      const double xhat = (x[i] - ref.mean[r]) * rstd;
      b.y[i] = ((sums + math.atol) * kappa + rstd_error * std::fabs(xhat)) * std::fabs(weight[c]) +
               storage.rtol * std::fabs(ref.y[i]);
    }
  }
  return b;
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
      .idea = std::move(spec.idea),
      .library = std::move(spec.library),
      .refuse_on = {},
      .fuses = std::move(spec.fuses),
  };
}

}  // namespace rl::layernorm
