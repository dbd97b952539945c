// results.json, schema v1: the in-memory form.  The one JSON reader/writer for
// it lives in roofline/ (results_io.hpp); results/schema-v1.json describes the
// file.  Everything here is plain C++: results measured on a GPU box are read
// on any machine.
#pragma once

#include "rl/roofline/cost.hpp"
#include "rl/roofline/precision.hpp"
#include "rl/roofline/topology.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl::roofline {

inline constexpr int kResultsSchemaVersion = 1;

// The enumerated states of a results.json.  Each converts to and from its JSON
// spelling in one place (results I/O); to_string gives that spelling, which is
// also the word the reports print.
enum class Backend { cuda, emulator };
// none: never set ("" in the file): a kernel the run did not reach.
enum class Status { none, ok, failed_validation, error, skipped };
// none: no roof to judge the kernel by ("" in the file).  above_roof: more
// than 105% of its roof, flagged and not trusted.
enum class Bound { none, memory, compute, below_both, above_roof };
// Why a run left an instance it selected unmeasured.
enum class LeftOutReason { interrupted, budget };
std::string_view to_string(Backend backend);  // "cuda" | "emulator"
std::string_view to_string(Status status);  // "ok" | "failed_validation" | "error" | "skipped" | ""
std::string_view to_string(Bound bound);  // "memory" | "compute" | "below_both" | "above_roof" | ""
std::string_view to_string(LeftOutReason reason);  // "interrupted" | "not reached: budget"

// A kernel's shape: ordered named dimensions, {"M", 4096}, {"N", 4096}, ...
using ShapeDims = std::vector<std::pair<std::string, std::int64_t>>;
// "M=4096,N=4096,K=4096", as the harness names a benchmark.
std::string shape_text(const ShapeDims& shape);

struct DeviceInfo {
  std::string name;                // "NVIDIA H100 80GB HBM3" or "CPU emulator (...)"
  std::string uuid;                // "GPU-..." ("" when unknown)
  std::string compute_capability;  // "9.0"
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  int memory_bus_width_bits = 0;
};

struct Clocks {           // MHz; 0 = unknown
  double sm_mhz = 0;      // current SM clock when the context was taken
  double sm_max_mhz = 0;  // max (boost) SM clock
  double memory_mhz = 0;
  double memory_max_mhz = 0;
};

struct Context {
  Backend backend = Backend::cuda;
  DeviceInfo device;
  std::string driver_version;        // NVML driver string, e.g. "550.54.15" ("" when NVML missing)
  std::string cuda_driver_version;   // "12.4"
  std::string cuda_runtime_version;  // "13.0"
  std::map<std::string, std::string> library_versions;  // cublas, cudnn, benchmark, ...
  Clocks clocks;
  std::optional<bool> ecc_enabled;
  std::optional<bool> persistence_mode;
  std::optional<double> power_limit_w;
  bool nvml_available = false;
  std::string nvml_note;  // why NVML data is missing, if it is
  std::string host;
  std::string timestamp_utc;  // ISO 8601, "2026-11-21T23:59:00Z"
  std::string git_commit;
  std::string size_preset;  // "small" | "medium" | "large"
  bool l2_flushed = true;   // false with --warm-l2
  // The node's devices and how each pair is connected (topology.hpp); absent
  // in files written before it existed.
  std::optional<Topology> topology;
};

struct Ceiling {
  std::string name;  // "hbm.copy", "tc.bf16", ... (architecture notes)
  std::string kind;  // "memory" | "compute"
  // Median rate over repetitions, in `unit`: the same statistic as every
  // kernel's time (its median), so a kernel's % of roof compares like with
  // like.  `best` is the fastest repetition's rate, for the record.
  double value = 0;
  std::optional<double> best;
  std::string unit;    // "B/s" | "FLOP/s"
  std::string method;  // how it was measured ("kernel hbm_copy_vec16, 2 GiB", "cublasLt ...")
  std::optional<double> datasheet;     // same unit, from the matched SKU row
  std::optional<double> derived_peak;  // SMs x per-SM rate x observed clock
  std::optional<double> observed_sm_mhz;
  std::vector<std::string> throttle_reasons;  // seen during the measurement
  std::optional<double> throttled_fraction;   // fraction of samples throttled
};

