#include "rl/bench/options.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <system_error>

namespace rl::bench {

namespace {

bool is_benchmark_flag(std::string_view arg) {
  return arg.starts_with("--benchmark_") || arg == "--v" || arg.starts_with("--v=");
}

bool user_set_benchmark_flag(const Options& options, std::string_view name) {
  for (const auto& arg : options.benchmark_args) {
    const std::string_view a = arg;
    if (a.starts_with(name) && (a.size() == name.size() || a[name.size()] == '=')) return true;
  }
  return false;
}

// "--flag", "--flag=true|false|1|0|yes|no" as Google Benchmark spells booleans.
std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

bool parse_bool(std::string_view flag, std::string_view rest) {
  if (rest.empty() || rest == "=true" || rest == "=1" || rest == "=yes") return true;
  if (rest == "=false" || rest == "=0" || rest == "=no") return false;
  throw UsageError(std::string(flag) + " expects true or false, got '" +
                   std::string(rest.substr(rest.starts_with("=") ? 1 : 0)) + "'");
}

std::uint64_t parse_seed(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    throw UsageError("--seed expects a non-negative integer, got '" + std::string(text) + "'");
  return value;
}

// A finite number in [min, max] for `flag`.
double parse_number(std::string_view flag, std::string_view text, double min, double max) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() ||
      !std::isfinite(value) || value < min || value > max)
    throw UsageError(std::string(flag) + " expects a number from " + number_text(min) + " to " +
                     number_text(max) + ", got '" + std::string(text) + "'");
  return value;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

ShapeOverride parse_shape_override(std::string_view spec) {
  const std::string quoted = "--shape '" + std::string(spec) + "'";
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == spec.size())
    throw UsageError(quoted + ": expected FAMILY:dim=value[,dim=value...]");
  ShapeOverride out{std::string(spec.substr(0, colon)), {}};
  for (const std::string& item : split(spec.substr(colon + 1), ',')) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(quoted + ": '" + item + "' is not dim=value");
    const std::string dim = item.substr(0, eq), text = item.substr(eq + 1);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < 0)
      throw UsageError(quoted + ": " + dim + " expects a non-negative integer, got '" + text + "'");
    for (const auto& [seen, unused] : out.dims)
      if (seen == dim) throw UsageError(quoted + ": " + dim + " is given twice");
    out.dims.emplace_back(dim, value);
  }
  return out;
}

