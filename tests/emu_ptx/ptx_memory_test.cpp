// ldmatrix and cp.async emulation against the PTX tables
// (ptx-emulation-reference.md sections 4 and 5), and the streaming 128-bit
// global accesses (cache hints only: plain copies that keep PTX's alignment
// rule).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>

#include "rl/emu/ptx_warp.hpp"

namespace {

using rl::emu::ptx::kWarpLanes;

// A 16-bit element value that encodes its (row, col) in a 16 x 16 tile.
std::uint16_t tag(int row, int col) {
  return static_cast<std::uint16_t>(0x100 * row + col);
}

struct alignas(16) Tile16x16 {
  std::uint16_t v[16][16];
  Tile16x16() {
    for (int r = 0; r < 16; ++r)
      for (int c = 0; c < 16; ++c) v[r][c] = tag(r, c);
  }
};

std::uint32_t pair(std::uint16_t low, std::uint16_t high) {
  return static_cast<std::uint32_t>(low) | (static_cast<std::uint32_t>(high) << 16U);
}

// The worked example of section 4: lane L gives &A[L % 16][8 * (L / 16)];
// x4 then yields exactly the f16 mma A fragment of section 1.
TEST(Ldmatrix, x4_of_a_row_major_tile_is_the_mma_a_fragment) {
  const Tile16x16 a;
  const void* rows[kWarpLanes];
  for (int lane = 0; lane < kWarpLanes; ++lane) rows[lane] = &a.v[lane % 16][8 * (lane / 16)];
  std::uint32_t out[kWarpLanes][4] = {};
  rl::emu::ptx::ldmatrix_warp(4, false, rows, out);
  for (int lane = 0; lane < kWarpLanes; ++lane) {
    const int g = lane >> 2, t = lane % 4;
    EXPECT_EQ(out[lane][0], pair(tag(g, 2 * t), tag(g, 2 * t + 1))) << lane;
    EXPECT_EQ(out[lane][1], pair(tag(g + 8, 2 * t), tag(g + 8, 2 * t + 1))) << lane;
    EXPECT_EQ(out[lane][2], pair(tag(g, 2 * t + 8), tag(g, 2 * t + 9))) << lane;
    EXPECT_EQ(out[lane][3], pair(tag(g + 8, 2 * t + 8), tag(g + 8, 2 * t + 9))) << lane;
  }
}

// B stored row-major K x N: lane L gives &B[L % 16][n0]; x2.trans yields the
// mma B fragment: b0 = (2t, g), b1 = (2t+1, g), b2 = (2t+8, g), b3 = (2t+9, g).
TEST(Ldmatrix, x2_trans_of_a_row_major_k_by_n_tile_is_the_mma_b_fragment) {
  const Tile16x16 b;  // b.v[k][n]
  for (int n0 : {0, 8}) {
    const void* rows[kWarpLanes];
    for (int lane = 0; lane < kWarpLanes; ++lane) rows[lane] = &b.v[lane % 16][n0];
    std::uint32_t out[kWarpLanes][4] = {};
    rl::emu::ptx::ldmatrix_warp(2, true, rows, out);
    for (int lane = 0; lane < kWarpLanes; ++lane) {
      const int g = lane >> 2, t = lane % 4;
      EXPECT_EQ(out[lane][0], pair(tag(2 * t, n0 + g), tag(2 * t + 1, n0 + g))) << lane;
      EXPECT_EQ(out[lane][1], pair(tag(2 * t + 8, n0 + g), tag(2 * t + 9, n0 + g))) << lane;
    }
  }
}

// Rows need not be contiguous: each lane's address is used as given, and
// lanes beyond the matrices in use are ignored (null here).
TEST(Ldmatrix, x1_and_x2_use_only_the_first_8_and_16_lanes_addresses) {
  const Tile16x16 m;
  for (bool trans : {false, true}) {
    for (int matrices : {1, 2}) {
      const void* rows[kWarpLanes] = {};
      // Row r of matrix j comes from tile row 15 - r - 8j, columns 8j..8j+7:
      // a scattered, reversed order.
      for (int lane = 0; lane < 8 * matrices; ++lane) {
        const int j = lane / 8, r = lane % 8;
        rows[lane] = &m.v[15 - r - 8 * j][8 * j];
      }
      std::uint32_t out[kWarpLanes][4] = {};
      rl::emu::ptx::ldmatrix_warp(matrices, trans, rows, out);
      for (int lane = 0; lane < kWarpLanes; ++lane) {
        for (int j = 0; j < matrices; ++j) {
          auto element = [&](int row, int col) { return tag(15 - row - 8 * j, 8 * j + col); };
          const int quad = lane / 4, pair_col = 2 * (lane % 4);
          const std::uint32_t expected =
              trans ? pair(element(pair_col, quad), element(pair_col + 1, quad))
                    : pair(element(quad, pair_col), element(quad, pair_col + 1));
          EXPECT_EQ(out[lane][j], expected)
              << "trans " << trans << " x" << matrices << " lane " << lane;
        }
        for (int j = matrices; j < 4; ++j)
          EXPECT_EQ(out[lane][j], 0U) << "register beyond .num written";
      }
    }
  }
}

// The runtime executes ldmatrix once per warp (ldmatrix_warp); the per-lane
// form is the reference it replaced: same registers for random data, random
// (aligned) row addresses, every .num and .trans.
TEST(Ldmatrix, once_per_warp_registers_equal_the_per_lane_reference) {
  std::mt19937 rng(16);
  struct alignas(16) Pool {
    std::uint16_t v[64][8];
  } pool;
  for (auto& row : pool.v)
    for (auto& e : row) e = static_cast<std::uint16_t>(rng());
  for (int trial = 0; trial < 100; ++trial) {
    for (int matrices : {1, 2, 4}) {
      for (bool trans : {false, true}) {
        const void* rows[kWarpLanes] = {};
        for (auto& row : rows) row = pool.v[rng() % 64];
        std::uint32_t warp[kWarpLanes][4] = {};
        rl::emu::ptx::ldmatrix_warp(matrices, trans, rows, warp);
        for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
          std::uint32_t reference[4] = {};
          rl::emu::ptx::ldmatrix_lane(lane, matrices, trans, rows, reference);
          for (int j = 0; j < 4; ++j)
            ASSERT_EQ(warp[lane][j], reference[j]) << "x" << matrices << " lane " << lane;
        }
      }
    }
  }
}

