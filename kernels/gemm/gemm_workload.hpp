// GEMM workload and record builder: the device buffers of one instance
// (seeded A and B, C), its validation (exact on integer inputs,
// gemm_exact_check.hpp, then within gemm_reference.hpp's bound on the timed
// inputs), and make_record, which turns what differs between rungs
// (RecordSpec) into a KernelRecord.
#pragma once

#include "gemm/gemm_cost.hpp"
#include "gemm/gemm_exact_check.hpp"
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/gemm_reference.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl::gemm {

// Inputs: SeededRng::normal(mean, stddev) rounded to T, an exact zero redrawn
// (never zeros, never all equal).  These are the timed inputs: a tensor
// core's power, and so its clock under a power cap, depends on the bits of
// its operands, and small integers (mostly zero bits) would time a kernel
// faster than the data it is used on.
//
// Validation runs the kernel twice:
//   1. on integer inputs in -2..2, compared exactly (gemm_exact_check.hpp):
//      any dropped, duplicated or misplaced term fails, at any size;
//   2. on the timed inputs, within the float64 bound of gemm_reference.hpp:
//      the rounding of real data (a kernel that accumulates in a narrower
//      type, or rounds its inputs twice, fails here).
// Afterwards the buffers hold the timed inputs and C their product.
//
// Leading dimensions: lda = K and ldb = N rounded up to ld_multiple elements
// (a rung whose loads need aligned rows, e.g. TMA's 16-byte pitch, runs every
// shape this way); the pad is zero and no kernel reads it.  With
// BStorage::n_by_k the device holds Bᵀ (N x K, ldb = K rounded up) and the
// kernel gets that as Args::B; everything on the host (host_b(), tensors(),
// the references, the exact check) stays the logical K x N.
template <typename T>
class GemmWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (e.g. skip the last K step to prove that a
  // missing term fails validation).
  Launcher<T> launch;
  // Called with the row-major host B after every upload of inputs: the timed
  // ones and the exact check's integers.  For a launcher that multiplies its
  // own copy of B (cuBLASLt fp8's transposed one): without it, the exact
  // check would run the integer A against the timed B.
  std::function<void(const std::vector<T>&)> b_uploaded;

  GemmWorkload(Launcher<T> launcher, ErrorModel error, const Dims& d, std::uint64_t seed,
               int ld_multiple = 1, BStorage b_storage = BStorage::k_by_n)
      : launch(std::move(launcher)),
        error_(error),
        d_(d),
        seed_(seed),
        b_storage_(b_storage),
        lda_(padded_ld(d.K, ld_multiple)),
        ldb_(padded_ld(b_transposed() ? d.K : d.N, ld_multiple)),
        a_(count(d.M, lda_)),
        b_(count(b_transposed() ? d.N : d.K, ldb_)),
        c_(count(d.M, d.N)) {
    redraw_inputs(InputSpec{}, seed);
  }

  void run(cudaStream_t stream) override {
    launch(Args<T>{c_.get(), a_.get(), b_.get(), static_cast<int>(d_.M), static_cast<int>(d_.N),
                   static_cast<int>(d_.K), static_cast<int>(lda_), static_cast<int>(ldb_),
                   static_cast<int>(d_.N)},
           stream);
  }

  Validation validate(cudaStream_t stream) override {
    Validation exact = validate_exactly(stream);
    if (!exact.passed) return exact;
    run_once(stream);
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
    a_host_.resize(static_cast<std::size_t>(d_.M * d_.K));
    b_host_.resize(static_cast<std::size_t>(d_.K * d_.N));
    draw(a_host_);
    draw(b_host_);
    upload_inputs(a_host_, b_host_);
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
  // The timed inputs as uploaded (row-major A, then B, without the pad).
  const std::vector<T>& host_a() const { return a_host_; }
  const std::vector<T>& host_b() const { return b_host_; }
  std::int64_t lda() const { return lda_; }
  std::int64_t ldb() const { return ldb_; }  // of B as stored (K-based for n_by_k)
  BStorage b_storage() const { return b_storage_; }

 private:
  // Step 1 of validate(): the integer inputs uploaded, the kernel run, C
  // compared exactly; the timed inputs uploaded again whatever the outcome.
  Validation validate_exactly(cudaStream_t stream) {
    const std::vector<std::int8_t> a =
        exact_inputs(a_host_.size(), SeededRng::stream_seed(seed_, 1));
    const std::vector<std::int8_t> b =
        exact_inputs(b_host_.size(), SeededRng::stream_seed(seed_, 2));
    auto as_t = [](const std::vector<std::int8_t>& in) {
      std::vector<T> out(in.size());
      for (std::size_t i = 0; i < in.size(); ++i) out[i] = input_from_f32<T>(in[i]);
      return out;
    };
    upload_inputs(as_t(a), as_t(b));
    run_once(stream);
    const std::vector<float> c = download_outputs();
    upload_inputs(a_host_, b_host_);
    Validation v = exact_check(c, a, b, d_, sampled(), seed_);
    if (!v.passed) v.detail = "exact check on integer inputs: " + v.detail;
    return v;
  }

  void run_once(cudaStream_t stream) {
    c_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  bool b_transposed() const { return b_storage_ == BStorage::n_by_k; }

  // Row-major host matrices into the padded device buffers (pad zero); B
  // transposed first where it is stored N x K.
  void upload_inputs(const std::vector<T>& a, const std::vector<T>& b) {
    auto upload = [](DeviceBuffer<T>& buffer, const std::vector<T>& host, std::int64_t rows,
                     std::int64_t cols, std::int64_t ld) {
      if (ld == cols) return buffer.upload(host);
      std::vector<T> pitched(buffer.size(), input_from_f32<T>(0.0f));
      for (std::int64_t r = 0; r < rows; ++r)
        std::copy_n(host.begin() + r * cols, cols, pitched.begin() + r * ld);
      buffer.upload(pitched);
    };
    upload(a_, a, d_.M, d_.K, lda_);
    if (b_transposed()) {
      std::vector<T> bt(b.size());
      for (std::int64_t k = 0; k < d_.K; ++k)
        for (std::int64_t n = 0; n < d_.N; ++n) bt[n * d_.K + k] = b[k * d_.N + n];
      upload(b_, bt, d_.N, d_.K, ldb_);
    } else {
      upload(b_, b, d_.K, d_.N, ldb_);
    }
    if (b_uploaded) b_uploaded(b);
  }

  static std::size_t count(std::int64_t rows, std::int64_t cols) {
    if (rows < 1 || cols < 1 || rows * cols >= std::numeric_limits<int>::max())
      throw std::invalid_argument("gemm: every dimension >= 1 and each matrix < 2^31 elements");
    return static_cast<std::size_t>(rows * cols);
  }

  ErrorModel error_;
  Dims d_;
  std::uint64_t seed_;
  BStorage b_storage_;
  std::int64_t lda_;
  std::int64_t ldb_;
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
// (fp32, tf32, fp16, bf16, fp8), `unit` the pipe it runs on.
template <typename T>
struct RecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  roofline::Precision precision;
  roofline::ComputeUnit unit;
  ReuseTile tile;  // cost model: see bytes_model in gemm_cost.hpp
  Launcher<T> launcher;
  ErrorModel error = {};
  double max_flops = 0;   // refuse shapes beyond this many FLOPs (0: none), see max_flops_refusal
  int min_cc = 0;         // minimum compute capability x10 (0: any)
  bool gpu_only = false;  // cannot run under the emulator (libraries)
  std::string idea = {};  // what the rung changes from its baseline, one line
  void (*refuse)() = nullptr;  // run before an instance is made: throws where it must not run
  // KernelRecord::refuse_on: the architectures the harness skips it on, with the reason.
  std::optional<std::string> (*refuse_on)(int cc_x10) = nullptr;
  // Leading dimensions of A and B padded to a multiple of this many elements
  // (see GemmWorkload): a rung whose loads need aligned rows runs every shape.
  int ld_multiple = 1;
  // How B is stored on the device: n_by_k for a kernel that takes B K-major.
  BStorage b_storage = BStorage::k_by_n;
  // What the counters check (declare_counted in gemm_cost.hpp): the block
  // tile the rung issues its MMAs over (nullopt: nothing declared), and
  // whether every load of A and B goes through cp.async / TMA at a shape.
  std::optional<CountedTile> counted_tile = {};
  bool (*loads_counted)(const Dims& d, std::size_t input_bytes) = nullptr;
  // Whether C goes out through TMA stores at a shape (else plain stores).
  bool (*c_stores_counted)(const Dims& d) = nullptr;
};

// The reason a rung with a FLOP limit (a slow rung at the largest shapes:
// its header says why) refuses a shape, or nullopt.
inline std::optional<std::string> max_flops_refusal(const Dims& d, double max_flops) {
  const double flops =
      2.0 * static_cast<double>(d.M) * static_cast<double>(d.N) * static_cast<double>(d.K);
  if (max_flops == 0 || flops <= max_flops) return std::nullopt;
  char text[160];
  std::snprintf(text, sizeof text,
                "refused: 2MNK = %.3g FLOPs is beyond this rung's limit of %.3g (its header says "
                "why)",
                flops, max_flops);
  return std::string(text);
}

template <typename T>
KernelRecord make_record(RecordSpec<T> spec) {
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "gemm",
      .variant = std::move(spec.variant),
      .precision = spec.precision,
      .unit = spec.unit,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = spec.gpu_only,
      .min_cc = spec.min_cc,
      .shapes = [](SizePreset preset) { return shapes(preset); },
      .cost =
          [tile = spec.tile, unit = spec.unit, counted_tile = spec.counted_tile,
           loads_counted = spec.loads_counted,
           c_stores_counted = spec.c_stores_counted](const Shape& shape) {
            const Dims d = dims(shape);
            roofline::Cost c = cost(d, tile, sizeof(T), unit);
            if (counted_tile)
              declare_counted(c, d, *counted_tile, sizeof(T),
                              loads_counted != nullptr && loads_counted(d, sizeof(T)),
                              c_stores_counted != nullptr && c_stores_counted(d));
            return c;
          },
      .make_workload =
          [launcher = spec.launcher, error = spec.error, refuse = spec.refuse,
           ld_multiple = spec.ld_multiple,
           b_storage = spec.b_storage](const Shape& shape, std::uint64_t seed) {
            if (refuse != nullptr) refuse();
            return std::unique_ptr<Workload>(
                new GemmWorkload<T>(launcher, error, dims(shape), seed, ld_multiple, b_storage));
          },
      .device_bytes =
          [ld_multiple = spec.ld_multiple, b_storage = spec.b_storage](const Shape& shape) {
            return device_bytes(dims(shape), sizeof(T), ld_multiple, b_storage);
          },
      .idea = std::move(spec.idea),
      .library = {},
      .refuse_on = spec.refuse_on,
      .refuse_shape = [max = spec.max_flops](
                          const Shape& shape) { return max_flops_refusal(dims(shape), max); },
  };
}

// An FP32 SIMT rung: fp32 A, B and C, the FP32 pipe, no rounding of the
// inputs; the variant label is the name without its "gemm_f32_" prefix.
inline KernelRecord make_fp32_simt_record(std::string name, std::string baseline, ReuseTile tile,
                                          Launcher<float> launcher, std::string idea,
                                          double max_flops = 0) {
  std::string variant = name.substr(std::string_view("gemm_f32_").size());
  return make_record<float>({.name = std::move(name),
                             .variant = std::move(variant),
                             .baseline = std::move(baseline),
                             .precision = roofline::Precision::fp32,
                             .unit = roofline::ComputeUnit::fp32,
                             .tile = tile,
                             .launcher = std::move(launcher),
                             .max_flops = max_flops,
                             .idea = std::move(idea)});
}

// The counters of the SIMT rungs that load and store through
// Vec128TileLoader and store4_clipped (gemm_f32_vec128, gemm_f32_warptiled):
// bytes_l2_load / bytes_l2_store where the emulator's count is exact
// (defined, with when that is, in gemm_f32_vec128.cu).
KernelRecord with_vec128_counts(KernelRecord record, CountedTile tile);

}  // namespace rl::gemm
