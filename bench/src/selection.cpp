#include "selection.hpp"

#include "rl/bench/gbench.hpp"
#include "rl/roofline/sku.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

namespace rl::bench {

namespace {

// The instances of one record that the filter keeps, in its shapes' order.
std::vector<Instance> instances_of(const KernelRecord& record, const Selection& selection) {
  const auto user = selection.shapes.find(record.family);
  const std::vector<Shape> shapes =
      user != selection.shapes.end() ? user->second : record.shapes(selection.preset);
  std::vector<Instance> kept;
  for (const Shape& shape : shapes) {
    std::string name = record.name;  // "<kernel>/<shape>"
    name += '/';
    name += shape.to_string();
    // Google Benchmark matches the filter against the name it reports,
    // which Iterations(1) and UseManualTime suffix.
    if (matches_benchmark_filter(name + "/iterations:1/manual_time", selection.filter))
      kept.push_back({&record, shape, std::move(name)});
  }
  return kept;
}

}  // namespace

std::size_t headline_index(const KernelRecord& record, const std::vector<Shape>& shapes) {
  std::size_t best = 0;
  roofline::Cost best_cost{};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const roofline::Cost cost = record.cost(shapes[i]);
    if (i == 0 || cost.flops > best_cost.flops ||
        (cost.flops == best_cost.flops && cost.bytes_min >= best_cost.bytes_min)) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

std::vector<Instance> selected_instances(const Selection& selection) {
  auto wanted = [&](const KernelRecord& record) {
    return selection.families.empty() ||
           std::find(selection.families.begin(), selection.families.end(), record.family) !=
               selection.families.end();
  };
  std::vector<Instance> selected;
  // Ceilings first, every shape: every later kernel's roof is computed from
  // them, and they answer whether the datasheet holds.  They are the roofs,
  // not a family the user picks: --family keeps them.
  if (!selection.no_ceilings)
    for (const auto& record : kernel_registry())
      if (!record.ceiling.empty())
        for (Instance& instance : instances_of(record, selection))
          selected.push_back(std::move(instance));
  if (selection.ceilings_only) return selected;
  // Then the headline shape of every kernel, so that a run cut short still
  // places each rung of each ladder; then the remaining shapes.
  std::vector<Instance> remaining;
  for (const auto& record : kernel_registry()) {
    if (!record.ceiling.empty() || !wanted(record)) continue;
    std::vector<Instance> instances = instances_of(record, selection);
    if (instances.empty()) continue;
    std::vector<Shape> shapes;
    for (const Instance& instance : instances) shapes.push_back(instance.shape);
    const std::size_t headline = headline_index(record, shapes);
    for (std::size_t i = 0; i < instances.size(); ++i)
      (i == headline ? selected : remaining).push_back(std::move(instances[i]));
  }
  for (Instance& instance : remaining) selected.push_back(std::move(instance));
  return selected;
}

void resolve_selection(Selection& selection, const std::vector<std::string>& families,
                       const std::vector<ShapeOverride>& overrides) {
  std::vector<std::string> known;
  for (const auto& record : kernel_registry())
    if (std::find(known.begin(), known.end(), record.family) == known.end())
      known.push_back(record.family);
  auto known_list = [&] {
    std::string list;
    for (const auto& f : known) list += (list.empty() ? "" : ", ") + f;
    return list;
  };
  for (const std::string& family : families)
    if (std::find(known.begin(), known.end(), family) == known.end())
      throw UsageError("--family: unknown family '" + family + "' (families: " + known_list() +
                       ")");
  selection.families = families;
  for (const ShapeOverride& o : overrides) {
    const std::string quoted = "--shape " + o.family + ":";
    // The dimensions the family declares, in its records' order, and the
    // values its presets use (0 is accepted only where a preset uses it).
    std::vector<std::string> declared;
    std::vector<std::string> zero_allowed;
    const KernelRecord* first = nullptr;
    for (const auto& record : kernel_registry()) {
      if (record.family != o.family) continue;
      if (!first) first = &record;
      for (const SizePreset preset : {SizePreset::small, SizePreset::medium, SizePreset::large})
        for (const Shape& shape : record.shapes(preset))
          for (const auto& [dim, extent] : shape.dims) {
            if (std::find(declared.begin(), declared.end(), dim) == declared.end())
              declared.push_back(dim);
            if (extent == 0 &&
                std::find(zero_allowed.begin(), zero_allowed.end(), dim) == zero_allowed.end())
              zero_allowed.push_back(dim);
          }
    }
    if (!first)
      throw UsageError(quoted + " unknown family '" + o.family + "' (families: " + known_list() +
                       ")");
    std::string declared_list;
    for (const auto& d : declared) declared_list += (declared_list.empty() ? "" : ",") + d;
    Shape shape;
    for (const std::string& dim : declared) {
      const auto given = std::find_if(o.dims.begin(), o.dims.end(),
                                      [&](const auto& kv) { return kv.first == dim; });
      if (given == o.dims.end())
        throw UsageError(quoted + " missing " + dim + " (" + o.family + " shapes are " +
                         declared_list + ")");
      if (given->second == 0 &&
          std::find(zero_allowed.begin(), zero_allowed.end(), dim) == zero_allowed.end())
        throw UsageError(quoted + " " + dim + " must be positive");
      shape.dims.emplace_back(dim, given->second);
    }
    for (const auto& [dim, value] : o.dims)
      if (std::find(declared.begin(), declared.end(), dim) == declared.end())
        throw UsageError(quoted + " unknown dimension '" + dim + "' (" + o.family + " shapes are " +
                         declared_list + ")");
    // A record's cost model checks what its workload will: a value it cannot
    // take (causal=2) is refused now, not in the middle of the run.
    for (const auto& record : kernel_registry()) {
      if (record.family != o.family) continue;
      try {
        record.cost(shape);
      } catch (const std::exception& e) {
        throw UsageError(quoted + shape.to_string() + ": " + e.what());
      }
    }
    selection.shapes[o.family].push_back(std::move(shape));
  }
}

std::optional<std::string> memory_shortfall(std::size_t needed_bytes, std::size_t free_bytes) {
  if (needed_bytes <= free_bytes) return std::nullopt;
  char text[96];
  std::snprintf(text, sizeof text, "needs %.1f GB of device memory, %.1f GB free",
                static_cast<double>(needed_bytes) / 1e9, static_cast<double>(free_bytes) / 1e9);
  return text;
}

std::optional<std::string> cannot_run_here(const KernelRecord& record, const Shape& shape,
                                           const roofline::Context& context, int device_count) {
  const bool emulator = context.backend == roofline::Backend::emulator;
  const std::string& cc = context.device.compute_capability;  // "9.0"
  const int cc_x10 = roofline::compute_capability_x10(cc);
  auto cc_text = [](int x10) { return std::to_string(x10 / 10) + "." + std::to_string(x10 % 10); };
  // Before gpu_only: the emulator runs the sm_90a records as a Hopper.
  if (record.min_cc > 0 && cc_x10 < record.min_cc)
    return "needs compute capability " + cc_text(record.min_cc) + ", the device has " + cc +
           (emulator && record.min_cc == 90
                ? " (the emulator runs it as a Hopper with RL_EMU_CC=90, as scripts/run does)"
                : "");
  if (record.gpu_only && emulator)
    return "GPU-only: the emulator does not have what it times (a copy engine, a library, an "
           "instruction)";
  if (record.min_devices > 1 && device_count < record.min_devices)
    return "needs " + std::to_string(record.min_devices) + " devices; this machine has " +
           std::to_string(device_count) +
           (emulator ? " (the emulator runs it as a node with RL_EMU_DEVICES=8, as scripts/run "
                       "does)"
                     : "");
  if (record.max_cc > 0 && cc_x10 > record.max_cc)
    return "built for compute capability up to " + cc_text(record.max_cc) + ", the device has " +
           cc;
  if (record.refuse_on)
    if (std::optional<std::string> why = record.refuse_on(cc_x10)) return why;
  if (record.refuse_shape)
    if (std::optional<std::string> why = record.refuse_shape(shape)) return why;
  return std::nullopt;
}

}  // namespace rl::bench
