// What the fleet's loading, analysis and pages share (internal): how a
// kernel, a group and a list of GPUs are named in text.
#pragma once

#include "rl/roofline/fleet.hpp"
#include "rl/roofline/results.hpp"

#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace rl::roofline::fleet_detail {

// "gemm_bf16_wmma [M=256,N=256,K=256]": a kernel at one shape.
inline std::string shape_label(const KernelResult& k) {
  return fmt::format("{} [{}]", k.name, shape_text(k.shape));
}

inline std::string group_title(const FleetGroup& g) {
  return fmt::format("{} ({}, {} preset)", g.model, to_string(g.backend), g.size_preset);
}

// The labels of the runs `which`, the first `cap` of them.
inline std::string run_list(const FleetReport& r, const std::vector<std::size_t>& which,
                            std::size_t cap = 8) {
  std::string s;
  for (std::size_t i = 0; i < which.size() && i < cap; ++i)
    s += (i ? ", " : "") + r.runs[which[i]].label();
  if (which.size() > cap) s += fmt::format(" and {} more", which.size() - cap);
  return s;
}

inline std::string pct(double relative) {
  return fmt::format("{:.3g}%", relative * 100);
}

}  // namespace rl::roofline::fleet_detail
