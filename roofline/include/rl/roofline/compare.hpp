// Compare two results files: the regression gate (e.g. a driver upgrade).
//
// Kernels are matched by name and shape.  Per kernel, from the measured times
// (the per-repetition samples in time_s):
//  - ratio = NEW median / BASE median, change = ratio - 1;
//  - a two-sided Mann-Whitney U test over the samples: exact (the permutation
//    distribution of the rank sum, average ranks for ties) up to
//    kExactMannWhitneyMaxSamples samples in all, the normal approximation with
//    tie and continuity correction above;
//  - a (1 - 2 alpha) distribution-free confidence interval of the NEW/BASE
//    ratio (Hodges-Lehmann, inverted from the U distribution);
//  - each side's noise: 1.4826 x MAD / median (a robust relative standard
//    deviation: sigma / mu for normal samples, blind to a few outliers).
//
// Verdict, t = threshold:
//   INCONCLUSIVE  these repetition counts cannot reach p < alpha whatever the
//                 data (3 vs 3: the smallest two-sided p is 0.1)
//   SLOW / FAST   p < alpha and change > +t / < -t
//   SAME          |change| <= t and the whole confidence interval lies within
//                 [1 - t, 1 + t] (two one-sided tests at alpha): the noise
//                 enters here, so a 4%-noise kernel is not SAME at t = 1%
//   UNSURE        anything else: a change beyond t that is not significant, or
//                 an interval too wide for t
// The SM-clock-normalised ratio (time x the SM clock sampled during the
// kernel's own samples, only when both sides are compute-bound) is shown and
// annotates the verdict; it never changes it.
//
// A kernel whose counters (--counters) disagree with its cost model in either
// file is flagged (counter_flags); the gate does not judge counters.
//
// The gate (GateExit): 1 when any kernel is SLOW, failed or errored in NEW, or
// is missing / not run in NEW (unless allowed); else 3 when any kernel is
// UNSURE or INCONCLUSIVE, or nothing was compared; else 0.  Inputs it refuses
// (CompareInputError, exit 2): duplicate name+shape entries, samples that
// disagree with the stated median or repetition count, and different device,
// backend or size preset without cross_device.
#pragma once

#include "rl/roofline/results.hpp"

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rl::roofline {

// The `roofline compare` exit status.
enum class GateExit : int { pass = 0, fail = 1, bad_input = 2, undecided = 3 };

// Inputs the gate refuses to judge; what() is one line naming the file.
class CompareInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CompareOptions {
  double threshold_pct = 5.0;
  double alpha = 0.05;
  // Kernels whose name matches one of these (ECMAScript, searched) may be
  // missing from NEW or not run there ("skipped") without failing the gate.
  std::vector<std::string> allow_missing;
  bool cross_device = false;  // compare files from different devices/backends/presets
};

// Up to this many samples in all, the U test is exact.
inline constexpr int kExactMannWhitneyMaxSamples = 50;

enum class MannWhitneyMethod { automatic, exact, asymptotic };

struct MannWhitney {
  double p = 1;  // two-sided
  bool exact = false;
};

// Two-sided Mann-Whitney U test of a against b.  Exact: P(|S - E S| >=
// |s - E S|) over the C(n, na) equally likely rank assignments, S the rank sum
// of a with average ranks for ties.  Both samples must be non-empty.
MannWhitney mann_whitney(std::span<const double> a, std::span<const double> b,
                         MannWhitneyMethod method = MannWhitneyMethod::automatic);

// The smallest two-sided p any data can give with na and nb samples:
// 2 / C(na + nb, na) (capped at 1).
double smallest_two_sided_p(int na, int nb);
// The fewest repetitions per side (equal counts) for which that is < alpha.
int repetitions_to_reach(double alpha);

// The two-sided (1 - gamma) confidence interval of the shift d in b ~ a + d
// from the Mann-Whitney distribution: [D(c+1), D(m-c)] of the m = na nb
// differences b_j - a_i, c the largest count with P(U <= c) <= gamma / 2.
// nullopt when the sample sizes allow no such c.
struct Interval {
  double low = 0, high = 0;
};
std::optional<Interval> shift_interval(std::span<const double> a, std::span<const double> b,
                                       double gamma);

// The median (the mean of the middle two for an even count; 0 for none): the
// one definition results, the gate and the fleet share.
double median(std::span<const double> values);

// 1.4826 x MAD / median of the samples (0 when the median is 0).
double relative_noise(std::span<const double> samples);

enum class Verdict { same, slow, fast, unsure, inconclusive };
std::string_view verdict_name(Verdict verdict);  // "SAME", "SLOW", "FAST", "UNSURE", "INCONCLUSIVE"

struct SideSummary {
  double median_s = 0;
  int repetitions = 0;
  double noise = 0;                    // relative_noise of the samples
  std::optional<double> sm_clock_mhz;  // sampled during this kernel's samples
  Bound bound = Bound::none;
};

struct KernelComparison {
  std::string name;
  std::string shape;  // "rows=8192,C=768"
  SideSummary base, next;
  double ratio = 0;  // new / base medians
  double change_pct = 0;
  std::optional<Interval> ratio_interval;  // (1 - 2 alpha) interval of the ratio
  MannWhitney test;
  double smallest_p = 0;  // smallest_two_sided_p(base n, new n)
  // new cycles / base cycles (median x SM clock), both sides compute-bound with
  // a per-kernel clock; shown beside the ratio, never the verdict's basis.
  std::optional<double> clock_ratio;
  Verdict verdict = Verdict::same;
  std::string note;  // why UNSURE / INCONCLUSIVE, what the clock says
};

struct GateFailure {
  std::string kernel;  // "name [shape]"
  std::string reason;  // "failed validation in NEW: ...", "missing from NEW", ...
};

// A kernel whose counts disagree with its cost model in one of the files
// (--counters; counter_agreement.hpp): flagged beside the verdicts, never a
// gate failure, since the counts check the model, not the speed.
struct CounterFlag {
  std::string kernel;    // "name [shape]"
  std::string file;      // the file's label (BASE / NEW)
  std::string sentence;  // the disagreements, joined by "; "
};

struct ContextDifference {
  std::string field, base, next;
};

struct Comparison {
  CompareOptions options;
  std::string base_label, new_label;
  std::vector<KernelComparison> kernels;  // timed in both runs
  std::vector<GateFailure> failures;      // fail the gate
  std::vector<GateFailure> allowed;       // missing or not run in NEW, allowed by the user
  std::vector<std::string> only_in_new;
  std::vector<std::string> not_compared;   // "name [shape]: why" (not timed in BASE)
  std::vector<CounterFlag> counter_flags;  // BASE's first, then NEW's, in file order
  std::vector<ContextDifference> context;
  std::string cross_device_note;  // what differs when cross_device allowed it
  int count(Verdict verdict) const;
  // exp(mean log ratio) over `kernels`; nullopt when none.
  std::optional<double> geometric_mean_ratio() const;
  GateExit exit_status() const;
  std::string exit_reason() const;
};

// Throws CompareInputError for inputs the gate refuses (see the top).
Comparison compare_results(const Results& base, const Results& next, const CompareOptions& options,
                           std::string base_label = "BASE", std::string new_label = "NEW");
std::string comparison_markdown(const Comparison& comparison);
nlohmann::json comparison_json(const Comparison& comparison);

}  // namespace rl::roofline
