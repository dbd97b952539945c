// What a run measures and what it skips: the (record, shape) instances the
// flags select, in the order they are measured, and why a record cannot run
// on this backend or device.
#pragma once

#include "rl/bench/options.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/results.hpp"

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rl::bench {

// One (record, shape) pair a run would benchmark.  Records that cannot run
// here are included: they are reported as skipped.
struct Instance {
  const KernelRecord* record = nullptr;
  Shape shape;
  std::string name;  // "<kernel>/<shape>", the Google Benchmark name
};

// What a run measures: the preset's shapes (or the user's, per family), the
// families asked for, with or without the ceilings, narrowed by a Google
// Benchmark filter.
struct Selection {
  SizePreset preset = SizePreset::small;
  bool ceilings_only = false;
  bool no_ceilings = false;
  std::vector<std::string> families;                 // empty: every family
  std::map<std::string, std::vector<Shape>> shapes;  // family -> replaces the preset's shapes
  std::string filter;                                // "" = everything
};

// The instances a run benchmarks, as selected by the filter, in the order it
// measures them, what matters first, so that a run cut short by its budget or
// an interrupt still answers the most:
//   1. every shape of every ceiling (the roofs and the datasheet verdicts);
//   2. the headline shape of every kernel, in registry order (one point per
//      rung of every ladder);   [skipped with ceilings_only]
//   3. the remaining shapes of every kernel, in registry order.
std::vector<Instance> selected_instances(const Selection& selection);

// A record's headline shape among `shapes` (its preset's, or the user's, that
// the filter kept): the one on which it does the most work, most FLOPs by its
// cost model, ties broken by most compulsory bytes (bytes_min), then by the
// later shape.  FLOPs and bytes_min are the operation's, not the variant's,
// so the rungs of a ladder that share shapes share their headline (the
// family's largest shape of the preset).
std::size_t headline_index(const KernelRecord& record, const std::vector<Shape>& shapes);

// The families --family names, checked against the registry, and the
// --shape overrides resolved into shapes in the order each family's records
// declare their dimensions.  Throws UsageError (one line) for an unknown
// family or dimension, a missing dimension, a value the family cannot take
// (0 only where the preset uses 0, as causal=0), or a shape a record refuses.
void resolve_selection(Selection& selection, const std::vector<std::string>& families,
                       const std::vector<ShapeOverride>& overrides);

// Why `record` cannot run `shape` on this backend and device (GPU-only on
// the emulator, compute capability out of its range, fewer devices than its
// min_devices among the `device_count` the machine has, refused on this
// architecture or at this shape), or nullopt.
std::optional<std::string> cannot_run_here(const KernelRecord& record, const Shape& shape,
                                           const roofline::Context& context, int device_count);

// The skip reason of an instance whose declared device memory exceeds what
// is free, "needs 34.4 GB of device memory, 21.0 GB free" (decimal GB, as
// nvidia-smi's neighbours and datasheets count); nullopt when it fits.
std::optional<std::string> memory_shortfall(std::size_t needed_bytes, std::size_t free_bytes);

}  // namespace rl::bench
