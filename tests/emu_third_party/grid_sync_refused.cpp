// A kernel that asks for a grid-wide barrier.  Built normally without
// RL_CALL_GRID_SYNC (the grid queries compile); with it, the build must fail
// with grid_group::sync()'s static_assert (tests/emu_third_party/CMakeLists.txt).
#include <cooperative_groups.h>

#include "rl/cuda.hpp"

namespace cg = cooperative_groups;

__global__ void grid_sync_kernel(unsigned long long* out) {
  cg::grid_group grid = cg::this_grid();
  out[grid.thread_rank()] = grid.size();
#ifdef RL_CALL_GRID_SYNC
  grid.sync();
#endif
}

void launch_grid_sync_kernel(unsigned long long* out) {
  rl::launch(grid_sync_kernel, dim3(2), dim3(32), 0, nullptr, out);
}
