// GEMM: what every rung of the ladder shares (shapes, the cost model, the
// float64 reference and its error bound, the workload, the record builder and
// the device-side tile loaders).
//
//   C = A * B,   A: M x K, B: K x N, C: M x N, all row-major with leading
//   dimensions lda, ldb, ldc (the BLAS convention; the workload passes
//   lda = K, ldb = N, ldc = N).  Any M, N, K >= 1: every rung handles the
//   tails itself, no padding.  A and B in a storage type T: float (the FP32
//   SIMT rungs, and TF32, whose kernels round fp32 inputs to tf32 as they
//   read them), __half, __nv_bfloat16 or __nv_fp8_e4m3 (tensor-core rungs);
//   C in fp32.
//
// The FP32 SIMT ladder, one file per rung, each changing one thing:
//   gemm_f32_naive.cu          a thread per output, lanes walk down a column of C
//                              (A reads uncoalesced)
//   gemm_f32_coalesced.cu      lanes walk along a row of C: B reads coalesced,
//                              A reads broadcast
//   gemm_f32_smem_tiled.cu     32 x 32 tiles of A and B staged in shared memory
//   gemm_f32_blocktile_1d.cu   64 x 64 block tile, 8 outputs per thread (a column)
//   gemm_f32_blocktile_2d.cu   128 x 128 block tile, an 8 x 8 register tile per thread
//   gemm_f32_vec128.cu         128-bit global and shared loads, A transposed in
//                              shared memory
//   gemm_f32_warptiled.cu      warp tiles, double-buffered shared memory
// (the idea follows siboehm's SGEMM_CUDA ladder; the code is this project's).
// The tensor-core rungs, per precision (tf32, fp16, bf16; fp8 from mma.sync on):
//   gemm_wmma.cu                   nvcuda::wmma fragments on shared-memory tiles
//   gemm_mma_sync_multistage.cu    mma.sync fed by ldmatrix from a swizzled,
//                                  multistage cp.async pipeline
//
// Indices are 32-bit in the kernels: the workload refuses a problem whose A,
// B or C holds 2^31 elements or more (8192^2 is 2^26).
#pragma once

