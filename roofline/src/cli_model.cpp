#include "cli_commands.hpp"

#include "rl/roofline/model.hpp"
#include "rl/roofline/sku.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace rl::roofline::cli_detail {

namespace {

const Sku& require_sku(const std::string& key) {
  const Sku* sku = find_sku(key);
  if (!sku) throw UsageError(fmt::format("unknown SKU '{}' (roofline skus lists them)", key));
  return *sku;
}

// Four significant digits, without an exponent from 10,000 TFLOP/s up.
std::string tflops_cell(std::optional<double> v) {
  if (!v) return "-";
  const double tflops = *v / 1e12;
  return tflops < 1e4 ? fmt::format("{:.4g}", tflops) : fmt::format("{:.0f}", tflops);
}

// A unit's column in `roofline skus`: the ceiling name of a tensor unit
// ("tc.mxfp8"), the short name of the others ("fp32").
std::string_view column_label(ComputeUnit unit) {
  const std::string_view ceiling = compute_ceiling_name(unit);
  return ceiling.starts_with("tc.") ? ceiling : compute_unit_name(unit);
}

std::size_t column_width(ComputeUnit unit) {
  return std::max<std::size_t>(6, column_label(unit).size());
}

}  // namespace

int run_skus() {
  fmt::print(
      "Datasheet table: dense peaks (TFLOP/s; INT8 in TOP/s), never the 2:4-sparse figure.\n");
  const auto units = all_compute_units();
  std::string header = fmt::format("{:<19} {:>4} {:>4} {:>6} {:>5} {:>8} {:>5} ", "key", "cc",
                                   "SMs", "boost", "GiB", "GB/s", "L2MiB");
  for (ComputeUnit u : units) header += fmt::format(" {:>{}}", column_label(u), column_width(u));
  fmt::print("{}\n", header);
  for (const auto& s : sku_table()) {
    std::string line = fmt::format(
        "{:<19} {:>4} {:>4} {:>6} {:>5} {:>8} {:>5} ", s.key, s.compute_capability,
        s.sm_count > 0 ? fmt::format("{}", s.sm_count) : "-",
        s.boost_clock_mhz > 0 ? fmt::format("{}", s.boost_clock_mhz) : "-", s.memory_gib,
        s.memory_bytes_per_s > 0 ? fmt::format("{:g}", s.memory_bytes_per_s / 1e9) : "-",
        s.l2_bytes ? fmt::format("{:g}", *s.l2_bytes / (1 << 20)) : "-");
    for (ComputeUnit u : units)
      line += fmt::format(" {:>{}}", tflops_cell(s.datasheet[u]), column_width(u));
    fmt::print("{}\n", line);
  }
  fmt::print("\nSources ('-' = not in the cited source; never filled in from elsewhere):\n");
  for (const auto& s : sku_table()) {
    fmt::print("  {}: {}. {}.", s.key, s.source, s.note);
    if (!s.tensor_clock_note.empty())
      fmt::print(" Tensor clock {} MHz: {}.", s.tensor_clock_mhz, s.tensor_clock_note);
    fmt::print("\n");
  }
  fmt::print(
      "\nLinks (datasheet figures are bidirectional, both directions together; per direction "
      "is half):\n");
  for (const auto& s : sku_table())
    for (LinkKind kind : {LinkKind::nvlink, LinkKind::pcie, LinkKind::c2c})
      if (const auto& figure = s.link(kind)) {
        fmt::print("  {}: {}. Source: {}.", s.key, link_figure_text(kind, *figure), figure->source);
        if (!figure->note.empty()) fmt::print(" {}.", figure->note);
        fmt::print("\n");
      }
  return 0;
}

namespace {

// "FP8 tensor cores" for tc_fp8, "FP64" for fp64: what a SKU can lack.
std::string unit_label(ComputeUnit unit) {
  std::string name(compute_unit_name(unit));
  const bool tensor = name.starts_with("tc_");
  if (tensor) name = name.substr(3);
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return tensor ? name + " tensor cores" : name;
}

}  // namespace

