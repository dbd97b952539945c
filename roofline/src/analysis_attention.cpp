// Why fusion beats naive attention (analysis.hpp): per shape, every variant
// side by side, findings comparing the fastest naive with the fastest fused
// variant, and the story up each ladder, one generated sentence per step.
#include "analysis_parts.hpp"

#include "rl/roofline/model.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace rl::roofline::analysis_detail {

namespace {

bool is_naive(const KernelResult& k) {
  return k.name.find("naive") != std::string::npos || k.variant.find("naive") != std::string::npos;
}

double intensity_of(const KernelResult& k) {
  return k.bytes_model > 0 ? k.flops / k.bytes_model : 0;
}

std::string percent(double share) {
  return fmt::format("{:.0f}%", 100.0 * share);
}

// The roof `k`'s own verdict is of (apply_roofline's, read back, not redone):
// its unit's compute ceiling when that is what the verdict's roof is, else the
// memory ceiling it names (the sloped roof was lower at its intensity).
std::string roof_name_of(const KernelResult& k, const std::vector<Ceiling>& ceilings) {
  if (!k.pct_of_roof || k.bound == Bound::none) return "";
  const Ceiling* compute = compute_ceiling(ceilings, k.unit);
  const bool on_compute = k.bound == Bound::compute || (k.bound != Bound::memory && compute &&
                                                        k.roof && *k.roof >= compute->value);
  return on_compute ? std::string(compute_ceiling_name(k.unit)) : k.memory_roof;
}

// Bits per stored element (the scale factors of the block-scaled formats
// left out); 0 for a spelling this build does not know.
int element_bits(const std::string& precision) {
  const std::optional<Precision> p = parse_precision(precision);
  if (!p) return 0;
  switch (*p) {
    case Precision::fp64:
      return 64;
    case Precision::fp32:
    case Precision::tf32:
      return 32;  // tf32 is stored as fp32
    case Precision::fp16:
    case Precision::bf16:
      return 16;
    case Precision::fp8:
    case Precision::int8:
    case Precision::mxfp8:
      return 8;
    case Precision::fp6:
    case Precision::mxfp6:
      return 6;
    case Precision::fp4:
    case Precision::mxfp4:
    case Precision::nvfp4:
      return 4;
  }
  return 0;
}

// On the emulator the bound is said without the percentage, which does not
// hold there (the findings' last sentence says so).
std::string bound_text(const AttentionVariant& v, bool emulator) {
  if (v.bound == Bound::none) return "no roof measured";
  std::string text = v.bound == Bound::below_both   ? "below both roofs"
                     : v.bound == Bound::above_roof ? "above its roof: not trusted"
                                                    : fmt::format("{}-bound", to_string(v.bound));
  if (v.pct_of_roof && !emulator)
    text += fmt::format(", {:.0f}% of its {}", *v.pct_of_roof,
                        v.roof_name.empty() ? "roof" : v.roof_name + " roof");
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
        bound_text(*naive, emulator)));
  if (fused) {
    std::string text =
        fmt::format("The fused {} keeps S and P on chip and moves {}B{}, at {:.3g} FLOP/B ({})",
                    fused->name, si(fused->bytes_model),
                    naive && fused->bytes_model > 0
                        ? fmt::format(" ({:.3g}× less)", naive->bytes_model / fused->bytes_model)
                        : "",
                    fused->intensity, bound_text(*fused, emulator));
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
    out.emplace_back(
        "These times come from the CPU emulator, not a GPU: the bytes and intensities hold, the "
        "speed-ups and roof percentages do not.");
  return out;
}

// ------------------------------------------------------------ the story

// Why a step has no time, in words: the status and the recorded reason.
std::string why_not_run(const AttentionStep& s) {
  const std::string what = s.status == Status::skipped             ? "was skipped"
                           : s.status == Status::failed_validation ? "failed validation"
                           : s.status == Status::error             ? "failed"
                           : s.status == Status::ok                ? "ran but was not timed"
                                                                   : "was not measured";
  return s.error.empty() ? what : what + " (" + s.error + ")";
}

// `f` (> 1: fewer) as "as many", "f× less" or "1/f× more", after a comma.
std::string factor_text(double f, const std::string& same, const std::string& less,
                        const std::string& more) {
  if (std::abs(f - 1) < 0.005) return ", " + same;
  return f > 1 ? fmt::format(", {:.3g}× {}", f, less) : fmt::format(", {:.3g}× {}", 1 / f, more);
}

// "fp32 -> fp16: half the bytes per element, which is all of that factor":
// how much of a byte factor `f` the element size accounts for.
std::string precision_change(const std::string& from, const std::string& to, double f) {
  std::string text = from + " -> " + to;
  const int bits_from = element_bits(from), bits_to = element_bits(to);
  if (bits_from == 0 || bits_to == 0) return text;
  const double size = static_cast<double>(bits_to) / bits_from;
  text += size == 1     ? ": the same bytes per element"
          : size == 0.5 ? ": half the bytes per element"
                        : fmt::format(": {:.3g}× the bytes per element", size);
  if (size == 1) return text;
  const double beyond = f * size;  // the factor in elements moved
  if (std::abs(beyond - 1) < 0.005) return text + ", which is all of that factor";
  return text + ";" + factor_text(beyond, "", "less beyond that", "more beyond that").substr(1);
}

