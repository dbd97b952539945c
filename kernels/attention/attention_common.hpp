// Attention forward, O = softmax(Q·Kᵀ/√d + mask)·V: what every variant
// shares (shapes, cost model, memory footprint, the float64 reference and its
// error bound, the workload, the record builder).
//
// Q, K, V and O are fp32 tensors laid out [B, H, N, d] (contiguous): head
// (b, h) is an N×d row-major matrix at offset (b·H + h)·N·d.  With the causal
// mask, query i attends to keys j <= i only.
//
// The variants, one file each:
//   attention_naive.cu        three kernels, as an eager framework runs it: S =
//                             scale·QKᵀ to global memory, softmax(S) -> P to
//                             global memory, O = P·V.  Memory grows as N².
//   attention_fused_simt.cu   one kernel, K/V tiles through shared memory and
//                             the online softmax: S and P never leave the
//                             chip (FlashAttention-2's forward, fp32 SIMT).
//
// Why fusion wins, in the cost model's terms: the naive path writes and
// re-reads two B·H·N² tensors, so its traffic grows like N² while its FLOPs
// grow like N²·d: its intensity is a small constant (a few FLOP/B) and it sits
// on the bandwidth diagonal.  The fused kernel's traffic is Q, K, V, O plus
// the K/V re-reads per query tile, so its intensity is about BlockM/2 FLOP/B
// and it moves right towards the FP32 compute roof.
#pragma once

#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
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

// ---------------------------------------------------------------- shape

struct Dims {
  std::int64_t B, H, N, d;
  bool causal;

  std::int64_t heads() const { return B * H; }
  std::int64_t tensor_elements() const { return B * H * N * d; }  // one of Q, K, V, O
  std::int64_t score_elements() const { return B * H * N * N; }   // S or P
};

inline Dims dims(const Shape& shape) {
  const Dims p{shape.at("B"), shape.at("H"), shape.at("N"), shape.at("d"), shape.at("causal") != 0};
  if (p.B < 1 || p.H < 1 || p.N < 1 || p.d < 1 || shape.at("causal") < 0 || shape.at("causal") > 1)
    throw std::invalid_argument("attention: B, H, N, d must be >= 1 and causal 0 or 1, got " +
                                shape.to_string());
  return p;
}

inline Shape shape_of(std::int64_t B, std::int64_t H, std::int64_t N, std::int64_t d, bool causal) {
  return Shape{{{"B", B}, {"H", H}, {"N", N}, {"d", d}, {"causal", causal ? 1 : 0}}};
}

// small: the emulator's main-job cases (a few seconds in all): a block-sized
// N with and without the mask, an N one past a tile (ragged last tiles), and
// the 128 head dim.
// medium: a quick GPU look, one head dim each way.
// large: the FlashAttention papers' convention, B·N = 16k tokens and
// H·d = 2048, d in {64, 128}, N from 512 to 16k, causal and not.
inline std::vector<Shape> shapes(SizePreset preset) {
  std::vector<Shape> out;
  switch (preset) {
    case SizePreset::small:
      out = {shape_of(1, 2, 64, 64, false), shape_of(1, 2, 64, 64, true),
             shape_of(1, 2, 129, 64, true), shape_of(1, 1, 65, 128, false)};
      break;
    case SizePreset::medium:
      out = {shape_of(4, 16, 1024, 64, false), shape_of(4, 16, 1024, 64, true),
             shape_of(4, 8, 1024, 128, true)};
      break;
    case SizePreset::large:
      for (const std::int64_t d : {64, 128})
        for (const std::int64_t N : {512, 1024, 2048, 4096, 8192, 16384})
          for (const bool causal : {false, true})
            out.push_back(shape_of(16384 / N, 2048 / d, N, d, causal));
      break;
  }
  return out;
}

// ---------------------------------------------------------------- cost model
//
// FLOPs: the FlashAttention convention, 4·B·H·N²·d: the two matrix products
// Q·Kᵀ and P·V, 2·N²·d each per head (an FMA counts 2).  The softmax (exp,
// max, sum, divide) is not counted.  With the causal mask the count is halved
// (N²/2, not N(N+1)/2), so rates compare with published numbers; a variant
// that computes the masked half anyway (the naive one) gets no credit for it.
inline double flops(const Dims& p) {
  return 4.0 * static_cast<double>(p.heads()) * static_cast<double>(p.N) *
         static_cast<double>(p.N) * static_cast<double>(p.d) * (p.causal ? 0.5 : 1.0);
}

inline constexpr double kFloatBytes = sizeof(float);

inline double tensor_bytes(const Dims& p) {
  return static_cast<double>(p.tensor_elements()) * kFloatBytes;
}

inline double score_bytes(const Dims& p) {
  return static_cast<double>(p.score_elements()) * kFloatBytes;
}

