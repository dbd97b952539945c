// The persistent wgmma rungs (gemm_wgmma_persistent_sm90a.cu and
// gemm_wgmma_tma_store_sm90a.cu) under the
// emulator as a Hopper (RL_EMU_CC=90, with hopper_kernels_test.cpp): its
// grouped tile order (gemm_tile_order.hpp) visits every tile once and keeps
// the panels its header says in flight, and its CTAs, one per "SM" (the
// emulator's worker threads), each walk several tiles with the ring running
// on from tile to tile.
#include "emu_kernel_test.hpp"
#include "gemm/gemm_tile_order.hpp"
#include "gemm/gemm_workload.hpp"
#include "rl/emu/launch.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using rl::gemm::GroupedTileOrder;
using rl::gemm::TilePosition;

// Every tile number maps to a distinct tile, for bands that divide the rows
// and bands whose last one is narrower.
TEST(GroupedTileOrder, visits_every_tile_exactly_once) {
  for (const GroupedTileOrder order :
       {GroupedTileOrder{64, 32, 16}, GroupedTileOrder{3, 3, 16}, GroupedTileOrder{37, 5, 16},
        GroupedTileOrder{1, 7, 4}, GroupedTileOrder{9, 1, 4}}) {
    SCOPED_TRACE(std::to_string(order.row_tiles) + " x " + std::to_string(order.col_tiles));
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < order.tiles(); ++t) {
      const TilePosition p = order.position(t);
      ASSERT_GE(p.row_tile, 0);
      ASSERT_LT(p.row_tile, order.row_tiles);
      ASSERT_GE(p.col_tile, 0);
      ASSERT_LT(p.col_tile, order.col_tiles);
      EXPECT_TRUE(seen.insert({p.row_tile, p.col_tile}).second) << "tile " << t;
    }
  }
}

// The header's arithmetic: at 8192 x 8192 with 128 x 256 tiles (64 x 32),
// the 132 tiles an H100 runs at once span 16 row tiles and 9 column tiles,
// where row-major order spans 5 row tiles and all 32 column tiles.
TEST(GroupedTileOrder, a_wave_of_132_tiles_holds_16_a_panels_and_9_b_panels_at_8192) {
  const GroupedTileOrder grouped{64, 32, 16};
  std::set<int> rows, cols;
  for (int t = 0; t < 132; ++t) {
    rows.insert(grouped.position(t).row_tile);
    cols.insert(grouped.position(t).col_tile);
  }
  EXPECT_EQ(rows.size(), 16u);
  EXPECT_EQ(cols.size(), 9u);
  const GroupedTileOrder row_major{64, 32, 1};  // bands of one row: the rung below's order
  rows.clear();
  cols.clear();
  for (int t = 0; t < 132; ++t) {
    rows.insert(row_major.position(t).row_tile);
    cols.insert(row_major.position(t).col_tile);
  }
  EXPECT_EQ(rows.size(), 5u);
  EXPECT_EQ(cols.size(), 32u);
}

// On two "SMs" a 129 x 264 x 136 problem has 2 x 2 tiles of 3 k-tiles: each
// CTA walks 2 tiles, and with 3 k-tiles on a 4-stage ring its second tile
// starts at stage 3 and wraps into the ring's second use; a ring restarted
// per tile, or a tile skipped, fails validation (C starts poisoned).
TEST(WgmmaPersistent, two_ctas_walk_two_tiles_each_with_the_ring_running_on) {
  const int workers = rl::emu::worker_threads();
  rl::emu::set_worker_threads(2);
  for (const char* name : {"gemm_wgmma_persistent_bf16", "gemm_wgmma_persistent_fp16"}) {
    SCOPED_TRACE(name);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    // The fp16 twin is the same template (same addresses and orderings).
    if (std::string(name).ends_with("_fp16")) continue;
#endif
    auto workload =
        rl::test::make_inspectable_workload(name, rl::gemm::make_shape(129, 264, 136), 13);
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
  rl::emu::set_worker_threads(workers);
}

// The TMA-store rung (gemm_wgmma_tma_store_sm90a.cu) on the same four tiles:
// each consumer warp stores 8 boxes a tile through two buffers, so each
// buffer is reused 8 times; the emulator writes a box only at the wait that
// covers it, so a buffer overwritten before its store has read it gives a
// wrong C.  (N not a multiple of 4, where no C tensor map exists and the
// launcher stores directly, is hopper_kernels_test's padded shape.)
TEST(WgmmaTmaStore, two_ctas_store_four_tiles_through_double_buffered_boxes) {
  const int workers = rl::emu::worker_threads();
  rl::emu::set_worker_threads(2);
  auto workload = rl::test::make_inspectable_workload("gemm_wgmma_tma_store_bf16",
                                                      rl::gemm::make_shape(129, 264, 136), 17);
  ASSERT_NE(workload, nullptr);
  rl::test::expect_passes_under_two_schedules(*workload);
  rl::emu::set_worker_threads(workers);
}

}  // namespace
