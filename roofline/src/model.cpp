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

const Ceiling* best_memory_ceiling(std::span<const Ceiling> ceilings, std::string_view level) {
  const Ceiling* best = nullptr;
  for (const auto& c : ceilings)
    if (c.kind == "memory" && c.name.starts_with(level) && c.value > 0 && std::isfinite(c.value) &&
        (!best || c.value > best->value))
      best = &c;
  return best;
}

namespace {

// A ceiling of the memory level only the hierarchy view draws: no kernel's
// roof is made of it (a kernel's data comes from DRAM or L2 as its footprint
// says; shared-memory traffic is not in any cost model's bytes_model).
bool is_hierarchy_only(const Ceiling& ceiling) {
  return ceiling.name.starts_with("smem.");
}

}  // namespace

const Ceiling* dram_ceiling(std::span<const Ceiling> ceilings) {
  return best_memory_ceiling(ceilings, "hbm.");
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
  // A roof loop of shared memory is judged against its own level.
  if (kernel.ceiling.starts_with("smem.")) return best_memory_ceiling(ceilings, "smem.");
  const double footprint = kernel.device_bytes.value_or(kernel.bytes_min);
  const bool l2_resident =
      kernel.ceiling.starts_with("l2.") ||
      (kernel.l2_flushed == false && l2_bytes > 0 && footprint > 0 && footprint <= l2_bytes);
  if (l2_resident) {
    if (const Ceiling* best = best_memory_ceiling(ceilings, "l2.")) return best;
  }
  return dram_ceiling(ceilings);
}

std::optional<KernelRoof> roof_of(const KernelResult& kernel, std::span<const Ceiling> ceilings,
                                  double l2_bytes) {
  // A node record measures a link (PCIe, NVLink, NCCL), not the chip: the
  // chip's HBM or L2 roof is not its roof.  Its yardstick is the link's
  // datasheet figure, in the report's node section (report_node.cpp).
  if (kernel.family == "node") return std::nullopt;
  const Ceiling* memory = memory_ceiling_for(kernel, ceilings, l2_bytes);
  if (!memory) return std::nullopt;
  KernelRoof r;
  r.memory_ceiling = memory->name;
  r.bytes_per_s = memory->value;
  const Ceiling* compute = compute_ceiling(ceilings, kernel.unit);
  if (compute) r.ridge = ridge_point(compute->value, memory->value);
  if (kernel.flops <= 0) {
    // Pure data movement: the roof is the bandwidth itself.
    r.data_movement = true;
    return r;
  }
  const double memory_roof = memory->value * intensity(kernel.flops, kernel.bytes_model);
  r.attainable_flops_per_s = compute ? std::min(compute->value, memory_roof) : memory_roof;
  r.memory_limited = !compute || memory_roof < compute->value;
  return r;
}

RoofVerdict classify(const std::optional<KernelRoof>& roof, const KernelResult& kernel) {
  RoofVerdict v;
  if (!roof || !kernel.time_s || kernel.time_s->median <= 0) return v;
  v.memory_roof = roof->memory_ceiling;
  double fraction = 0;
  if (roof->data_movement) {
    v.roof = 0.0;
    fraction = kernel.achieved_bytes_per_s / roof->bytes_per_s;
  } else {
    v.roof = roof->attainable_flops_per_s;
    fraction = roof->attainable_flops_per_s > 0
                   ? kernel.achieved_flops_per_s / roof->attainable_flops_per_s
                   : 0;
  }
  v.pct_of_roof = 100.0 * fraction;
  if (fraction < kBelowBothFraction)
    v.bound = Bound::below_both;
  else if (fraction > kAboveRoofFraction)
    v.bound = Bound::above_roof;
  else
    v.bound = roof->memory_limited ? Bound::memory : Bound::compute;
  return v;
}

RoofVerdict judge(const KernelResult& kernel, std::span<const Ceiling> ceilings, double l2_bytes) {
  return classify(roof_of(kernel, ceilings, l2_bytes), kernel);
}

bool depends_on(const KernelResult& kernel, const Ceiling& ceiling) {
  if (is_hierarchy_only(ceiling)) return kernel.ceiling.starts_with("smem.");
  return ceiling.kind == "memory" ||
         (ceiling.kind == "compute" && ceiling.name == compute_ceiling_name(kernel.unit));
}

void set_verdict(KernelResult& kernel, const RoofVerdict& verdict) {
  kernel.roof = verdict.roof;
  kernel.pct_of_roof = verdict.pct_of_roof;
  kernel.bound = verdict.bound;
  kernel.memory_roof = verdict.memory_roof;
}

void apply_roofline(std::span<KernelResult> kernels, std::span<const Ceiling> ceilings,
                    double l2_bytes) {
  for (auto& k : kernels) {
    k.intensity = intensity(k.flops, k.bytes_model);
    set_verdict(k, judge(k, ceilings, l2_bytes));
  }
}

void apply_roofline(Results& results) {
  apply_roofline(results.kernels, results.ceilings,
                 static_cast<double>(results.context.device.l2_bytes));
}

}  // namespace rl::roofline
