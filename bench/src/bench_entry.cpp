#include "bench_entry.hpp"

#include "rl/bench/assembly.hpp"

#include <utility>

namespace rl::bench {

BenchEntry make_entry(Instance instance) {
  BenchEntry entry;
  entry.record = instance.record;
  entry.shape = std::move(instance.shape);
  entry.name = std::move(instance.name);
  const KernelRecord& record = *entry.record;
  entry.cost = record.cost(entry.shape);
  roofline::KernelResult& result = entry.result;
  result.name = record.name;
  result.family = record.family;
  result.variant = record.variant;
  result.precision = record.precision;
  result.baseline = record.baseline;
  result.idea = record.idea;
  result.library = record.library;
  result.ceiling = record.ceiling;
  result.fuses = record.fuses;
  result.shape = entry.shape.dims;
  if (record.device_bytes)
    result.device_bytes = static_cast<double>(record.device_bytes(entry.shape));
  set_cost(result, entry.cost);
  // What the counters check the model against (--counters); recorded with or
  // without it, as the model's other figures are.
  result.bytes_l2_load = entry.cost.bytes_l2_load;
  result.bytes_l2_store = entry.cost.bytes_l2_store;
  result.tensor_ops = entry.cost.tensor_ops;
  return entry;
}

}  // namespace rl::bench
