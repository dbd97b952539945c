#include "analysis_parts.hpp"

#include "rl/roofline/model.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

namespace rl::roofline {

bool timed(const KernelResult& k) {
  return k.status == Status::ok && k.time_s && k.time_s->median > 0;
}

namespace analysis_detail {

std::optional<double> achieved_flops(const KernelResult& k) {
  if (!timed(k)) return std::nullopt;
  return k.flops / k.time_s->median;
}

int precision_rank(const ResultPrecision& precision) {
  static constexpr std::array<Precision, 12> kOrder{
      Precision::fp32,  Precision::tf32, Precision::fp16,  Precision::bf16,
      Precision::fp8,   Precision::int8, Precision::mxfp8, Precision::fp6,
      Precision::mxfp6, Precision::fp4,  Precision::mxfp4, Precision::nvfp4};
  const std::optional<Precision> known = precision.known();
  const auto it = known ? std::find(kOrder.begin(), kOrder.end(), *known) : kOrder.end();
  return static_cast<int>(it - kOrder.begin());
}

std::string spelled(const ResultPrecision& precision) {
  return std::string(precision.spelling());
}

std::vector<std::string> baseline_chain(const std::string& name,
                                        const std::map<std::string, std::string>& baseline_of) {
  std::vector<std::string> chain{name};
  std::set<std::string> seen{name};
  for (auto it = baseline_of.find(name); it != baseline_of.end() && !it->second.empty();
       it = baseline_of.find(it->second)) {
    if (!seen.insert(it->second).second) break;
    chain.push_back(it->second);
  }
  return chain;
}

int ladder_depth(const std::string& name, const std::map<std::string, std::string>& baseline_of) {
  return static_cast<int>(baseline_chain(name, baseline_of).size()) - 1;
}

std::vector<ShapeDims> shapes_of(const std::vector<const KernelResult*>& kernels) {
  std::vector<ShapeDims> shapes;
  for (const KernelResult* k : kernels)
    if (std::find(shapes.begin(), shapes.end(), k->shape) == shapes.end())
      shapes.push_back(k->shape);
  return shapes;
}

}  // namespace analysis_detail

using namespace analysis_detail;

namespace {

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
  a.emulator = results.context.backend == Backend::emulator;
  a.attention_fusion = attention_fusion(attention, results.ceilings, a.emulator);
  return a;
}

}  // namespace rl::roofline
