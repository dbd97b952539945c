// The odd-length cases every wgmma attention rung validates at
// (hopper_attention_test.cpp, hopper_attention_fp8_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace rl::test::attention {

// N = 1 (one key, one row of a 128-row tile), 17 (less than a tile), 129
// (one past a 128-key tile: a ragged tile of one key and one query row) and
// 200 (two key tiles for query tile 0, so the running max and the rescale
// of O_acc carry across tiles, and the second consumer's rows are partly
// past N); d = 64 and 128 (one and two 64-column boxes per tile).  Two heads
// (B = 1, H = 2): a tile of head 0's last rows reads head 1's first ones
// from the [B·H·N, d] view, which the mask must hide.
struct Case {
  std::int64_t N, d;
  bool causal;
};

// Under racecheck, four of the sixteen: every path (a ragged tile, two key
// tiles with the rescale and the producer's "empty" waits, both head dims,
// causal and not) at a quarter of the 32 s a record the sixteen take there.
std::vector<Case> odd_length_cases() {
#if defined(__SANITIZE_THREAD__)
  return {{17, 64, false}, {200, 64, true}, {129, 128, false}, {200, 128, true}};
#else
  std::vector<Case> cases;
  for (const std::int64_t d : {64, 128})
    for (const std::int64_t N : {1, 17, 129, 200})
      for (const bool causal : {false, true}) cases.push_back({N, d, causal});
  return cases;
#endif
}

}  // namespace rl::test::attention