int run_model(const std::string& key, bool json, std::span<const RegisteredKernel> registered,
              int sm_count_listed) {
  const Sku& sku = require_sku(key);
  auto ceilings = datasheet_ceilings(sku);
  const Ceiling* hbm = dram_ceiling(ceilings);

  nlohmann::ordered_json out;
  out["sku"] = {{"key", sku.key},
                {"name", sku.name},
                {"compute_capability", sku.compute_capability},
                {"sm_count", sku.sm_count},
                {"boost_clock_mhz", sku.boost_clock_mhz},
                {"source", sku.source}};
  nlohmann::ordered_json ceiling_json = nlohmann::ordered_json::array();
  nlohmann::ordered_json ridges = nlohmann::ordered_json::array();
  for (const auto& c : ceilings) {
    ceiling_json.push_back(
        {{"name", c.name},
         {"kind", c.kind},
         {"value", c.value},
         {"unit", c.unit},
         {"derived_peak", c.derived_peak ? nlohmann::ordered_json(*c.derived_peak)
                                         : nlohmann::ordered_json(nullptr)}});
    if (c.kind == "compute" && hbm)
      ridges.push_back({{"compute", c.name},
                        {"memory", hbm->name},
                        {"flop_per_byte", ridge_point(c.value, hbm->value)}});
  }
  out["ceilings"] = ceiling_json;
  out["ridge_points"] = ridges;

  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  const int sku_cc = compute_capability_x10(sku.compute_capability);
  for (const auto& k : registered) {
    // A ceiling loop is timed at one full wave of the device it runs on: its
    // grid is re-sized from the listing machine's SMs to the SKU's.
    ShapeDims shape_dims = k.shape;
    Cost cost = k.cost;
    for (auto& [dim, extent] : shape_dims)
      if (dim == "blocks" && k.cost_of && sm_count_listed > 0 && sku.sm_count > 0) {
        extent = std::max<std::int64_t>(1, extent * sku.sm_count / sm_count_listed);
        cost = k.cost_of(shape_dims);
      }
    double ai = intensity(cost.flops, cost.bytes_model);
    const Ceiling* compute = compute_ceiling(ceilings, k.unit);
    nlohmann::ordered_json shape = nlohmann::ordered_json::object();
    for (const auto& [dim, extent] : shape_dims) shape[dim] = extent;
    nlohmann::ordered_json entry = {{"name", k.name},
                                    {"family", k.family},
                                    {"precision", k.precision},
                                    {"unit", compute_unit_name(k.unit)},
                                    {"shape", shape},
                                    {"flops", cost.flops},
                                    {"bytes_model", cost.bytes_model},
                                    {"intensity", ai},
                                    {"intensity_min", intensity(cost.flops, cost.bytes_min)}};
    if (k.min_cc > 0 && sku_cc > 0 && sku_cc < k.min_cc) {
      entry["bound"] = "not_supported";
      entry["note"] = fmt::format("needs compute capability {}.{}; {} is {}", k.min_cc / 10,
                                  k.min_cc % 10, sku.key, sku.compute_capability);
    } else if (k.max_cc > 0 && sku_cc > k.max_cc) {
      entry["bound"] = "not_supported";
      entry["note"] = fmt::format("built for compute capability up to {}.{}; {} is {}",
                                  k.max_cc / 10, k.max_cc % 10, sku.key, sku.compute_capability);
    } else if (cost.flops > 0 && !compute) {
      entry["bound"] = "not_supported";
      entry["note"] = fmt::format("no {} on this SKU (the datasheet gives no {} figure)",
                                  unit_label(k.unit), compute_ceiling_name(k.unit));
    } else if (hbm) {
      const double compute_time = compute ? cost.flops / compute->value : 0.0;
      const double memory_time = cost.bytes_model / hbm->value;
      entry["attainable_flops_per_s"] =
          compute ? nlohmann::ordered_json(attainable(compute->value, hbm->value, ai))
                  : nlohmann::ordered_json(nullptr);
      entry["bound"] = memory_time >= compute_time ? "memory" : "compute";
      entry["predicted_time_s"] = std::max(compute_time, memory_time);
    }
    kernels.push_back(entry);
  }
  out["kernels"] = kernels;

  if (json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  // A figure no source gives is 0 in the table: printed as "-", never as 0.
  const auto known = [](auto v) { return v > 0 ? fmt::format("{}", v) : std::string("-"); };
  fmt::print("{} ({}; cc {}, {} SMs, boost {} MHz) — predicted from the datasheet\n", sku.name,
             sku.key, sku.compute_capability, known(sku.sm_count), known(sku.boost_clock_mhz));
  fmt::print("source: {}\n\nCeilings:\n", sku.source);
  for (const auto& c : ceilings)
    fmt::print("  {:<14} {:>12}{}{}\n", c.name, si(c.value), c.unit,
               c.derived_peak ? fmt::format("   (derived {}{})", si(*c.derived_peak), c.unit) : "");
  if (hbm) {
    fmt::print("\nRidge points against {} ({}B/s):\n", hbm->name, si(hbm->value));
    for (const auto& r : ridges)
      fmt::print("  {:<14} {:>8.1f} FLOP/B\n", r["compute"].get<std::string>(),
                 r["flop_per_byte"].get<double>());
  }
  fmt::print("\nRegistered kernels (large preset shapes):\n");
  if (registered.empty()) fmt::print("  (none)\n");
  std::size_t name_width = 6, shape_width = 5;
  std::vector<std::string> shapes;
  for (const auto& k : kernels) {
    std::string text;
    for (const auto& [dim, extent] : k["shape"].items())
      text += fmt::format("{}{}={}", text.empty() ? "" : ",", dim, extent.get<std::int64_t>());
    name_width = std::max(name_width, k["name"].get<std::string>().size());
    shape_width = std::max(shape_width, text.size());
    shapes.push_back(std::move(text));
  }
  if (!kernels.empty())
    fmt::print("  {:<{}} {:<{}} {:<5} {:<8} {:>9}  {:<13} {}\n", "kernel", name_width, "shape",
               shape_width, "prec", "unit", "FLOP/B", "bound", "predicted time");
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    const std::string bound = k.contains("bound") ? k["bound"].get<std::string>() : "unknown";
    std::string predicted =
        k.contains("predicted_time_s") ? si(k["predicted_time_s"].get<double>()) + "s" : "-";
    if (k.contains("note")) predicted += " (" + k["note"].get<std::string>() + ")";
    fmt::print("  {:<{}} {:<{}} {:<5} {:<8} {:>9.3g}  {:<13} {}\n", k["name"].get<std::string>(),
               name_width, shapes[i], shape_width, k["precision"].get<std::string>(),
               k["unit"].get<std::string>(), k["intensity"].get<double>(), bound, predicted);
  }
  return 0;
}

}  // namespace rl::roofline::cli_detail
