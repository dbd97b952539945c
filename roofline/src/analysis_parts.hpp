// What analysis.cpp (the GEMM views, ladder_steps) and analysis_attention.cpp
// (why fusion beats naive attention) share (internal).
#pragma once

#include "rl/roofline/analysis.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rl::roofline::analysis_detail {

std::optional<double> achieved_flops(const KernelResult& k);  // timed kernels only

// The order of the precision ladder, lower precision buying more; anything
// else (fp64, a spelling this build does not know) sorts after it.
int precision_rank(const ResultPrecision& precision);

// Its spelling, as the analysis rows carry it.
std::string spelled(const ResultPrecision& precision);

// `name`, its baseline, that one's baseline, ... down to the root of its
// ladder: the walk every ladder view takes.  A cycle ends the walk; the last
// name may be one `baseline_of` does not hold (a baseline not in the run).
std::vector<std::string> baseline_chain(const std::string& name,
                                        const std::map<std::string, std::string>& baseline_of);

// Hops from a kernel to the root of its baseline chain.
int ladder_depth(const std::string& name, const std::map<std::string, std::string>& baseline_of);

// The distinct shapes, in first-seen order.
std::vector<ShapeDims> shapes_of(const std::vector<const KernelResult*>& kernels);

// The fastest timed kernel among `candidates` satisfying `keep`.
template <class Keep>
const KernelResult* fastest(const std::vector<const KernelResult*>& candidates, Keep keep) {
  const KernelResult* best = nullptr;
  for (const KernelResult* k : candidates)
    if (timed(*k) && keep(*k) && (!best || k->time_s->median < best->time_s->median)) best = k;
  return best;
}

// Why fusion beats naive attention, per shape (analysis_attention.cpp).
std::vector<AttentionFusion> attention_fusion(const std::vector<const KernelResult*>& attention,
                                              const std::vector<Ceiling>& ceilings, bool emulator);

}  // namespace rl::roofline::analysis_detail