struct TimeStats {                                  // seconds per launch
  double median = 0, min = 0, max = 0, stddev = 0;  // over the repetitions' medians
  int repetitions = 0;
  std::vector<double> samples;  // one per repetition, its median (compare's U test reads these)
  // How the samples were taken (absent from files written before sample kinds):
  std::string kind;             // "cold" (one launch, L2 flushed) | "batch" (L2 warm)
  int launches_per_sample = 1;  // launches between one pair of events
  int samples_taken = 0;        // individual samples over all repetitions
  std::optional<double> noise;  // 1.4826 x MAD / median of all samples (relative)
  // "noise" when every repetition reached the noise target, else why one
  // stopped first ("timeout" | "max_samples").
  std::string stopped_by;
};

// Where a kernel's counts came from: CUPTI's range profiler on a GPU, or the
// emulator's exact counts of the instructions it executed.
enum class CounterSource { cupti, emulator };
std::string_view to_string(CounterSource source);  // "cupti" | "emulator"

// A quantity the counts check against the cost model (counter_agreement.hpp
// says what each compares).
enum class CounterQuantity {
  dram_bytes,
  l2_bytes,
  l2_load_bytes,
  l2_store_bytes,
  tensor_ops,
  flops
};
// "dram_bytes" | "l2_bytes" | "l2_load_bytes" | "l2_store_bytes" | "tensor_ops" | "flops"
std::string_view to_string(CounterQuantity quantity);

// A stored comparison's quantity: one this build knows or, read from a
// results.json whose writer compared a quantity this build does not (the
// schema allows any string there: fleet and compare read files of several
// versions), that file's spelling, kept so that the reports show it as
// written and the writer writes it back.  The current policy never judges an
// unknown one: its agrees and sentence are the writer's.  Two are the same
// quantity when they spell it the same.  (ResultPrecision does the same for
// a precision.)
class ResultCounterQuantity {
 public:
  // Implicit: every comparison this build makes is of a known quantity.
  ResultCounterQuantity(CounterQuantity known = CounterQuantity::dram_bytes)  // NOLINT
      : known_(known) {}
  // Any spelling: a known one gives that CounterQuantity, any other is kept as
  // written (results_json_names.cpp, beside the spelling table).
  static ResultCounterQuantity from_json(std::string_view spelling);

  std::optional<CounterQuantity> known() const {
    return unknown_ ? std::nullopt : std::optional<CounterQuantity>(known_);
  }
  std::string_view spelling() const {
    return unknown_ ? std::string_view(*unknown_) : to_string(known_);
  }

  friend bool operator==(const ResultCounterQuantity& a, const ResultCounterQuantity& b) {
    return a.spelling() == b.spelling();
  }

 private:
  CounterQuantity known_ = CounterQuantity::dram_bytes;
  std::optional<std::string> unknown_;  // set: the file's spelling, not a CounterQuantity's
};

inline std::string_view to_string(const ResultCounterQuantity& quantity) {
  return quantity.spelling();
}

struct CounterComparison {
  ResultCounterQuantity quantity;
  double counted = 0;
  double modelled = 0;
  double tolerance = 0;  // relative; 0: must be equal (the emulator's exact counts)
  bool agrees = true;    // |counted - modelled| <= tolerance * modelled
  std::string sentence;  // which way they differ and what it means
};

// The counts of one replayed launch of a kernel (--counters), taken after its
// timed samples, never inside them.
struct KernelCounters {
  CounterSource source = CounterSource::cupti;
  std::string chip;  // "GH100" (CUPTI's name); "" for the emulator
  int passes = 0;    // replays the collection took
  // Role key (counter_metrics.hpp, e.g. "dram_bytes_read", "l2_bytes",
  // "tensor_bf16") -> value in the role's unit.  The emulator adds
  // "l2_load_bytes" and "l2_store_bytes", which it counts separately.
  std::map<std::string, double> values;
  std::vector<CounterComparison> comparisons;
  // Why there are no counts (no profiling permission, ...): values empty.
  std::string unavailable;
};

