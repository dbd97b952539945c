// Compare two results files: the driver-upgrade gate.
//
// Kernels are matched by name and shape.  Per kernel: the ratio of medians
// (NEW / BASE), a clock-normalised ratio (time x SM clock, i.e. cycles, as
// nvbench-compare does) when both runs recorded an SM clock, and a two-sided
// Mann-Whitney U test over the per-repetition samples (as Google Benchmark's
// tools/compare.py), on cycles when clocks are known.  The U p-value uses the
// normal approximation with tie and continuity correction (scipy's
// method="asymptotic").
//
// Verdict, with change = (effective ratio - 1) in %:
//   |change| <= threshold              -> SAME
//   beyond threshold and p < alpha     -> SLOW (slower) / FAST (faster)
//   beyond threshold, p >= alpha or too few samples for a test -> UNSURE
// The gate fails (exit 1) when any kernel is SLOW.
#pragma once

#include "rl/roofline/results.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rl::roofline {

struct CompareOptions {
  double threshold_pct = 5.0;
  double alpha = 0.05;
};

enum class Verdict { same, slow, fast, unsure };
std::string_view verdict_name(Verdict verdict);  // "SAME", "SLOW", "FAST", "UNSURE"

struct KernelComparison {
  std::string name;
  std::string shape;  // "rows=8192,C=768"
  double base_median_s = 0, new_median_s = 0;
  double ratio = 0;                   // new / base medians
  std::optional<double> clock_ratio;  // (new median x new clock) / (base median x base clock)
  std::optional<double> base_clock_mhz, new_clock_mhz;
  std::optional<double> p_value;  // absent: fewer than 2 samples on a side
  double change_pct = 0;          // from clock_ratio when present, else ratio
  Verdict verdict = Verdict::same;
};

struct ContextDifference {
  std::string field, base, next;
};

struct Comparison {
  CompareOptions options;
  std::string base_label, new_label;
  std::vector<KernelComparison> kernels;
  std::vector<ContextDifference> context;
  std::vector<std::string> only_in_base, only_in_new;
  std::vector<std::string> not_comparable;  // "name: why" (untimed on a side)
  int slow_count() const;
  int exit_code() const { return slow_count() > 0 ? 1 : 0; }
};

// Two-sided Mann-Whitney U p-value; nullopt when a side has < 2 samples.
std::optional<double> mann_whitney_p(std::span<const double> a, std::span<const double> b);

Comparison compare_results(const Results& base, const Results& next, const CompareOptions& options,
                           std::string base_label = "BASE", std::string new_label = "NEW");
std::string comparison_markdown(const Comparison& comparison);
nlohmann::json comparison_json(const Comparison& comparison);

}  // namespace rl::roofline
