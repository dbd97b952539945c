#include "rl/roofline/results_io.hpp"

#include "rl/roofline/analysis.hpp"

#include "rl/roofline/cost.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

// ---------------------------------------------------------------- writing --

// Templated on the JSON type: the public to_json returns nlohmann::json, while
// the file is written from an ordered_json so keys appear in schema order and
// shape keys keep the kernel's dimension order.
template <class J>
J number_or_null(double value) {
  if (!std::isfinite(value)) return J(nullptr);
  return J(value);
}

template <class J>
J optional_number(const std::optional<double>& value) {
  if (!value) return J(nullptr);
  return number_or_null<J>(*value);
}

template <class J>
J optional_bool(const std::optional<bool>& value) {
  if (!value) return J(nullptr);
  return J(*value);
}

template <class J>
J context_json(const Context& c) {
  J device = J::object();
  device["name"] = c.device.name;
  device["uuid"] = c.device.uuid;
  device["compute_capability"] = c.device.compute_capability;
  device["sm_count"] = c.device.sm_count;
  device["l2_bytes"] = c.device.l2_bytes;
  device["memory_bytes"] = c.device.memory_bytes;
  device["memory_bus_width_bits"] = c.device.memory_bus_width_bits;

  J clocks = J::object();
  clocks["sm_mhz"] = number_or_null<J>(c.clocks.sm_mhz);
  clocks["sm_max_mhz"] = number_or_null<J>(c.clocks.sm_max_mhz);
  clocks["memory_mhz"] = number_or_null<J>(c.clocks.memory_mhz);
  clocks["memory_max_mhz"] = number_or_null<J>(c.clocks.memory_max_mhz);

  J libraries = J::object();
  for (const auto& [name, version] : c.library_versions) libraries[name] = version;

  J j = J::object();
  j["backend"] = c.backend;
  j["device"] = std::move(device);
  j["driver_version"] = c.driver_version;
  j["cuda_driver_version"] = c.cuda_driver_version;
  j["cuda_runtime_version"] = c.cuda_runtime_version;
  j["library_versions"] = std::move(libraries);
  j["clocks"] = std::move(clocks);
  j["ecc_enabled"] = optional_bool<J>(c.ecc_enabled);
  j["persistence_mode"] = optional_bool<J>(c.persistence_mode);
  j["power_limit_w"] = optional_number<J>(c.power_limit_w);
  j["nvml_available"] = c.nvml_available;
  j["nvml_note"] = c.nvml_note;
  j["host"] = c.host;
  j["timestamp_utc"] = c.timestamp_utc;
  j["git_commit"] = c.git_commit;
  j["size_preset"] = c.size_preset;
  j["l2_flushed"] = c.l2_flushed;
  return j;
}

template <class J>
J ceiling_json(const Ceiling& c) {
  J j = J::object();
  j["name"] = c.name;
  j["kind"] = c.kind;
  j["value"] = number_or_null<J>(c.value);
  j["best"] = optional_number<J>(c.best);
  j["unit"] = c.unit;
  j["method"] = c.method;
  j["datasheet"] = optional_number<J>(c.datasheet);
  j["derived_peak"] = optional_number<J>(c.derived_peak);
  j["observed_sm_mhz"] = optional_number<J>(c.observed_sm_mhz);
  j["throttle_reasons"] = c.throttle_reasons;
  j["throttled_fraction"] = optional_number<J>(c.throttled_fraction);
  return j;
}

template <class J>
J shape_json(const ShapeDims& shape) {
  J j = J::object();
  for (const auto& [dim, extent] : shape) j[dim] = extent;
  return j;
}

template <class J>
J time_json(const std::optional<TimeStats>& t) {
  if (!t) return J(nullptr);
  J time = J::object();
  time["median"] = number_or_null<J>(t->median);
  time["min"] = number_or_null<J>(t->min);
  time["max"] = number_or_null<J>(t->max);
  time["stddev"] = number_or_null<J>(t->stddev);
  time["repetitions"] = t->repetitions;
  J samples = J::array();
  for (double s : t->samples) samples.push_back(number_or_null<J>(s));
  time["samples"] = std::move(samples);
  time["kind"] = t->kind;
  time["launches_per_sample"] = t->launches_per_sample;
  time["samples_taken"] = t->samples_taken;
  time["noise"] = optional_number<J>(t->noise);
  time["stopped_by"] = t->stopped_by;
  return time;
}