#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/packed128.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#if !defined(RL_EMULATE)
#include <cuda_fp8.h>  // __nv_fp8_e4m3 (the emulator's rl/emu/fp16.hpp has it)
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace rl::gemm {

struct Dims {
  std::int64_t M;
  std::int64_t N;
  std::int64_t K;
};

inline Dims dims(const Shape& shape) {
  return {shape.at("M"), shape.at("N"), shape.at("K")};
}

inline Shape make_shape(std::int64_t M, std::int64_t N, std::int64_t K) {
  return Shape{{{"M", M}, {"N", N}, {"K", K}}};
}

// ---------------------------------------------------------------- storage types
//
// The value of a stored element of A or B as fp32 (exact for every storage
// type), and an fp32 value rounded to the storage type: round-to-nearest-even
// (e4m3 saturating to +-448, as cuda_fp8.h's constructor does).  GEMM-local
// so that the set of types does not depend on rl/packed128.hpp's.
template <typename T>
__host__ __device__ __forceinline__ float input_to_f32(T x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else if constexpr (std::is_same_v<T, __half>)
    return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(x);
  else {
    static_assert(std::is_same_v<T, __nv_fp8_e4m3>, "gemm inputs: float, half, bf16 or e4m3");
    return static_cast<float>(x);
  }
}

// The storage type's name, as --dump-tensors' manifest gives it.
template <typename T>
constexpr const char* storage_name() {
  if constexpr (std::is_same_v<T, float>)
    return "fp32";
  else if constexpr (std::is_same_v<T, __half>)
    return "fp16";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return "bf16";
  else
    return "fp8_e4m3";
}

template <typename T>
__host__ __device__ __forceinline__ T input_from_f32(float x) {
  if constexpr (std::is_same_v<T, float>)
    return x;
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16(x);
  else {
    static_assert(std::is_same_v<T, __nv_fp8_e4m3>, "gemm inputs: float, half, bf16 or e4m3");
    return __nv_fp8_e4m3(x);
  }
}

// ---------------------------------------------------------------- cost model
//
// FLOPs: 2 M N K (one multiply and one add per term; an FMA counts 2).
//
// bytes_min: A and B read once, C written once, at their storage sizes.
//
// bytes_model: the global-memory traffic the rung requests, counted at the
// granularity at which the rung shares a load between the outputs that need
// it, its reuse tile (TileM x TileN outputs).  A tile of C needs a TileM x K
// panel of A and a K x TileN panel of B; so A is requested ceil(N / TileN)
// times in all, B ceil(M / TileM) times, and C is written once:
//
//   bytes_model = M K ceil(N / TileN) sizeof(A) + K N ceil(M / TileM) sizeof(B)
//                 + M N sizeof(C)
//
// The reuse tile is the block tile (BlockM x BlockN) for every rung that
// stages its panels in shared memory.  The naive and coalesced rungs stage
// nothing; the only sharing they get without relying on a cache is a warp's
// broadcast (one request serves every lane that reads the same address), so
// their reuse tile is the warp's footprint in C: 32 x 1 (naive) or 1 x 32
// (coalesced).  Whatever L1 and L2 recover on top of that shows as achieved
// bandwidth above the model, not as fewer modelled bytes.  BlockK does not
// enter: it sets how a panel is cut into steps, not how often it is read.
// As tiles grow the ladder moves right on the roofline, and the FP32 rungs
// cross from the memory-bound side to the compute-bound side.
struct ReuseTile {
  int M;
  int N;
};

inline double ceil_div(double a, double b) {
  return std::ceil(a / b);
}

inline roofline::Cost cost(const Dims& d, ReuseTile tile, std::size_t input_bytes,
                           roofline::ComputeUnit unit) {
  const double M = static_cast<double>(d.M), N = static_cast<double>(d.N),
               K = static_cast<double>(d.K);
  const double in = static_cast<double>(input_bytes);
  const double c_bytes = M * N * sizeof(float);
  return {
      .flops = 2.0 * M * N * K,
      .bytes_min = (M * K + K * N) * in + c_bytes,
      .bytes_model = M * K * ceil_div(N, tile.N) * in + K * N * ceil_div(M, tile.M) * in + c_bytes,
      .unit = unit};
}

// The device memory an instance allocates: A and B at storage size, C fp32.
inline std::size_t device_bytes(const Dims& d, std::size_t input_bytes) {
  const auto M = static_cast<std::size_t>(d.M), N = static_cast<std::size_t>(d.N),
             K = static_cast<std::size_t>(d.K);
  return (M * K + K * N) * input_bytes + M * N * sizeof(float);
}

// ---------------------------------------------------------------- shapes
//
// small: what the emulator runs in the main job, odd and square.
// medium: a moderate GPU run (seconds), an odd square among them.
// large: square 1024 to 8192, and transformer GEMMs: the GPT-2 MLP (8192
// tokens, 768 -> 3072), the Llama-7B MLP (4096 tokens, 4096 -> 11008) and a
// skinny decode step (16 tokens).  A rung may drop the large shapes whose
// FLOPs exceed `max_large_flops` (0: no limit).
inline std::vector<Shape> shapes(SizePreset preset, double max_large_flops = 0) {
  switch (preset) {
    case SizePreset::small:
      return {make_shape(127, 129, 65), make_shape(256, 256, 256)};
    case SizePreset::medium:
      return {make_shape(1024, 1024, 1024), make_shape(1023, 1025, 1021),
              make_shape(2048, 768, 768)};
    case SizePreset::large: {
      std::vector<Shape> out;
      for (const Dims d : {Dims{1024, 1024, 1024}, Dims{2048, 2048, 2048}, Dims{4096, 4096, 4096},
                           Dims{8192, 8192, 8192}, Dims{8192, 3072, 768}, Dims{4096, 11008, 4096},
                           Dims{16, 4096, 4096}}) {
        const double flops =
            2.0 * static_cast<double>(d.M) * static_cast<double>(d.N) * static_cast<double>(d.K);
        if (max_large_flops == 0 || flops <= max_large_flops)
          out.push_back(make_shape(d.M, d.N, d.K));
      }
      return out;
    }
  }
  return {};
}

// ---------------------------------------------------------------- error bound
//
// Every rung sums the K products of an output in some order (a running sum,
// BlockK-sized partial sums, FMAs or not).  For any order, floating-point
// summation of the K products with unit roundoff u satisfies
//
//   |c - ref| <= gamma_K * sum_k |a_ik| |b_kj|,   gamma_K = K u / (1 - K u)
//
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.1 and
// eq. 3.5: each product passes through at most K roundings).  A kernel that
// rounds its inputs to a narrower type first (TF32 tensor cores read fp32 A
// and B with 10 mantissa bits) adds a relative error of at most u_in to each
// factor, (1 + u_in)^2 on each product.  The bound is applied to
// sum |a||b|, not to |c|: it is what the arithmetic guarantees even where
// the terms cancel.  How sharp it is: a dropped K step changes c by one term,
// about sum |a||b| / K, against a bound of about K u sum |a||b|, so a single
// missing term fails as long as K^2 u < 1 (K up to ~4000 in fp32; every test
// shape is far inside that).  Beyond it the worst-case bound can hide one
// term in some outputs, but not a wrong index or a missing tile, which
// change many terms of many outputs.
//
// Tensor cores.  Each input type's products are exact in fp32 (tf32 11 x 11
// significand bits, fp16 11 x 11, bf16 8 x 8, e4m3 4 x 4, all < 24 bits; the
// smallest subnormal products are far above fp32's underflow).  What is not
// IEEE is the sum: within one mma the k products and the accumulator are
// aligned to the largest exponent among them and added with truncation
// (round toward zero), then truncated to fp32 (Fasi, Higham, Mikaitis,
// Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021, for
// V100, T4 and A100).  So one mma step of depth k errs by at most about
// (k + 1) 2^-23 times its largest term, which is at most sum |a||b| of the
// terms so far, and over K / k steps by K (1 + 1/k) 2^-23 sum |a||b|
// <= K 2^-22 sum |a||b|.  The bound below counts this as K roundings with
// u = 2^-22 (twice fp32's round-to-nearest u: truncation, and the alignment
// inside a k group), whatever the order in which the tensor core adds.
// Hopper's fp8 path accumulates in fewer bits (about 14, DeepSeek-V3 report,
// section 3.3.2); it is not covered, and the fp8 mma.sync rung does not run
// there (see gemm_mma_sync_multistage.cu).  Inputs stored in fp16, bf16 or
// fp8 are exact as read (unit_roundoff_inputs = 0: the reference reads the
// same stored values); TF32 kernels round fp32 inputs to 10 mantissa bits
// (cvt.rna, u_in = 2^-11).
struct ErrorModel {
  double unit_roundoff_accumulate = 0x1p-24;  // fp32 accumulation
  double unit_roundoff_inputs = 0;            // rounding of A and B by the kernel (0: none)
};

inline constexpr ErrorModel kFp32SimtError{};
inline constexpr ErrorModel kTensorCoreError{.unit_roundoff_accumulate = 0x1p-22};
inline constexpr ErrorModel kTensorCoreTf32Error{.unit_roundoff_accumulate = 0x1p-22,
                                                 .unit_roundoff_inputs = 0x1p-11};

// K u < 1 for every shape here (K <= 8192, u <= 2^-22); beyond, nothing is
// guaranteed and the factor is infinite.
inline double error_bound_factor(std::int64_t K, const ErrorModel& e) {
  const double ku = static_cast<double>(K) * e.unit_roundoff_accumulate;
  if (ku >= 1.0) return std::numeric_limits<double>::infinity();
  const double gamma = ku / (1.0 - ku);
  const double input = (1.0 + e.unit_roundoff_inputs) * (1.0 + e.unit_roundoff_inputs);
  return input * (1.0 + gamma) - 1.0;
}

// ---------------------------------------------------------------- reference
//
// Validation is full while the float64 reference costs at most
// kFullCheckMaxMacs multiply-adds and C has at most kFullCheckMaxOutputs
// elements; beyond that it is sampled: every element of the first and last
// row and column (where the tails of every tiling lie) plus at least
// kRandomSamples seeded positions, an O(samples K) host cost.
inline constexpr std::int64_t kFullCheckMaxMacs = std::int64_t{1} << 30;
inline constexpr std::int64_t kFullCheckMaxOutputs = std::int64_t{1} << 22;
inline constexpr std::int64_t kRandomSamples = 4096;

// Row-major positions (row * N + col), sorted, without repeats.
inline std::vector<std::int64_t> sample_positions(const Dims& d, std::uint64_t seed) {
  std::vector<std::int64_t> out;
  for (std::int64_t c = 0; c < d.N; ++c) {
    out.push_back(c);
    out.push_back((d.M - 1) * d.N + c);
  }
  for (std::int64_t r = 0; r < d.M; ++r) {
    out.push_back(r * d.N);
    out.push_back(r * d.N + d.N - 1);
  }
  auto dedup = [&] {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  };
  dedup();
  const std::int64_t target =
      std::min<std::int64_t>(d.M * d.N, static_cast<std::int64_t>(out.size()) + kRandomSamples);
  SeededRng rng(seed);
  while (static_cast<std::int64_t>(out.size()) < target) {
    for (std::int64_t i = 0; i < kRandomSamples; ++i)
      out.push_back(
          static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(d.M * d.N)));
    dedup();
  }
  return out;
}

