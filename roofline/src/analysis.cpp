#include "rl/roofline/analysis.hpp"

#include "rl/roofline/model.hpp"
#include "rl/roofline/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace rl::roofline {

bool timed(const KernelResult& k) {
  return k.status == Status::ok && k.time_s && k.time_s->median > 0;
}

namespace {

std::optional<double> achieved_flops(const KernelResult& k) {
  if (!timed(k)) return std::nullopt;
  return k.flops / k.time_s->median;
}

// The order of the precision ladder, lower precision buying more; anything
// else (fp64, a spelling this build does not know) sorts after it, by spelling.
int precision_rank(const ResultPrecision& precision) {
  static constexpr std::array<Precision, 12> kOrder{
      Precision::fp32,  Precision::tf32, Precision::fp16,  Precision::bf16,
      Precision::fp8,   Precision::int8, Precision::mxfp8, Precision::fp6,
      Precision::mxfp6, Precision::fp4,  Precision::mxfp4, Precision::nvfp4};
  const std::optional<Precision> known = precision.known();
  const auto it = known ? std::find(kOrder.begin(), kOrder.end(), *known) : kOrder.end();
  return static_cast<int>(it - kOrder.begin());
}

// Its spelling, as the analysis rows carry it.
std::string spelled(const ResultPrecision& precision) {
  return std::string(precision.spelling());
}

// Hops from a kernel to the root of its baseline chain (cycles and unknown
// names end the walk).
int ladder_depth(const std::string& name, const std::map<std::string, std::string>& baseline_of) {
  int depth = 0;
  std::set<std::string> seen{name};
  for (auto it = baseline_of.find(name); it != baseline_of.end() && !it->second.empty();
       it = baseline_of.find(it->second)) {
    if (!seen.insert(it->second).second) break;
    ++depth;
  }
  return depth;
}

std::vector<ShapeDims> shapes_of(const std::vector<const KernelResult*>& kernels) {
  std::vector<ShapeDims> shapes;
  for (const KernelResult* k : kernels)
    if (std::find(shapes.begin(), shapes.end(), k->shape) == shapes.end())
      shapes.push_back(k->shape);
  return shapes;
}

// The fastest timed kernel among `candidates` satisfying `keep`.
template <class Keep>
const KernelResult* fastest(const std::vector<const KernelResult*>& candidates, Keep keep) {
  const KernelResult* best = nullptr;
  for (const KernelResult* k : candidates)
    if (timed(*k) && keep(*k) && (!best || k->time_s->median < best->time_s->median)) best = k;
  return best;
}

// ---------------------------------------------------------------- GEMM

std::vector<GemmLadder> gemm_ladders(const std::vector<const KernelResult*>& gemm) {
  std::map<std::string, std::string> baseline_of;
  for (const KernelResult* k : gemm) baseline_of.emplace(k->name, k->baseline);
  std::vector<GemmLadder> ladders;
  for (const ShapeDims& shape : shapes_of(gemm)) {
    std::vector<const KernelResult*> here;
    for (const KernelResult* k : gemm)
      if (k->shape == shape) here.push_back(k);
    std::stable_sort(here.begin(), here.end(), [&](const KernelResult* a, const KernelResult* b) {
      auto key = [&](const KernelResult* k) {
        return std::make_tuple(precision_rank(k->precision), k->precision.spelling(),
                               !k->library.empty(), ladder_depth(k->name, baseline_of), k->name);
      };
      return key(a) < key(b);
    });
    GemmLadder ladder{shape, {}};
    for (const KernelResult* k : here) {
      LadderRung rung{.name = k->name,
                      .variant = k->variant,
                      .precision = spelled(k->precision),
                      .idea = k->idea,
                      .library = k->library,
                      .status = k->status,
                      .error = k->error,
                      .flops_per_s = achieved_flops(*k),
                      .pct_of_library = std::nullopt,
                      .library_reference = "",
                      .pct_of_roof = k->pct_of_roof};
      const KernelResult* library = fastest(here, [&](const KernelResult& l) {
        return !l.library.empty() && l.precision == k->precision;
      });
      if (library && library != k) {
        rung.library_reference = library->name;
        if (timed(*k)) rung.pct_of_library = 100.0 * library->time_s->median / k->time_s->median;
      }
      ladder.rungs.push_back(std::move(rung));
    }
    ladders.push_back(std::move(ladder));
  }
  return ladders;
}

std::optional<PrecisionLadder> precision_ladder(const std::vector<const KernelResult*>& gemm,
                                                const std::vector<Ceiling>& ceilings) {
  std::optional<PrecisionLadder> best;
  std::size_t best_count = 0;
  double best_flops = 0;
  for (const ShapeDims& shape : shapes_of(gemm)) {
    std::vector<const KernelResult*> here;
    for (const KernelResult* k : gemm)
      if (k->shape == shape) here.push_back(k);
    std::set<std::pair<int, std::string>> precisions;  // rank, spelling
    for (const KernelResult* k : here)
      if (timed(*k)) precisions.emplace(precision_rank(k->precision), spelled(k->precision));
    const double flops = here.empty() ? 0.0 : here.front()->flops;
    if (precisions.size() < 2 || precisions.size() < best_count ||
        (precisions.size() == best_count && flops <= best_flops))
      continue;
    PrecisionLadder ladder{shape, {}};
    for (const auto& [rank, precision] : precisions) {
      PrecisionStep step;
      step.precision = precision;
      if (const KernelResult* k = fastest(here, [&](const KernelResult& c) {
            return c.library.empty() && c.precision.spelling() == precision;
          })) {
        step.kernel = k->name;
        step.flops_per_s = achieved_flops(*k);
      }
      if (const KernelResult* l = fastest(here, [&](const KernelResult& c) {
            return !c.library.empty() && c.precision.spelling() == precision;
          })) {
        step.library = l->name;
        step.library_flops_per_s = achieved_flops(*l);
      }
      for (const KernelResult* k : here) {
        if (k->precision.spelling() != precision) continue;
        step.roof_name = std::string(compute_ceiling_name(k->unit));
        if (const Ceiling* c = compute_ceiling(ceilings, k->unit)) step.roof = c->value;
        break;
      }
      ladder.steps.push_back(std::move(step));
    }
    best = std::move(ladder);
    best_count = precisions.size();
    best_flops = flops;
  }
  return best;
}

// ---------------------------------------------------------------- attention

bool is_naive(const KernelResult& k) {
  return k.name.find("naive") != std::string::npos || k.variant.find("naive") != std::string::npos;
}

std::string percent(double share) {
  return fmt::format("{:.0f}%", 100.0 * share);
}

std::string bound_text(const AttentionVariant& v) {
  if (v.bound == Bound::none) return "no roof measured";
  std::string text = v.bound == Bound::below_both   ? "below both roofs"
                     : v.bound == Bound::above_roof ? "above its roof: not trusted"
                                                    : fmt::format("{}-bound", to_string(v.bound));
  if (v.pct_of_roof) text += fmt::format(", {:.0f}% of its roof", *v.pct_of_roof);
  return text;
}

std::vector<std::string> fusion_findings(const std::vector<AttentionVariant>& variants,
                                         const ShapeDims& shape, bool emulator) {
  std::vector<std::string> out;
  const AttentionVariant* naive = nullptr;
  const AttentionVariant* fused = nullptr;
  for (const AttentionVariant& v : variants) {
    if (!v.time_s) continue;
    const AttentionVariant*& slot = v.naive ? naive : fused;
    if (!slot || *v.time_s < *slot->time_s) slot = &v;
  }
  if (naive)
    out.push_back(fmt::format(
        "The naive path ({}) moves {}B per the cost model, {} of it the N×N matrices S and P "
        "written to memory and read back; its intensity is {:.3g} FLOP/B ({}).",
        naive->name, si(naive->bytes_model), percent(naive->extra_traffic_share), naive->intensity,
        bound_text(*naive)));
  if (fused) {
    std::string text =
        fmt::format("The fused {} keeps S and P on chip and moves {}B{}, at {:.3g} FLOP/B ({})",
                    fused->name, si(fused->bytes_model),
                    naive && fused->bytes_model > 0
                        ? fmt::format(" ({:.3g}× less)", naive->bytes_model / fused->bytes_model)
                        : "",
                    fused->intensity, bound_text(*fused));
    if (fused->speedup)
      text += fmt::format("; it runs {:.2f}× faster than {}", *fused->speedup, fused->speedup_over);
    out.push_back(text + ".");
  }
  for (const AttentionVariant& v : variants) {
    if (!v.naive || v.status != Status::skipped ||
        v.error.find("device memory") == std::string::npos)
      continue;
    std::string text =
        fmt::format("At {} {} did not run: it {}", shape_text(shape), v.name, v.error);
    for (const AttentionVariant& f : variants)
      if (!f.naive && f.device_bytes) {
        text += fmt::format("; {} needs {}B", f.name, si(*f.device_bytes));
        break;
      }
    out.push_back(text + ".");
  }
  if (emulator && (naive || fused))
    out.push_back(
        "These times come from the CPU emulator, not a GPU: the bytes and intensities hold, the "
        "speed-ups and roof percentages do not.");
  return out;
}

std::vector<AttentionFusion> attention_fusion(const std::vector<const KernelResult*>& attention,
                                              bool emulator) {
  std::vector<AttentionFusion> out;
  for (const ShapeDims& shape : shapes_of(attention)) {
    std::vector<const KernelResult*> here;
    for (const KernelResult* k : attention)
      if (k->shape == shape) here.push_back(k);
    std::stable_sort(here.begin(), here.end(), [](const KernelResult* a, const KernelResult* b) {
      return std::make_tuple(!is_naive(*a), a->name) < std::make_tuple(!is_naive(*b), b->name);
    });
    AttentionFusion fusion{shape, {}, {}};
    for (const KernelResult* k : here) {
      AttentionVariant v;
      v.name = k->name;
      v.precision = spelled(k->precision);
      v.status = k->status;
      v.error = k->error;
      v.naive = is_naive(*k);
      v.bytes_model = k->bytes_model;
      v.intensity = k->bytes_model > 0 ? k->flops / k->bytes_model : 0;
      v.extra_traffic_share =
          k->bytes_model > 0 ? std::max(0.0, (k->bytes_model - k->bytes_min) / k->bytes_model) : 0;
      if (timed(*k)) {
        v.time_s = k->time_s->median;
        v.flops_per_s = achieved_flops(*k);
      }
      v.pct_of_roof = k->pct_of_roof;
      v.device_bytes = k->device_bytes;
      v.bound = k->bound;
      if (!v.naive && v.time_s) {
        const KernelResult* ref = fastest(here, [&](const KernelResult& n) {
          return is_naive(n) && n.precision == k->precision;
        });
        if (!ref) ref = fastest(here, [](const KernelResult& n) { return is_naive(n); });
        if (ref) {
          v.speedup = ref->time_s->median / *v.time_s;
          v.speedup_over = ref->name;
        }
      }
      fusion.variants.push_back(std::move(v));
    }
    fusion.findings = fusion_findings(fusion.variants, shape, emulator);
    out.push_back(std::move(fusion));
  }
  return out;
}

}  // namespace

