// results.json's "analysis" block (internal): derived from the kernels and
// ceilings (analysis.hpp), written for scripts, never read back: a reader that
// needs the analysis computes it with analyse().
#pragma once

#include "rl/roofline/results.hpp"

namespace rl::roofline::results_json {

// analyse(results) as JSON; J is nlohmann::json or nlohmann::ordered_json.
template <class J>
J analysis_json(const Results& results);

}  // namespace rl::roofline::results_json