TEST(CpAsync, destination_keeps_old_contents_until_a_covering_wait) {
  rl::emu::ptx::CpAsyncQueue queue;
  alignas(16) const std::uint32_t src[4] = {1, 2, 3, 4};
  alignas(16) std::uint32_t dst[4] = {9, 9, 9, 9};
  queue.issue(dst, src, 16, 16);
  queue.commit();
  EXPECT_EQ(dst[0], 9U);  // issued and committed, not waited for: stale
  queue.wait_group(0);
  EXPECT_EQ(dst[3], 4U);
}

TEST(CpAsync, wait_group_n_leaves_the_n_newest_groups_pending) {
  rl::emu::ptx::CpAsyncQueue queue;
  alignas(16) const std::uint32_t src[3] = {10, 20, 30};
  alignas(16) std::uint32_t dst[3] = {};
  for (int stage = 0; stage < 3; ++stage) {
    queue.issue(&dst[stage], &src[stage], 4, 4);
    queue.commit();
  }
  queue.wait_group(2);  // oldest group only
  EXPECT_EQ(dst[0], 10U);
  EXPECT_EQ(dst[1], 0U);
  EXPECT_EQ(dst[2], 0U);
  EXPECT_EQ(queue.pending_groups(), 2U);
  queue.wait_group(1);
  EXPECT_EQ(dst[1], 20U);
  EXPECT_EQ(dst[2], 0U);
  queue.wait_group(0);
  EXPECT_EQ(dst[2], 30U);
}

TEST(CpAsync, uncommitted_copies_wait_for_wait_all) {
  rl::emu::ptx::CpAsyncQueue queue;
  alignas(8) const std::uint64_t src = 0x1122334455667788ULL;
  alignas(8) std::uint64_t dst = 0;
  queue.issue(&dst, &src, 8, 8);
  queue.wait_group(0);  // nothing committed: the copy is still pending
  EXPECT_EQ(dst, 0U);
  queue.wait_all();  // commits and waits
  EXPECT_EQ(dst, src);
}

