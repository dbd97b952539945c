// Host threads that help run a launch's blocks (RL_EMU_THREADS > 1).
#pragma once

#include "block_state.hpp"

namespace rl::emu::detail {

// Runs `job` on the calling thread and `helpers` pool threads (started on
// first need, kept for later launches); returns when every one has finished.
// Launches through the pool run one at a time.
void run_with_helpers(Job& job, int helpers);

}  // namespace rl::emu::detail
