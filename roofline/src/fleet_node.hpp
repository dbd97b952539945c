// `roofline fleet` on node runs (issue 29 item 5), internal: a slow link
// inside one run's node records is an outlier of that run.
#pragma once

#include "rl/roofline/fleet.hpp"

#include <cstddef>
#include <vector>

namespace rl::roofline::fleet_detail {

// For a GPU run (not the emulator, whose times say nothing about a link): each
// pair or device the node report's verdicts call slow (node_report.hpp: below
// kSlowFraction of the median of its link type), naming the GPU with its peer.
void add_node_outliers(std::size_t run, const Results& results,
                       std::vector<FleetOutlier>& outliers);

}  // namespace rl::roofline::fleet_detail
