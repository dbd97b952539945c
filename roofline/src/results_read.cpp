#include "results_counters_json.hpp"
#include "results_json_names.hpp"
#include "results_json_reader.hpp"
#include "results_topology_json.hpp"

#include "rl/roofline/cost.hpp"

#include <vector>

namespace rl::roofline {

namespace results_json {

namespace {

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

template <class J>
Context read_context(const Reader<J>& r) {
  Context c;
  c.backend = parse_backend(child(r.pointer(), "backend"), r.string("backend"));

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
  if (const J* topology = r.find("topology"); topology != nullptr && !topology->is_null())
    c.topology = read_topology(r.object("topology"));
  return c;
}

template <class J>
Ceiling read_ceiling(const Reader<J>& r) {
  Ceiling c;
  c.name = r.string("name");
  c.kind = r.string("kind");
  require_one_of(child(r.pointer(), "kind"), c.kind, kCeilingKindNames);
  c.value = r.non_negative("value");
  c.best = r.optional_number("best");
  c.unit = r.string("unit");
  require_one_of(child(r.pointer(), "unit"), c.unit, kCeilingUnitNames);
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
  if (!t.kind.empty()) require_one_of(child(r.pointer(), "kind"), t.kind, kTimeKindNames);
  t.launches_per_sample = static_cast<int>(r.integer_or("launches_per_sample", 1, 1, kMaxInt));
  t.samples_taken = static_cast<int>(r.integer_or("samples_taken", 0, 0, kMaxInt));
  t.noise = r.optional_number("noise");
  if (t.noise && *t.noise < 0) fail(child(r.pointer(), "noise"), "negative");
  t.stopped_by = r.optional_string("stopped_by");
  return t;
}

// "shape": {"M": 4096, ...} in the file's order.
template <class J>
ShapeDims read_shape(const Reader<J>& r) {
  ShapeDims dims;
  const auto shape = r.object("shape");
  const J& shape_json = r.required("shape");
  for (auto it = shape_json.begin(); it != shape_json.end(); ++it)
    dims.emplace_back(it.key(), shape.integer(it.key(), 0, kMaxInt64));
  return dims;
}

template <class J>
std::optional<double> optional_non_negative(const Reader<J>& r, std::string_view key) {
  auto value = r.optional_number(key);
  if (value && *value < 0) fail(child(r.pointer(), key), "negative");
  return value;
}

template <class J>
KernelResult read_kernel(const Reader<J>& r) {
  KernelResult k;
  k.name = r.string("name");
  k.family = r.string("family");
  k.variant = r.string("variant");
  // Any string (the schema's): a spelling this build does not know is kept.
  k.precision = ResultPrecision::from_json(r.string("precision"));
  std::string unit = r.string("unit");
  auto compute_unit = parse_compute_unit(unit);
  if (!compute_unit)
    fail(child(r.pointer(), "unit"), fmt::format("unknown compute unit \"{}\"", unit));
  k.unit = *compute_unit;
  k.baseline = r.optional_string("baseline");
  k.fuses = r.optional_string("fuses");  // absent in files written before it existed

  k.shape = read_shape(r);

  k.flops = r.non_negative_or_nan("flops");
  k.bytes_min = r.non_negative_or_nan("bytes_min");
  k.bytes_model = r.non_negative_or_nan("bytes_model");
  // Optional declarations (absent in older files and where a model states none).
  k.bytes_l2_load = optional_non_negative(r, "bytes_l2_load");
  k.bytes_l2_store = optional_non_negative(r, "bytes_l2_store");
  k.tensor_ops = optional_non_negative(r, "tensor_ops");
  k.intensity = r.non_negative_or_nan("intensity");
  k.validated = r.boolean("validated");
  k.status = parse_status(child(r.pointer(), "status"), r.optional_string("status"));
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
  k.bound = parse_bound(child(r.pointer(), "bound"), r.string("bound"));
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
  if (const J* counters = r.find("counters"); counters != nullptr && !counters->is_null())
    k.counters = read_counters(r.object("counters"));
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
  s.counters = r.optional_boolean("counters").value_or(false);
  s.ceilings_from = r.optional_string("ceilings_from");
  s.budget_s = r.optional_number("budget_s");
  return s;
}

template <class J>
LeftOut read_left_out(const Reader<J>& r) {
  LeftOut item;
  item.name = r.string("name");
  item.shape = read_shape(r);
  item.reason = parse_left_out_reason(child(r.pointer(), "reason"), r.string("reason"));
  return item;
}

template <class J>
Results read_document(const J& json) {
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
    if (const J* left_out = rr.find("left_out"); left_out != nullptr && !left_out->is_null()) {
      const std::string where = child(rr.pointer(), "left_out");
      if (!left_out->is_array()) fail(where, "expected an array");
      for (std::size_t i = 0; i < left_out->size(); ++i)
        results.run.left_out.push_back(read_left_out(Reader<J>((*left_out)[i], child(where, i))));
    }
  }

  const J& ceilings = array_at(r, "ceilings");
  for (std::size_t i = 0; i < ceilings.size(); ++i)
    results.ceilings.push_back(read_ceiling(Reader<J>(ceilings[i], child("/ceilings", i))));

  const J& kernels = array_at(r, "kernels");
  for (std::size_t i = 0; i < kernels.size(); ++i)
    results.kernels.push_back(read_kernel(Reader<J>(kernels[i], child("/kernels", i))));
  return results;
}

}  // namespace

Results read_results(const nlohmann::json& json) {
  return read_document(json);
}

Results read_results(const nlohmann::ordered_json& json) {
  return read_document(json);
}

}  // namespace results_json

Results results_from_json(const nlohmann::json& json) {
  try {
    return results_json::read_results(json);
  } catch (const ResultsError& e) {
    throw ResultsError(fmt::format("results: {}", e.what()));
  }
}

}  // namespace rl::roofline