template <class J>
J kernel_json(const KernelResult& k) {
  J j = J::object();
  j["name"] = k.name;
  j["family"] = k.family;
  j["variant"] = k.variant;
  j["precision"] = k.precision;
  j["unit"] = k.unit;
  j["baseline"] = k.baseline;
  j["fuses"] = k.fuses;
  j["shape"] = shape_json<J>(k.shape);
  j["flops"] = number_or_null<J>(k.flops);
  j["bytes_min"] = number_or_null<J>(k.bytes_min);
  j["bytes_model"] = number_or_null<J>(k.bytes_model);
  j["intensity"] = number_or_null<J>(k.intensity);
  j["validated"] = k.validated;
  j["status"] = k.status;
  j["error"] = k.error;
  j["max_rel_err"] = number_or_null<J>(k.max_rel_err);
  j["time_s"] = time_json<J>(k.time_s);
  j["achieved_flops_per_s"] = number_or_null<J>(k.achieved_flops_per_s);
  j["achieved_bytes_per_s"] = number_or_null<J>(k.achieved_bytes_per_s);
  j["roof"] = optional_number<J>(k.roof);
  j["pct_of_roof"] = optional_number<J>(k.pct_of_roof);
  j["bound"] = k.bound;
  j["throttled"] = k.throttled;
  j["sm_clock_mhz"] = optional_number<J>(k.sm_clock_mhz);
  j["idea"] = k.idea;
  j["library"] = k.library;
  j["method"] = k.method;
  j["device_bytes"] = optional_number<J>(k.device_bytes);
  j["other_time_s"] = time_json<J>(k.other_time_s);
  j["l2_flushed"] = optional_bool<J>(k.l2_flushed);
  j["discarded_throttled"] = k.discarded_throttled;
  j["memory_clock_mhz"] = optional_number<J>(k.memory_clock_mhz);
  j["power_w"] = optional_number<J>(k.power_w);
  j["temperature_c"] = optional_number<J>(k.temperature_c);
  j["memory_roof"] = k.memory_roof;
  j["ceiling"] = k.ceiling;
  return j;
}

// Derived from the kernels and ceilings (analysis.hpp); written for scripts,
// recomputed rather than read back.
template <class J>
J analysis_json(const Analysis& a) {
  J ladders = J::array();
  for (const GemmLadder& l : a.gemm_ladders) {
    J rungs = J::array();
    for (const LadderRung& r : l.rungs)
      rungs.push_back(J{{"name", r.name},
                        {"variant", r.variant},
                        {"precision", r.precision},
                        {"idea", r.idea},
                        {"library", r.library},
                        {"status", r.status},
                        {"error", r.error},
                        {"flops_per_s", optional_number<J>(r.flops_per_s)},
                        {"pct_of_library", optional_number<J>(r.pct_of_library)},
                        {"library_reference", r.library_reference},
                        {"pct_of_roof", optional_number<J>(r.pct_of_roof)}});
    ladders.push_back(J{{"shape", shape_json<J>(l.shape)}, {"rungs", std::move(rungs)}});
  }
  J precision = J(nullptr);
  if (a.precision_ladder) {
    J steps = J::array();
    for (const PrecisionStep& s : a.precision_ladder->steps)
      steps.push_back(J{{"precision", s.precision},
                        {"kernel", s.kernel},
                        {"flops_per_s", optional_number<J>(s.flops_per_s)},
                        {"library", s.library},
                        {"library_flops_per_s", optional_number<J>(s.library_flops_per_s)},
                        {"roof_name", s.roof_name},
                        {"roof", optional_number<J>(s.roof)}});
    precision = J{{"shape", shape_json<J>(a.precision_ladder->shape)}, {"steps", std::move(steps)}};
  }
  J fusion = J::array();
  for (const AttentionFusion& f : a.attention_fusion) {
    J variants = J::array();
    for (const AttentionVariant& v : f.variants)
      variants.push_back(J{{"name", v.name},
                           {"precision", v.precision},
                           {"status", v.status},
                           {"error", v.error},
                           {"naive", v.naive},
                           {"bytes_model", number_or_null<J>(v.bytes_model)},
                           {"intensity", number_or_null<J>(v.intensity)},
                           {"extra_traffic_share", number_or_null<J>(v.extra_traffic_share)},
                           {"time_s", optional_number<J>(v.time_s)},
                           {"flops_per_s", optional_number<J>(v.flops_per_s)},
                           {"pct_of_roof", optional_number<J>(v.pct_of_roof)},
                           {"device_bytes", optional_number<J>(v.device_bytes)},
                           {"bound", v.bound},
                           {"speedup", optional_number<J>(v.speedup)},
                           {"speedup_over", v.speedup_over}});
    fusion.push_back(J{{"shape", shape_json<J>(f.shape)},
                       {"variants", std::move(variants)},
                       {"findings", f.findings}});
  }
  return J{{"gemm_ladders", std::move(ladders)},
           {"precision_ladder", std::move(precision)},
           {"attention_fusion", std::move(fusion)}};
}