struct Reference {
  std::vector<std::int64_t> positions;  // empty: every output, in row-major order
  std::vector<double> value;            // float64 C at each checked position
  std::vector<double> bound;            // its absolute error bound
};

// a: M x K, b: K x N, exactly the values the kernel reads.  Full: row by row,
// c_i += a_ik b_k (streams B).  Sampled: over a transposed copy of B so that
// each sampled dot product reads both operands contiguously.
template <typename T>
Reference reference(std::span<const T> a, std::span<const T> b, const Dims& d,
                    const ErrorModel& error, bool sampled, std::uint64_t seed) {
  const auto M = static_cast<std::size_t>(d.M), N = static_cast<std::size_t>(d.N),
             K = static_cast<std::size_t>(d.K);
  const double factor = error_bound_factor(d.K, error);
  if (!sampled) {
    std::vector<double> value(M * N, 0.0), bound(M * N, 0.0);
    for (std::size_t i = 0; i < M; ++i) {
      double* c = value.data() + i * N;
      double* s = bound.data() + i * N;
      for (std::size_t k = 0; k < K; ++k) {
        const double aik = input_to_f32(a[i * K + k]);
        const T* bk = b.data() + k * N;
        for (std::size_t j = 0; j < N; ++j) {
          const double bkj = input_to_f32(bk[j]);
          c[j] += aik * bkj;
          s[j] += std::fabs(aik * bkj);
        }
      }
    }
    for (double& s : bound) s *= factor;
    return Reference{{}, std::move(value), std::move(bound)};
  }
  std::vector<T> bt(K * N);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t j = 0; j < N; ++j) bt[j * K + k] = b[k * N + j];
  std::vector<std::int64_t> positions = sample_positions(d, seed);
  std::vector<double> value(positions.size()), bound(positions.size());
  for (std::size_t p = 0; p < positions.size(); ++p) {
    const auto i = static_cast<std::size_t>(positions[p]) / N;
    const auto j = static_cast<std::size_t>(positions[p]) % N;
    double c = 0, s = 0;
    for (std::size_t k = 0; k < K; ++k) {
      const double prod =
          static_cast<double>(input_to_f32(a[i * K + k])) * input_to_f32(bt[j * K + k]);
      c += prod;
      s += std::fabs(prod);
    }
    value[p] = c;
    bound[p] = factor * s;
  }
  return Reference{std::move(positions), std::move(value), std::move(bound)};
}

