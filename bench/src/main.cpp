// bench_roofline / bench_roofline_emu: parse our flags, hand Google
// Benchmark's to it, check the device, run the harness.  Every failure ends as
// one line "<program>: ..." and an exit code (2: bad input or no device;
// 1: the run failed, or a kernel failed validation or errored, with the
// results still written), never an abort or a stack trace.
#include "harness.hpp"

#include "rl/bench/assembly.hpp"
#include "rl/bench/backend.hpp"
#include "rl/bench/counters.hpp"
#include "rl/bench/interrupt.hpp"
#include "rl/bench/options.hpp"
#include "rl/bench/run_info.hpp"
#include "rl/host_parallel.hpp"
#include "rl/roofline/results_io.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <exception>
#include <string>
#include <vector>

namespace rl::bench {
namespace {

SizePreset preset_from_name(const std::string& name) {
  for (const SizePreset preset : {SizePreset::small, SizePreset::medium, SizePreset::large})
    if (size_preset_name(preset) == name) return preset;
  throw UsageError("--size expects small, medium or large, got '" + name + "'");
}

// --list: what a run with the same --size, --family, --shape and ceilings
// flags would measure (before --benchmark_filter), and the file each record
// comes from.
void print_list(const Selection& selection) {
  std::printf("%-36s %-10s %-6s %-8s %-10s %-26s %12s %12s  %s\n", "kernel", "family", "prec",
              "unit", "ceiling", "shape", "flops", "bytes_model", "source");
  for (const Instance& instance : selected_instances(selection)) {
    const KernelRecord& record = *instance.record;
    const roofline::Cost cost = record.cost(instance.shape);
    std::printf("%-36s %-10s %-6s %-8s %-10s %-26s %12.4g %12.4g  %s\n", record.name.c_str(),
                record.family.c_str(), std::string(roofline::to_string(record.precision)).c_str(),
                std::string(roofline::compute_unit_name(record.unit)).c_str(),
                record.ceiling.empty() ? "-" : record.ceiling.c_str(),
                instance.shape.to_string().c_str(), cost.flops, cost.bytes_model,
                record.source_file.c_str());
  }
}

// Google Benchmark parses its flags into globals and keeps argv[0] (it names
// the executable in benchmarks.json), so the strings handed to it live as long
// as the process: a local vector would leave it a dangling pointer.
void initialize_benchmark(std::vector<std::string> args) {
  static std::deque<std::vector<std::string>> kept_args;
  static std::deque<std::vector<char*>> kept_argv;
  std::vector<std::string>& stored = kept_args.emplace_back(std::move(args));
  std::vector<char*>& argv = kept_argv.emplace_back();
  for (auto& arg : stored) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(stored.size());
  benchmark::Initialize(&argc, argv.data());
  if (argc > 1) throw UsageError("unknown flag '" + std::string(argv[1]) + "' (see --help)");
}

int run_main(int argc, char** argv) {
  const std::string program(backend::program_name());
  std::vector<std::string> args(argv + 1, argv + argc);
  const Options options = parse_options(args);
  // Read now (bad input before anything is created); it sizes each
  // repetition's share of --timeout.
  const int repetition_count = repetitions(options);
  if (options.version) {
    std::fputs(version_text(program).c_str(), stdout);
    return 0;
  }
  if (options.help) {
    std::fputs(our_flags_help(program).c_str(), stdout);
    std::fflush(stdout);
    benchmark::PrintDefaultHelp();
    return 0;
  }
  const SizePreset preset =
      preset_from_name(options.size.value_or(std::string(backend::default_size())));
  Selection selection;
  selection.preset = preset;
  selection.ceilings_only = options.ceilings_only;
  selection.no_ceilings = options.no_ceilings;
  std::vector<ShapeOverride> overrides;
  for (const std::string& spec : options.shape_specs)
    overrides.push_back(parse_shape_override(spec));
  resolve_selection(selection, options.families, overrides);
  if (options.list) {
    print_list(selection);
    return 0;
  }
  // Bad input is reported as such on any machine, so the user's Google
  // Benchmark flags and an explicit --out are checked before the device.
  std::vector<std::string> user_gb_args{program};
  user_gb_args.insert(user_gb_args.end(), options.benchmark_args.begin(),
                      options.benchmark_args.end());
  initialize_benchmark(std::move(user_gb_args));
  // A filter that selects nothing is a typo, not a passing run: refused
  // before anything is created or written.
  selection.filter = benchmark::GetBenchmarkFilter();
  if (selected_instances(selection).empty())
    throw UsageError("--benchmark_filter='" + selection.filter + "' selects no kernel of the " +
                     std::string(size_preset_name(preset)) + " preset" +
                     (options.families.empty() ? "" : " in the families asked for") +
                     " (see --list)");
  std::optional<roofline::Results> earlier;  // --ceilings-from, read before the device is asked
  if (options.ceilings_from) {
    try {
      earlier = roofline::load_results(*options.ceilings_from);
    } catch (const std::exception& error) {
      throw UsageError(std::string("--ceilings-from: ") + error.what());
    }
  }
  // RL_HOST_THREADS (the host-side validation's threads) is input too: a bad
  // value is one line here, not an error inside every workload.
  try {
    (void)host_threads();
  } catch (const std::invalid_argument& error) {
    throw UsageError(error.what());
  }
  if (options.dump_tensors) prepare_output_dir(*options.dump_tensors);
  if (options.out_dir) prepare_output_dir(*options.out_dir);
  if (const auto why = backend::device_unavailable()) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), why->c_str());
    return 2;
  }

  const auto now = std::chrono::system_clock::now();
  std::unique_ptr<Nvml> nvml;
  roofline::Context context = backend::collect_context(&nvml);
  context.timestamp_utc = utc_iso_timestamp(now);
  const std::filesystem::path out_dir =
      options.out_dir ? *options.out_dir
                      : backend::default_out_dir(context, utc_compact_timestamp(now));
  prepare_output_dir(out_dir);

  initialize_benchmark(benchmark_argv(program, options, out_dir));

  HarnessConfig config;
  if (options.ceilings_from) {
    config.given_ceilings = reusable_ceilings(*earlier, context, options.ceilings_from->string());
    selection.no_ceilings = true;  // the roofs come from the file
  }
  roofline::RunSettings& settings = config.settings;
  settings.seed = options.seed;
  settings.repetitions = repetition_count;
  settings.max_noise = options.sampling.max_noise;
  settings.timeout_s = options.sampling.timeout_s;
  settings.min_samples = options.sampling.min_samples;
  settings.l2_policy = options.warm_l2 ? "warm" : "cold";
  settings.batch_target_s = kBatchTargetSeconds;
  settings.max_launches_per_sample = kMaxLaunchesPerSample;
  settings.filter = selection.filter;
  settings.families = options.families;
  settings.shapes = options.shape_specs;
  settings.ceilings_only = options.ceilings_only;
  settings.no_ceilings = options.no_ceilings;
  settings.counters = options.counters;
  if (options.ceilings_from) settings.ceilings_from = options.ceilings_from->string();
  settings.budget_s = options.budget_s;
  config.selection = std::move(selection);
  config.seed = options.seed;
  config.judged_by = options.warm_l2 ? SampleKind::batch : SampleKind::cold;
  config.sampling = options.sampling;
  config.repetitions = settings.repetitions;
  config.dump_tensors = options.dump_tensors;
  config.summary_to_stderr = stdout_is_machine_readable(options);
  config.display_aggregates_only = options.display_aggregates_only;
  config.out_dir = out_dir;
  config.command_line.assign(argv, argv + argc);
  config.benchmarks_json = our_benchmarks_json(options, out_dir);
  config.budget_s = options.budget_s;
  // One session a run, and only when asked: without --counters nothing of it
  // is created and no result carries counters.
  if (options.counters) config.open_counters = open_counter_session;
  install_interrupt_handlers(program);
  Harness harness(config, std::move(context), std::move(nvml));
  harness.register_benchmarks();
  harness.run();
  const std::size_t failed = harness.finish();
  benchmark::Shutdown();
  if (const int signal = harness.interrupted_signal(); signal != 0) {
    std::fprintf(stderr,
                 "%s: interrupted by %s: kept the %zu finished benchmark(s), marked the "
                 "run incomplete\n",
                 program.c_str(), std::string(signal_name(signal)).c_str(),
                 harness.finished_count());
    return 128 + signal;
  }
  if (const std::size_t left_out = harness.left_out().size(); left_out > 0)
    std::fprintf(stderr,
                 "%s: the %g s --budget was spent: %zu benchmark(s) not reached, listed in "
                 "results.json (run.left_out); the run is marked incomplete\n",
                 program.c_str(), options.budget_s.value_or(0), left_out);
  if (failed > 0) {
    std::fprintf(stderr, "%s: %zu kernel(s) failed validation or errored (see results.json)\n",
                 program.c_str(), failed);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace rl::bench

int main(int argc, char** argv) {
  const std::string program(rl::bench::backend::program_name());
  // Rows already printed survive an interrupt or a crash when stdout is a file.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return rl::bench::run_main(argc, argv);
  } catch (const rl::bench::UsageError& error) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), error.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "%s: unknown error\n", program.c_str());
    return 1;
  }
}
