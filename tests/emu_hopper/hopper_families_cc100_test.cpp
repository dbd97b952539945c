// The emulator as a datacenter Blackwell (this test runs with RL_EMU_CC=100,
// set by its CMakeLists): the sm_90-and-later families of rl/ptx_sm90.hpp
// (mbarrier, plain bulk copies, TMA, the async-proxy fence) run, as they do
// on a B200, and the sm_90a-only wgmma is refused with one line naming the
// instruction, the emulated compute capability and the RL_EMU_CC value that
// has it (rl/emu/arch.hpp decides both); so is setmaxnreg.
#include "rl/cuda.hpp"
#include "rl/emu/arch.hpp"
#include "rl/ptx.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

constexpr int kWords = 64;  // 256 bytes: a multiple of 16, as bulk copies need

// Thread 0 announces the bytes and issues a bulk load of `in` into shared
// memory; every thread waits on the mbarrier's first phase, doubles its
// words in shared memory, and thread 0 bulk-stores the tile to `out`.
__global__ void bulk_round_trip(const std::uint32_t* in, std::uint32_t* out) {
  __shared__ __align__(16) std::uint32_t tile[kWords];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    rl::ptx::mbarrier_init(&bar, 1);
    rl::ptx::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    rl::ptx::mbarrier_arrive_expect_tx(&bar, sizeof tile);
    rl::ptx::bulk_load(tile, in, sizeof tile, &bar);
  }
  rl::ptx::mbarrier_wait_parity(&bar, 0);
  for (unsigned i = threadIdx.x; i < kWords; i += blockDim.x) tile[i] *= 2;
  rl::ptx::fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    rl::ptx::bulk_store(out, tile, sizeof tile);
    rl::ptx::bulk_commit_group();
    rl::ptx::bulk_wait_group<0>();
  }
}

TEST(HopperFamiliesOnBlackwell, the_device_is_a_10_0_with_tma_and_without_wgmma) {
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(prop.major * 10 + prop.minor, 100) << "this test needs RL_EMU_CC=100";
  EXPECT_TRUE(rl::emu::has_tma());
  EXPECT_FALSE(rl::emu::has_wgmma());
  EXPECT_FALSE(rl::ptx::emulator_runs_sm90a());
}

TEST(HopperFamiliesOnBlackwell, an_mbarrier_and_a_bulk_copy_run) {
  std::uint32_t* in = nullptr;
  std::uint32_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&in), kWords * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), kWords * 4), cudaSuccess);
  std::vector<std::uint32_t> host(kWords);
  for (int i = 0; i < kWords; ++i) host[i] = static_cast<std::uint32_t>(1000 + i);
  ASSERT_EQ(cudaMemcpy(in, host.data(), kWords * 4, cudaMemcpyHostToDevice), cudaSuccess);
  rl::launch(bulk_round_trip, dim3(1), dim3(32), 0, nullptr, in, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint32_t> got(kWords);
  ASSERT_EQ(cudaMemcpy(got.data(), out, kWords * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kWords; ++i) EXPECT_EQ(got[i], 2U * (1000U + i)) << "word " << i;
  cudaFree(in);
  cudaFree(out);
}

// TMA exists on 10.0: the tensor map encodes (at 8.9 it throws) and a box lands.
__global__ void tma_box(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap map, std::uint16_t* out) {
  __shared__ __align__(1024) std::uint16_t box[8 * 64];
  __shared__ std::uint64_t bar;
  rl::ptx::mbarrier_init(&bar, 1);
  rl::ptx::fence_mbarrier_init();
  rl::ptx::mbarrier_arrive_expect_tx(&bar, sizeof box);
  rl::ptx::tma_load_2d(box, &map, 0, 0, &bar);
  rl::ptx::mbarrier_wait_parity(&bar, 0);
  for (int i = 0; i < 8 * 64; ++i) out[i] = box[i];
}

TEST(HopperFamiliesOnBlackwell, a_tma_tensor_map_encodes_and_its_box_lands_swizzled) {
  std::uint16_t* tensor = nullptr;
  std::uint16_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&tensor), 8 * 64 * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 8 * 64 * 2), cudaSuccess);
  std::vector<std::uint16_t> host(8 * 64);
  for (int i = 0; i < 8 * 64; ++i) host[i] = static_cast<std::uint16_t>(i);
  ASSERT_EQ(cudaMemcpy(tensor, host.data(), host.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  const rl::ptx::TensorMap map = rl::ptx::encode_tensor_map_2d(
      rl::ptx::tensor_map_2d(8, 64, 64, 2, 8, 64), rl::ptx::TensorMapElement::bf16, tensor);
  rl::launch(tma_box, dim3(1), dim3(1), 0, nullptr, map, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint16_t> got(8 * 64);
  ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got[3 * 64 + 2 * 8], 3 * 64 + 8);  // row 3, chunk 1 at chunk 1 ^ 3 = 2
  EXPECT_EQ(got[0 * 64 + 5], 5);
  cudaFree(tensor);
  cudaFree(out);
}

// wgmma is sm_90a-only: Blackwell has no wgmma, so the wrapper stops the
// process with the line, as a B200 build of it traps.
TEST(HopperFamiliesOnBlackwell, a_wgmma_is_refused_with_the_instruction_the_device_and_who_has_it) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(rl::ptx::wgmma_fence(),
               "rl::ptx: wgmma.fence is sm_90a-only and the emulator has no model of it at "
               "compute capability 10.0: RL_EMU_CC=90 emulates the one device that has it");
  float d[64] = {};
  EXPECT_DEATH((rl::ptx::wgmma_m64n128k16_f32<__nv_bfloat16, false>(d, 0, 0, 0)),
               "wgmma.mma_async.m64n128k16 is sm_90a-only .* compute capability 10.0: "
               "RL_EMU_CC=90");
}

// setmaxnreg is sm_90a-only too (a B200 build of it traps): refused the same way.
TEST(HopperFamiliesOnBlackwell, setmaxnreg_is_refused_like_wgmma) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(rl::ptx::setmaxnreg_inc<232>(),
               "rl::ptx: setmaxnreg.inc is sm_90a-only and the emulator has no model of it at "
               "compute capability 10.0: RL_EMU_CC=90 emulates the one device that has it");
  EXPECT_DEATH(rl::ptx::setmaxnreg_dec<40>(), "setmaxnreg.dec is sm_90a-only .* 10.0");
}

}  // namespace