template <class J>
J results_json(const Results& r) {
  J j = J::object();
  j["schema_version"] = r.schema_version;
  j["context"] = context_json<J>(r.context);
  J run = J::object();
  run["complete"] = optional_bool<J>(r.run.complete);
  run["interrupted_by"] = r.run.interrupted_by;
  run["command_line"] = r.run.command_line;
  run["settings"] = J(nullptr);
  if (const auto& s = r.run.settings) {
    run["settings"] = J{{"seed", s->seed},
                        {"repetitions", s->repetitions},
                        {"max_noise", number_or_null<J>(s->max_noise)},
                        {"timeout_s", number_or_null<J>(s->timeout_s)},
                        {"min_samples", s->min_samples},
                        {"l2_policy", s->l2_policy},
                        {"batch_target_s", number_or_null<J>(s->batch_target_s)},
                        {"max_launches_per_sample", s->max_launches_per_sample},
                        {"filter", s->filter},
                        {"families", s->families},
                        {"shapes", s->shapes},
                        {"ceilings_only", s->ceilings_only},
                        {"no_ceilings", s->no_ceilings},
                        {"ceilings_from", s->ceilings_from}};
  }
  j["run"] = std::move(run);
  J ceilings = J::array();
  for (const auto& c : r.ceilings) ceilings.push_back(ceiling_json<J>(c));
  j["ceilings"] = std::move(ceilings);
  J kernels = J::array();
  for (const auto& k : r.kernels) kernels.push_back(kernel_json<J>(k));
  j["kernels"] = std::move(kernels);
  j["analysis"] = analysis_json<J>(analyse(r));
  return j;
}

// ---------------------------------------------------------------- reading --

// Thrown inside the reader with "/pointer: problem"; the public entry points
// prefix the source name.
[[noreturn]] void fail(const std::string& pointer, std::string_view problem) {
  throw ResultsError(fmt::format("{}: {}", pointer.empty() ? "/" : pointer, problem));
}

std::string child(const std::string& pointer, std::string_view key) {
  std::string escaped;  // RFC 6901: '~' -> "~0", '/' -> "~1"
  for (char ch : key) {
    if (ch == '~')
      escaped += "~0";
    else if (ch == '/')
      escaped += "~1";
    else
      escaped += ch;
  }
  return pointer + "/" + escaped;
}