TEST(CpAsync, zero_fill_reads_only_src_bytes) {
  rl::emu::ptx::CpAsyncQueue queue;
  alignas(16) const unsigned char src[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  alignas(16) unsigned char partial[16];
  alignas(16) unsigned char none[16];
  std::memset(partial, 0xEE, sizeof partial);
  std::memset(none, 0xEE, sizeof none);
  queue.issue(partial, src, 16, 5);
  queue.issue(none, nullptr, 16, 0);  // src-size 0: the source is never read
  queue.wait_all();
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(partial[i], i < 5 ? src[i] : 0) << i;
    EXPECT_EQ(none[i], 0) << i;
  }
}

// A cache operator changes where lines are kept, never what is read or
// written: all 16 bytes, in memory order, and nothing around them.
TEST(StreamingAccess, load_and_store_move_exactly_sixteen_bytes_in_memory_order) {
  alignas(16) unsigned char memory[48];
  for (int i = 0; i < 48; ++i) memory[i] = static_cast<unsigned char>(i);
  std::uint32_t r[4] = {};
  rl::emu::ptx::load_streaming_v4(memory + 16, r);
  for (int j = 0; j < 4; ++j) {
    std::uint32_t expected = 0;
    std::memcpy(&expected, memory + 16 + 4 * j, sizeof expected);
    EXPECT_EQ(r[j], expected) << "register " << j;
  }
  const std::uint32_t out[4] = {0xA0A1A2A3U, 0xB0B1B2B3U, 0xC0C1C2C3U, 0xD0D1D2D3U};
  rl::emu::ptx::store_streaming_v4(memory + 16, out);
  EXPECT_EQ(std::memcmp(memory + 16, out, sizeof out), 0);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(memory[i], i) << "byte before the store changed";
  for (int i = 32; i < 48; ++i) EXPECT_EQ(memory[i], i) << "byte after the store changed";
}

TEST(PtxMemoryDeathTest, misaligned_streaming_accesses_are_reported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  alignas(16) unsigned char buffer[64] = {};
  std::uint32_t r[4] = {};
  EXPECT_DEATH(rl::emu::ptx::load_streaming_v4(buffer + 8, r),
               "ld.global.cs.nc.v4.b32 address .* is not 16-byte aligned");
  EXPECT_DEATH(rl::emu::ptx::store_streaming_v4(buffer + 4, r),
               "st.global.cs.v4.b32 address .* is not 16-byte aligned");
  rl::emu::ptx::load_streaming_v4(buffer + 48, r);  // 16-byte aligned: fine
}

TEST(PtxMemoryDeathTest, misaligned_addresses_are_reported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  alignas(16) unsigned char buffer[64] = {};
  rl::emu::ptx::CpAsyncQueue queue;
  EXPECT_DEATH(queue.issue(buffer + 4, buffer + 32, 16, 16),
               "cp.async destination .* is not 16-byte aligned");
  EXPECT_DEATH(queue.issue(buffer + 16, buffer + 36, 8, 8),
               "cp.async source .* is not 8-byte aligned");
  queue.issue(buffer + 16, buffer + 36, 4, 4);  // 4-byte copies need only 4-byte alignment
  const void* rows[kWarpLanes];
  for (int lane = 0; lane < kWarpLanes; ++lane) rows[lane] = buffer + 16 * (lane % 4);
  rows[5] = buffer + 8;
  std::uint32_t out[4];
  std::uint32_t all[kWarpLanes][4];
  EXPECT_DEATH(rl::emu::ptx::ldmatrix_lane(0, 1, false, rows, out),
               "ldmatrix row .* is not 16-byte aligned");
  EXPECT_DEATH(rl::emu::ptx::ldmatrix_warp(1, false, rows, all),
               "ldmatrix row .* is not 16-byte aligned");
  rows[5] = buffer;
  rows[9] = buffer + 2;  // lane 9 is ignored by .x1
  rl::emu::ptx::ldmatrix_lane(0, 1, false, rows, out);
  rl::emu::ptx::ldmatrix_warp(1, false, rows, all);
}

}  // namespace
