// tcgen05.st then tcgen05.ld on the emulated sm_100a, every shape: the
// registers come back, and each register lands in the cell the ISA's
// fragment figure gives (PTX ISA 9.7.16.2.3.1 "Matrix fragments for shape
// ..."; the same maps as CUTLASS's SM100_TMEM_LOAD_* traits).  Then the
// rules: a warp reaches only its lane quarter (9.7.16.8.1), only allocated
// columns, and registers hold their values only after tcgen05.wait::ld.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/emu/launch.hpp"
#include "rl/emu/tcgen05.hpp"
#include "rl/ptx_sm100_tmem.hpp"
#include "tcgen05_memory_support.hpp"

namespace {

namespace t5 = rl::emu::tcgen05;
using rl::ptx::TmemShape;
using tcgen05_memory_test::stderr_of_failed_launch;

constexpr unsigned kCols = 64;     // allocated columns
constexpr unsigned kColumn0 = 32;  // where each warp's fragment starts
constexpr unsigned kSplit = 8;     // 16x32bx2's half-split offset

constexpr unsigned first_lane(TmemShape s, unsigned warp) {
  // 16-lane shapes use the upper half of the quarter (lanes 32 w + 16 ..).
  return 32 * warp + (s == TmemShape::s32x32b ? 0 : 16);
}

__device__ inline std::uint32_t value_of(unsigned warp, unsigned lane, unsigned r) {
  return (warp << 24) | (lane << 16) | 0x8000U | r;
}

// Four warps each store a fragment into their lane quarter, load it back and
// count mismatches; then thread 0 dumps all 128 x kCols cells.
template <TmemShape Shape, unsigned Num>
__global__ void round_trip(std::uint32_t* mismatches, std::uint32_t* cells_out) {
  __shared__ std::uint32_t slot;
  constexpr unsigned kRegs = rl::ptx::tmem_registers<Shape, Num>;
  const std::uint32_t base = tcgen05_memory_test::allocate_for_block(&slot, kCols);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::uint32_t taddr = base + (first_lane(Shape, warp) << 16) + kColumn0;
  std::uint32_t put[kRegs], got[kRegs];
  for (unsigned r = 0; r < kRegs; ++r) put[r] = value_of(warp, lane, r);
  rl::ptx::tmem_st<Shape, Num, kSplit>(taddr, put);
  rl::ptx::tmem_wait_st();
  rl::ptx::tmem_ld<Shape, Num, kSplit>(taddr, got);
  rl::ptx::tmem_wait_ld();
  for (unsigned r = 0; r < kRegs; ++r)
    if (got[r] != put[r]) atomicAdd(mismatches, 1U);
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint32_t* cells = t5::tmem_cells({base, 128, kCols}, "test dump");
    for (unsigned l = 0; l < 128; ++l)
      for (unsigned c = 0; c < kCols; ++c) cells_out[l * kCols + c] = cells[l * t5::kColumns + c];
  }
  tcgen05_memory_test::free_for_block(base, kCols);
}

struct Dump {
  std::uint32_t mismatches;
  std::vector<std::uint32_t> cells;  // 128 x kCols
  std::uint32_t at(unsigned lane, unsigned column) const { return cells[lane * kCols + column]; }
};

template <TmemShape Shape, unsigned Num>
Dump run_round_trip(const char* schedule) {
  rl::emu::ScopedSchedule scoped(*rl::emu::parse_schedule(schedule));
  rl::DeviceBuffer<std::uint32_t> mismatches(1), cells(128 * kCols);
  const std::vector<std::uint32_t> zero(1, 0);
  mismatches.upload(zero);
  rl::launch(round_trip<Shape, Num>, dim3(1), dim3(128), 0, nullptr, mismatches.get(), cells.get());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {mismatches.download()[0], cells.download()};
}

// The round trip of one form under both schedules: registers back, every
// register in its own cell of its warp's quarter as fragment_lane/column say,
// no other cell touched (fresh columns hold the NaN poison), the same cells
// whatever the schedule.
template <TmemShape Shape, unsigned Num>
Dump check_form() {
  const Dump d = run_round_trip<Shape, Num>(tcgen05_memory_test::kSchedules[0]);
  EXPECT_EQ(d.mismatches, 0U);
  const auto shape = static_cast<t5::Shape>(Shape);
  std::set<std::pair<unsigned, unsigned>> written;
  for (unsigned w = 0; w < 4; ++w)
    for (unsigned t = 0; t < 32; ++t)
      for (unsigned r = 0; r < rl::ptx::tmem_registers<Shape, Num>; ++r) {
        const unsigned lane = first_lane(Shape, w) + t5::fragment_lane(shape, t, r);
        const unsigned col = kColumn0 + t5::fragment_column(shape, t, r, kSplit);
        EXPECT_TRUE(written.insert({lane, col}).second) << "two registers in one cell";
        EXPECT_EQ(d.at(lane, col), value_of(w, t, r)) << "warp " << w << " thread " << t;
      }
  for (unsigned l = 0; l < 128; ++l)
    for (unsigned c = 0; c < kCols; ++c)
      if (written.count({l, c}) == 0) {
        EXPECT_EQ(d.at(l, c), t5::kLoadPoison) << l << "," << c;
      }
  const Dump other = run_round_trip<Shape, Num>(tcgen05_memory_test::kSchedules[1]);
  EXPECT_EQ(other.cells, d.cells) << "the schedule changed the result";
  return d;
}

