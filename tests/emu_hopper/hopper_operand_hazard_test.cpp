// Shared memory an in-flight wgmma reads may not be written until the
// wgmma.wait_group that retires its group (PTX "wgmma.mma_async": "accessing
// ... the shared memory ... before the wgmma completes is undefined").  The
// emulator reads the operands at issue, so the overwrite would not change its
// result; it reports the write instead (emu/docs/hopper.md, "Operands in
// flight").  One warpgroup multiplies a 64 x 16 A (core matrices, no swizzle)
// by a 16 x 8 B that TMA loaded 128B-swizzled, commits, and then writes:
//   TMA over B before the wait      reported (the writer, the bytes, the wait);
//   TMA over B after the wait       clean;
//   TMA into a tile no wgmma reads  clean (only the bytes read are held);
//   cp.async.bulk / cp.async into A before the wait  reported.
// rl::emu::hopper directly: no RL_EMU_CC.
#include "rl/cuda.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/ptx_warp.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

namespace h = rl::emu::hopper;

enum Write : int { tma_before_wait, tma_after_wait, tma_elsewhere, bulk_before_wait, cp_async };

// Waits (every thread) for the phase of parity 0 of `bar`.
__device__ void wait_phase_0(std::uint64_t* bar) {
  while (!h::mbarrier_try_wait_parity(bar, 0)) {
  }
}

__global__ void write_under_wgmma(const h::TensorMap map, const std::uint16_t* source, int write) {
  __shared__ __align__(1024) unsigned char a_tile[64 * 32];
  __shared__ __align__(1024) unsigned char b_tile[8 * 128];
  __shared__ __align__(1024) unsigned char spare[8 * 128];
  __shared__ std::uint64_t bars[2];
  const std::int32_t at[2] = {0, 0};
  if (threadIdx.x == 0) {
    for (unsigned i = 0; i < sizeof a_tile; ++i) a_tile[i] = 0;
    h::mbarrier_init(&bars[0], 1);
    h::mbarrier_init(&bars[1], 1);
    h::mbarrier_expect_tx(&bars[0], sizeof b_tile);
    h::mbarrier_arrive(&bars[0]);
    h::tma_load(b_tile, map, at, 2, &bars[0]);
  }
  __syncthreads();
  wait_phase_0(&bars[0]);
  const std::uint64_t desc_a = (h::shared_address(a_tile) >> 4) | (8ull << 16) | (16ull << 32);
  const std::uint64_t desc_b = (h::shared_address(b_tile) >> 4) | (64ull << 32) | (1ull << 62);
  float d[4] = {};
  h::wgmma({h::WgmmaInput::bf16, 8, desc_a, desc_b, false, 1, 1, false, false}, d);
  h::wgmma_commit_group();
  if (write == tma_after_wait) h::wgmma_wait_group(0);
  if (threadIdx.x == 0) {
    if (write == bulk_before_wait) {
      h::mbarrier_expect_tx(&bars[1], 16);
      h::mbarrier_arrive(&bars[1]);
      h::bulk_load(a_tile + 16, source, 16, &bars[1]);
    } else if (write == cp_async) {
      rl::emu::ptx::CpAsyncQueue copies;
      copies.issue(a_tile + 48, source, 16, 16);
      copies.wait_all();
      h::mbarrier_arrive(&bars[1]);
    } else {
      h::mbarrier_expect_tx(&bars[1], sizeof b_tile);
      h::mbarrier_arrive(&bars[1]);
      h::tma_load(write == tma_elsewhere ? spare : b_tile, map, at, 2, &bars[1]);
    }
  }
  wait_phase_0(&bars[1]);
  h::wgmma_wait_group(0);
}

class OperandsInFlight : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&source_), 8 * 64 * 2), cudaSuccess);
    ASSERT_EQ(cudaMemset(source_, 0, 8 * 64 * 2), cudaSuccess);
    const std::uint64_t dims[2] = {64, 8}, strides[1] = {128};
    const std::uint32_t box[2] = {64, 8}, es[2] = {1, 1};
    ASSERT_EQ(h::encode_tensor_map_tiled(&map_, h::TmaDataType::bfloat16, 2, source_, dims, strides,
                                         box, es, h::TmaInterleave::none, h::TmaSwizzle::b128,
                                         h::TmaOobFill::zeros),
              0);
  }
  void TearDown() override { cudaFree(source_); }

  cudaError_t run(Write write) {
    rl::launch(write_under_wgmma, dim3(1), dim3(128), 0, nullptr, map_,
               static_cast<const std::uint16_t*>(source_), static_cast<int>(write));
    return cudaDeviceSynchronize();
  }
  // The launch must fail; returns what the emulator printed.
  std::string report_of(Write write) {
    (void)cudaGetLastError();
    testing::internal::CaptureStderr();
    EXPECT_NE(run(write), cudaSuccess) << "the write should have been reported";
    (void)cudaGetLastError();
    return testing::internal::GetCapturedStderr();
  }

  std::uint16_t* source_ = nullptr;
  h::TensorMap map_{};
};

constexpr const char* kInFlight =
    "read by a wgmma still in flight (committed, not yet retired by wgmma.wait_group) of its "
    "warpgroup 0";

TEST_F(OperandsInFlight, a_tma_load_over_b_before_the_wait_is_reported) {
  const std::string err = report_of(tma_before_wait);
  EXPECT_NE(err.find("write_under_wgmma"), std::string::npos) << err;
  EXPECT_NE(err.find("thread 0: cp.async.bulk.tensor wrote shared bytes ["), std::string::npos)
      << err;
  EXPECT_NE(err.find(kInFlight), std::string::npos) << err;
}

TEST_F(OperandsInFlight, the_same_load_after_the_wait_or_into_unread_bytes_is_clean) {
  EXPECT_EQ(run(tma_after_wait), cudaSuccess);
  EXPECT_EQ(run(tma_elsewhere), cudaSuccess);
}

TEST_F(OperandsInFlight, a_bulk_copy_or_cp_async_into_a_before_the_wait_is_reported) {
  const std::string bulk = report_of(bulk_before_wait);
  EXPECT_NE(bulk.find("cp.async.bulk.shared::cluster.global wrote shared bytes"), std::string::npos)
      << bulk;
  EXPECT_NE(bulk.find(kInFlight), std::string::npos) << bulk;
  const std::string copy = report_of(cp_async);
  EXPECT_NE(copy.find("cp.async wrote shared bytes"), std::string::npos) << copy;
  EXPECT_NE(copy.find(kInFlight), std::string::npos) << copy;
}

}  // namespace
