// What the gate uses of the statistics beyond compare.hpp's public functions
// (internal).
#pragma once

namespace rl::roofline::stats {

// Upper-tail quantile of the standard normal: z with P(Z > z) = q, 0 < q < 1.
double normal_upper_quantile(double q);

}  // namespace rl::roofline::stats
