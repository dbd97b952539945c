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
//
// Exit status: 0 success; 1 compare found a SLOW kernel; 2 bad input (one
// line "roofline: ..." on stderr).
#pragma once

#include "rl/roofline/cost.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rl::roofline {

struct RegisteredKernel {
  std::string name, family, variant, precision;
  ComputeUnit unit = ComputeUnit::fp32;                     // the unit it runs on (as cost.unit)
  std::string baseline;                                     // naive sibling's name, or ""
  std::vector<std::pair<std::string, std::int64_t>> shape;  // the shape `cost` is for
  Cost cost;
};

int cli_main(int argc, char** argv, std::span<const RegisteredKernel> registered);

}  // namespace rl::roofline