// bytes_min: Q, K, V read once, O written once.
inline double bytes_min(const Dims& p) {
  return 4.0 * tensor_bytes(p);
}

// bytes_model follows the GEMM family's convention: the global traffic the
// block tiles request (a matrix re-read once per tile of the other operand),
// whether or not L2 serves the re-reads, so both variants are counted alike.
//
// Naive (16×16 output tiles, one thread per output element, see
// attention_naive.cu):
//   scores   Q and K each read ⌈N/16⌉ times, S written once;
//   softmax  S read twice (running max and sum, then normalise), P written once;
//   P·V      P read ⌈d/16⌉ times, V read ⌈N/16⌉ times, O written once.
// The mask changes nothing: S and P are computed and stored in full.
inline constexpr std::int64_t kNaiveTile = 16;

inline double naive_bytes_model(const Dims& p) {
  const auto tiles = [](std::int64_t n) {
    return static_cast<double>((n + kNaiveTile - 1) / kNaiveTile);
  };
  const double t = tensor_bytes(p);
  const double s = score_bytes(p);
  const double scores = 2.0 * tiles(p.N) * t + s;
  const double softmax = 2.0 * s + s;
  const double pv = tiles(p.d) * s + tiles(p.N) * t + t;
  return scores + softmax + pv;
}

// Fused (block_m query rows per block, K/V tiles of block_n keys): Q read
// once, O written once, K and V read once per query tile.  Under the causal
// mask a query tile reads only the key tiles up to its last row (the ones
// wholly above the diagonal are skipped), about half of them.
inline double fused_key_rows_read(const Dims& p, std::int64_t block_m, std::int64_t block_n) {
  double rows = 0;
  for (std::int64_t m0 = 0; m0 < p.N; m0 += block_m) {
    if (!p.causal) {
      rows += static_cast<double>(p.N);
      continue;
    }
    const std::int64_t last_row = std::min(m0 + block_m, p.N) - 1;
    rows += static_cast<double>(std::min(p.N, (last_row / block_n + 1) * block_n));
  }
  return rows;
}

inline double fused_bytes_model(const Dims& p, std::int64_t block_m, std::int64_t block_n) {
  const double kv_rereads = 2.0 * static_cast<double>(p.heads()) *
                            fused_key_rows_read(p, block_m, block_n) * static_cast<double>(p.d) *
                            kFloatBytes;
  return 2.0 * tensor_bytes(p) + kv_rereads;
}

inline roofline::Cost cost(const Dims& p, double bytes_model) {
  return {.flops = flops(p),
          .bytes_min = bytes_min(p),
          .bytes_model = bytes_model,
          .unit = roofline::ComputeUnit::fp32};
}

// ---------------------------------------------------------------- memory footprint
//
// Device memory an instance allocates, so the harness can skip what does not
// fit before allocating.  Naive: Q, K, V, O and the two B·H·N² scratch
// tensors S and P (at B·N = 16k, d = 64, N = 16k that is 69 GB).  Fused: Q,
// K, V, O only.
inline std::size_t device_bytes_needed_naive(const Shape& shape) {
  const Dims p = dims(shape);
  return static_cast<std::size_t>(4 * p.tensor_elements() + 2 * p.score_elements()) * sizeof(float);
}

inline std::size_t device_bytes_needed_fused(const Shape& shape) {
  return static_cast<std::size_t>(4 * dims(shape).tensor_elements()) * sizeof(float);
}

// ---------------------------------------------------------------- validation
//
// The float64 reference is computed on the query rows listed by
// checked_rows(): every row while N <= full_check_max_n, else 64 rows per
// head spread evenly from the first to the last (both always included).
inline constexpr std::int64_t kFullCheckMaxN = 256;
inline constexpr std::int64_t kSampledRowsPerHead = 64;

