// What the attention library baselines (cuBLAS naive path, cuDNN SDPA) share:
// an instance holds the library's objects (handle, plan, workspace), built
// once per shape in the workload's constructor, behind AttentionWorkload's
// launcher, and reports what the library chose through Workload::notes().
//
// The records come from attention_workload.hpp's make_record<T> (shapes, cost
// model, error model, device_bytes with the library's workspace); only the
// workload is built here, because the library state belongs to an instance.
#pragma once

#include "attention/attention_launch.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_workload.hpp"

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rl::attention {

// One instance's library objects.
template <typename T>
class Library {
 public:
  virtual ~Library() = default;
  virtual void launch(const Args<T>& args, cudaStream_t stream) = 0;
  virtual std::string notes() const = 0;
};

// A library's state is built for one problem; a launch on another one is a
// programming error, never a silent wrong answer.
template <typename T>
void require_same_problem(const Args<T>& a, const Dims& p, float scale) {
  if (a.B != p.B || a.H != p.H || a.N != p.N || a.d != p.d || a.causal != p.causal ||
      a.scale != scale)
    throw std::logic_error(
        "attention library baseline: launched on another problem than built for");
}

// The scale every attention workload passes (Args::scale), for a library
// that bakes it into its plan.
inline float attention_scale(const Dims& p) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
}

// AttentionWorkload (inputs, float64 reference, tolerance) with a library
// behind its launcher, plus the library's notes.
template <typename T>
class LibraryAttentionWorkload final : public InspectableWorkload {
 public:
  LibraryAttentionWorkload(std::unique_ptr<Library<T>> library, const Dims& p,
                           const ErrorModel& error, bool needs_scores, std::uint64_t seed)
      : library_(std::move(library)),
        attention_([lib = library_.get()](const Args<T>& a, cudaStream_t s) { lib->launch(a, s); },
                   p, error, needs_scores, seed) {}

  void run(cudaStream_t stream) override { attention_.run(stream); }
  Validation validate(cudaStream_t stream) override { return attention_.validate(stream); }
  std::string notes() const override { return library_->notes(); }
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    attention_.redraw_inputs(spec, seed);
  }
  std::vector<float> download_outputs() const override { return attention_.download_outputs(); }
  std::vector<TensorDump> tensors() const override { return attention_.tensors(); }

 private:
  std::unique_ptr<Library<T>> library_;  // declared first: outlives attention_'s launcher
  AttentionWorkload<T> attention_;
};

// A GPU-only record from `spec` (its launcher is unused: each instance gets
// one from make_library).
template <typename T>
KernelRecord library_record(RecordSpec<T> spec,
                            std::function<std::unique_ptr<Library<T>>(const Dims&)> make_library) {
  spec.gpu_only = true;
  const ErrorModel error = spec.error;
  const bool needs_scores = spec.needs_scores;
  KernelRecord record = make_record<T>(std::move(spec));
  record.make_workload = [error, needs_scores, make_library = std::move(make_library)](
                             const Shape& shape, std::uint64_t seed) -> std::unique_ptr<Workload> {
    const Dims p = dims(shape);
    return std::make_unique<LibraryAttentionWorkload<T>>(make_library(p), p, error, needs_scores,
                                                         seed);
  };
  return record;
}

}  // namespace rl::attention