struct KernelResult {
  std::string name;           // unique registry name, e.g. "gelu_tanh_f32_vec4"
  std::string family;         // "gelu", "layernorm", "attention", "gemm", "ceilings", ...
  std::string variant;        // label within the family, e.g. "vec4"
  ResultPrecision precision;  // "fp32", "bf16", ... (or a newer writer's spelling)
  ComputeUnit unit = ComputeUnit::fp32;  // written as compute_unit_name: "fp32", "tc_bf16"
  std::string baseline;                  // name of the naive sibling this improves on ("" if none)
  ShapeDims shape;                       // ordered; element-wise ops use "n"
  double flops = 0, bytes_min = 0, bytes_model = 0;
  // The cost model's optional declarations (cost.hpp), for the counters.
  std::optional<double> bytes_l2_load, bytes_l2_store, tensor_ops;
  double intensity = 0;  // flops / bytes_model
  bool validated = false;
  Status status = Status::none;
  std::string error;  // why, when status != ok
  double max_rel_err = 0;
  std::optional<TimeStats> time_s;  // absent when not timed
  double achieved_flops_per_s = 0;
  double achieved_bytes_per_s = 0;
  std::optional<double> roof;         // attainable FLOP/s at this intensity (measured ceilings)
  std::optional<double> pct_of_roof;  // 0..100
  Bound bound = Bound::none;
  bool throttled = false;
  std::optional<double> sm_clock_mhz;  // mean SM clock sampled during the benchmark
  std::string idea;                    // what this variant changes from its baseline ("" unsaid)
  std::string library;  // "cuBLAS", "cuBLASLt", "cuDNN" for library baselines, else ""
  std::string method;   // how it ran when only known at run time (library algorithm)
  std::optional<double> device_bytes;  // device memory the instance allocates, as declared
  // The other kind of sample (batch when time_s is cold, cold with --warm-l2):
  // shown beside it, never used for the roof.
  std::optional<TimeStats> other_time_s;
  std::optional<bool> l2_flushed;  // time_s's samples began with a flushed L2 (cold)
  int discarded_throttled = 0;     // samples discarded for a clock-lowering throttle reason
  // Means over the NVML readings taken while this kernel's samples were timed.
  std::optional<double> memory_clock_mhz, power_w, temperature_c;
  std::string memory_roof;  // the memory ceiling its roof used ("hbm.copy", "l2.read", "")
  std::string ceiling;      // the ceiling this kernel measures ("l2.read"), "" for the others
  // The unfused kernel this one fuses (a declared fusion pair: bias+GELU fused
  // -> unfused), distinct from `baseline` (the ladder's rung below); "" none.
  std::string fuses;
  // --counters: the counts of one replayed launch and their comparison with
  // the cost model; absent without --counters.
  std::optional<KernelCounters> counters;
};

// How the run was asked to measure: written as "run.settings".
struct RunSettings {
  std::uint64_t seed = 1;
  int repetitions = 0;
  double max_noise = 0;       // relative noise target per repetition
  double timeout_s = 0;       // sampling time cap per kernel
  int min_samples = 0;        // per repetition, unless the time cap comes first
  std::string l2_policy;      // "cold" (flushed; the roofline uses cold samples) | "warm"
  double batch_target_s = 0;  // a batch sample's length the launch count aims for
  int max_launches_per_sample = 0;
  std::string filter;                 // --benchmark_filter ("" = all)
  std::vector<std::string> families;  // --family (empty = all)
  std::vector<std::string> shapes;    // --shape overrides, as given
  bool ceilings_only = false, no_ceilings = false;
  bool counters = false;           // --counters: one more launch of each kernel was counted
  std::string ceilings_from;       // results.json the ceilings were read from ("" = measured)
  std::optional<double> budget_s;  // --budget (written only when given)
};

// An instance the run selected but did not measure: "run.left_out[]", in the
// order the run would have measured it.
struct LeftOut {
  std::string name;
  ShapeDims shape;
  LeftOutReason reason = LeftOutReason::interrupted;
};

// How the run went: written as "run" in results.json.
struct RunState {
  // false from the first flush until the run ends; stays false when the run
  // was interrupted (or crashed).  Absent in files written before it existed.
  std::optional<bool> complete;
  std::string interrupted_by;             // "SIGINT" | "SIGTERM" when interrupted, else ""
  std::vector<std::string> command_line;  // argv as given, program first
  std::optional<RunSettings> settings;    // absent in files written before it existed
  std::vector<LeftOut> left_out;          // written only when not empty
};

struct Results {
  int schema_version = kResultsSchemaVersion;
  Context context;
  RunState run;
  std::vector<Ceiling> ceilings;
  std::vector<KernelResult> kernels;
};

}  // namespace rl::roofline