Options parse_options(const std::vector<std::string>& args) {
  Options options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.starts_with("--benchmark_report_aggregates_only"))
      throw UsageError(
          "--benchmark_report_aggregates_only is not supported: results.json needs every "
          "repetition (--benchmark_display_aggregates_only shortens the console instead)");
    if (const std::string_view flag = "--benchmark_display_aggregates_only";
        arg.starts_with(flag)) {
      // Ours to apply (CollectingReporter): Google Benchmark would hide the
      // repetitions from the reporter that collects them.
      options.display_aggregates_only = parse_bool(flag, std::string_view(arg).substr(flag.size()));
      continue;
    }
    // Sampling is the harness's (--max-noise, --timeout, --min-samples): a
    // Google Benchmark time target would be silently ignored, so it is refused.
    for (const std::string_view flag : {"--benchmark_min_time", "--benchmark_min_warmup_time"})
      if (arg.starts_with(flag) && (arg.size() == flag.size() || arg[flag.size()] == '='))
        throw UsageError(std::string(flag) +
                         " does not apply here: each kernel samples until --max-noise or "
                         "--timeout (see --help)");
    if (is_benchmark_flag(arg)) {
      options.benchmark_args.push_back(arg);
      continue;
    }
    // Flags with a value accept "--flag value" and "--flag=value".
    std::string name = arg;
    std::optional<std::string> value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    const auto take_value = [&]() -> std::string {
      if (value) return *value;
      if (i + 1 >= args.size() || args[i + 1].starts_with("--"))
        throw UsageError(name + " expects a value");
      return args[++i];
    };
    const auto no_value = [&] {
      if (value) throw UsageError(name + " takes no value");
    };
    if (name == "--size") {
      options.size = take_value();
    } else if (name == "--out") {
      const std::string dir = take_value();
      if (dir.empty()) throw UsageError("--out expects a directory");
      options.out_dir = dir;
    } else if (name == "--seed") {
      options.seed = parse_seed(take_value());
    } else if (name == "--warm-l2") {
      no_value();
      options.warm_l2 = true;
    } else if (name == "--list") {
      no_value();
      options.list = true;
    } else if (name == "--ceilings-only") {
      no_value();
      options.ceilings_only = true;
    } else if (name == "--no-ceilings") {
      no_value();
      options.no_ceilings = true;
    } else if (name == "--counters") {
      no_value();
      options.counters = true;
    } else if (name == "--family") {
      for (std::string& family : split(take_value(), ',')) {
        if (family.empty()) throw UsageError("--family expects NAME[,NAME...]");
        options.families.push_back(std::move(family));
      }
    } else if (name == "--shape") {
      options.shape_specs.push_back(take_value());
    } else if (name == "--dump-tensors") {
      const std::string dir = take_value();
      if (dir.empty()) throw UsageError("--dump-tensors expects a directory");
      options.dump_tensors = dir;
    } else if (name == "--ceilings-from") {
      const std::string file = take_value();
      if (file.empty()) throw UsageError("--ceilings-from expects a results.json");
      options.ceilings_from = file;
    } else if (name == "--max-noise") {
      options.sampling.max_noise = parse_number("--max-noise", take_value(), 0.01, 100) / 100;
    } else if (name == "--timeout") {
      options.sampling.timeout_s = parse_number("--timeout", take_value(), 0.001, 86400);
    } else if (name == "--budget") {
      options.budget_s = parse_number("--budget", take_value(), 0.001, 864000);
    } else if (name == "--min-samples") {
      options.sampling.min_samples =
          static_cast<int>(parse_number("--min-samples", take_value(), 1, 10000));
    } else if (name == "--version") {
      no_value();
      options.version = true;
    } else if (name == "--help" || name == "-h") {
      no_value();
      options.help = true;
    } else if (arg.starts_with("-")) {
      throw UsageError("unknown flag '" + arg + "' (see --help)");
    } else {
      throw UsageError("unexpected argument '" + arg + "' (see --help)");
    }
  }
  if (options.ceilings_only && options.no_ceilings)
    throw UsageError("--ceilings-only and --no-ceilings exclude each other");
  if (options.ceilings_from && (options.ceilings_only || options.no_ceilings))
    throw UsageError(std::string("--ceilings-from excludes ") +
                     (options.ceilings_only ? "--ceilings-only" : "--no-ceilings"));
  for (const std::string& spec : options.shape_specs) parse_shape_override(spec);
  return options;
}