// ---------------------------------------------------------------- workload

template <typename T>
struct Args {
  float* C;
  const T* A;
  const T* B;
  int M;
  int N;
  int K;
  int lda;
  int ldb;
  int ldc;
};

template <typename T>
using Launcher = std::function<void(const Args<T>&, cudaStream_t)>;

// Inputs: SeededRng::normal(mean, stddev) rounded to T, an exact zero redrawn
// (never zeros, never all equal).
template <typename T>
class GemmWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (e.g. skip the last K step to prove that a
  // missing term fails the error bound).
  Launcher<T> launch;

  GemmWorkload(Launcher<T> launcher, ErrorModel error, const Dims& d, std::uint64_t seed)
      : launch(std::move(launcher)),
        error_(error),
        d_(d),
        seed_(seed),
        a_(count(d.M, d.K)),
        b_(count(d.K, d.N)),
        c_(count(d.M, d.N)) {
    redraw_inputs(InputSpec{}, seed);
  }

  void run(cudaStream_t stream) override {
    launch(Args<T>{c_.get(), a_.get(), b_.get(), static_cast<int>(d_.M), static_cast<int>(d_.N),
                   static_cast<int>(d_.K), static_cast<int>(d_.K), static_cast<int>(d_.N),
                   static_cast<int>(d_.N)},
           stream);
  }

  Validation validate(cudaStream_t stream) override {
    c_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!ref_) ref_ = reference<T>(a_host_, b_host_, d_, error_, sampled(), seed_);
    const std::vector<float> all = download_outputs();
    if (ref_->positions.empty()) return compare_with_bounds(all, ref_->value, ref_->bound);
    std::vector<float> got(ref_->positions.size());
    for (std::size_t p = 0; p < got.size(); ++p)
      got[p] = all[static_cast<std::size_t>(ref_->positions[p])];
    Validation v = compare_with_bounds(got, ref_->value, ref_->bound);
    if (!v.passed)
      v.detail = "sampled check of " + std::to_string(got.size()) + " outputs (element = index " +
                 "into checked_positions()): " + v.detail;
    return v;
  }

  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    auto draw = [&](std::vector<T>& host) {
      for (T& v : host) {
        do {
          v = input_from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
        } while (input_to_f32(v) == 0.0f);
      }
    };
    a_host_.resize(a_.size());
    b_host_.resize(b_.size());
    draw(a_host_);
    draw(b_host_);
    a_.upload(a_host_);
    b_.upload(b_host_);
    ref_.reset();
  }

  std::vector<float> download_outputs() const override { return c_.download(); }

  // A and B as the kernel read them (the uploaded values; a tf32 rung rounds
  // them inside the kernel), C as it wrote it.
  std::vector<TensorDump> tensors() const override {
    auto as_float = [](const std::vector<T>& host) {
      std::vector<float> out(host.size());
      for (std::size_t i = 0; i < host.size(); ++i) out[i] = input_to_f32(host[i]);
      return out;
    };
    return {{"A", "input", storage_name<T>(), {d_.M, d_.K}, as_float(a_host_)},
            {"B", "input", storage_name<T>(), {d_.K, d_.N}, as_float(b_host_)},
            {"C", "output", "fp32", {d_.M, d_.N}, c_.download()}};
  }

  // Test hooks: the size above which validation is sampled (multiply-adds of
  // the full reference), and the positions the sampled check looks at.
  void set_full_check_max_macs(std::int64_t macs) {
    full_check_max_macs_ = macs;
    ref_.reset();
  }
  bool sampled() const {
    return d_.M * d_.N * d_.K > full_check_max_macs_ || d_.M * d_.N > kFullCheckMaxOutputs;
  }
  std::vector<std::int64_t> checked_positions() const {
    return sampled() ? sample_positions(d_, seed_) : std::vector<std::int64_t>{};
  }
  // The inputs as uploaded (row-major A, then B).
  const std::vector<T>& host_a() const { return a_host_; }
  const std::vector<T>& host_b() const { return b_host_; }

 private:
  static std::size_t count(std::int64_t rows, std::int64_t cols) {
    if (rows < 1 || cols < 1 || rows * cols >= std::numeric_limits<int>::max())
      throw std::invalid_argument("gemm: every dimension >= 1 and each matrix < 2^31 elements");
    return static_cast<std::size_t>(rows * cols);
  }

  ErrorModel error_;
  Dims d_;
  std::uint64_t seed_;
  std::int64_t full_check_max_macs_ = kFullCheckMaxMacs;
  DeviceBuffer<T> a_;
  DeviceBuffer<T> b_;
  DeviceBuffer<float> c_;
  std::vector<T> a_host_;
  std::vector<T> b_host_;
  std::optional<Reference> ref_;
};

