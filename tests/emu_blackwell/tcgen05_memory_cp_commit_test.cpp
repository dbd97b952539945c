// tcgen05.cp (shared -> tensor memory) and the asynchronous queue on the
// emulated sm_100a: where each source byte lands for every emulated shape
// (PTX ISA 9.7.16.9.2, the source in the canonical K-major layout of its
// shared-memory descriptor, 9.7.16.4.1 / 9.7.16.3), tcgen05.commit performing
// the issuing thread's operations in order and then arriving on its mbarrier
// (9.7.16.12.1), and a read of what is still in flight failing the launch.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/launch.hpp"
#include "rl/emu/tcgen05.hpp"
#include "rl/ptx_sm100_tmem.hpp"
#include "tcgen05_memory_support.hpp"

namespace {

namespace t5 = rl::emu::tcgen05;
namespace hopper = rl::emu::hopper;
using rl::ptx::TmemCopyShape;
using tcgen05_memory_test::stderr_of_failed_launch;

// The source: 128 rows of 32 bytes, K-major without swizzle: 8-row x 16-byte
// core matrices, the second 16 bytes of a row LBO = 128 bytes after the
// first, the next 8 rows SBO = 256 bytes further (9.7.16.3.3 canonical
// layouts; written here from the ISA's formula, not the emulator's).
constexpr unsigned kLbo = 128, kSbo = 256;

constexpr unsigned source_offset(unsigned row, unsigned byte) {
  return (row / 8) * kSbo + (byte / 16) * kLbo + (row % 8) * 16 + byte % 16;
}
constexpr std::uint8_t source_byte(unsigned row, unsigned byte) {
  return static_cast<std::uint8_t>(row * 7 + byte * 3 + 1);
}
// The cell a row's bytes 4c .. 4c + 3 make, lowest address lowest.
constexpr std::uint32_t source_word(unsigned row, unsigned column) {
  std::uint32_t w = 0;
  for (unsigned i = 0; i < 4; ++i) w |= std::uint32_t{source_byte(row, 4 * column + i)} << (8 * i);
  return w;
}

// A tcgen05 shared-memory descriptor (Table 40) built by hand: start, LBO,
// SBO (each >> 4), version 0b001 at bit 46, no swizzle.
std::uint64_t descriptor(std::uint32_t window_address) {
  return std::uint64_t{window_address >> 4} | (std::uint64_t{kLbo >> 4} << 16) |
         (std::uint64_t{kSbo >> 4} << 32) | (std::uint64_t{1} << 46);
}

constexpr unsigned kCols = 32;

// Thread 0 copies the source four ways into one 32-column allocation, commits
// to an mbarrier (checking it is the commit that completes its phase), all
// threads wait on it, thread 0 dumps the 128 x 32 cells.
__global__ void copy_four_ways(std::uint32_t* cells_out, int* phase_seen) {
  __shared__ __align__(128) std::uint8_t source[128 * 32];
  __shared__ std::uint64_t bar;
  __shared__ std::uint32_t slot;
  for (unsigned i = threadIdx.x; i < 128 * 32; i += blockDim.x)
    source[source_offset(i / 32, i % 32)] = source_byte(i / 32, i % 32);
  if (threadIdx.x == 0) hopper::mbarrier_init(&bar, 1);
  const std::uint32_t base = tcgen05_memory_test::allocate_for_block(&slot, kCols);
  if (threadIdx.x == 0) {
    const std::uint64_t desc = descriptor(hopper::shared_address(source));
    rl::ptx::tmem_cp<TmemCopyShape::s128x256b>(base + 0, desc);              // columns 0..7
    rl::ptx::tmem_cp<TmemCopyShape::s128x128b>(base + 8, desc);              // columns 8..11
    rl::ptx::tmem_cp<TmemCopyShape::s32x128b_warpx4>(base + 12, desc);       // columns 12..15
    rl::ptx::tmem_cp<TmemCopyShape::s4x256b>(base + (8U << 16) + 16, desc);  // lanes 8..11
    phase_seen[0] = hopper::mbarrier_test_wait_parity(&bar, 0) ? 1 : 0;
    rl::ptx::tmem_commit(&bar);
    phase_seen[1] = hopper::mbarrier_test_wait_parity(&bar, 0) ? 1 : 0;
  }
  while (!hopper::mbarrier_try_wait_parity(&bar, 0)) {
  }
  rl::ptx::tcgen05_fence_after_thread_sync();
  if (threadIdx.x == 0) {
    const std::uint32_t* cells = t5::tmem_cells({base, 128, kCols}, "test dump");
    for (unsigned l = 0; l < 128; ++l)
      for (unsigned c = 0; c < kCols; ++c) cells_out[l * kCols + c] = cells[l * t5::kColumns + c];
  }
  tcgen05_memory_test::free_for_block(base, kCols);
}

std::vector<std::uint32_t> run_copy(const char* schedule, std::vector<int>* phase_seen) {
  rl::emu::ScopedSchedule scoped(*rl::emu::parse_schedule(schedule));
  rl::DeviceBuffer<std::uint32_t> cells(128 * kCols);
  rl::DeviceBuffer<int> phase(2);
  rl::launch(copy_four_ways, dim3(1), dim3(128), 0, nullptr, cells.get(), phase.get());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  *phase_seen = phase.download();
  return cells.download();
}

TEST(Tcgen05Copy, each_shape_puts_row_i_in_lane_i_four_bytes_a_column_at_the_commit) {
  std::vector<int> phase;
  const std::vector<std::uint32_t> cells = run_copy(tcgen05_memory_test::kSchedules[0], &phase);
  EXPECT_EQ(phase, (std::vector<int>{0, 1})) << "the commit completes the mbarrier's phase 0";
  auto at = [&](unsigned lane, unsigned col) { return cells[lane * kCols + col]; };
  for (unsigned lane = 0; lane < 128; ++lane) {
    for (unsigned c = 0; c < 8; ++c) EXPECT_EQ(at(lane, c), source_word(lane, c));  // 128x256b
    for (unsigned c = 0; c < 4; ++c) {
      EXPECT_EQ(at(lane, 8 + c), source_word(lane, c));        // 128x128b: 16 bytes a row
      EXPECT_EQ(at(lane, 12 + c), source_word(lane % 32, c));  // warpx4: rows 0..31, 4 times
    }
    for (unsigned c = 0; c < 8; ++c)  // 4x256b: rows 0..3 in lanes 8..11, the rest untouched
      EXPECT_EQ(at(lane, 16 + c),
                lane >= 8 && lane < 12 ? source_word(lane - 8, c) : t5::kLoadPoison);
    for (unsigned c = 24; c < kCols; ++c) EXPECT_EQ(at(lane, c), t5::kLoadPoison);
  }
  // One byte checked by hand: row 9, byte 17 is at 256 + 128 + 16 + 1; it is
  // the second byte of column 4 of lane 9.
  EXPECT_EQ(source_offset(9, 17), 401U);
  EXPECT_EQ((at(9, 4) >> 8) & 0xFFU, source_byte(9, 17));
  EXPECT_EQ(run_copy(tcgen05_memory_test::kSchedules[1], &phase), cells)
      << "the schedule changed the result";
}

// Thread 0 queues two operations on one cell; they run at its commit, in
// issue order.
__global__ void two_queued_writes(std::uint32_t* out) {
  __shared__ std::uint64_t bar;
  __shared__ std::uint32_t slot;
  __shared__ int performed;
  if (threadIdx.x == 0) hopper::mbarrier_init(&bar, 1);
  const std::uint32_t base = tcgen05_memory_test::allocate_for_block(&slot, 32);
  if (threadIdx.x == 0) {
    performed = 0;
    for (std::uint32_t v : {11U, 22U})
      t5::enqueue_async("test write", {base, 1, 1}, [base, v] {
        *t5::tmem_cells({base, 1, 1}, "test write") = v;
        ++performed;
      });
    out[0] = static_cast<std::uint32_t>(performed);
    rl::ptx::tmem_commit(&bar);
    out[1] = static_cast<std::uint32_t>(performed);
    out[2] = *t5::tmem_cells({base, 1, 1}, "test read");
  }
  tcgen05_memory_test::free_for_block(base, 32);
}

TEST(Tcgen05Commit, performs_the_threads_queue_in_issue_order) {
  rl::DeviceBuffer<std::uint32_t> out(3);
  rl::launch(two_queued_writes, dim3(1), dim3(32), 0, nullptr, out.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(out.download(), (std::vector<std::uint32_t>{0, 2, 22}));
}

// Thread 0 issues a copy; warp 0 then loads a cell it writes, without the commit.
__global__ void load_before_commit() {
  __shared__ __align__(128) std::uint8_t source[128 * 32];
  __shared__ std::uint32_t slot;
  const std::uint32_t base = tcgen05_memory_test::allocate_for_block(&slot, 32);
  if (threadIdx.x == 0)
    rl::ptx::tmem_cp<TmemCopyShape::s128x256b>(base, descriptor(hopper::shared_address(source)));
  std::uint32_t got[1];
  rl::ptx::tmem_ld<rl::ptx::TmemShape::s32x32b, 1>(base + 2, got);
  rl::ptx::tmem_wait_ld();
  tcgen05_memory_test::free_for_block(base, 32);
}

TEST(Tcgen05Commit, reading_what_an_uncommitted_operation_writes_fails_the_launch) {
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(load_before_commit, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_NE(err.find("tcgen05.ld.sync.aligned.32x32b.x1.b32 reads tensor memory [lanes 0..31, "
                     "columns 2..2] that a tcgen05.cp.cta_group::1.128x256b issued by thread 0 "
                     "still writes [lanes 0..127, columns 0..7]: accumulator read before its "
                     "commit completed"),
            std::string::npos)
      << err;
}

// The multicast forms the emulator does not model are refused, not guessed.
__global__ void copy_warpx2() {
  __shared__ __align__(128) std::uint8_t source[64 * 16];
  __shared__ std::uint32_t slot;
  const std::uint32_t base = tcgen05_memory_test::allocate_for_block(&slot, 32);
  if (threadIdx.x == 0)
    rl::ptx::tmem_cp<TmemCopyShape::s64x128b_warpx2_02_13>(
        base, descriptor(hopper::shared_address(source)));
  tcgen05_memory_test::free_for_block(base, 32);
}

TEST(Tcgen05Copy, the_warpx2_multicasts_are_refused_with_one_line) {
  const std::string err =
      stderr_of_failed_launch([] { rl::launch(copy_warpx2, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_NE(err.find("tcgen05.cp.cta_group::1.64x128b.warpx2::02_13: the .warpx2 multicasts are "
                     "not emulated"),
            std::string::npos)
      << err;
}

}  // namespace