std::string child(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

template <class J>
class Reader {
 public:
  Reader(const J& json, std::string pointer) : json_(json), pointer_(std::move(pointer)) {
    if (!json_.is_object())
      fail(pointer_, fmt::format("expected an object, got {}", type_of(json_)));
  }

  const std::string& pointer() const { return pointer_; }

  const J* find(std::string_view key) const {
    auto it = json_.find(std::string(key));
    return it == json_.end() ? nullptr : &*it;
  }

  const J& required(std::string_view key) const {
    const J* value = find(key);
    if (!value) fail(child(pointer_, key), "missing required key");
    return *value;
  }

  Reader object(std::string_view key) const { return Reader(required(key), child(pointer_, key)); }

  std::string string(std::string_view key) const { return as_string(required(key), key); }

  std::string optional_string(std::string_view key) const {
    const J* value = find(key);
    if (!value || value->is_null()) return {};
    return as_string(*value, key);
  }

  bool boolean(std::string_view key) const { return as_bool(required(key), key); }

  std::optional<bool> optional_boolean(std::string_view key) const {
    const J* value = find(key);
    if (!value || value->is_null()) return std::nullopt;
    return as_bool(*value, key);
  }

  double number(std::string_view key) const { return as_number(required(key), key); }

  double non_negative(std::string_view key) const {
    double value = number(key);
    if (value < 0) fail(child(pointer_, key), fmt::format("must be >= 0, got {}", value));
    return value;
  }

  // null reads as NaN: the writer's encoding of a non-finite value, where no
  // direction is implied (a rate or a byte count that could not be computed).
  double non_negative_or_nan(std::string_view key) const {
    if (required(key).is_null()) return std::numeric_limits<double>::quiet_NaN();
    return non_negative(key);
  }

  // null reads as +inf: the writer's encoding of a non-finite value.
  double number_null_is_infinite(std::string_view key) const {
    const J& value = required(key);
    if (value.is_null()) return std::numeric_limits<double>::infinity();
    return as_number(value, key);
  }

  std::optional<double> optional_number(std::string_view key) const {
    const J* value = find(key);
    if (!value || value->is_null()) return std::nullopt;
    return as_number(*value, key);
  }

  double number_or(std::string_view key, double fallback) const {
    return optional_number(key).value_or(fallback);
  }

  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const {
    return as_integer(required(key), child(pointer_, key), min, max);
  }

  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max) const {
    const J* value = find(key);
    if (!value || value->is_null()) return fallback;
    return as_integer(*value, child(pointer_, key), min, max);
  }

  static std::string type_of(const J& value) { return std::string(value.type_name()); }

  static std::int64_t as_integer(const J& value, const std::string& where, std::int64_t min,
                                 std::int64_t max) {
    std::int64_t result = 0;
    if (value.is_number_unsigned()) {
      auto u = value.template get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(max))
        fail(where, fmt::format("integer {} out of range [{}, {}]", u, min, max));
      result = static_cast<std::int64_t>(u);
    } else if (value.is_number_integer()) {
      result = value.template get<std::int64_t>();
    } else {
      fail(where, fmt::format("expected an integer, got {}", describe(value)));
    }
    if (result < min || result > max)
      fail(where, fmt::format("integer {} out of range [{}, {}]", result, min, max));
    return result;
  }

  static double as_number_at(const J& value, const std::string& where) {
    if (!value.is_number()) fail(where, fmt::format("expected a number, got {}", describe(value)));
    double result = value.template get<double>();
    if (!std::isfinite(result)) fail(where, "number is not finite");
    return result;
  }

 private:
  static std::string describe(const J& value) {
    // A float where an integer belongs: say which, since 1e30 prints as a number.
    if (value.is_number_float()) return fmt::format("non-integer number {}", value.dump());
    return type_of(value);
  }

  std::string as_string(const J& value, std::string_view key) const {
    if (!value.is_string())
      fail(child(pointer_, key), fmt::format("expected a string, got {}", type_of(value)));
    return value.template get<std::string>();
  }

  bool as_bool(const J& value, std::string_view key) const {
    if (!value.is_boolean())
      fail(child(pointer_, key), fmt::format("expected true or false, got {}", type_of(value)));
    return value.template get<bool>();
  }

  double as_number(const J& value, std::string_view key) const {
    return as_number_at(value, child(pointer_, key));
  }

  const J& json_;
  std::string pointer_;
};

template <class J>
const J& array_at(const Reader<J>& parent, std::string_view key) {
  const J& value = parent.required(key);
  if (!value.is_array())
    fail(child(parent.pointer(), key),
         fmt::format("expected an array, got {}", Reader<J>::type_of(value)));
  return value;
}

void require_one_of(const std::string& pointer, const std::string& value,
                    std::initializer_list<std::string_view> allowed) {
  for (auto a : allowed)
    if (value == a) return;
  std::string list;
  for (auto a : allowed) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
  fail(pointer, fmt::format("\"{}\" is not one of {}", value, list));
}

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

