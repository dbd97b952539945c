// The roofline model: intensity, attainable performance per memory level,
// ridge points, bound classification and % of roof.
//
//   intensity   = flops / bytes_model          (FLOP/B; also vs bytes_min)
//   attainable  = min(compute roof of the kernel's unit, bandwidth x intensity)
//   ridge point = compute roof / bandwidth     (FLOP/B where the two meet)
//
// A kernel's `roof` is the attainable rate against DRAM (the best measured
// hbm.* ceiling): the harness flushes L2 before each sample, so DRAM is the
// level every kernel is timed against.  L2 placements are reported alongside.
#pragma once

#include "rl/roofline/cost.hpp"
#include "rl/roofline/results.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline {

// Below this fraction of the attainable rate, neither roof explains the time:
// the kernel is latency/occupancy bound ("below_both").
inline constexpr double kBelowBothFraction = 0.5;
// Above this fraction of its roof a kernel is flagged "above_roof" rather than
// shown at 140%: its cost model undercounts the traffic, its data came from a
// cache nearer than the roof's level (an L2-resident working set judged
// against HBM), or the ceiling under-measured.  5% leaves room for the spread
// between a ceiling's and a kernel's repetitions.
inline constexpr double kAboveRoofFraction = 1.05;

double intensity(double flops, double bytes);  // 0 when bytes == 0
double ridge_point(double compute_flops_per_s, double bytes_per_s);
double attainable(double compute_flops_per_s, double bytes_per_s, double intensity);

// The DRAM ceiling a kernel's roof is computed against: the highest-valued
// memory ceiling named "hbm.*"; nullptr when none was measured.
// The fastest measured memory ceiling whose name starts with `level` ("hbm.",
// "l2.", "smem."), or nullptr: the roof of that level of the hierarchy.
const Ceiling* best_memory_ceiling(std::span<const Ceiling> ceilings, std::string_view level);
const Ceiling* dram_ceiling(std::span<const Ceiling> ceilings);
// The compute ceiling named for `unit` ("tc.bf16" for tc_bf16); nullptr if absent.
const Ceiling* compute_ceiling(std::span<const Ceiling> ceilings, ComputeUnit unit);

struct Placement {             // one kernel against one memory level
  std::string memory_ceiling;  // "hbm.copy", "l2.read", ...
  double bytes_per_s = 0;
  std::optional<double> compute_flops_per_s;  // the unit's roof, when measured
  double attainable_flops_per_s = 0;
  bool memory_limited = true;  // bandwidth x intensity < compute roof
  std::optional<double> ridge;
};
std::vector<Placement> place(double intensity, ComputeUnit unit, std::span<const Ceiling> ceilings);

struct RoofVerdict {
  std::optional<double> roof;         // attainable FLOP/s at the memory level below
  std::optional<double> pct_of_roof;  // achieved / attainable x 100
  Bound bound = Bound::none;          // none: no ceilings to judge by
  std::string memory_roof;            // the memory ceiling used ("hbm.copy", "l2.read")
};
// A judgement has two halves.  The kernel's roof does not depend on its
// time: which ceilings bound it, the attainable rate at its intensity and
// which of the two limits it.  Its verdict (% of roof and bound) classifies a
// time against that roof.  The harness works a kernel's roof out once and
// classifies every repetition's time against it.
struct KernelRoof {
  std::string memory_ceiling;  // the memory ceiling it is judged against ("hbm.copy", "l2.read")
  double bytes_per_s = 0;      // that ceiling's bandwidth
  // Pure data movement (no FLOPs): judged in bytes/s against bytes_per_s.
  bool data_movement = false;
  // min(compute roof of its unit, bandwidth x intensity); 0 for data movement.
  double attainable_flops_per_s = 0;
  bool memory_limited = true;   // bandwidth x intensity below the compute roof, or no compute roof
  std::optional<double> ridge;  // compute roof / bandwidth, when its unit's ceiling was measured
};
// The memory ceiling a kernel is judged against: the best "l2.*" ceiling when
// its data lives in L2 while it is timed -- it measures an L2 ceiling, or its
// samples began with a warm L2 (batch) and its footprint (device_bytes, else
// bytes_min) fits in `l2_bytes` -- else the DRAM ceiling.  nullptr when the
// level it needs was not measured and no DRAM ceiling was either.
const Ceiling* memory_ceiling_for(const KernelResult& kernel, std::span<const Ceiling> ceilings,
                                  double l2_bytes);
// The kernel's roof among `ceilings` (its time is not read); nullopt when no
// memory ceiling it could be judged against was measured.  `l2_bytes`: the
// device's L2 size (0 = unknown: every kernel is judged against DRAM).
std::optional<KernelRoof> roof_of(const KernelResult& kernel, std::span<const Ceiling> ceilings,
                                  double l2_bytes = 0);
// The verdict on the kernel's time against `roof`: empty when it was not
// timed or has no roof.  For a kernel that moves bytes but does no FLOPs
// (copy), % of roof is achieved bytes/s over the memory ceiling's bandwidth.
RoofVerdict classify(const std::optional<KernelRoof>& roof, const KernelResult& kernel);
// Both halves at once: classify(roof_of(kernel, ceilings, l2_bytes), kernel).
RoofVerdict judge(const KernelResult& kernel, std::span<const Ceiling> ceilings,
                  double l2_bytes = 0);
// Whether the kernel's roof can change when `ceiling` does: every memory
// ceiling can (the best of a level is the roof; an L2 one moves an
// L2-resident kernel off DRAM), and the compute ceiling of its unit.
bool depends_on(const KernelResult& kernel, const Ceiling& ceiling);
// The verdict's fields of the kernel: roof, pct_of_roof, bound, memory_roof.
void set_verdict(KernelResult& kernel, const RoofVerdict& verdict);

// Fills intensity, roof, pct_of_roof and bound of every timed kernel from the
// measured ceilings.  Untimed kernels get no roof and bound "".  The harness
// calls this after the ceilings are measured.
void apply_roofline(std::span<KernelResult> kernels, std::span<const Ceiling> ceilings,
                    double l2_bytes = 0);
void apply_roofline(Results& results);  // with the context's L2 size

}  // namespace rl::roofline
