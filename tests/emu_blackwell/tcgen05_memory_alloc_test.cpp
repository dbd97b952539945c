// Tensor-memory allocation on the emulated sm_100a (RL_EMU_CC=100, set by
// the folder's CMakeLists): tcgen05.alloc / dealloc / relinquish_alloc_permit
// (PTX ISA 9.7.16.7.1) and each misuse's one-line error, plus the refusal of
// every tcgen05 instruction when the emulated device is not a 10.0 / 10.3.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/emu/tcgen05.hpp"
#include "rl/ptx_sm100_tmem.hpp"
#include "tcgen05_memory_support.hpp"

namespace {

using tcgen05_memory_test::stderr_of_failed_launch;

// Warp 0 allocates 128, 64 and 32 columns (sizes that do not grow, as the ISA
// asks), frees the 64 and allocates 64 again, reporting each address.  Each
// CTA has its own 512 columns.
__global__ void allocate_three(std::uint32_t* all_out) {
  __shared__ std::uint32_t slot[4];
  std::uint32_t* out = all_out + 6 * blockIdx.x;
  if (threadIdx.x < 32) {
    rl::ptx::tmem_alloc(&slot[0], 128);
    rl::ptx::tmem_alloc(&slot[1], 64);
    rl::ptx::tmem_alloc(&slot[2], 32);
    rl::ptx::tmem_dealloc(slot[1], 64);
    rl::ptx::tmem_alloc(&slot[3], 64);
    if (threadIdx.x == 0) {
      for (int i = 0; i < 4; ++i) out[i] = slot[i];
      out[4] = rl::emu::tcgen05::allocated_columns();
    }
    rl::ptx::tmem_dealloc(slot[0], 128);
    rl::ptx::tmem_dealloc(slot[2], 32);
    rl::ptx::tmem_dealloc(slot[3], 64);
    rl::ptx::tmem_relinquish_alloc_permit();
    if (threadIdx.x == 0) out[5] = rl::emu::tcgen05::allocated_columns();
  }
}

TEST(Tcgen05Alloc, takes_the_lowest_free_aligned_columns_and_writes_lane_0_column_addresses) {
  rl::DeviceBuffer<std::uint32_t> out(12);
  rl::launch(allocate_three, dim3(2), dim3(64), 0, nullptr, out.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // lane << 16 | column: all at lane 0; 128 at 0, 64 at 128, 32 at 192, the
  // freed 64 at 128 again; 224 columns held, then none.
  EXPECT_EQ(out.download(), (std::vector<std::uint32_t>{0, 128, 192, 128, 224, 0,  //
                                                        0, 128, 192, 128, 224, 0}));
}

// Every thread of warp 0 allocates `ncols`, then frees it (if it got it).
__global__ void allocate(std::uint32_t ncols) {
  __shared__ std::uint32_t slot;
  if (threadIdx.x < 32) {
    rl::ptx::tmem_alloc(&slot, ncols);
    rl::ptx::tmem_dealloc(slot, ncols);
  }
}

TEST(Tcgen05Alloc, a_column_count_not_a_power_of_two_in_32_to_512_fails_the_launch) {
  for (std::uint32_t bad : {0U, 16U, 48U, 96U, 1024U}) {
    const std::string err =
        stderr_of_failed_launch([&] { rl::launch(allocate, dim3(1), dim3(32), 0, nullptr, bad); });
    EXPECT_NE(err.find("kernel"), std::string::npos) << err;
    EXPECT_NE(err.find("block (0,0,0)"), std::string::npos) << err;
    EXPECT_NE(err.find("tcgen05.alloc: " + std::to_string(bad) +
                       " columns; the count must be a power of two in [32, 512]"),
              std::string::npos)
        << err;
  }
}

// 256 + 256 fit, a third 256 does not.
__global__ void allocate_768() {
  __shared__ std::uint32_t slot[3];
  if (threadIdx.x < 32)
    for (int i = 0; i < 3; ++i) rl::ptx::tmem_alloc(&slot[i], 256);
}

TEST(Tcgen05Alloc, more_than_512_columns_fails_the_launch_instead_of_blocking) {
  const std::string err =
      stderr_of_failed_launch([] { rl::launch(allocate_768, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_NE(err.find("tcgen05.alloc of 256 columns: no free range that large (0 of 512 columns "
                     "free; allocated: 256 columns from column 0 (allocated by warp 0), 256 "
                     "columns from column 256 (allocated by warp 0))"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("would block forever"), std::string::npos) << err;
}

__global__ void allocate_after_relinquishing() {
  __shared__ std::uint32_t slot;
  rl::ptx::tmem_relinquish_alloc_permit();
  rl::ptx::tmem_alloc(&slot, 32);
}

TEST(Tcgen05Alloc, alloc_after_relinquish_alloc_permit_fails_the_launch) {
  if (!rl::emu::tcgen05::sees_cta_end())
    GTEST_SKIP() << "enforced once the CTA's end is seen (rl/emu/warp.hpp's kTcgen05Slot)";
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(allocate_after_relinquishing, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_NE(err.find("tcgen05.alloc after tcgen05.relinquish_alloc_permit"), std::string::npos)
      << err;
}

// Warp 0 allocates, warp 1 frees: .cta_group::1 wants one warp to do both.
__global__ void free_by_another_warp() {
  __shared__ std::uint32_t slot;
  if (threadIdx.x < 32) rl::ptx::tmem_alloc(&slot, 32);
  __syncthreads();
  if (threadIdx.x >= 32) rl::ptx::tmem_dealloc(slot, 32);
}

// 64 columns allocated, the second half freed as if it were an allocation.
__global__ void free_the_wrong_columns() {
  __shared__ std::uint32_t slot;
  rl::ptx::tmem_alloc(&slot, 64);
  rl::ptx::tmem_dealloc(slot + 32, 32);
}

TEST(Tcgen05Alloc, dealloc_by_another_warp_or_of_no_allocation_fails_the_launch) {
  std::string err = stderr_of_failed_launch(
      [] { rl::launch(free_by_another_warp, dim3(1), dim3(64), 0, nullptr); });
  EXPECT_NE(err.find("tcgen05.dealloc by warp 1 of columns warp 0 allocated"), std::string::npos)
      << err;
  err = stderr_of_failed_launch(
      [] { rl::launch(free_the_wrong_columns, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_NE(err.find("tcgen05.dealloc of 32 columns at tensor-memory address 0x00000020, which "
                     "is no allocation of this CTA (allocated: 64 columns from column 0"),
            std::string::npos)
      << err;
}

// Only lanes 0-15 reach the warp-wide instruction.
__global__ void allocate_with_half_a_warp() {
  __shared__ std::uint32_t slot;
  if (threadIdx.x < 16) rl::ptx::tmem_alloc(&slot, 32);
}

TEST(Tcgen05Alloc, alloc_is_sync_aligned_the_whole_warp_executes_it) {
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(allocate_with_half_a_warp, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_NE(err.find("tcgen05.alloc is .sync.aligned: all 32 lanes of the warp must execute it "
                     "(lanes present: 0x0000ffff)"),
            std::string::npos)
      << err;
}

// Warp 0 allocates and never frees.
__global__ void allocate_and_leak() {
  __shared__ std::uint32_t slot;
  if (threadIdx.x < 32) rl::ptx::tmem_alloc(&slot, 64);
}

TEST(Tcgen05Alloc, tensor_memory_not_freed_when_the_cta_exits_fails_the_launch) {
  if (!rl::emu::tcgen05::sees_cta_end())
    GTEST_SKIP() << "the CTA's end is seen through a thread slot rl/emu/warp.hpp does not have "
                    "yet (kTcgen05Slot)";
  const std::string err =
      stderr_of_failed_launch([] { rl::launch(allocate_and_leak, dim3(3), dim3(64), 0, nullptr); });
  EXPECT_NE(err.find("failed in block ("), std::string::npos) << err;
  EXPECT_NE(err.find("tensor memory not freed when the CTA exited: 64 columns from column 0 "
                     "(allocated by warp 0)"),
            std::string::npos)
      << err;
  // The next launch starts clean: its CTAs allocate from column 0 again.
  rl::DeviceBuffer<std::uint32_t> out(6);
  rl::launch(allocate_three, dim3(1), dim3(32), 0, nullptr, out.get());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(out.download()[0], 0U);
}

// At any compute capability but 10.0 / 10.3 every tcgen05 instruction is
// refused with one line saying how to get one (RL_EMU_CC is read once per
// process: the check runs in a child that sets it first).
TEST(Tcgen05Alloc, every_instruction_is_refused_unless_the_device_is_sm_100a_or_sm_103a) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* cc : {"90", "120"}) {
    EXPECT_EXIT(
        {
          setenv("RL_EMU_CC", cc, 1);
          rl::launch(allocate, dim3(1), dim3(32), 0, nullptr, 32U);
          std::exit(cudaDeviceSynchronize() != cudaSuccess ? 3 : 0);
        },
        testing::ExitedWithCode(3),
        "tcgen05.alloc needs sm_100a/sm_103a: run with RL_EMU_CC=100 \\(the emulated device is "
        "compute capability");
  }
}

}  // namespace
