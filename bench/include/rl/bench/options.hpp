// Command line of bench_roofline / bench_roofline_emu: our flags, parsed here,
// and Google Benchmark's (--benchmark_*, --v), passed through unchanged to
// benchmark::Initialize.  Plain C++: the same parser serves both backends.
#pragma once

#include "rl/bench/policy.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl::bench {

// Bad input on the command line: main prints "<program>: <what>" and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::optional<std::string> size;  // "small" | "medium" | "large"; unset: the backend's default
  std::optional<std::filesystem::path> out_dir;
  bool warm_l2 = false;
  std::uint64_t seed = 1;
  bool list = false;
  bool ceilings_only = false;
  bool no_ceilings = false;              // --no-ceilings: kernels only, % of roof left empty
  std::vector<std::string> families;     // --family A,B (repeatable); empty: every family
  std::vector<std::string> shape_specs;  // --shape FAMILY:dim=value,... (repeatable), unparsed
  std::optional<std::filesystem::path> dump_tensors;   // --dump-tensors DIR
  std::optional<std::filesystem::path> ceilings_from;  // --ceilings-from results.json
  SamplingPolicy sampling;  // --max-noise PCT (a fraction here), --timeout S, --min-samples N
  std::optional<double> budget_s;  // --budget S: no kernel starts after S seconds of the run
  // --counters: after each instance's timed samples, one more launch is
  // counted (CUPTI on a GPU, the emulator's exact counts) and compared with
  // its cost model (rl/bench/counters.hpp).
  bool counters = false;
  bool help = false;
  bool version = false;                  // --version: version, commit, build type, CUDA, backends
  bool display_aggregates_only = false;  // --benchmark_display_aggregates_only
  std::vector<std::string> benchmark_args;  // Google Benchmark's flags, in the order given
};

// `args` excludes the program name.  Throws UsageError for an unknown flag, a
// missing or malformed value.  The preset name is checked against the registry's
// names by the caller (rl::SizePreset lives with the kernels).
Options parse_options(const std::vector<std::string>& args);

// One --shape FAMILY:dim=value[,dim=value...], split but not yet checked
// against the registry (the harness knows which dimensions a family declares).
struct ShapeOverride {
  std::string family;
  std::vector<std::pair<std::string, std::int64_t>> dims;  // in the order given
};
// Throws UsageError for a malformed spec, a repeated dimension or a value that
// is not a non-negative integer.
ShapeOverride parse_shape_override(std::string_view spec);

// Our flags, for --help (Google Benchmark's own help is printed after it).
std::string our_flags_help(std::string_view program);

// The argument vector handed to benchmark::Initialize: program name, the
// user's Google Benchmark flags, plus our defaults for what the user did not
// set: 5 repetitions (median and spread need several) and the Google Benchmark
// JSON written unchanged to <out_dir>/benchmarks.json.
std::vector<std::string> benchmark_argv(std::string_view program, const Options& options,
                                        const std::filesystem::path& out_dir);

inline constexpr int kDefaultRepetitions = 5;
// The --benchmark_repetitions the run will use (the user's, else ours).
int repetitions(const Options& options);

// True when the user chose a --benchmark_format other than console: stdout
// then carries Google Benchmark's json or csv and nothing else.
bool stdout_is_machine_readable(const Options& options);

// <out_dir>/benchmarks.json when benchmark_argv sends Google Benchmark's JSON
// there (the user gave no --benchmark_out), else nullopt.
std::optional<std::filesystem::path> our_benchmarks_json(const Options& options,
                                                         const std::filesystem::path& out_dir);

// Creates `dir` (and parents) and proves it is writable by creating and
// removing a probe file.  Throws UsageError naming the directory otherwise.
void prepare_output_dir(const std::filesystem::path& dir);

}  // namespace rl::bench
