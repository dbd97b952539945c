#include "rl/bench/policy.hpp"

#include <algorithm>
#include <cmath>

namespace rl::bench {

int launches_per_sample(double single_launch_seconds) {
  if (!(single_launch_seconds > 0) || single_launch_seconds >= kBatchBelowSeconds) return 1;
  const double count = std::ceil(kBatchTargetSeconds / single_launch_seconds);
  return static_cast<int>(std::min(count, static_cast<double>(kMaxLaunchesPerSample)));
}

}  // namespace rl::bench
