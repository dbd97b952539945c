// The results.json writer: every field in schema order.  The analysis block
// comes from analysis_json, the one place that derives it for the file.
#include "rl/roofline/results_io.hpp"

#include "analysis_json.hpp"
#include "results_counters_json.hpp"
#include "results_json_values.hpp"
#include "results_topology_json.hpp"

#include <nlohmann/json.hpp>

namespace rl::roofline {

namespace results_json {
namespace {

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
  j["backend"] = std::string(to_string(c.backend));
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
  if (c.topology) j["topology"] = topology_json<J>(*c.topology);
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
  j["precision"] = std::string(to_string(k.precision));
  j["unit"] = std::string(compute_unit_name(k.unit));
  j["baseline"] = k.baseline;
  j["fuses"] = k.fuses;
  j["shape"] = shape_json<J>(k.shape);
  j["flops"] = number_or_null<J>(k.flops);
  j["bytes_min"] = number_or_null<J>(k.bytes_min);
  j["bytes_model"] = number_or_null<J>(k.bytes_model);
  // The cost model's optional declarations (cost.hpp): written only when declared.
  if (k.bytes_l2_load) j["bytes_l2_load"] = number_or_null<J>(*k.bytes_l2_load);
  if (k.bytes_l2_store) j["bytes_l2_store"] = number_or_null<J>(*k.bytes_l2_store);
  if (k.tensor_ops) j["tensor_ops"] = number_or_null<J>(*k.tensor_ops);
  j["intensity"] = number_or_null<J>(k.intensity);
  j["validated"] = k.validated;
  j["status"] = std::string(to_string(k.status));
  j["error"] = k.error;
  j["max_rel_err"] = number_or_null<J>(k.max_rel_err);
  j["time_s"] = time_json<J>(k.time_s);
  j["achieved_flops_per_s"] = number_or_null<J>(k.achieved_flops_per_s);
  j["achieved_bytes_per_s"] = number_or_null<J>(k.achieved_bytes_per_s);
  j["roof"] = optional_number<J>(k.roof);
  j["pct_of_roof"] = optional_number<J>(k.pct_of_roof);
  j["bound"] = std::string(to_string(k.bound));
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
  if (k.counters) j["counters"] = counters_json<J>(*k.counters);  // absent without --counters
  return j;
}

template <class J>
J results_document(const Results& r) {
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
                        {"counters", s->counters},
                        {"ceilings_from", s->ceilings_from}};
    if (s->budget_s) run["settings"]["budget_s"] = *s->budget_s;
  }
  if (!r.run.left_out.empty()) {
    J left_out = J::array();
    for (const LeftOut& item : r.run.left_out)
      left_out.push_back(J{{"name", item.name},
                           {"shape", shape_json<J>(item.shape)},
                           {"reason", to_string(item.reason)}});
    run["left_out"] = std::move(left_out);
  }
  j["run"] = std::move(run);
  J ceilings = J::array();
  for (const auto& c : r.ceilings) ceilings.push_back(ceiling_json<J>(c));
  j["ceilings"] = std::move(ceilings);
  J kernels = J::array();
  for (const auto& k : r.kernels) kernels.push_back(kernel_json<J>(k));
  j["kernels"] = std::move(kernels);
  j["analysis"] = analysis_json<J>(r);
  return j;
}

}  // namespace
}  // namespace results_json

nlohmann::json to_json(const Results& results) {
  return results_json::results_document<nlohmann::json>(results);
}

std::string results_to_text(const Results& results) {
  return results_json::results_document<nlohmann::ordered_json>(results).dump(
             2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

void write_results_atomic(const std::filesystem::path& path, const Results& results) {
  write_file_atomic(path, results_to_text(results));
}

}  // namespace rl::roofline
