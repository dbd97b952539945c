// Static and dynamic shared memory: one instance per block, also when blocks
// run concurrently on several host threads, and dynamic shared memory of
// exactly the requested size with CUDA's limits.
#include <gtest/gtest.h>

#include <vector>

#include "rl/cuda.hpp"

namespace emu_shared {

__global__ void block_owns_static_shared(int* out, int rounds) {
  __shared__ int tile[16][16];
  __shared__ int block_id;
  if (threadIdx.x == 0 && threadIdx.y == 0) block_id = static_cast<int>(blockIdx.x);
  tile[threadIdx.y][threadIdx.x] =
      static_cast<int>(blockIdx.x * 1000 + threadIdx.y * 16 + threadIdx.x);
  int bad = 0;
  for (int r = 0; r < rounds; ++r) {
    __syncthreads();  // other blocks may run on other host threads meanwhile
    const int v = tile[15 - threadIdx.y][15 - threadIdx.x];
    bad += v / 1000 != static_cast<int>(blockIdx.x) || block_id != static_cast<int>(blockIdx.x);
  }
  out[blockIdx.x * 256 + threadIdx.y * 16 + threadIdx.x] = bad;
}

__global__ void reverse_in_dynamic_shared(const float* in, float* out) {
  RL_DYNAMIC_SHARED(float, buffer);
  const unsigned n = blockDim.x;
  buffer[threadIdx.x] = in[blockIdx.x * n + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * n + threadIdx.x] = buffer[n - 1 - threadIdx.x];
}

__global__ void touch_last_dynamic_byte(unsigned char* out, unsigned bytes) {
  RL_DYNAMIC_SHARED(unsigned char, buffer);
  if (threadIdx.x == 0) {
    buffer[bytes - 1] = 42;
    out[0] = buffer[bytes - 1];
  }
}

__global__ void write_one_past_dynamic_shared(unsigned bytes) {
  RL_DYNAMIC_SHARED(unsigned char, buffer);
  if (threadIdx.x == 0) buffer[bytes] = 1;  // BUG (deliberate): one byte too far
}

}  // namespace emu_shared

using namespace emu_shared;

TEST(EmuShared, StaticSharedIsPerBlockEvenWithConcurrentBlocks) {
  for (int workers : {1, 3}) {
    rl::emu::set_worker_threads(workers);
    const int blocks = 48;
    std::vector<int> out(blocks * 256, -1);
    rl::launch(block_owns_static_shared, dim3(blocks), dim3(16, 16), 0, nullptr, out.data(), 20);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_EQ(out[i], 0) << "workers " << workers << " i " << i;
  }
  rl::emu::set_worker_threads(1);
}

TEST(EmuShared, DynamicSharedIsPerBlockAndSizedByTheLaunch) {
  rl::emu::set_worker_threads(2);
  const int blocks = 16, n = 128;
  std::vector<float> in(blocks * n), out(in.size(), -1.0f);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i);
  rl::launch(reverse_in_dynamic_shared, dim3(blocks), dim3(n), n * sizeof(float), nullptr,
             in.data(), out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < n; ++t) ASSERT_EQ(out[b * n + t], in[b * n + n - 1 - t]);
  rl::emu::set_worker_threads(1);
}

TEST(EmuShared, DynamicSharedAboveDefaultLimitNeedsTheOptIn) {
  unsigned char out = 0;
  const unsigned big = 64 * 1024;
  rl::launch(touch_last_dynamic_byte, dim3(1), dim3(32), big, nullptr, &out, big);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(out, 0);  // the kernel did not run

  ASSERT_EQ(
      cudaFuncSetAttribute(touch_last_dynamic_byte, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(big)),
      cudaSuccess);
  rl::launch(touch_last_dynamic_byte, dim3(1), dim3(32), big, nullptr, &out, big);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(out, 42);

  EXPECT_EQ(cudaFuncSetAttribute(touch_last_dynamic_byte,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, 228 * 1024),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(EmuShared, DynamicSharedAtTheDefaultLimitRuns) {
  unsigned char out = 0;
  rl::launch(touch_last_dynamic_byte, dim3(1), dim3(1), 48 * 1024, nullptr, &out, 48u * 1024u);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(out, 42);
}

#if defined(__SANITIZE_ADDRESS__)
TEST(EmuShared, AddressSanitizerCatchesAnOverrunOfDynamicShared) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(rl::launch(write_one_past_dynamic_shared, dim3(1), dim3(32), 100, nullptr, 100u),
               "heap-buffer-overflow");
}
#endif
