// The `roofline` command line (CLI11).  The executable lives in bench/ and
// passes the kernel registry's entries in, so roofline/ never depends on
// kernels/:
//
//   roofline skus                                  the datasheet table and its sources
//   roofline model --sku NAME [--json]             ceilings, ridge points, where each
//                                                  registered kernel lands (predicted)
//   roofline plot results.json -o chart.svg
//   roofline report results.json -o report.html [--sku NAME]
//   roofline compare BASE.json NEW.json [--threshold PCT] [--alpha A] [--format md|json]
//   roofline fleet DIR... [-o OUT_DIR] [--threshold PCT] [--spread-k K] [--expect N]
//   roofline fleet --baseline BEFORE_DIR AFTER_DIR      (fleet.hpp)
//
// Exit status: 0 success; 1 compare found a SLOW kernel, or fleet an outlier
// or failed GPU; 2 bad input (one line "roofline: ..." on stderr); 3 compare
// or fleet cannot decide.
#pragma once

#include "rl/roofline/cost.hpp"
#include "rl/roofline/results.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rl::roofline {

struct RegisteredKernel {
  std::string name, family, variant, precision;
  ComputeUnit unit = ComputeUnit::fp32;  // the unit it runs on (as cost.unit)
  std::string baseline;                  // naive sibling's name, or ""
  int min_cc = 0;                        // minimum compute capability x10, 0 = any
  int max_cc = 0;                        // maximum compute capability x10, 0 = any
  ShapeDims shape;                       // the shape `cost` is for
  Cost cost;
  // The record's cost function: the model re-sizes a ceiling loop (a shape
  // with a "blocks" dimension, listed for the machine the CLI runs on) to one
  // full wave of the SKU it models.
  std::function<Cost(const ShapeDims&)> cost_of;
};

// `sm_count_listed`: the SM count of the device the registry's shapes were
// listed on (ceiling loops size their grids from it).  `version`: what
// --version prints.
int cli_main(int argc, char** argv, std::span<const RegisteredKernel> registered,
             int sm_count_listed = 1, const std::string& version = "");

}  // namespace rl::roofline
