// A kernel's "counters" in results.json (internal, issue 28): its writer and
// reader, kept beside each other so the two spell every key the same way.
// The block is optional (absent without --counters); docs/results.md and
// results/schema-v1.json describe it.
#pragma once

#include "results_json_names.hpp"
#include "results_json_reader.hpp"
#include "results_json_values.hpp"

#include "rl/roofline/results.hpp"

#include <limits>

namespace rl::roofline::results_json {

template <class J>
J counters_json(const KernelCounters& c) {
  J values = J::object();
  for (const auto& [role, value] : c.values) values[role] = number_or_null<J>(value);
  J comparisons = J::array();
  for (const auto& x : c.comparisons) {
    J item = J::object();
    item["quantity"] = std::string(to_string(x.quantity));
    item["counted"] = number_or_null<J>(x.counted);
    item["modelled"] = number_or_null<J>(x.modelled);
    item["tolerance"] = number_or_null<J>(x.tolerance);
    item["agrees"] = x.agrees;
    item["sentence"] = x.sentence;
    comparisons.push_back(std::move(item));
  }
  J j = J::object();
  j["source"] = std::string(to_string(c.source));
  if (!c.chip.empty()) j["chip"] = c.chip;
  j["passes"] = c.passes;
  j["values"] = std::move(values);
  j["comparisons"] = std::move(comparisons);
  if (!c.unavailable.empty()) j["unavailable"] = c.unavailable;
  return j;
}

template <class J>
KernelCounters read_counters(const Reader<J>& r) {
  KernelCounters c;
  c.source = parse_counter_source(child(r.pointer(), "source"), r.string("source"));
  c.chip = r.optional_string("chip");
  c.passes = static_cast<int>(r.integer_or("passes", 0, 0, std::numeric_limits<int>::max()));
  if (const J* values = r.find("values"); values != nullptr && !values->is_null()) {
    const Reader<J> v = r.object("values");
    // null: a count the writer found not finite (its encoding), read as NaN.
    for (auto it = values->begin(); it != values->end(); ++it)
      c.values[it.key()] = v.non_negative_or_nan(it.key());
  }
  if (const J* list = r.find("comparisons"); list != nullptr && !list->is_null()) {
    const std::string where = child(r.pointer(), "comparisons");
    if (!list->is_array()) fail(where, "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Reader<J> x((*list)[i], child(where, i));
      CounterComparison comparison;
      // A newer writer's quantity is kept as written (schema-v1: any string).
      comparison.quantity = ResultCounterQuantity::from_json(x.string("quantity"));
      comparison.counted = x.non_negative_or_nan("counted");
      comparison.modelled = x.non_negative_or_nan("modelled");
      comparison.tolerance = x.non_negative("tolerance");
      comparison.agrees = x.boolean("agrees");
      comparison.sentence = x.optional_string("sentence");
      c.comparisons.push_back(std::move(comparison));
    }
  }
  c.unavailable = r.optional_string("unavailable");
  return c;
}

}  // namespace rl::roofline::results_json
