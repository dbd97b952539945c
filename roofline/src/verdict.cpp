#include "rl/roofline/verdict.hpp"

#include "rl/roofline/sku.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <utility>

namespace rl::roofline {

namespace {

struct DisplayUnit {
  double scale;       // value / scale is printed
  std::string label;  // "TFLOP/s", "TB/s", ...
};

// Datasheets quote compute in TFLOP/s (integer tensor ops in TOP/s) and
// bandwidth in TB/s; SI units as everywhere in the project.
DisplayUnit display_unit(const Ceiling& ceiling) {
  if (ceiling.unit == "B/s") return {1e12, "TB/s"};
  if (ceiling.name == "tc.int8") return {1e12, "TOP/s"};
  return {1e12, "TFLOP/s"};
}

// Three significant figures without exponent notation: 731, 67.3, 3.35.
std::string number(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  if (magnitude >= 10) return fmt::format("{:.1f}", value);
  return fmt::format("{:.2f}", value);
}

std::string throttle_clause(const Ceiling& ceiling) {
  std::string reasons;
  for (const auto& reason : ceiling.throttle_reasons) {
    if (!reasons.empty()) reasons += " and ";
    reasons += describe_throttle_reason(reason);
  }
  const auto& fraction = ceiling.throttled_fraction;
  const bool fraction_known = fraction.has_value() && std::isfinite(*fraction);
  if (fraction_known && *fraction <= 0 && reasons.empty()) return "not throttled";
  if (reasons.empty()) reasons = "throttled";
  if (fraction_known) return fmt::format("{} for {:.0f}% of samples", reasons, *fraction * 100);
  if (!ceiling.throttle_reasons.empty()) return reasons;
  return "";
}

}  // namespace

std::optional<double> percent_of(double measured, std::optional<double> reference) {
  if (!reference.has_value() || !std::isfinite(*reference) || *reference <= 0 ||
      !std::isfinite(measured))
    return std::nullopt;
  return measured / *reference * 100.0;
}

std::string describe_throttle_reason(std::string_view reason) {
  // NVML's clocks-event (throttle) reasons, as nvmlClocksEventReason* names
  // them, in the snake_case the harness records.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kWords{{
      {"sw_power_cap", "power-limited"},
      {"hw_power_brake_slowdown", "power-brake slowed"},
      {"sw_thermal_slowdown", "thermally limited"},
      {"hw_thermal_slowdown", "thermally slowed (hardware)"},
      {"hw_slowdown", "hardware-slowed"},
      {"sync_boost", "sync-boost limited"},
      {"applications_clocks_setting", "held at application clocks"},
      {"gpu_idle", "idle"},
      {"display_clock_setting", "held by the display clock"},
  }};
  for (const auto& [name, words] : kWords)
    if (name == reason) return std::string(words);
  return std::string(reason);
}

std::string verdict_line(const Ceiling& ceiling) {
  if (!std::isfinite(ceiling.value) || ceiling.value <= 0)
    return fmt::format("{}: not measured", ceiling.name);
  const DisplayUnit unit = display_unit(ceiling);
  std::string line =
      fmt::format("{}: {} {}", ceiling.name, number(ceiling.value / unit.scale), unit.label);

  if (const auto pct = percent_of(ceiling.value, ceiling.datasheet))
    line += fmt::format(" = {:.0f}% of the {} {} claim", *pct,
                        number(*ceiling.datasheet / unit.scale), unit.label);
  else
    line += " (no datasheet figure for this device)";

  if (const auto pct = percent_of(ceiling.value, ceiling.derived_peak)) {
    const std::string derived = number(*ceiling.derived_peak / unit.scale);
    if (ceiling.observed_sm_mhz.has_value() && *ceiling.observed_sm_mhz > 0)
      line += fmt::format("; derived at the {:.0f} MHz seen during the run: {} ({:.0f}%)",
                          *ceiling.observed_sm_mhz, derived, *pct);
    else
      line += fmt::format("; derived peak: {} ({:.0f}%)", derived, *pct);
  }

  if (const std::string throttle = throttle_clause(ceiling); !throttle.empty())
    line += "; " + throttle;
  return line;
}

std::vector<std::string> verdict_lines(const Results& results) {
  std::vector<std::string> lines;
  lines.reserve(results.ceilings.size());
  for (const auto& ceiling : results.ceilings) lines.push_back(verdict_line(ceiling));
  return lines;
}

std::string attach_vendor_claims(Results& results) {
  const SkuMatch match = match_sku(results.context.device);
  for (Ceiling& ceiling : results.ceilings) {
    if (ceiling.name.starts_with("hbm.")) {
      if (match.sku != nullptr && match.sku->memory_bytes_per_s > 0)
        ceiling.datasheet = match.sku->memory_bytes_per_s;
      continue;  // l2.* has no datasheet figure; no bandwidth is derived from the SM clock
    }
    const std::optional<ComputeUnit> unit = parse_compute_unit(ceiling.name);
    if (!unit.has_value()) continue;
    if (match.sku != nullptr) ceiling.datasheet = match.sku->datasheet[*unit];
    if (ceiling.observed_sm_mhz.has_value() && *ceiling.observed_sm_mhz > 0)
      ceiling.derived_peak = derived_peak_for_device(results.context.device, match.sku, *unit,
                                                     *ceiling.observed_sm_mhz);
  }
  return match.reason;
}

}  // namespace rl::roofline