template <class J>
Context read_context(const Reader<J>& r) {
  Context c;
  c.backend = r.string("backend");
  require_one_of(child(r.pointer(), "backend"), c.backend, {"cuda", "emulator"});

  auto d = r.object("device");
  c.device.name = d.string("name");
  c.device.uuid = d.string("uuid");
  c.device.compute_capability = d.string("compute_capability");
  c.device.sm_count = static_cast<int>(d.integer("sm_count", 0, kMaxInt));
  c.device.l2_bytes = d.integer("l2_bytes", 0, kMaxInt64);
  c.device.memory_bytes = d.integer("memory_bytes", 0, kMaxInt64);
  c.device.memory_bus_width_bits =
      static_cast<int>(d.integer_or("memory_bus_width_bits", 0, 0, kMaxInt));

  c.driver_version = r.string("driver_version");
  c.cuda_driver_version = r.optional_string("cuda_driver_version");
  c.cuda_runtime_version = r.string("cuda_runtime_version");

  auto libraries = r.object("library_versions");
  const J& lib_json = r.required("library_versions");
  for (auto it = lib_json.begin(); it != lib_json.end(); ++it)
    c.library_versions[it.key()] = libraries.string(it.key());

  auto clocks = r.object("clocks");
  c.clocks.sm_mhz = clocks.number_or("sm_mhz", 0);
  c.clocks.sm_max_mhz = clocks.number_or("sm_max_mhz", 0);
  c.clocks.memory_mhz = clocks.number_or("memory_mhz", 0);
  c.clocks.memory_max_mhz = clocks.number_or("memory_max_mhz", 0);

  c.ecc_enabled = r.optional_boolean("ecc_enabled");
  c.persistence_mode = r.optional_boolean("persistence_mode");
  c.power_limit_w = r.optional_number("power_limit_w");
  c.nvml_available = r.optional_boolean("nvml_available").value_or(false);
  c.nvml_note = r.optional_string("nvml_note");
  c.host = r.string("host");
  c.timestamp_utc = r.string("timestamp_utc");
  c.git_commit = r.string("git_commit");
  c.size_preset = r.optional_string("size_preset");
  c.l2_flushed = r.optional_boolean("l2_flushed").value_or(true);
  return c;
}

template <class J>
Ceiling read_ceiling(const Reader<J>& r) {
  Ceiling c;
  c.name = r.string("name");
  c.kind = r.string("kind");
  require_one_of(child(r.pointer(), "kind"), c.kind, {"memory", "compute"});
  c.value = r.non_negative("value");
  c.best = r.optional_number("best");
  c.unit = r.string("unit");
  require_one_of(child(r.pointer(), "unit"), c.unit, {"B/s", "FLOP/s"});
  c.method = r.string("method");
  c.datasheet = r.optional_number("datasheet");
  c.derived_peak = r.optional_number("derived_peak");
  c.observed_sm_mhz = r.optional_number("observed_sm_mhz");
  if (const J* reasons = r.find("throttle_reasons"); reasons && !reasons->is_null()) {
    std::string where = child(r.pointer(), "throttle_reasons");
    if (!reasons->is_array()) fail(where, "expected an array of strings");
    for (std::size_t i = 0; i < reasons->size(); ++i) {
      if (!(*reasons)[i].is_string()) fail(child(where, i), "expected a string");
      c.throttle_reasons.push_back((*reasons)[i].template get<std::string>());
    }
  }
  c.throttled_fraction = r.optional_number("throttled_fraction");
  return c;
}

template <class J>
TimeStats read_time(const Reader<J>& r) {
  TimeStats t;
  t.median = r.non_negative("median");
  t.min = r.non_negative("min");
  t.max = r.non_negative("max");
  t.stddev = r.non_negative("stddev");
  t.repetitions = static_cast<int>(r.integer("repetitions", 0, kMaxInt));
  if (const J* samples = r.find("samples"); samples && !samples->is_null()) {
    std::string where = child(r.pointer(), "samples");
    if (!samples->is_array()) fail(where, "expected an array of numbers");
    t.samples.reserve(samples->size());
    for (std::size_t i = 0; i < samples->size(); ++i)
      t.samples.push_back(Reader<J>::as_number_at((*samples)[i], child(where, i)));
  }
  t.kind = r.optional_string("kind");
  if (!t.kind.empty()) require_one_of(child(r.pointer(), "kind"), t.kind, {"cold", "batch"});
  t.launches_per_sample = static_cast<int>(r.integer_or("launches_per_sample", 1, 1, kMaxInt));
  t.samples_taken = static_cast<int>(r.integer_or("samples_taken", 0, 0, kMaxInt));
  t.noise = r.optional_number("noise");
  if (t.noise && *t.noise < 0) fail(child(r.pointer(), "noise"), "negative");
  t.stopped_by = r.optional_string("stopped_by");
  return t;
}