inline std::vector<std::int64_t> checked_rows(std::int64_t N,
                                              std::int64_t full_check_max_n = kFullCheckMaxN) {
  std::vector<std::int64_t> rows;
  if (N <= full_check_max_n || N <= kSampledRowsPerHead) {
    for (std::int64_t i = 0; i < N; ++i) rows.push_back(i);
    return rows;
  }
  for (std::int64_t k = 0; k < kSampledRowsPerHead; ++k)
    rows.push_back((k * (N - 1) + (kSampledRowsPerHead - 1) / 2) / (kSampledRowsPerHead - 1));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

struct Reference {
  std::vector<std::int64_t> rows;  // checked query rows of every head
  std::vector<double> O;           // [B·H][rows.size()][d]
  double max_abs_logit_terms = 0;  // max over rows and visible keys of scale·Σ_k |q_ik·k_jk|
  double max_weighted_abs_v = 0;   // max over rows and columns of Σ_j P_ij·|V_jc|
};

// Float64 reference on exactly the fp32 values (inputs and scale) the kernels
// read, with the two magnitudes the error bound below needs.
inline Reference reference(const Dims& p, float scale, std::span<const float> q,
                           std::span<const float> k, std::span<const float> v,
                           std::vector<std::int64_t> rows) {
  const auto d = static_cast<std::size_t>(p.d);
  const auto N = static_cast<std::size_t>(p.N);
  const double sc = scale;
  Reference ref;
  ref.rows = std::move(rows);
  ref.O.assign(static_cast<std::size_t>(p.heads()) * ref.rows.size() * d, 0.0);
  std::vector<double> logits(N), weighted_abs_v(d);
  for (std::size_t head = 0; head < static_cast<std::size_t>(p.heads()); ++head) {
    const float* qh = q.data() + head * N * d;
    const float* kh = k.data() + head * N * d;
    const float* vh = v.data() + head * N * d;
    for (std::size_t r = 0; r < ref.rows.size(); ++r) {
      const auto i = static_cast<std::size_t>(ref.rows[r]);
      const float* qi = qh + i * d;
      const std::size_t visible = p.causal ? i + 1 : N;
      double row_max = -INFINITY;
      for (std::size_t j = 0; j < visible; ++j) {
        double dot = 0, abs_terms = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double term = static_cast<double>(qi[c]) * kh[j * d + c];
          dot += term;
          abs_terms += std::fabs(term);
        }
        logits[j] = sc * dot;
        row_max = std::max(row_max, logits[j]);
        ref.max_abs_logit_terms = std::max(ref.max_abs_logit_terms, std::fabs(sc) * abs_terms);
      }
      double sum = 0;
      for (std::size_t j = 0; j < visible; ++j) sum += (logits[j] = std::exp(logits[j] - row_max));
      double* out = ref.O.data() + (head * ref.rows.size() + r) * d;
      std::fill(weighted_abs_v.begin(), weighted_abs_v.end(), 0.0);
      for (std::size_t j = 0; j < visible; ++j) {
        const double w = logits[j] / sum;
        for (std::size_t c = 0; c < d; ++c) {
          out[c] += w * vh[j * d + c];
          weighted_abs_v[c] += w * std::fabs(double{vh[j * d + c]});
        }
      }
      for (const double a : weighted_abs_v)
        ref.max_weighted_abs_v = std::max(ref.max_weighted_abs_v, a);
    }
  }
  return ref;
}

// Error bound of an fp32 attention against the float64 result, per element
// of O (first-order rounding-error analysis, u = 2^-24, M =
// max_abs_logit_terms, A = max_weighted_abs_v):
//  - a logit s_j is an fp32 dot product of d terms: off by at most
//    λ·√d·u·M, by the probabilistic bound λ·√n·u·Σ|terms| of an n-term sum
//    (Higham & Mary, "A New Approach to Probabilistic Rounding Error
//    Analysis", SIAM J. Sci. Comput. 41(5), 2019: it holds with probability
//    at least 1 - 2n·exp(-λ²/2) under their model of independent rounding
//    errors; λ = 6) instead of the worst case n·u; scaling it (and folding
//    log2 e into the scale) adds 2u·M, exp itself 4u.  That is a relative
//    error ε on each weight p_j = exp(s_j - max).  (The max's own error
//    cancels: it divides numerator and denominator alike.)
//  - O = Σ p_j·v_j / Σ p_j with every p_j off by at most ε moves by at most
//    ε·Σ_j P_j·|v_j - O| <= 2·ε·A;
//  - the two sums over the N keys add λ·√N·u·A each, the division u·A.
// So |O - O_ref| <= (2·(λ·√d + 2)·u·M + (2·λ·√N + 9)·u)·A on top of the plain
// fp32 tolerance (rl::tolerance_for("fp32")).  At N = 129, d = 64 with N(0,1)
// inputs that is about 1.5e-4 absolute, ~100x the error the kernels show; a
// 0.1% error in the scale moves O by ~2e-3 and fails (the tests show both).
inline constexpr double kUnitRoundoff = 0x1p-24;
inline constexpr double kLambda = 6.0;

inline Tolerance tolerance(const Dims& p, const Reference& ref) {
  const double u = kUnitRoundoff;
  const double weight_error =
      (kLambda * std::sqrt(static_cast<double>(p.d)) + 2.0) * u * ref.max_abs_logit_terms + 4.0 * u;
  const double sum_error = (2.0 * kLambda * std::sqrt(static_cast<double>(p.N)) + 1.0) * u;
  const double extra = (2.0 * weight_error + sum_error) * ref.max_weighted_abs_v;
  const Tolerance base = tolerance_for("fp32");
  return {base.rtol, base.atol + extra};
}

// ---------------------------------------------------------------- workload

