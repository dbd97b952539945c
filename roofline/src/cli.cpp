#include "rl/roofline/cli.hpp"

#include "cli_commands.hpp"
#include "counter_cli.hpp"

#include "rl/roofline/compare.hpp"
#include "rl/roofline/fleet.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"
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

using cli_detail::run_model;
using cli_detail::run_skus;
using cli_detail::UsageError;

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

  auto* counters = app.add_subcommand(
      "counters",
      "the hardware counters --counters would collect on a chip, and their replay passes "
      "(CUPTI's host API; no GPU needed)");
  std::string counters_chip, counters_sku;
  bool counters_json = false;
  auto* counters_chip_opt =
      counters->add_option("--chip", counters_chip,
                           "chip as CUPTI names it (gh100, GB202; any case), or all: every "
                           "chip the SKU table names");
  counters->add_option("--sku", counters_sku, "SKU key: plan for its chip (see `roofline skus`)")
      ->excludes(counters_chip_opt);
  counters->add_flag("--json", counters_json, "print JSON instead of tables");

  auto* plot = app.add_subcommand("plot", "render the roofline chart of a results.json as SVG");
  std::string plot_in, plot_out;
  plot->add_option("results", plot_in, "results.json")->required();
  plot->add_option("-o,--output", plot_out, "chart.svg to write")->required();
  std::string plot_view = "overview";
  plot->add_option("--view", plot_view,
                   "overview (default: every kernel), memory, simt, tensor, hierarchy (each "
                   "kernel with counters at its L1, L2 and DRAM intensities; hollow: the cost "
                   "model's bytes) or family:NAME (family:gemm: one ladder with arrows up its "
                   "rungs)")
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
    if (app.got_subcommand(counters))
      return cli_detail::run_counters(counters_chip, counters_sku, counters_json);
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