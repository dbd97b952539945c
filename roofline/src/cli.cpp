#include "rl/roofline/cli.hpp"

#include "rl/roofline/compare.hpp"
#include "rl/roofline/fleet.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/sku.hpp"
#include "rl/roofline/svg.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace rl::roofline {

namespace {

// Any bad input ends as one line on stderr and exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const Sku& require_sku(const std::string& key) {
  const Sku* sku = find_sku(key);
  if (!sku) throw UsageError(fmt::format("unknown SKU '{}' (roofline skus lists them)", key));
  return *sku;
}

std::string tflops_cell(std::optional<double> v) {
  return v ? fmt::format("{:.4g}", *v / 1e12) : std::string("-");
}

int run_skus() {
  fmt::print(
      "Datasheet table: dense peaks (TFLOP/s; INT8 in TOP/s), never the 2:4-sparse figure.\n");
  fmt::print(
      "{:<15} {:>4} {:>4} {:>6} {:>5} {:>8} {:>5}  {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} "
      "{:>7} {:>7} {:>7}\n",
      "key", "cc", "SMs", "boost", "GiB", "GB/s", "L2MiB", "fp64", "fp32", "fp16", "bf16",
      "tc.tf32", "tc.fp16", "tc.bf16", "tc.fp8", "tc.int8");
  for (const auto& s : sku_table()) {
    auto p = [&](ComputeUnit u) { return tflops_cell(s.datasheet[u]); };
    fmt::print(
        "{:<15} {:>4} {:>4} {:>6} {:>5} {:>8} {:>5}  {:>6} {:>6} {:>6} {:>6} {:>7} {:>7} "
        "{:>7} {:>7} {:>7}\n",
        s.key, s.compute_capability, s.sm_count, s.boost_clock_mhz, s.memory_gib,
        s.memory_bytes_per_s > 0 ? fmt::format("{:g}", s.memory_bytes_per_s / 1e9) : "-",
        s.l2_bytes ? fmt::format("{:g}", *s.l2_bytes / (1 << 20)) : "-", p(ComputeUnit::fp64),
        p(ComputeUnit::fp32), p(ComputeUnit::fp16), p(ComputeUnit::bf16), p(ComputeUnit::tc_tf32),
        p(ComputeUnit::tc_fp16), p(ComputeUnit::tc_bf16), p(ComputeUnit::tc_fp8),
        p(ComputeUnit::tc_int8));
  }
  fmt::print("\nSources ('-' = not in the cited source; never filled in from elsewhere):\n");
  for (const auto& s : sku_table()) {
    fmt::print("  {}: {}. {}.", s.key, s.source, s.note);
    if (!s.tensor_clock_note.empty())
      fmt::print(" Tensor clock {} MHz: {}.", s.tensor_clock_mhz, s.tensor_clock_note);
    fmt::print("\n");
  }
  return 0;
}

// "FP8 tensor cores" for tc_fp8, "FP64" for fp64: what a SKU can lack.
std::string unit_label(ComputeUnit unit) {
  std::string name(compute_unit_name(unit));
  const bool tensor = name.starts_with("tc_");
  if (tensor) name = name.substr(3);
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return tensor ? name + " tensor cores" : name;
}

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
  fmt::print("{} ({}; cc {}, {} SMs, boost {} MHz) — predicted from the datasheet\n", sku.name,
             sku.key, sku.compute_capability, sku.sm_count, sku.boost_clock_mhz);
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