template <class J>
KernelResult read_kernel(const Reader<J>& r) {
  KernelResult k;
  k.name = r.string("name");
  k.family = r.string("family");
  k.variant = r.string("variant");
  k.precision = r.string("precision");
  k.unit = r.string("unit");
  if (!parse_compute_unit(k.unit))
    fail(child(r.pointer(), "unit"), fmt::format("unknown compute unit \"{}\"", k.unit));
  k.baseline = r.optional_string("baseline");
  k.fuses = r.optional_string("fuses");  // absent in files written before it existed

  auto shape = r.object("shape");
  const J& shape_json = r.required("shape");
  for (auto it = shape_json.begin(); it != shape_json.end(); ++it)
    k.shape.emplace_back(it.key(), shape.integer(it.key(), 0, kMaxInt64));

  k.flops = r.non_negative_or_nan("flops");
  k.bytes_min = r.non_negative_or_nan("bytes_min");
  k.bytes_model = r.non_negative_or_nan("bytes_model");
  k.intensity = r.non_negative_or_nan("intensity");
  k.validated = r.boolean("validated");
  k.status = r.optional_string("status");
  if (!k.status.empty())
    require_one_of(child(r.pointer(), "status"), k.status,
                   {"ok", "failed_validation", "error", "skipped"});
  k.error = r.optional_string("error");
  k.max_rel_err = r.number_null_is_infinite("max_rel_err");
  if (const J& time = r.required("time_s"); !time.is_null())
    k.time_s = read_time(Reader<J>(time, child(r.pointer(), "time_s")));
  k.achieved_flops_per_s = r.non_negative_or_nan("achieved_flops_per_s");
  k.achieved_bytes_per_s = r.non_negative_or_nan("achieved_bytes_per_s");
  k.roof = r.optional_number("roof");
  // Required keys whose value may be null: present, but not measured.
  r.required("roof");
  r.required("pct_of_roof");
  k.pct_of_roof = r.optional_number("pct_of_roof");
  k.bound = r.string("bound");
  require_one_of(child(r.pointer(), "bound"), k.bound,
                 {"memory", "compute", "below_both", "above_roof", ""});
  k.throttled = r.boolean("throttled");
  k.sm_clock_mhz = r.optional_number("sm_clock_mhz");
  k.idea = r.optional_string("idea");
  k.library = r.optional_string("library");
  k.method = r.optional_string("method");
  k.device_bytes = r.optional_number("device_bytes");
  if (k.device_bytes && *k.device_bytes < 0) fail(child(r.pointer(), "device_bytes"), "negative");
  if (const J* other = r.find("other_time_s"); other && !other->is_null())
    k.other_time_s = read_time(Reader<J>(*other, child(r.pointer(), "other_time_s")));
  k.l2_flushed = r.optional_boolean("l2_flushed");
  k.discarded_throttled = static_cast<int>(r.integer_or("discarded_throttled", 0, 0, kMaxInt));
  k.memory_clock_mhz = r.optional_number("memory_clock_mhz");
  k.power_w = r.optional_number("power_w");
  k.temperature_c = r.optional_number("temperature_c");
  k.memory_roof = r.optional_string("memory_roof");
  k.ceiling = r.optional_string("ceiling");
  return k;
}

template <class J>
std::vector<std::string> string_list(const Reader<J>& r, std::string_view key) {
  std::vector<std::string> out;
  const J* list = r.find(key);
  if (list == nullptr || list->is_null()) return out;
  const std::string where = child(r.pointer(), key);
  if (!list->is_array()) fail(where, "expected an array of strings");
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) fail(child(where, i), "expected a string");
    out.push_back((*list)[i].template get<std::string>());
  }
  return out;
}