// What differs between GEMM records; the rest follows from it.  T is the
// storage type of A and B; `precision` names what the kernel computes in
// ("fp32", "tf32", "fp16", "bf16", "fp8"), `unit` the pipe it runs on.
template <typename T>
struct RecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  std::string precision;
  roofline::ComputeUnit unit;
  ReuseTile tile;  // cost model: see "bytes_model" above
  Launcher<T> launcher;
  ErrorModel error = {};
  double max_large_flops = 0;  // drop large shapes beyond this many FLOPs (0: keep all)
  int min_cc = 0;              // minimum compute capability x10 (0: any)
  bool gpu_only = false;       // cannot run under the emulator (libraries)
  std::string idea = {};       // what the rung changes from its baseline, one line
  void (*refuse)() = nullptr;  // run before an instance is made: throws where it must not run
  // KernelRecord::refuse_on: the architectures the harness skips it on, with the reason.
  std::optional<std::string> (*refuse_on)(int cc_x10) = nullptr;
};

template <typename T>
KernelRecord make_record(RecordSpec<T> spec) {
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "gemm",
      .variant = std::move(spec.variant),
      .precision = std::move(spec.precision),
      .unit = spec.unit,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = spec.gpu_only,
      .min_cc = spec.min_cc,
      .shapes = [max = spec.max_large_flops](SizePreset preset) { return shapes(preset, max); },
      .cost = [tile = spec.tile, unit = spec.unit](
                  const Shape& shape) { return cost(dims(shape), tile, sizeof(T), unit); },
      .make_workload =
          [launcher = spec.launcher, error = spec.error, refuse = spec.refuse](const Shape& shape,
                                                                               std::uint64_t seed) {
            if (refuse != nullptr) refuse();
            return std::unique_ptr<Workload>(
                new GemmWorkload<T>(launcher, error, dims(shape), seed));
          },
      .device_bytes = [](const Shape& shape) { return device_bytes(dims(shape), sizeof(T)); },
      .idea = std::move(spec.idea),
      .library = {},
      .refuse_on = spec.refuse_on,
  };
}

