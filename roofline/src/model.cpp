#include "rl/roofline/model.hpp"

#include <algorithm>
#include <cmath>

namespace rl::roofline {

double intensity(double flops, double bytes) {
  return bytes > 0 ? flops / bytes : 0.0;
}

double ridge_point(double compute_flops_per_s, double bytes_per_s) {
  return bytes_per_s > 0 ? compute_flops_per_s / bytes_per_s : 0.0;
}

double attainable(double compute_flops_per_s, double bytes_per_s, double intensity_flop_per_b) {
  return std::min(compute_flops_per_s, bytes_per_s * intensity_flop_per_b);
}

const Ceiling* dram_ceiling(std::span<const Ceiling> ceilings) {
  const Ceiling* best = nullptr;
  for (const auto& c : ceilings)
    if (c.kind == "memory" && c.name.starts_with("hbm.") && c.value > 0 &&
        (!best || c.value > best->value))
      best = &c;
  return best;
}

const Ceiling* compute_ceiling(std::span<const Ceiling> ceilings, ComputeUnit unit) {
  auto name = compute_ceiling_name(unit);
  for (const auto& c : ceilings)
    if (c.kind == "compute" && c.name == name && c.value > 0) return &c;
  return nullptr;
}

std::vector<Placement> place(double intensity_flop_per_b, ComputeUnit unit,
                             std::span<const Ceiling> ceilings) {
  const Ceiling* compute = compute_ceiling(ceilings, unit);
  std::vector<Placement> out;
  for (const auto& c : ceilings) {
    if (c.kind != "memory" || c.value <= 0) continue;
    Placement p;
    p.memory_ceiling = c.name;
    p.bytes_per_s = c.value;
    double memory_roof = c.value * intensity_flop_per_b;
    if (compute) {
      p.compute_flops_per_s = compute->value;
      p.attainable_flops_per_s = attainable(compute->value, c.value, intensity_flop_per_b);
      p.memory_limited = memory_roof < compute->value;
      p.ridge = ridge_point(compute->value, c.value);
    } else {
      p.attainable_flops_per_s = memory_roof;
    }
    out.push_back(std::move(p));
  }
  return out;
}

const Ceiling* memory_ceiling_for(const KernelResult& kernel, std::span<const Ceiling> ceilings,
                                  double l2_bytes) {
  const double footprint = kernel.device_bytes.value_or(kernel.bytes_min);
  const bool l2_resident =
      kernel.ceiling.starts_with("l2.") ||
      (kernel.l2_flushed == false && l2_bytes > 0 && footprint > 0 && footprint <= l2_bytes);
  if (l2_resident) {
    const Ceiling* best = nullptr;
    for (const auto& c : ceilings)
      if (c.kind == "memory" && c.name.starts_with("l2.") && c.value > 0 &&
          (!best || c.value > best->value))
        best = &c;
    if (best) return best;
  }
  return dram_ceiling(ceilings);
}

RoofVerdict judge(const KernelResult& kernel, std::span<const Ceiling> ceilings, double l2_bytes) {
  RoofVerdict v;
  if (!kernel.time_s || kernel.time_s->median <= 0) return v;
  const Ceiling* dram = memory_ceiling_for(kernel, ceilings, l2_bytes);
  if (!dram) return v;
  v.memory_roof = dram->name;
  const Ceiling* compute = compute_ceiling(ceilings, kernel.unit);
  double ai = intensity(kernel.flops, kernel.bytes_model);

  double fraction = 0;
  bool memory_limited = true;
  if (kernel.flops <= 0) {
    // Pure data movement: the roof is the bandwidth itself.
    v.roof = 0.0;
    fraction = kernel.achieved_bytes_per_s / dram->value;
  } else {
    double memory_roof = dram->value * ai;
    double roof = compute ? std::min(compute->value, memory_roof) : memory_roof;
    memory_limited = !compute || memory_roof < compute->value;
    v.roof = roof;
    fraction = roof > 0 ? kernel.achieved_flops_per_s / roof : 0;
  }
  v.pct_of_roof = 100.0 * fraction;
  if (fraction < kBelowBothFraction)
    v.bound = Bound::below_both;
  else if (fraction > kAboveRoofFraction)
    v.bound = Bound::above_roof;
  else
    v.bound = memory_limited ? Bound::memory : Bound::compute;
  return v;
}

void apply_roofline(std::span<KernelResult> kernels, std::span<const Ceiling> ceilings,
                    double l2_bytes) {
  for (auto& k : kernels) {
    k.intensity = intensity(k.flops, k.bytes_model);
    RoofVerdict v = judge(k, ceilings, l2_bytes);
    k.roof = v.roof;
    k.pct_of_roof = v.pct_of_roof;
    k.bound = v.bound;
    k.memory_roof = v.memory_roof;
  }
}

void apply_roofline(Results& results) {
  apply_roofline(results.kernels, results.ceilings,
                 static_cast<double>(results.context.device.l2_bytes));
}

}  // namespace rl::roofline