std::string our_flags_help(std::string_view program) {
  std::string p(program);
  return "usage: " + p +
         " [flags] [Google Benchmark flags]\n"
         "\n"
         "Validates every registered kernel against its float64 reference, then times it\n"
         "(measured ceilings first) and writes results.json, benchmarks.json (Google\n"
         "Benchmark's JSON, unchanged), roofline.svg and report.html.\n"
         "\n"
         "bench_roofline flags:\n"
         "  --size small|medium|large  problem-size preset (default: large on a GPU, small\n"
         "                             on the emulator); large uses working sets >= 256 MB\n"
         "  --out DIR                  output folder (default: results/<gpu>-<UTC time>/ on\n"
         "                             a GPU, out/emulator-<UTC time>/ on the emulator)\n"
         "  --warm-l2                  judge kernels by their batch samples (back-to-back\n"
         "                             launches, L2 warm) instead of cold ones (one launch,\n"
         "                             L2 flushed); both kinds are measured and recorded\n"
         "  --max-noise PCT            sample each repetition until its relative noise\n"
         "                             (1.4826 MAD / median) is at most PCT (default " +
         number_text(100 * SamplingPolicy{}.max_noise) +
         ")...\n"
         "  --timeout SECONDS          ...or until the kernel has sampled this long, all\n"
         "                             repetitions and both kinds together (default " +
         number_text(SamplingPolicy{}.timeout_s) +
         ")\n"
         "  --min-samples N            samples per repetition and kind before noise may\n"
         "                             stop it (default " +
         std::to_string(SamplingPolicy{}.min_samples) +
         "; the timeout comes first)\n"
         "  --budget SECONDS           start no kernel after this long (the ceilings always\n"
         "                             run): headline shapes come before the others, and\n"
         "                             results.json lists what was left out\n"
         "  --counters                 after each kernel is timed, count one more launch\n"
         "                             (CUPTI's profiler on a GPU, the emulator's exact\n"
         "                             counts) and compare the counts with its cost model\n"
         "  --ceilings-from FILE       reuse the roofs of an earlier results.json from this\n"
         "                             device instead of measuring them\n"
         "  --seed N                   seed of the input generator (default 1)\n"
         "  --list                     list registered kernels and shapes of the preset; exit\n"
         "  --ceilings-only            measure only the ceiling kernels (roofs)\n"
         "  --no-ceilings              kernels only: no roofs measured, % of roof left empty\n"
         "  --family NAME[,NAME...]    only these families (gemm, attention, layernorm, ...;\n"
         "                             --list shows them); ceilings still run unless\n"
         "                             --no-ceilings\n"
         "  --shape FAMILY:dim=v[,...] replace the preset's shapes of FAMILY with this one\n"
         "                             (repeatable), e.g. --shape gemm:M=4096,N=4096,K=4096\n"
         "                             with the dimension names --list shows\n"
         "  --dump-tensors DIR         write each validated instance's input and output\n"
         "                             tensors as float32 .npy files under\n"
         "                             DIR/<kernel>/<shape>/, with manifest.json\n"
         "  --version                  version, git commit, build type, CUDA, backends built\n"
         "  --help, -h                 this text, then Google Benchmark's flags\n"
         "  Select kernels with --benchmark_filter=REGEX (names are <kernel>/<shape>).\n"
         "  Default --benchmark_repetitions=" +
         std::to_string(kDefaultRepetitions) +
         "; results.json records median, min, max, stddev over them.\n"
         "\n"
         "Google Benchmark flags:\n";
}

std::vector<std::string> benchmark_argv(std::string_view program, const Options& options,
                                        const std::filesystem::path& out_dir) {
  std::vector<std::string> argv{std::string(program)};
  argv.insert(argv.end(), options.benchmark_args.begin(), options.benchmark_args.end());
  if (!user_set_benchmark_flag(options, "--benchmark_repetitions"))
    argv.push_back("--benchmark_repetitions=" + std::to_string(kDefaultRepetitions));
  if (!user_set_benchmark_flag(options, "--benchmark_out")) {
    argv.push_back("--benchmark_out=" + (out_dir / "benchmarks.json").string());
    if (!user_set_benchmark_flag(options, "--benchmark_out_format"))
      argv.push_back("--benchmark_out_format=json");
  }
  return argv;
}

int repetitions(const Options& options) {
  int count = kDefaultRepetitions;  // the last one given wins, as in Google Benchmark
  for (const std::string& arg : options.benchmark_args)
    if (const std::string_view flag = "--benchmark_repetitions="; arg.starts_with(flag))
      count = static_cast<int>(
          parse_number("--benchmark_repetitions", arg.substr(flag.size()), 1, 1e6));
  return count;
}

bool stdout_is_machine_readable(const Options& options) {
  bool machine = false;  // the last --benchmark_format given wins, as in Google Benchmark
  for (const std::string& arg : options.benchmark_args)
    if (std::string_view(arg).starts_with("--benchmark_format="))
      machine = arg != "--benchmark_format=console";
  return machine;
}

std::optional<std::filesystem::path> our_benchmarks_json(const Options& options,
                                                         const std::filesystem::path& out_dir) {
  if (user_set_benchmark_flag(options, "--benchmark_out")) return std::nullopt;
  return out_dir / "benchmarks.json";
}

void prepare_output_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw UsageError("cannot create output directory '" + dir.string() + "': " + ec.message());
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError("output path '" + dir.string() + "' is not a directory");
  const auto probe = dir / ".bench_roofline_write_probe";
  {
    std::ofstream out(probe);
    if (!out || !(out << "probe") || !out.flush())
      throw UsageError("output directory '" + dir.string() + "' is not writable");
  }
  std::filesystem::remove(probe, ec);
}

}  // namespace rl::bench