// What step `i` of `l` bought, from its fields alone: bytes and the factor
// against the last step below that ran (with a change of precision said),
// intensity, time and speed-up (said as slower when it is), % of its own roof
// (not on the emulator), the rung's idea; a step that did not run says why
// and what the next step is compared with.
std::string step_sentence(const AttentionLadder& l, std::size_t i, bool emulator) {
  const AttentionStep& s = l.steps[i];
  const std::string& below = s.compared_with;
  std::string text = s.name + (s.idea.empty() ? "" : " — " + s.idea + " —");
  const std::string missing =
      i == 0 && !l.missing_baseline.empty()
          ? "; its baseline " + l.missing_baseline +
                (l.missing_baseline_at_other_shapes ? " is not at this shape"
                                                    : " is not in this run")
          : "";
  // A change of precision against the step below buys bytes (and tensor
  // rate) of its own: said beside the factor and the speed-up, so that the
  // rung's idea is not credited with it.
  std::string from_precision;
  for (std::size_t j = 0; j < i; ++j)
    if (l.steps[j].name == below && l.steps[j].precision != s.precision)
      from_precision = l.steps[j].precision;
  if (!s.time_s) {
    text += " did not run here: it " + why_not_run(s) + missing;
    if (i + 1 < l.steps.size())
      text += below.empty() ? "; no step below it ran, so the next one has nothing to compare with"
                            : "; the next step is compared with " + below;
    return text + ".";
  }
  text += fmt::format(" moves {}B per the cost model", si(s.bytes_model));
  // A library's model is the compulsory traffic alone: its tiling is not
  // known, so a factor against a rung's re-reads is an upper bound.
  if (!s.library.empty() && s.bytes_model <= s.bytes_min)
    text += " (Q, K, V and O once: the library's own re-reads are not modelled)";
  if (s.bytes_factor) {
    const double f = *s.bytes_factor;
    text += factor_text(f, "as many as " + below, fmt::format("less than {}", below),
                        fmt::format("more than {}", below));
    if (!from_precision.empty())
      text += " (" + precision_change(from_precision, s.precision, f) + ")";
  }
  text += fmt::format(", at {:.3g} FLOP/B; {}{}s", s.intensity,
                      emulator ? "on the CPU emulator, not a GPU, it takes " : "it takes ",
                      si(*s.time_s));
  if (s.speedup) {
    text += fmt::format(", {:.2f}× {} than {}{}", *s.speedup >= 1 ? *s.speedup : 1 / *s.speedup,
                        *s.speedup >= 1 ? "faster" : "slower", below, emulator ? " there" : "");
    if (!from_precision.empty())
      text += " (its idea and the change to " + s.precision + " together)";
  }
  // Its own roof's percentage, which the emulator's times do not give; above
  // the roof is not trusted, as the findings say.
  const bool above = s.bound == Bound::above_roof;
  const std::string roof = s.roof_name.empty() ? "roof" : s.roof_name + " roof";
  if (s.pct_of_roof && !emulator)  // 1234%, not 1.23e+03%
    text += fmt::format(", {}% of its {}{}",
                        *s.pct_of_roof >= 100 ? fmt::format("{:.0f}", *s.pct_of_roof)
                                              : fmt::format("{:.3g}", *s.pct_of_roof),
                        roof, above ? ": above it, not trusted" : "");
  else if (above)
    text += ", above its roof: not trusted";
  if (i > 0 && below.empty()) text += "; no step below it ran";
  return text + missing + ".";
}

AttentionStep step_of(const KernelResult& k, const std::vector<Ceiling>& ceilings) {
  AttentionStep s;
  s.name = k.name;
  s.precision = spelled(k.precision);
  s.idea = k.idea;
  s.library = k.library;
  s.status = k.status;
  s.error = k.error;
  s.bytes_min = k.bytes_min;
  s.bytes_model = k.bytes_model;
  s.intensity = intensity_of(k);
  if (timed(k)) s.time_s = k.time_s->median;
  s.pct_of_roof = k.pct_of_roof;
  s.roof_name = roof_name_of(k, ceilings);
  s.bound = k.bound;
  return s;
}