// An FP32 SIMT rung: fp32 A, B and C, the FP32 pipe, no rounding of the
// inputs; the variant label is the name without its "gemm_f32_" prefix.
inline KernelRecord make_fp32_simt_record(std::string name, std::string baseline, ReuseTile tile,
                                          Launcher<float> launcher, std::string idea,
                                          double max_large_flops = 0) {
  std::string variant = name.substr(std::string_view("gemm_f32_").size());
  return make_record<float>({.name = std::move(name),
                             .variant = std::move(variant),
                             .baseline = std::move(baseline),
                             .precision = "fp32",
                             .unit = roofline::ComputeUnit::fp32,
                             .tile = tile,
                             .launcher = std::move(launcher),
                             .max_large_flops = max_large_flops,
                             .idea = std::move(idea)});
}

// Grid of output tiles: x walks N, y walks M.
inline dim3 tile_grid(int M, int N, int tile_m, int tile_n) {
  return dim3(static_cast<unsigned>((N + tile_n - 1) / tile_n),
              static_cast<unsigned>((M + tile_m - 1) / tile_m));
}

// ---------------------------------------------------------------- swizzled shared memory
//
// The mma.sync rung stages tiles in shared memory as rows of 16-byte chunks
// (the unit of cp.async and of an ldmatrix row).  Shared memory has 32 banks
// of 4 bytes: a 128-byte line, 8 chunks, one per "bank group" of 4 banks.
// A warp's ldmatrix is served in 4 phases of 8 lanes, each phase reading 8
// chunks (the 8 rows of one 8 x 8 matrix); a 16-byte cp.async store, in
// phases of 8 threads likewise.  A phase is conflict-free when its 8 chunks
// lie in 8 distinct bank groups.  Stored plainly, the 8 rows an ldmatrix
// reads sit at the same chunk of consecutive rows: in the same bank group
// whenever the row length is a multiple of 128 bytes (B: an 8-way conflict),
// or in 2 groups with 64-byte rows (A: 4-way).  The swizzle stores chunk c of
// row r at chunk c ^ x(r), a permutation of each aligned group of 8 (of 4 for
// 64-byte rows), so a row's chunks stay in that row (cp.async writes of 8
// consecutive chunks stay conflict-free) while x(r) spreads the rows a read
// phase touches over all 8 groups.  Which rows a phase touches depends on the
// operand, hence one x per operand kind:
enum class Swizzle {
  none,     // plain row-major (the counter-example of the tests)
  rows64B,  // A tiles, 64-byte rows (BlockK elements): ldmatrix over 8 consecutive
            // rows, two rows per 128-byte line: x = (r / 2) mod 4
  rows8,    // 16-bit B, rows >= 128 bytes: ldmatrix.trans over 8 consecutive k: x = r mod 8
  tf32_b,   // tf32 B, LDS.32 of rows k..k+3 at 2 adjacent chunks: x = 2 (r mod 4)
  fp8_b,    // fp8 B, ldmatrix.trans over rows k = 4t, 4t+1 (t = 0..3) or 4t+2, 4t+3:
            // x = (r mod 2) + 2 ((r / 4) mod 4)
};

__host__ __device__ constexpr int swizzle_xor(Swizzle s, int row) {
  switch (s) {
    case Swizzle::none:
      return 0;
    case Swizzle::rows64B:
      return (row >> 1) & 3;
    case Swizzle::rows8:
      return row & 7;
    case Swizzle::tf32_b:
      return (row & 3) << 1;
    case Swizzle::fp8_b:
      return (row & 1) | ((row >> 1) & 6);
  }
  return 0;
}