template <class J>
RunSettings read_settings(const Reader<J>& r) {
  RunSettings s;
  // The full unsigned 64-bit range: --seed takes any uint64.
  if (const J* seed = r.find("seed"); seed != nullptr && !seed->is_null()) {
    if (!seed->is_number_unsigned() && !(seed->is_number_integer() && *seed >= 0))
      fail(child(r.pointer(), "seed"), "expected a non-negative integer");
    s.seed = seed->template get<std::uint64_t>();
  }
  s.repetitions = static_cast<int>(r.integer_or("repetitions", 0, 0, kMaxInt));
  s.max_noise = r.number_or("max_noise", 0);
  s.timeout_s = r.number_or("timeout_s", 0);
  s.min_samples = static_cast<int>(r.integer_or("min_samples", 0, 0, kMaxInt));
  s.l2_policy = r.optional_string("l2_policy");
  s.batch_target_s = r.number_or("batch_target_s", 0);
  s.max_launches_per_sample =
      static_cast<int>(r.integer_or("max_launches_per_sample", 0, 0, kMaxInt));
  s.filter = r.optional_string("filter");
  s.families = string_list(r, "families");
  s.shapes = string_list(r, "shapes");
  s.ceilings_only = r.optional_boolean("ceilings_only").value_or(false);
  s.no_ceilings = r.optional_boolean("no_ceilings").value_or(false);
  s.ceilings_from = r.optional_string("ceilings_from");
  return s;
}

template <class J>
Results read_results(const J& json) {
  Reader<J> r(json, "");
  Results results;
  results.schema_version = static_cast<int>(r.integer("schema_version", 0, kMaxInt));
  if (results.schema_version != kResultsSchemaVersion)
    fail("/schema_version", fmt::format("unsupported schema_version {} (this build reads {})",
                                        results.schema_version, kResultsSchemaVersion));
  results.context = read_context(r.object("context"));
  if (const J* run = r.find("run"); run != nullptr && !run->is_null()) {
    const Reader<J> rr = r.object("run");
    results.run.complete = rr.optional_boolean("complete");
    results.run.interrupted_by = rr.optional_string("interrupted_by");
    if (const J* argv = rr.find("command_line"); argv != nullptr && !argv->is_null()) {
      const std::string where = child(rr.pointer(), "command_line");
      if (!argv->is_array()) fail(where, "expected an array of strings");
      for (std::size_t i = 0; i < argv->size(); ++i) {
        if (!(*argv)[i].is_string()) fail(child(where, i), "expected a string");
        results.run.command_line.push_back((*argv)[i].template get<std::string>());
      }
    }
    if (const J* settings = rr.find("settings"); settings != nullptr && !settings->is_null())
      results.run.settings = read_settings(rr.object("settings"));
  }

  const J& ceilings = array_at(r, "ceilings");
  for (std::size_t i = 0; i < ceilings.size(); ++i)
    results.ceilings.push_back(read_ceiling(Reader<J>(ceilings[i], child("/ceilings", i))));

  const J& kernels = array_at(r, "kernels");
  for (std::size_t i = 0; i < kernels.size(); ++i)
    results.kernels.push_back(read_kernel(Reader<J>(kernels[i], child("/kernels", i))));
  return results;
}

// ---------------------------------------------------------------- parsing --

struct TextPosition {
  std::size_t line = 1, column = 1;
};

TextPosition position_of(std::string_view text, std::size_t byte) {
  TextPosition p;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

// Error text must stay on one line and printable whatever the input held.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) out += (ch >= 0x20 && ch < 0x7f) ? static_cast<char>(ch) : '?';
  return out;
}

// Rejects documents nested deeper than kMaxResultsJsonDepth before the
// parser sees them, so hostile input cannot exhaust the stack anywhere.
void check_depth(std::string_view text, std::string_view source) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > kMaxResultsJsonDepth) {
        auto p = position_of(text, i);
        throw ResultsError(
            fmt::format("{}: JSON nested deeper than {} levels at line {}, column {}", source,
                        kMaxResultsJsonDepth, p.line, p.column));
      }
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
}

