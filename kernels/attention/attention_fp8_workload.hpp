// The FP8 attention workload (attention_wgmma_fp8_sm90a.cu, the cuDNN FP8
// baseline): Q, K and V stored as e4m3 codes with one power-of-two scale per
// tensor, O in bf16.  A value x is stored as e4m3(x / s) with s = 2^⌈log2
// (amax / 448)⌉ (448: e4m3's largest finite value), so code·s, the value
// the code represents, is exact in fp32 and the float64 reference
// (attention_reference.hpp) reads exactly it.  The kernels get the descales
// s_Q, s_K, s_V: S = s_Q·s_K·(codes of Q)·(codes of K)ᵀ, O = s_V·(P·codes
// of V).  Validation: attention_error_model.hpp's fp8_tolerance.
#pragma once

#include "attention/attention_wgmma_fault.hpp"
#include "rl/cuda.hpp"

#include <cuda_fp8.h>  // __nv_fp8_e4m3 (the emulator's rl/emu/fp16.hpp has it)

#include <cstdint>
#include <functional>

#if !defined(__CUDA_ARCH__)
#include "attention/attention_cost.hpp"
#include "attention/attention_error_model.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_reference.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>
#endif

namespace rl::attention {

using Fp8 = __nv_fp8_e4m3;

struct Fp8Args {
  __nv_bfloat16* O;
  const Fp8 *Q, *K, *V;
  Fp8* scratch;  // a launcher's own (the wgmma kernel's Vᵀ), fp8_scratch_bytes of it
  int B, H, N, d;
  bool causal;
  float scale;                            // 1/√d
  float q_descale, k_descale, v_descale;  // the per-tensor scales s_Q, s_K, s_V
};

using Fp8Launcher = std::function<void(const Fp8Args&, cudaStream_t)>;

#if defined(RL_EMULATE)
namespace faults {
// attention_wgmma_fp8_sm90a.cu built with `fault` (attention_wgmma_fault.hpp),
// for the negative tests; run with RL_EMU_CC=90.
Fp8Launcher attention_wgmma_fp8(SoftmaxFault fault);
}  // namespace faults
#endif

#if !defined(__CUDA_ARCH__)

// e4m3's largest finite value: a tensor's amax maps to at most this.
inline constexpr double kE4m3Max = 448.0;

inline float power_of_two_scale(double amax) {
  return amax > 0 ? std::exp2f(static_cast<float>(std::ceil(std::log2(amax / kE4m3Max)))) : 1.0f;
}

class Fp8AttentionWorkload final : public InspectableWorkload {
 public:
  // Public so a test can swap them (a faulty build, a tolerance too tight or too loose).
  // The tolerance is per checked row: the reference's magnitudes and the row's own.
  using ToleranceOf = std::function<Tolerance(const Dims&, const Reference&, const Fp8RowBound&)>;
  Fp8Launcher launch;
  ToleranceOf tolerance_of = [](const Dims& p, const Reference&, const Fp8RowBound& row) {
    return fp8_tolerance(p, row);
  };