struct Args {
  float* O;
  const float* Q;
  const float* K;
  const float* V;
  float* S;  // the naive path's [B, H, N, N] scores, nullptr for the fused one
  float* P;  // the naive path's [B, H, N, N] probabilities
  int B, H, N, d;
  bool causal;
  float scale;  // 1/√d
};

using Launcher = void (*)(const Args&, cudaStream_t);

inline constexpr InputSpec kDefaultInputs{.mean = 0.0, .stddev = 1.0};

class AttentionWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (a wrong scale, a batch left unwritten).
  std::function<void(const Args&, cudaStream_t)> launch;

  AttentionWorkload(Launcher launcher, const Dims& p, bool needs_scores, std::uint64_t seed,
                    std::int64_t full_check_max_n = kFullCheckMaxN)
      : launch(launcher),
        p_(p),
        scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)))),
        full_check_max_n_(full_check_max_n),
        q_(count()),
        k_(count()),
        v_(count()),
        o_(count()),
        s_(needs_scores ? static_cast<std::size_t>(p.score_elements()) : 0),
        p_scratch_(needs_scores ? static_cast<std::size_t>(p.score_elements()) : 0) {
    redraw_inputs(kDefaultInputs, seed);
  }

  void run(cudaStream_t stream) override {
    launch(Args{o_.get(), q_.get(), k_.get(), v_.get(), s_.get(), p_scratch_.get(),
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
    return compare(o_.download());
  }

  // Q, K, V ~ spec.  With the default N(0, 1) the logits q·k/√d have a
  // standard deviation of about 1: softmax rows neither uniform nor one-hot.
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    std::vector<float> q(count()), k(count()), v(count());
    for (auto* x : {&q, &k, &v})
      for (float& e : *x) e = static_cast<float>(rng.normal(spec.mean, spec.stddev));
    upload_and_reference(q, k, v);
  }

  // Redraws K and V of keys first_key..N-1 in every head (from `spec`) and
  // recomputes the reference: under the causal mask, query rows before
  // first_key must not change.
  void redraw_keys_from(std::int64_t first_key, const InputSpec& spec, std::uint64_t seed) {
    SeededRng rng(seed);
    std::vector<float> k = k_.download(), v = v_.download();
    const auto d = static_cast<std::size_t>(p_.d);
    for (std::size_t head = 0; head < static_cast<std::size_t>(p_.heads()); ++head)
      for (auto j = static_cast<std::size_t>(first_key); j < static_cast<std::size_t>(p_.N); ++j)
        for (std::size_t c = 0; c < d; ++c)
          for (auto* x : {&k, &v})
            (*x)[(head * static_cast<std::size_t>(p_.N) + j) * d + c] =
                static_cast<float>(rng.normal(spec.mean, spec.stddev));
    upload_and_reference(q_.download(), k, v);
  }

  std::vector<float> download_outputs() const override { return o_.download(); }

  const Reference& reference_rows() const { return ref_; }
  Tolerance current_tolerance() const { return tolerance(p_, ref_); }

 private:
  std::size_t count() const { return static_cast<std::size_t>(p_.tensor_elements()); }

  void upload_and_reference(const std::vector<float>& q, const std::vector<float>& k,
                            const std::vector<float>& v) {
    q_.upload(q);
    k_.upload(k);
    v_.upload(v);
    ref_ = reference(p_, scale_, q, k, v, checked_rows(p_.N, full_check_max_n_));
  }

  // Compares the checked rows; the first failure names its (b, h, i) row.
  Validation compare(const std::vector<float>& out) const {
    const Tolerance tol = tolerance(p_, ref_);
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
  float scale_;
  std::int64_t full_check_max_n_;
  DeviceBuffer<float> q_, k_, v_, o_;
  DeviceBuffer<float> s_, p_scratch_;
  Reference ref_;
};

// ---------------------------------------------------------------- record

// What differs between attention records; the rest follows from it.
struct RecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  Launcher launcher;
  bool needs_scores;  // allocates S and P
  std::function<double(const Dims&)> bytes_model;
  std::vector<std::int64_t> head_dims;  // compiled head dims; empty: any d
};

inline KernelRecord make_record(RecordSpec spec) {
  const std::string name = spec.name;
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "attention",
      .variant = std::move(spec.variant),
      .precision = "fp32",
      .unit = roofline::ComputeUnit::fp32,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = false,
      .min_cc = 0,
      .shapes = [](SizePreset preset) { return shapes(preset); },
      .cost = [bytes_model = spec.bytes_model](
                  const Shape& shape) { return cost(dims(shape), bytes_model(dims(shape))); },
      .make_workload =
          [name, launcher = spec.launcher, needs_scores = spec.needs_scores,
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
                new AttentionWorkload(launcher, p, needs_scores, seed));
          },
  };
}

}  // namespace rl::attention