// The swizzle: where chunk `chunk` of tile row `row` is stored, in bytes from
// the tile's start (row_bytes: the tile's row length, a multiple of 64).
__host__ __device__ constexpr int swizzled_offset(Swizzle s, int row_bytes, int row, int chunk) {
  return row * row_bytes + (chunk ^ swizzle_xor(s, row)) * 16;
}

struct ChunkAt {
  int row;
  int chunk;
};

// The row an ldmatrix.x4 lane addresses: lane L gives row L % 8 of matrix
// L / 8, the matrices being (rows row0.., chunk0), (rows row0 + 8.., chunk0),
// (rows row0.., chunk0 + 1), (rows row0 + 8.., chunk0 + 1).  For A (rows = m,
// chunks along k) that is a0..a3 of an m16 x k fragment (16-bit k16, and
// also tf32 k8 and e4m3 k32: ldmatrix.b16 hands lane L bytes 4(L % 4)..+3 of
// row L / 4, which is the 32-bit A element of those types); for 16-bit B
// with .trans (rows = k, chunks along n) it is b0, b1 of two n8 tiles.
__host__ __device__ constexpr ChunkAt ldmatrix_x4_source(int lane, int row0, int chunk0) {
  return {row0 + lane % 8 + 8 * ((lane / 8) % 2), chunk0 + lane / 16};
}

// fp8 B (row-major, rows = k, 16 n per chunk) by ldmatrix.x4.trans: matrix
// q = L / 8 takes rows k0 + 16 (q / 2) + 2 (q % 2) + {0, 1, 4, 5, 8, 9, 12,
// 13}, so that lane (g, t) receives k = 4t, 4t + 1 (q even) and 4t + 2,
// 4t + 3 (q odd) of n columns 2g, 2g + 1: byte permutes then form the four
// consecutive k of one n that the m16n8k32 B fragment holds.
__host__ __device__ constexpr ChunkAt fp8_b_ldmatrix_x4_trans_source(int lane, int k0, int chunk) {
  const int q = lane / 8, r = lane % 8;
  return {k0 + 16 * (q / 2) + 2 * (q % 2) + 4 * (r / 2) + r % 2, chunk};
}

// ---------------------------------------------------------------- tile loaders
//
// Device code only: the host compiler sees this header too, from the tests of
// the CUDA backend.
#if defined(__CUDACC__) || defined(RL_EMULATE)

// `#pragma unroll` for nvcc, which keeps the register tiles in registers only
// when their loops are unrolled; the emulator's host compiler does not know
// the pragma (-Wunknown-pragmas).
#if defined(__CUDACC__)
#define RL_GEMM_UNROLL _Pragma("unroll")
#else
#define RL_GEMM_UNROLL
#endif

// Launches a kernel with the (C, A, B, M, N, K, lda, ldb, ldc) parameters of
// every rung.
template <typename T, typename Kernel>
void launch_gemm(Kernel kernel, dim3 grid, dim3 block, const Args<T>& a, cudaStream_t stream) {
  rl::launch(kernel, grid, block, 0, stream, a.C, a.A, a.B, a.M, a.N, a.K, a.lda, a.ldb, a.ldc);
}

// dst[r][c] = src[(row0 + r) * ld + col0 + c], 0 outside rows x cols, by
// `Threads` threads (the whole block) in turn.  Zeros past the edges make the
// tile loops of every rung tail-free: a zero term adds nothing, exactly.
template <int Rows, int Cols, int Threads>
__device__ __forceinline__ void load_tile(float (&dst)[Rows][Cols], const float* __restrict__ src,
                                          int ld, int row0, int col0, int rows, int cols) {
  const int tid = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  RL_GEMM_UNROLL
  for (int i = tid; i < Rows * Cols; i += Threads) {
    const int r = i / Cols, c = i % Cols;
    dst[r][c] = (row0 + r < rows && col0 + c < cols) ? src[(row0 + r) * ld + col0 + c] : 0.0f;
  }
}

// Elements (row, col .. col + 3) of a rows x cols row-major matrix with
// leading dimension ld, those outside the matrix read as 0.  One 128-bit load
// (LDG.E.128) when all four are inside and `aligned` (rows_aligned16, col a
// multiple of 4); element loads at the edges.  No address outside the matrix
// is formed.
__device__ __forceinline__ Packed128<float> load4_or_zeros(const float* __restrict__ m, int ld,
                                                           int row, int col, int rows, int cols,
                                                           bool aligned) {
  Packed128<float> v{};
  if (row >= rows || col >= cols) return v;
  const float* src = m + row * ld + col;
  if (aligned && col + 4 <= cols) return load128(src);
  RL_GEMM_UNROLL
  for (int j = 0; j < 4; ++j)
    if (col + j < cols) v[j] = src[j];
  return v;
}