  Fp8AttentionWorkload(Fp8Launcher launcher, const Dims& p, std::size_t scratch_bytes,
                       std::uint64_t seed)
      : launch(std::move(launcher)),
        p_(p),
        scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)))),
        q_(count()),
        k_(count()),
        v_(count()),
        scratch_(scratch_bytes),
        o_(count()) {
    redraw_inputs(InputSpec{}, seed);
  }

  void run(cudaStream_t stream) override {
    launch(Fp8Args{o_.get(), q_.get(), k_.get(), v_.get(), scratch_.get(), static_cast<int>(p_.B),
                   static_cast<int>(p_.H), static_cast<int>(p_.N), static_cast<int>(p_.d),
                   p_.causal, scale_, descale_[0], descale_[1], descale_[2]},
           stream);
  }

  Validation validate(cudaStream_t stream) override {
    o_.poison(stream);
    // Vᵀ (the cuDNN record has none): padding a pre-pass leaves unwritten reads as NaN (0xFF).
    if (scratch_.size() != 0) scratch_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> out = download_outputs();
    const auto d = static_cast<std::size_t>(p_.d), rows = ref_.rows.size();
    Validation result;
    for (std::size_t head = 0; head < static_cast<std::size_t>(p_.heads()); ++head)
      for (std::size_t r = 0; r < rows; ++r) {
        const auto i = static_cast<std::size_t>(ref_.rows[r]);
        const bool passed_before = result.passed;
        const Tolerance tol = tolerance_of(p_, ref_, row_bounds_[head * rows + r]);
        result = compare_to_reference(
            std::span<const float>(out.data() + (head * static_cast<std::size_t>(p_.N) + i) * d, d),
            std::span<const double>(ref_.O.data() + (head * rows + r) * d, d), tol, result);
        if (passed_before && !result.passed)
          result.detail = "O row (head " + std::to_string(head) + ", i=" + std::to_string(i) +
                          "), " + result.detail;
      }
    return result;
  }

  // Each tensor x ~ spec, stored as e4m3(x / s) with its own scale s.
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    for (int t = 0; t < 3; ++t) {
      std::vector<double> x(count());
      double amax = 0;
      for (double& e : x) amax = std::max(amax, std::fabs(e = rng.normal(spec.mean, spec.stddev)));
      descale_[t] = power_of_two_scale(amax);
      std::vector<Fp8> codes(count());
      for (std::size_t i = 0; i < count(); ++i)
        codes[i] = Fp8(static_cast<float>(x[i] / descale_[t]));
      (t == 0 ? q_ : t == 1 ? k_ : v_).upload(codes);
      values_[t].resize(count());
      for (std::size_t i = 0; i < count(); ++i)  // exact: a 4-bit significand times 2^k
        values_[t][i] = static_cast<float>(codes[i]) * descale_[t];
    }
    ref_ = reference<float>(p_, scale_, values_[0], values_[1], values_[2], checked_rows(p_.N));
    row_bounds_ = fp8_row_bounds(p_, scale_, values_[0], values_[1], values_[2], ref_.rows);
  }

  std::vector<float> download_outputs() const override { return download_as_float(o_); }

  // Q, K, V as the values they represent (scales applied), O as stored.
  std::vector<TensorDump> tensors() const override {
    const std::vector<std::int64_t> bhnd{p_.B, p_.H, p_.N, p_.d};
    std::vector<TensorDump> out;
    for (int t = 0; t < 3; ++t)
      out.push_back({std::string(1, "QKV"[t]), "input", "fp8_e4m3", bhnd, values_[t]});
    out.push_back(tensor_dump("O", "output", bhnd, o_));
    return out;
  }

  const Reference& reference_rows() const { return ref_; }
  float descale(int tensor) const { return descale_[tensor]; }

 private:
  std::size_t count() const { return static_cast<std::size_t>(p_.tensor_elements()); }

  Dims p_;
  float scale_;
  float descale_[3] = {1, 1, 1};
  std::vector<float> values_[3];  // Q, K, V as represented: code·scale
  DeviceBuffer<Fp8> q_, k_, v_, scratch_;
  DeviceBuffer<__nv_bfloat16> o_;
  Reference ref_;
  std::vector<Fp8RowBound> row_bounds_;  // [B·H][ref_.rows.size()]
};

// bytes_min of the fp8 records: Q, K, V read once (1 byte), O written once (bf16).
inline double fp8_bytes_min(const Dims& p) {
  return 3.0 * tensor_bytes(p, 1) + tensor_bytes(p, 2);
}

struct Fp8RecordSpec {
  std::string name, variant, baseline;
  Fp8Launcher launcher;
  std::function<double(const Dims&)> bytes_model;
  std::function<std::size_t(const Dims&)> scratch_bytes;  // the launcher's scratch
  std::string idea, library;
  bool gpu_only = true;             // sm_90a code: !rl::ptx::emulator_runs_sm90a()
  int max_cc = 90;                  // 0: any from 9.0 on (a library)
  std::size_t workspace_bytes = 0;  // a library's, declared in device_bytes
};

inline KernelRecord make_fp8_record(Fp8RecordSpec spec) {
  return KernelRecord{
      .name = spec.name,
      .family = "attention",
      .variant = std::move(spec.variant),
      .precision = roofline::Precision::fp8,
      .unit = roofline::ComputeUnit::tc_fp8,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = spec.gpu_only,
      .min_cc = 90,
      .max_cc = spec.max_cc,
      .shapes = [](SizePreset preset) { return shapes(preset); },
      .cost =
          [bytes_model = spec.bytes_model](const Shape& shape) {
            const Dims p = dims(shape);
            return roofline::Cost{.flops = flops(p),
                                  .bytes_min = fp8_bytes_min(p),
                                  .bytes_model = bytes_model(p),
                                  .unit = roofline::ComputeUnit::tc_fp8};
          },
      .make_workload =
          [name = spec.name, launcher = spec.launcher, scratch = spec.scratch_bytes](
              const Shape& shape, std::uint64_t seed) {
            const Dims p = dims(shape);
            if (p.d != 64 && p.d != 128)
              throw std::invalid_argument(name + ": head dim d=" + std::to_string(p.d) +
                                          " is not compiled (supported: 64, 128)");
            return std::unique_ptr<Workload>(
                new Fp8AttentionWorkload(launcher, p, scratch(p), seed));
          },
      .device_bytes =
          [scratch = spec.scratch_bytes, workspace = spec.workspace_bytes](const Shape& shape) {
            const Dims p = dims(shape);
            return static_cast<std::size_t>(fp8_bytes_min(p)) + scratch(p) + workspace;
          },
      .idea = std::move(spec.idea),
      .library = std::move(spec.library),
  };
}

#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
