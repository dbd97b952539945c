// The odd-length cases every wgmma attention rung validates at, and the
// emulator's TMA log read as loads per tile (hopper_attention_test.cpp,
// hopper_attention_fp8_test.cpp).
#pragma once

#include "emu_kernel_test.hpp"
#include "rl/emu/hopper.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
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

// One tensor's TMA loads, tile by tile: the coordinate that moves from tile
// to tile (a row of Q, K or V in the [B·H·N, d] view, a column of the fp8
// rung's Vᵀ: the axis with more distinct values) -> the loads of the tile,
// counted once per box set (at d = 128 the 16-bit rungs load a 128-row tile
// as two 64-column boxes; each box must then be loaded as often).  `order`:
// the tile coordinates in the order of their first load.
struct TileLoads {
  std::map<int, int> per_tile;
  int boxes_per_tile = 0;
  bool boxes_loaded_alike = true;
  std::vector<int> order;
};

inline std::map<const void*, TileLoads> tile_loads(
    const std::vector<rl::emu::hopper::TmaLoadRecord>& log) {
  std::map<const void*, std::map<int, std::set<int>>> values;  // tensor -> axis -> values
  for (const auto& r : log)
    for (int axis = 0; axis < 2; ++axis) values[r.global][axis].insert(r.coords[axis]);
  std::map<const void*, std::map<std::pair<int, int>, int>> per_box;  // (tile, box) -> loads
  std::map<const void*, TileLoads> out;
  for (const auto& r : log) {
    const int tile_axis = values[r.global][1].size() >= values[r.global][0].size() ? 1 : 0;
    const int tile = r.coords[tile_axis];
    ++per_box[r.global][{tile, r.coords[1 - tile_axis]}];
    TileLoads& t = out[r.global];
    if (std::find(t.order.begin(), t.order.end(), tile) == t.order.end()) t.order.push_back(tile);
  }
  for (auto& [tensor, t] : out) {
    std::map<int, std::vector<int>> boxes;  // tile -> loads of each of its boxes
    for (const auto& [key, n] : per_box[tensor]) boxes[key.first].push_back(n);
    for (const auto& [tile, loads] : boxes) {
      if (t.boxes_per_tile == 0) t.boxes_per_tile = static_cast<int>(loads.size());
      t.boxes_loaded_alike = t.boxes_loaded_alike &&
                             static_cast<int>(loads.size()) == t.boxes_per_tile &&
                             std::count(loads.begin(), loads.end(), loads[0]) ==
                                 static_cast<std::ptrdiff_t>(loads.size());
      t.per_tile[tile] = loads[0];
    }
  }
  return out;
}

// Blocks run in launch order (block 0 first) with one emulator worker, the
// default; RL_EMU_THREADS > 1 runs them concurrently and the order of the
// log's first loads says nothing.
inline bool blocks_run_in_launch_order() {
  const char* threads = std::getenv("RL_EMU_THREADS");
  return threads == nullptr || *threads == '\0' || std::string(threads) == "1";
}

// Causal skipping proven, not assumed, from the emulator's TMA log of one
// validation of `workload` at N = 1000 (8 query tiles, 8 key tiles of 128):
// key tile j is loaded (as K and as V or Vᵀ) by the query tiles that reach it,
// all 8 without the mask and 8 - j with it (query tiles i >= j), 36 loads of
// each instead of 64; Q, the tensor loaded once per tile, once per query tile.
// And the causal balance, heaviest query tiles first: block 0, the first one
// launched, takes the last query tile, so Q's tiles are first loaded last to
// first.  `boxes_per_tile`: the boxes a tile of each tensor is loaded as (0:
// not checked); each box of a tile must be loaded as often.
inline void expect_query_tiles_load_only_the_key_tiles_they_reach_heaviest_first(
    rl::InspectableWorkload& workload, bool causal, int boxes_per_tile) {
  constexpr int kTiles = 8;
  rl::emu::hopper::record_tma_loads(true);
  const rl::Validation v = workload.validate(nullptr);
  rl::emu::hopper::record_tma_loads(false);
  ASSERT_TRUE(v.passed) << v.detail;
  const auto loads = tile_loads(rl::emu::hopper::recorded_tma_loads());
  ASSERT_EQ(loads.size(), 3u) << "Q, K and V (or Vᵀ)";
  int queries = 0, keys_and_values = 0;
  for (const auto& [tensor, t] : loads) {
    if (boxes_per_tile > 0) {
      EXPECT_EQ(t.boxes_per_tile, boxes_per_tile);
    }
    EXPECT_TRUE(t.boxes_loaded_alike);
    const bool is_q = std::all_of(t.per_tile.begin(), t.per_tile.end(),
                                  [](const auto& tile) { return tile.second == 1; });
    std::map<int, int> expected;
    for (int j = 0; j < kTiles; ++j) expected[128 * j] = is_q ? 1 : (causal ? kTiles - j : kTiles);
    EXPECT_EQ(t.per_tile, expected) << (is_q ? "Q" : "K or V");
    if (is_q && blocks_run_in_launch_order()) {
      EXPECT_EQ(t.order, (std::vector<int>{896, 768, 640, 512, 384, 256, 128, 0}))
          << "query tiles not issued heaviest first";
    }
    (is_q ? queries : keys_and_values) += 1;
  }
  EXPECT_EQ(queries, 1);
  EXPECT_EQ(keys_and_values, 2);
}

}  // namespace rl::test::attention