// acc[i][j] += a[i] * b[j]: the 4 x 4 outer product of one float4 of A and
// one of B, 16 FFMAs.
__device__ __forceinline__ void outer_product_4x4(float (&acc)[4][4], const Packed128<float>& a,
                                                  const Packed128<float>& b) {
  RL_GEMM_UNROLL
  for (int i = 0; i < 4; ++i) {
    RL_GEMM_UNROLL
    for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
  }
}

// A 16-byte-aligned matrix with a leading dimension that keeps every row
// 16-byte aligned: the precondition of the 128-bit paths.
__device__ __forceinline__ bool rows_aligned16(const float* base, int ld) {
  return (reinterpret_cast<std::uintptr_t>(base) & 15u) == 0 && (ld & 3) == 0;
}

// Stores the four values of row `row`, columns col..col+3 of C, where in
// bounds: one 128-bit store (STG.E.128) when all four are and `aligned`.
__device__ __forceinline__ void store4_clipped(float* __restrict__ C, int ldc, int row, int col,
                                               int M, int N, bool aligned,
                                               const Packed128<float>& v) {
  if (row >= M || col >= N) return;
  float* dst = C + row * ldc + col;
  if (aligned && col + 4 <= N) {
    store128(dst, v);
    return;
  }
  RL_GEMM_UNROLL
  for (int j = 0; j < 4; ++j)
    if (col + j < N) dst[j] = v[j];
}

// The global -> register half of a 128-bit tile load, for a block tile of
// BlockM x BlockN x BlockK by `Threads` threads: each thread fetches runs of
// four consecutive floats of a row (float4) of the A tile (BlockM x BlockK)
// and of the B tile (BlockK x BlockN), kAVecs and kBVecs of them.  store_staged() writes them into
// shared memory with A transposed (As[k][m]), so the compute loop reads A's thread fragment as
// consecutive floats, 128 bits at a time, just as it reads B's.
template <int BlockM, int BlockN, int BlockK, int Threads>
struct Vec128TileLoader {
  static constexpr int kAVecs = BlockM * BlockK / 4 / Threads;  // float4 per thread
  static constexpr int kBVecs = BlockK * BlockN / 4 / Threads;
  static_assert(kAVecs >= 1 && kAVecs * Threads * 4 == BlockM * BlockK, "A tile split evenly");
  static_assert(kBVecs >= 1 && kBVecs * Threads * 4 == BlockK * BlockN, "B tile split evenly");

  Packed128<float> a[kAVecs];
  Packed128<float> b[kBVecs];

  // Tile (block_row, block_col) of C at K offset k0.
  __device__ __forceinline__ void fetch(const float* __restrict__ A, const float* __restrict__ B,
                                        int M, int N, int K, int lda, int ldb, int block_row,
                                        int block_col, int k0, bool a_aligned, bool b_aligned) {
    const int tid = static_cast<int>(threadIdx.x);
    RL_GEMM_UNROLL
    for (int i = 0; i < kAVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockK / 4), c = (v % (BlockK / 4)) * 4;
      a[i] = load4_or_zeros(A, lda, block_row + r, k0 + c, M, K, a_aligned);
    }
    RL_GEMM_UNROLL
    for (int i = 0; i < kBVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockN / 4), c = (v % (BlockN / 4)) * 4;
      b[i] = load4_or_zeros(B, ldb, k0 + r, block_col + c, K, N, b_aligned);
    }
  }

  __device__ __forceinline__ void store_staged(float (&As)[BlockK][BlockM],
                                               float (&Bs)[BlockK][BlockN]) const {
    const int tid = static_cast<int>(threadIdx.x);
    RL_GEMM_UNROLL
    for (int i = 0; i < kAVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockK / 4), c = (v % (BlockK / 4)) * 4;
      RL_GEMM_UNROLL
      for (int j = 0; j < 4; ++j) As[c + j][r] = a[i][j];
    }
    RL_GEMM_UNROLL
    for (int i = 0; i < kBVecs; ++i) {
      const int v = tid + i * Threads;
      const int r = v / (BlockN / 4), c = (v % (BlockN / 4)) * 4;
      store128(&Bs[r][c], b[i]);
    }
  }
};

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::gemm