// nlohmann's DOM builder, plus the byte position of a syntax error (which the
// exception for e.g. number overflow does not carry).
class PositionedDomParser : public nlohmann::json_sax<nlohmann::ordered_json> {
 public:
  using J = nlohmann::ordered_json;
  explicit PositionedDomParser(J& result) : dom_(result, false) {}

  bool null() override { return dom_.null(); }
  bool boolean(bool v) override { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) override { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) override { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) override {
    return dom_.number_float(v, s);
  }
  bool string(string_t& v) override { return dom_.string(v); }
  bool binary(binary_t& v) override { return dom_.binary(v); }
  bool start_object(std::size_t n) override { return dom_.start_object(n); }
  bool key(string_t& v) override { return dom_.key(v); }
  bool end_object() override { return dom_.end_object(); }
  bool start_array(std::size_t n) override { return dom_.start_array(n); }
  bool end_array() override { return dom_.end_array(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    error_byte = position;
    error = ex.what();
    return false;
  }

  std::size_t error_byte = 0;
  std::string error;

 private:
  nlohmann::detail::json_sax_dom_parser<J> dom_;
};

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax
// error ..." -> "syntax error ..." (we print our own position).
std::string strip_nlohmann_prefix(const std::string& what) {
  std::string_view s = what;
  if (auto bracket = s.find("] "); bracket != std::string_view::npos) s.remove_prefix(bracket + 2);
  if (auto column = s.find("column "); column != std::string_view::npos) {
    if (auto colon = s.find(": ", column); colon != std::string_view::npos)
      s.remove_prefix(colon + 2);
  } else if (s.starts_with("parse error: ")) {
    s.remove_prefix(13);
  }
  return std::string(s);
}

}  // namespace

nlohmann::json to_json(const Results& results) {
  return results_json<nlohmann::json>(results);
}

Results results_from_json(const nlohmann::json& json) {
  try {
    return read_results(json);
  } catch (const ResultsError& e) {
    throw ResultsError(fmt::format("results: {}", e.what()));
  }
}

std::string results_to_text(const Results& results) {
  return results_json<nlohmann::ordered_json>(results).dump(
             2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

Results parse_results(std::string_view text, std::string_view source_name) {
  check_depth(text, source_name);
  nlohmann::ordered_json json;
  PositionedDomParser parser(json);
  bool ok = nlohmann::ordered_json::sax_parse(text, &parser);
  if (!ok) {
    // The SAX position counts characters read, i.e. one past the offender.
    std::size_t byte = parser.error_byte > 0 ? parser.error_byte - 1 : 0;
    auto p = position_of(text, byte);
    throw ResultsError(fmt::format("{}: malformed JSON at line {}, column {} (byte {}): {}",
                                   source_name, p.line, p.column, byte,
                                   printable(strip_nlohmann_prefix(parser.error))));
  }
  try {
    return read_results(json);
  } catch (const ResultsError& e) {
    throw ResultsError(fmt::format("{}: {}", source_name, printable(e.what())));
  }
}

Results load_results(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ResultsError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ResultsError(fmt::format("{}: read error", path.string()));
  return parse_results(text.str(), path.string());
}

std::string shape_text(const ShapeDims& shape) {
  std::string s;
  for (const auto& [dim, extent] : shape)
    s += fmt::format("{}{}={}", s.empty() ? "" : ",", dim, extent);
  return s;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  auto fail_io = [&](std::string_view what) {
    throw std::runtime_error(
        fmt::format("cannot write {}: {}: {}", path.string(), what, std::strerror(errno)));
  };
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  std::string temp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(temp.data());
  if (fd < 0) fail_io("creating a temporary file");
  auto abandon = [&](std::string_view what) {
    int saved = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    errno = saved;
    fail_io(what);
  };
  // mkstemp creates 0600; results are meant to be shared like any output file.
  if (::fchmod(fd, 0644) != 0) abandon("fchmod");
  std::size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) abandon("fsync");
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    fail_io("close");
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    errno = saved;
    fail_io("rename");
  }
  // Make the rename itself durable; a failure here leaves a complete file.
  if (int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_results_atomic(const std::filesystem::path& path, const Results& results) {
  write_file_atomic(path, results_to_text(results));
}

}  // namespace rl::roofline