void write_output(const std::string& path, std::string_view content) {
  try {
    write_file_atomic(path, content);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

int run_plot(const std::string& input, const std::string& output, const std::string& view) {
  Results results = load_results(input);
  ChartOptions options;
  options.view = view;
  write_output(output, render_roofline_svg(results, options));
  fmt::print("wrote {}\n", output);
  return 0;
}

int run_report(const std::string& input, const std::string& output, const std::string& sku_key) {
  Results results = load_results(input);
  write_output(output, render_report_html(results, report_options_for(results, sku_key)));
  fmt::print("wrote {}\n", output);
  return 0;
}

int run_compare(const std::string& base_path, const std::string& new_path,
                const CompareOptions& options, const std::string& format) {
  Results base = load_results(base_path);
  Results next = load_results(new_path);
  Comparison c = compare_results(base, next, options, base_path, new_path);
  if (format == "json")
    std::cout << comparison_json(c).dump(2) << "\n";
  else if (format == "html")
    std::cout << render_comparison_html(c);
  else
    std::cout << comparison_markdown(c);
  return static_cast<int>(c.exit_status());
}

// `roofline fleet`: acceptance of one fleet, or with --baseline the gate per GPU.
int run_fleet(const std::vector<std::string>& dirs, const std::string& baseline,
              const std::string& output, const std::string& format, const FleetOptions& options,
              const CompareOptions& compare_options) {
  auto load = [](const std::vector<std::string>& folders) {
    std::vector<std::filesystem::path> roots(folders.begin(), folders.end());
    return load_fleet(roots);
  };
  auto write = [&](std::string_view name, std::string_view content) {
    std::error_code ec;
    std::filesystem::create_directories(output, ec);
    const auto path = std::filesystem::path(output) / name;
    write_output(path.string(), content);
    if (format != "json") std::cout << "wrote " << path.string() << "\n";
  };
  if (!baseline.empty()) {
    if (dirs.size() != 1) throw UsageError("fleet --baseline BEFORE_DIR takes one AFTER_DIR");
    FleetBaselineReport r =
        compare_fleets(load({baseline}), load(dirs), compare_options, baseline, dirs[0]);
    const std::string json = fleet_baseline_json(r).dump(2) + "\n";
    std::cout << (format == "json" ? json : fleet_baseline_text(r));
    if (!output.empty()) write("fleet-baseline.json", json);
    return static_cast<int>(r.exit_status());
  }
  FleetReport r = analyse_fleet(load(dirs), options);
  const std::string json = fleet_json(r).dump(2) + "\n";
  std::cout << (format == "json" ? json : fleet_text(r));
  if (!output.empty()) {
    write("fleet.json", json);
    write("fleet.html", fleet_html(r));
  }
  return r.exit_status();
}

std::string one_line(std::string s) {
  for (auto& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

int cli_main(int argc, char** argv, std::span<const RegisteredKernel> registered,
             int sm_count_listed, const std::string& version) {
  CLI::App app{
      "roofline: datasheet table, roofline model, chart, report and compare for "
      "bench_roofline results"};
  app.require_subcommand(1);
  if (!version.empty()) app.set_version_flag("--version", version);

  app.add_subcommand("skus", "print the SKU datasheet table with the source of every row");

  auto* model = app.add_subcommand(
      "model", "datasheet ceilings, ridge points and where each registered kernel lands");
  std::string model_sku;
  bool model_json = false;
  model->add_option("--sku", model_sku, "SKU key or name (see `roofline skus`)")->required();
  model->add_flag("--json", model_json, "print JSON instead of text");

  auto* plot = app.add_subcommand("plot", "render the roofline chart of a results.json as SVG");
  std::string plot_in, plot_out;
  plot->add_option("results", plot_in, "results.json")->required();
  plot->add_option("-o,--output", plot_out, "chart.svg to write")->required();
  std::string plot_view = "overview";
  plot->add_option("--view", plot_view,
                   "overview (default: every kernel), memory, simt, tensor or family:NAME "
                   "(family:gemm: one ladder with arrows up its rungs)")
      ->check([](const std::string& v) {
        return valid_view_name(v) ? std::string() : "unknown view '" + v + "'";
      });

  auto* report = app.add_subcommand("report", "render a self-contained HTML report");
  std::string report_in, report_out, report_sku;
  report->add_option("results", report_in, "results.json")->required();
  report->add_option("-o,--output", report_out, "report.html to write")->required();
  report->add_option("--sku", report_sku, "datasheet row to compare with (default: matched)");

  auto* compare = app.add_subcommand(
      "compare",
      "regression gate: compare NEW with BASE kernel by kernel (matched by name and shape) on "
      "the measured times");
  compare->footer(
      "Verdicts: SLOW/FAST (Mann-Whitney U p < alpha, exact for small samples, and the change "
      "beyond the threshold), SAME (the change and its (1 - 2 alpha) interval within the "
      "threshold), UNSURE (neither), INCONCLUSIVE (too few repetitions to ever reach p < "
      "alpha).\n"
      "Exit status: 0 every kernel SAME or FAST; 1 a kernel SLOW, failed validation or errored "
      "in NEW, or missing / not run in NEW (see --allow-missing); 2 bad input (unreadable file, "
      "duplicate name+shape, samples disagreeing with the stated median or repetitions, "
      "different device, backend or size preset without --cross-device); 3 cannot decide (a "
      "kernel UNSURE or INCONCLUSIVE, or no kernel timed in both runs).");
  std::string base_path, new_path, format = "md";
  CompareOptions options;
  compare->add_option("base", base_path, "BASE results.json")->required();
  compare->add_option("new", new_path, "NEW results.json")->required();
  compare
      ->add_option("--threshold", options.threshold_pct,
                   "percent change that counts as SLOW/FAST, and the margin SAME must prove (5)")
      ->check(CLI::Range(0.0, 1000.0));
  compare
      ->add_option("--alpha", options.alpha,
                   "significance level of the U test; SAME uses a (1 - 2 alpha) interval (0.05)")
      ->check(CLI::Range(1e-9, 0.25));
  compare
      ->add_option("--allow-missing", options.allow_missing,
                   "REGEX (repeatable): kernels whose name it matches may be missing from NEW "
                   "or not run there")
      ->allow_extra_args(false);
  compare->add_flag("--cross-device", options.cross_device,
                    "compare files from different devices, backends or size presets");
  compare->add_option("--format", format, "md, json or html (one self-contained page, worst first)")
      ->check(CLI::IsMember({"md", "json", "html"}));

  auto* fleet = app.add_subcommand(
      "fleet",
      "fleet acceptance: every GPU's results against its model's median (outliers, failed "
      "GPUs, configuration drift); with --baseline, the regression gate per GPU");
  fleet->footer(
      "Outlier: a ceiling or kernel below its model's median by more than max(--threshold %, "
      "--spread-k x spread), spread = 1.4826 x MAD / median over the model's GPUs.\n"
      "Exit status: 0 no outlier and no failed GPU; 1 an outlier, a failed GPU (task-failed "
      "marker, incomplete run, failed validation) or fewer runs than --expect; 2 bad input "
      "(a folder with no results, an unreadable or invalid file, another schema version, two "
      "runs of one GPU); 3 nothing judged (no model has --min-gpus GPUs).\n"
      "With --baseline BEFORE_DIR AFTER_DIR: GPUs matched by uuid, `roofline compare`'s gate per "
      "GPU; exit 1 a GPU failed the gate or is missing from AFTER, 3 a GPU undecided, else 0.");
  std::vector<std::string> fleet_dirs;
  std::string fleet_baseline, fleet_output, fleet_format = "md";
  FleetOptions fleet_options;
  CompareOptions fleet_compare;
  fleet->add_option("dirs", fleet_dirs, "fleet folders (results.json of one GPU each, any depth)")
      ->required();
  auto* fleet_baseline_opt = fleet->add_option(
      "--baseline", fleet_baseline,
      "BEFORE_DIR: gate the one DIR (after) against it per GPU, as `roofline compare` does");
  fleet->add_option("-o,--output", fleet_output,
                    "folder to write fleet.json and fleet.html (fleet-baseline.json) into");
  fleet
      ->add_option("--threshold", fleet_options.threshold_pct,
                   "percent below the median that always flags (5); with --baseline, "
                   "compare's threshold (5)")
      ->check(CLI::Range(0.0, 100.0));
  fleet
      ->add_option("--spread-k", fleet_options.spread_k,
                   "flag beyond this many robust spreads when that is wider (3)")
      ->check(CLI::Range(0.0, 100.0))
      ->excludes(fleet_baseline_opt);
  fleet->add_option("--min-gpus", fleet_options.min_gpus, "GPUs a model needs to be judged (3)")
      ->check(CLI::Range(2, 1000000))
      ->excludes(fleet_baseline_opt);
  fleet
      ->add_option("--expect", fleet_options.expect,
                   "GPUs expected: fewer runs (results or failure markers) fail")
      ->check(CLI::Range(1, 1000000))
      ->excludes(fleet_baseline_opt);
  fleet
      ->add_option("--alpha", fleet_compare.alpha,
                   "with --baseline: significance level of the U test (0.05)")
      ->check(CLI::Range(1e-9, 0.25))
      ->needs(fleet_baseline_opt);
  fleet
      ->add_option("--allow-missing", fleet_compare.allow_missing,
                   "with --baseline: REGEX (repeatable), as in compare")
      ->allow_extra_args(false)
      ->needs(fleet_baseline_opt);
  fleet->add_option("--format", fleet_format, "md or json")->check(CLI::IsMember({"md", "json"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << version;
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "roofline: %s\n", one_line(e.what()).c_str());
    return 2;
  }

  try {
    if (app.got_subcommand("skus")) return run_skus();
    if (app.got_subcommand(model))
      return run_model(model_sku, model_json, registered, sm_count_listed);
    if (app.got_subcommand(plot)) return run_plot(plot_in, plot_out, plot_view);
    if (app.got_subcommand(report)) return run_report(report_in, report_out, report_sku);
    if (app.got_subcommand(compare)) return run_compare(base_path, new_path, options, format);
    if (app.got_subcommand(fleet)) {
      fleet_compare.threshold_pct = fleet_options.threshold_pct;
      return run_fleet(fleet_dirs, fleet_baseline, fleet_output, fleet_format, fleet_options,
                       fleet_compare);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roofline: %s\n", one_line(e.what()).c_str());
    return 2;
  }
  return 2;
}

}  // namespace rl::roofline
