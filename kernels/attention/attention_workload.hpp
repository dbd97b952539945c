// Attention workload and record builder: the device buffers of one instance
// (seeded Q, K, V; O; the naive path's S and P), its validation against
// attention_error_model.hpp's tolerance, and make_record, which turns what
// differs between variants (RecordSpec) into a KernelRecord.
#pragma once

#include "attention/attention_cost.hpp"
#include "attention/attention_error_model.hpp"
#include "attention/attention_launch.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_reference.hpp"
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
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rl::attention {

inline constexpr InputSpec kDefaultInputs{.mean = 0.0, .stddev = 1.0};

template <typename T>
class AttentionWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (a wrong scale, a batch left unwritten).
  Launcher<T> launch;

  AttentionWorkload(Launcher<T> launcher, const Dims& p, const ErrorModel& error, bool needs_scores,
                    std::uint64_t seed)
      : launch(std::move(launcher)),
        p_(p),
        error_(error),
        scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)))),
        q_(count()),
        k_(count()),
        v_(count()),
        o_(count()),
        s_(needs_scores ? static_cast<std::size_t>(p.score_elements()) : 0),
        p_scratch_(needs_scores ? static_cast<std::size_t>(p.score_elements()) : 0) {
    redraw_inputs(kDefaultInputs, seed);
  }

  void run(cudaStream_t stream) override {
    launch(Args<T>{o_.get(), q_.get(), k_.get(), v_.get(), s_.get(), p_scratch_.get(),
                   static_cast<int>(p_.B), static_cast<int>(p_.H), static_cast<int>(p_.N),
                   static_cast<int>(p_.d), p_.causal, scale_},
           stream);
  }

  Validation validate(cudaStream_t stream) override {
    o_.poison(stream);
    if (s_.size() != 0) {
      s_.poison(stream);
      p_scratch_.poison(stream);
    }
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return compare(download_outputs());
  }

  // Q, K, V ~ spec, rounded to T.  With the default N(0, 1) the logits
  // q·k/√d have a standard deviation of about 1: softmax rows neither
  // uniform nor one-hot.
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    std::vector<T> q(count()), k(count()), v(count());
    for (auto* x : {&q, &k, &v})
      for (T& e : *x) e = from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
    upload_and_reference(q, k, v);
  }

  // Redraws K and V of keys first_key..N-1 in every head (from `spec`) and
  // recomputes the reference: under the causal mask, query rows before
  // first_key must not change.
  void redraw_keys_from(std::int64_t first_key, const InputSpec& spec, std::uint64_t seed) {
    SeededRng rng(seed);
    std::vector<T> k = k_.download(), v = v_.download();
    const auto d = static_cast<std::size_t>(p_.d);
    for (std::size_t head = 0; head < static_cast<std::size_t>(p_.heads()); ++head)
      for (auto j = static_cast<std::size_t>(first_key); j < static_cast<std::size_t>(p_.N); ++j)
        for (std::size_t c = 0; c < d; ++c)
          for (auto* x : {&k, &v})
            (*x)[(head * static_cast<std::size_t>(p_.N) + j) * d + c] =
                from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
    upload_and_reference(q_.download(), k, v);
  }

  std::vector<float> download_outputs() const override { return download_as_float(o_); }

  std::vector<TensorDump> tensors() const override {
    const std::vector<std::int64_t> bhnd{p_.B, p_.H, p_.N, p_.d};
    return {tensor_dump("Q", "input", bhnd, q_), tensor_dump("K", "input", bhnd, k_),
            tensor_dump("V", "input", bhnd, v_), tensor_dump("O", "output", bhnd, o_)};
  }

  // Test hook: check sampled rows from this N on (checked_rows), so a small
  // instance exercises the sampled path.  Recomputes the reference.
  void set_full_check_max_n(std::int64_t full_check_max_n) {
    full_check_max_n_ = full_check_max_n;
    upload_and_reference(q_.download(), k_.download(), v_.download());
  }

  const Reference& reference_rows() const { return ref_; }
  Tolerance current_tolerance() const { return tolerance<T>(p_, ref_, error_); }

 private:
  std::size_t count() const { return static_cast<std::size_t>(p_.tensor_elements()); }

  void upload_and_reference(const std::vector<T>& q, const std::vector<T>& k,
                            const std::vector<T>& v) {
    q_.upload(q);
    k_.upload(k);
    v_.upload(v);
    ref_ = reference<T>(p_, scale_, q, k, v, checked_rows(p_.N, full_check_max_n_));
  }

  // Compares the checked rows; the first failure names its (b, h, i) row.
  Validation compare(const std::vector<float>& out) const {
    const Tolerance tol = current_tolerance();
    const auto d = static_cast<std::size_t>(p_.d);
    const std::size_t rows = ref_.rows.size();
    Validation result;
    bool failed = false;
    for (std::size_t head = 0; head < static_cast<std::size_t>(p_.heads()); ++head) {
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = static_cast<std::size_t>(ref_.rows[r]);
        const std::span<const float> got(
            out.data() + (head * static_cast<std::size_t>(p_.N) + i) * d, d);
        const std::span<const double> want(ref_.O.data() + (head * rows + r) * d, d);
        result = compare_to_reference(got, want, tol, result);
        if (!failed && !result.passed) {
          failed = true;
          result.detail = "O row (b=" + std::to_string(head / static_cast<std::size_t>(p_.H)) +
                          ", h=" + std::to_string(head % static_cast<std::size_t>(p_.H)) +
                          ", i=" + std::to_string(i) + "), " + result.detail;
        }
      }
    }
    return result;
  }

  Dims p_;
  ErrorModel error_;
  float scale_;
  std::int64_t full_check_max_n_ = kFullCheckMaxN;
  DeviceBuffer<T> q_, k_, v_, o_;
  DeviceBuffer<T> s_, p_scratch_;
  Reference ref_;
};