std::vector<LadderStep> ladder_steps(const Results& results) {
  std::map<std::string, std::string> baseline_of;
  for (const KernelResult& k : results.kernels) baseline_of.emplace(k.name, k.baseline);
  static const std::vector<std::string> kOrder{"gelu", "bias_gelu", "layernorm", "gemm",
                                               "attention"};
  auto family_rank = [](const std::string& f) {
    return static_cast<int>(std::find(kOrder.begin(), kOrder.end(), f) - kOrder.begin());
  };
  std::vector<std::pair<std::tuple<int, std::string, std::string, int, std::string>, LadderStep>>
      keyed;
  for (const KernelResult& k : results.kernels) {
    if (k.baseline.empty() || k.family == "ceilings") continue;
    for (const KernelResult& base : results.kernels) {
      if (base.name != k.baseline || base.shape != k.shape) continue;
      LadderStep step{.family = k.family,
                      .shape = k.shape,
                      .rung = k.name,
                      .baseline = base.name,
                      .idea = k.idea,
                      .precision = spelled(k.precision),
                      .rung_time_s = std::nullopt,
                      .baseline_time_s = std::nullopt,
                      .gain = std::nullopt};
      if (timed(k)) step.rung_time_s = k.time_s->median;
      if (timed(base)) step.baseline_time_s = base.time_s->median;
      if (step.rung_time_s && step.baseline_time_s)
        step.gain = *step.baseline_time_s / *step.rung_time_s;
      keyed.push_back({{family_rank(k.family), k.family, shape_text(k.shape),
                        ladder_depth(k.name, baseline_of), k.name},
                       std::move(step)});
      break;
    }
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<LadderStep> out;
  for (auto& [key, step] : keyed) out.push_back(std::move(step));
  return out;
}

Analysis analyse(const Results& results) {
  std::vector<const KernelResult*> gemm, attention;
  for (const KernelResult& k : results.kernels) {
    if (k.family == "gemm") gemm.push_back(&k);
    if (k.family == "attention") attention.push_back(&k);
  }
  Analysis a;
  a.gemm_ladders = gemm_ladders(gemm);
  if (!gemm.empty()) a.precision_ladder = precision_ladder(gemm, results.ceilings);
  a.attention_fusion = attention_fusion(attention, results.context.backend == Backend::emulator);
  return a;
}

}  // namespace rl::roofline
