// Runs a launch's blocks on the calling host thread.
#pragma once

#include "block_state.hpp"

namespace rl::emu::detail {

// Takes the launch's clusters of blocks (single blocks without a cluster
// shape) one after another (job.next_cluster, shared with every other worker
// running the same job) until none is left or one fails;
// the first failure is filed in the job.
void run_blocks(Job& job);

}  // namespace rl::emu::detail
