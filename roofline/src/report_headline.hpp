// What the report's headline says (internal), computed once for the HTML page
// and the terminal summary: the device and datasheet row, kernel counts, each
// ceiling against its claim, noise, throttling and the counters.
#pragma once

#include "rl/roofline/report.hpp"
#include "rl/roofline/results.hpp"
#include "rl/roofline/sku.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace rl::roofline::report_detail {

// Datasheet and derived figures for a ceiling: what the results carry, else
// what the SKU row says (derived at the clock observed during the measurement).
struct Claim {
  std::optional<double> datasheet, derived;
};

Claim claim_for(const Ceiling& c, const Results& r, const Sku* sku, bool sku_chosen);

// How a measured ceiling stands against the claim: the datasheet's figure
// when there is one, else the derived peak.  Plain text; the HTML adds marks.
struct CeilingVerdict {
  std::string name, measured;
  std::string word;                  // "" when there is nothing to compare with
  bool bad = false;                  // far short of the claim, or above it
  std::vector<std::string> against;  // "78% of the datasheet's 2.04 TB/s", ...
};

// A kernel's relative noise: the harness's robust figure when the file has
// it (`robust` set), else the spread of the repetitions (stddev / median).
std::optional<double> kernel_noise(const KernelResult& k, bool& robust);

struct Headline {
  std::string device, compute_capability, backend, sku;  // sku: "" none
  std::string sku_reason;
  int sm_count = 0;
  bool emulator = false;
  int ok = 0, failed = 0, skipped = 0, other = 0;
  std::vector<CeilingVerdict> verdicts;
  std::size_t noise_count = 0;
  bool noise_robust = false;
  double noise_median = 0, noise_worst = 0;
  std::string noise_worst_kernel;
  bool nvml = false;
  std::string nvml_note;
  int throttled = 0, discarded = 0;
  std::string throttled_ceilings;
  // --counters (issue 28): kernels counted, and how their counts stand
  // against the cost model (counter_agreement.hpp's counter_verdict).
  int counted = 0, counters_agree = 0, counters_differ = 0, counters_unavailable = 0;
  std::vector<std::string> counter_sources;           // "exact emulator counts", "CUPTI on GH100"
  std::vector<std::string> counters_unavailable_why;  // distinct reasons
};

Headline headline_facts(const Results& r, const ReportOptions& options);

// "Noise (what it is): median ..., worst ...", or unknown.
std::string noise_text(const Headline& h);
// Throttling: only what NVML watched; without it nothing can be said.
std::string throttling_text(const Headline& h);
// "Counters beside the cost model (exact emulator counts): 1 agree, 1 differ, ...";
// "" when no kernel was counted (a run without --counters).
std::string counters_text(const Headline& h);

}  // namespace rl::roofline::report_detail