// Spot checks read off the ISA's figures by hand (thread t, register r ->
// lane, column), independent of fragment_lane / fragment_column.
TEST(Tcgen05LdSt, shape_32x32b_thread_t_owns_lane_t_register_r_column_r) {
  const Dump d = check_form<TmemShape::s32x32b, 8>();
  EXPECT_EQ(d.at(7, kColumn0 + 1), value_of(0, 7, 1));
  EXPECT_EQ(d.at(96 + 31, kColumn0 + 7), value_of(3, 31, 7));
}

TEST(Tcgen05LdSt, shape_16x64b_pairs_threads_on_a_row_of_two_columns) {
  const Dump d = check_form<TmemShape::s16x64b, 4>();
  // t 5: lane 5/4 + 8 = 9, column (5/2)%2 = 0; r 1 two columns right.
  EXPECT_EQ(d.at(16 + 9, kColumn0 + 2), value_of(0, 5, 1));
  // t 2: lane 0, column 1.
  EXPECT_EQ(d.at(32 + 16 + 0, kColumn0 + 1), value_of(1, 2, 0));
}

TEST(Tcgen05LdSt, shape_16x128b_four_threads_a_row_two_registers_per_repeat) {
  const Dump d = check_form<TmemShape::s16x128b, 2>();
  // t 6, r 3: lane 6/4 + 8 (3%2) = 9, column 6%4 + 4 (3/2) = 6.
  EXPECT_EQ(d.at(16 + 9, kColumn0 + 6), value_of(0, 6, 3));
}

TEST(Tcgen05LdSt, shape_16x256b_the_epilogue_form) {
  const Dump d = check_form<TmemShape::s16x256b, 2>();
  // t 5, r 3: lane 5/4 + 8 = 9, column 2 (5%4) + 1 = 3.
  EXPECT_EQ(d.at(16 + 9, kColumn0 + 3), value_of(0, 5, 3));
  // t 2, r 4 (second repeat): lane 0, column 4 + 8 = 12.
  EXPECT_EQ(d.at(64 + 16 + 0, kColumn0 + 12), value_of(2, 2, 4));
}

TEST(Tcgen05LdSt, shape_16x32bx2_the_upper_half_warp_at_the_split_offset) {
  const Dump d = check_form<TmemShape::s16x32bx2, 4>();
  // t 20, r 1: lane 20%16 = 4, column 1 + 8.
  EXPECT_EQ(d.at(16 + 4, kColumn0 + 9), value_of(0, 20, 1));
  EXPECT_EQ(d.at(16 + 4, kColumn0 + 1), value_of(0, 4, 1));
}

// Thread 0 reads its register before tcgen05.wait::ld, then after.
__global__ void read_before_wait(std::uint32_t* out) {
  __shared__ std::uint32_t slot;
  const std::uint32_t base = tcgen05_memory_test::allocate_for_block(&slot, 32);
  std::uint32_t put[1] = {1234U + threadIdx.x}, got[1] = {0};
  rl::ptx::tmem_st<TmemShape::s32x32b, 1>(base, put);
  rl::ptx::tmem_wait_st();
  rl::ptx::tmem_ld<TmemShape::s32x32b, 1>(base, got);
  if (threadIdx.x == 0) out[0] = got[0];
  rl::ptx::tmem_wait_ld();
  if (threadIdx.x == 0) out[1] = got[0];
  tcgen05_memory_test::free_for_block(base, 32);
}

TEST(Tcgen05LdSt, registers_hold_a_nan_until_wait_ld) {
  if (!t5::sees_cta_end())
    GTEST_SKIP() << "loads are deferred once the CTA's end is seen (rl/emu/warp.hpp's "
                    "kTcgen05Slot)";
  rl::DeviceBuffer<std::uint32_t> out(2);
  rl::launch(read_before_wait, dim3(1), dim3(32), 0, nullptr, out.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(out.download(), (std::vector<std::uint32_t>{t5::kLoadPoison, 1234U}));
}

// Warp `warp` loads 32x32b at `lane`, column `column` of a 32-column allocation.
__global__ void load_at(unsigned warp, unsigned lane, unsigned column) {
  __shared__ std::uint32_t slot;
  const std::uint32_t base = tcgen05_memory_test::allocate_for_block(&slot, 32);
  if (threadIdx.x / 32 == warp) {
    std::uint32_t got[4];
    rl::ptx::tmem_ld<TmemShape::s32x32b, 4>(base + (lane << 16) + column, got);
    rl::ptx::tmem_wait_ld();
  }
  tcgen05_memory_test::free_for_block(base, 32);
}

TEST(Tcgen05LdSt, a_warp_outside_its_lane_quarter_fails_the_launch) {
  // Warp 5 is warp 1 of the second warpgroup: lanes 32..63 only.
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(load_at, dim3(1), dim3(192), 0, nullptr, 5U, 0U, 0U); });
  EXPECT_NE(err.find("tcgen05.ld.sync.aligned.32x32b.x4.b32 by warp 5 reaches [lanes 0..31, "
                     "columns 0..3]: warp 1 of a warpgroup reaches only lanes 32..63"),
            std::string::npos)
      << err;
  rl::launch(load_at, dim3(1), dim3(192), 0, nullptr, 5U, 32U, 0U);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "lanes 32..63 are warp 5's";
}

TEST(Tcgen05LdSt, a_load_outside_the_allocation_fails_the_launch) {
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(load_at, dim3(1), dim3(32), 0, nullptr, 0U, 0U, 30U); });
  EXPECT_NE(err.find("tcgen05.ld.sync.aligned.32x32b.x4.b32 reaches tensor memory [lanes 0..31, "
                     "columns 30..33] outside this CTA's allocations (32 columns from column 0"),
            std::string::npos)
      << err;
}

}  // namespace