// The ladders at one shape (`here`, naive first, then by name): for each
// precision, its top rung (a hand-written record no record here names as its
// baseline, the deepest), walked down its declared baselines (the walk every
// ladder view takes) and read back up, then the library's fused record of
// that precision (the fastest timed, else the first by name).
std::vector<AttentionLadder> attention_ladders(const std::vector<const KernelResult*>& here,
                                               const std::set<std::string>& in_run,
                                               const std::vector<Ceiling>& ceilings,
                                               bool emulator) {
  std::map<std::string, const KernelResult*> by_name;
  std::map<std::string, std::string> baseline_of;
  std::set<std::string> built_on;
  for (const KernelResult* k : here) {
    by_name.emplace(k->name, k);
    baseline_of.emplace(k->name, k->baseline);
    if (!k->baseline.empty()) built_on.insert(k->baseline);
  }
  auto rank = [&](const KernelResult* k) {
    return std::make_tuple(-ladder_depth(k->name, baseline_of), is_naive(*k), k->name);
  };
  std::map<std::pair<int, std::string>, const KernelResult*> tops;  // by precision
  for (const KernelResult* k : here) {
    if (!k->library.empty() || built_on.count(k->name)) continue;
    const KernelResult*& top = tops[{precision_rank(k->precision), spelled(k->precision)}];
    if (!top || rank(k) < rank(top)) top = k;
  }
  std::vector<AttentionLadder> out;
  for (const auto& [precision, top] : tops) {
    AttentionLadder ladder;
    ladder.precision = precision.second;
    std::vector<std::string> names = baseline_chain(top->name, baseline_of);
    std::reverse(names.begin(), names.end());
    if (!by_name.count(names.front())) {
      ladder.missing_baseline = names.front();
      ladder.missing_baseline_at_other_shapes = in_run.count(names.front()) > 0;
      names.erase(names.begin());
    }
    std::vector<const KernelResult*> rungs;
    for (const std::string& name : names) rungs.push_back(by_name.at(name));
    auto closes = [&](const KernelResult& l) {
      return !l.library.empty() && !is_naive(l) && l.precision == top->precision &&
             std::find(names.begin(), names.end(), l.name) == names.end();
    };
    const KernelResult* library = fastest(here, closes);
    for (const KernelResult* k : here)
      if (!library && closes(*k)) library = k;
    if (library) rungs.push_back(library);
    if (rungs.size() < 2) continue;
    const KernelResult* last_ran = nullptr;
    for (const KernelResult* k : rungs) {
      AttentionStep s = step_of(*k, ceilings);
      if (last_ran) s.compared_with = last_ran->name;
      if (last_ran && s.time_s) {
        if (s.bytes_model > 0) s.bytes_factor = last_ran->bytes_model / s.bytes_model;
        s.speedup = last_ran->time_s->median / *s.time_s;
      }
      if (timed(*k)) last_ran = k;
      ladder.steps.push_back(std::move(s));
    }
    for (std::size_t i = 0; i < ladder.steps.size(); ++i)
      ladder.steps[i].sentence = step_sentence(ladder, i, emulator);
    out.push_back(std::move(ladder));
  }
  return out;
}

AttentionVariant variant_of(const KernelResult& k, const std::vector<const KernelResult*>& here,
                            const std::vector<Ceiling>& ceilings) {
  AttentionVariant v;
  v.name = k.name;
  v.precision = spelled(k.precision);
  v.status = k.status;
  v.error = k.error;
  v.naive = is_naive(k);
  v.bytes_model = k.bytes_model;
  v.intensity = intensity_of(k);
  v.extra_traffic_share =
      k.bytes_model > 0 ? std::max(0.0, (k.bytes_model - k.bytes_min) / k.bytes_model) : 0;
  if (timed(k)) {
    v.time_s = k.time_s->median;
    v.flops_per_s = achieved_flops(k);
  }
  v.pct_of_roof = k.pct_of_roof;
  v.device_bytes = k.device_bytes;
  v.bound = k.bound;
  v.roof_name = roof_name_of(k, ceilings);
  if (!v.naive && v.time_s) {
    const KernelResult* ref = fastest(
        here, [&](const KernelResult& n) { return is_naive(n) && n.precision == k.precision; });
    if (!ref) ref = fastest(here, [](const KernelResult& n) { return is_naive(n); });
    if (ref) {
      v.speedup = ref->time_s->median / *v.time_s;
      v.speedup_over = ref->name;
    }
  }
  return v;
}

}  // namespace

std::vector<AttentionFusion> attention_fusion(const std::vector<const KernelResult*>& attention,
                                              const std::vector<Ceiling>& ceilings, bool emulator) {
  std::vector<AttentionFusion> out;
  std::set<std::string> in_run;
  for (const KernelResult* k : attention) in_run.insert(k->name);
  for (const ShapeDims& shape : shapes_of(attention)) {
    std::vector<const KernelResult*> here;
    for (const KernelResult* k : attention)
      if (k->shape == shape) here.push_back(k);
    std::stable_sort(here.begin(), here.end(), [](const KernelResult* a, const KernelResult* b) {
      return std::make_tuple(!is_naive(*a), a->name) < std::make_tuple(!is_naive(*b), b->name);
    });
    AttentionFusion fusion{shape, {}, {}, {}};
    for (const KernelResult* k : here) fusion.variants.push_back(variant_of(*k, here, ceilings));
    fusion.findings = fusion_findings(fusion.variants, shape, emulator);
    fusion.ladders = attention_ladders(here, in_run, ceilings, emulator);
    out.push_back(std::move(fusion));
  }
  return out;
}

}  // namespace rl::roofline::analysis_detail