// ---------------------------------------------------------------- record

// What differs between attention records; the rest follows from it.
template <typename T>
struct RecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  Launcher<T> launcher;
  bool needs_scores;                               // allocates S and P ([B, H, N, N] of T)
  std::function<double(const Dims&)> bytes_model;  // the cost model's bytes_model
  // What the counters check, added to the cost (declare_fused_counts); empty:
  // nothing declared.
  std::function<void(const Dims&, roofline::Cost&)> declare_counts = {};
  ErrorModel error;                          // kErrorSimtFp32, kErrorFlashTensorCore, ...
  std::vector<std::int64_t> head_dims = {};  // compiled head dims; empty: any d
  roofline::ComputeUnit unit = default_compute_unit<T>();
  bool gpu_only = false;  // library baselines (cuda_only/)
  int min_cc = 0;         // 80 for mma.sync with bf16
  // Device memory beyond Q, K, V, O (and S, P): a library's workspace.
  std::function<std::size_t(const Shape&)> workspace_bytes = {};
  std::string idea = {};     // one line for the report: what it changes from its baseline
  std::string library = {};  // "cuBLAS", "cuDNN" for a library baseline
  std::string fuses = {};    // the unfused record a fused one replaces (the fusion pair)
};

template <typename T>
KernelRecord make_record(RecordSpec<T> spec) {
  const std::string name = spec.name;
  const std::size_t element_bytes = sizeof(T);
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "attention",
      .variant = std::move(spec.variant),
      .precision = precision_of<T>(),
      .unit = spec.unit,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = spec.gpu_only,
      .min_cc = spec.min_cc,
      .shapes = [](SizePreset preset) { return shapes(preset); },
      .cost =
          [bytes_model = spec.bytes_model, declare_counts = spec.declare_counts, unit = spec.unit,
           element_bytes](const Shape& shape) {
            const Dims p = dims(shape);
            roofline::Cost c = cost(p, bytes_model(p), element_bytes, unit);
            if (declare_counts) declare_counts(p, c);
            return c;
          },
      .make_workload =
          [name, launcher = spec.launcher, error = spec.error, needs_scores = spec.needs_scores,
           head_dims = spec.head_dims](const Shape& shape, std::uint64_t seed) {
            const Dims p = dims(shape);
            if (!head_dims.empty() &&
                std::find(head_dims.begin(), head_dims.end(), p.d) == head_dims.end()) {
              std::string supported;
              for (const std::int64_t d : head_dims)
                supported += (supported.empty() ? "" : ", ") + std::to_string(d);
              throw std::invalid_argument(name + ": head dim d=" + std::to_string(p.d) +
                                          " is not compiled (supported: " + supported + ")");
            }
            return std::unique_ptr<Workload>(
                new AttentionWorkload<T>(launcher, p, error, needs_scores, seed));
          },
      .device_bytes =
          [needs_scores = spec.needs_scores, workspace = spec.workspace_bytes](const Shape& shape) {
            return (needs_scores ? device_bytes_needed_naive<T>(shape)
                                 : device_bytes_needed_fused<T>(shape)) +
                   (workspace ? workspace(shape) : std::size_t{0});
          },
      .idea = std::move(spec.idea),
      .library = std::move(spec.library),
      .refuse_on = {},
      .fuses = std::move(spec.fuses),
  };
}

}  // namespace rl::attention
