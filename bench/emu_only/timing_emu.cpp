// The emulator backend's side of the timed region (rl/bench/timing.hpp).  The
// emulator has no cache and runs a launch when it is called, so the flush is
// the scratch write alone and the blocker holds nothing; the harness's code
// path (block, flush, time, release, check) is the same as on a GPU.
#include "rl/bench/timing.hpp"

namespace rl::bench {

L2Flusher::L2Flusher(std::size_t l2_bytes) : written_(2 * l2_bytes) {}

L2Flusher::~L2Flusher() = default;

void L2Flusher::flush(cudaStream_t stream) {
  if (written_.size() == 0) return;
  RL_CUDA_CHECK(cudaMemsetAsync(written_.get(), ++fill_, written_.bytes(), stream));
}

LaunchBlocker::LaunchBlocker() = default;
LaunchBlocker::~LaunchBlocker() = default;
void LaunchBlocker::block(cudaStream_t) {}
void LaunchBlocker::release() {}
bool LaunchBlocker::timed_out() const {
  return false;
}

}  // namespace rl::bench
