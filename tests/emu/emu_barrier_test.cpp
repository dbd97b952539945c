// __syncthreads semantics: ordering of shared-memory phases, exited threads
// counting as arrived, the predicate forms, and multi-dimensional blocks.
#include <gtest/gtest.h>

#include <vector>

#include "rl/cuda.hpp"

namespace emu_barrier {

__global__ void rotate_through_shared(const int* in, int* out, int rounds) {
  __shared__ int buffer[256];
  const unsigned n = blockDim.x;
  int value = in[threadIdx.x];
  for (int r = 0; r < rounds; ++r) {
    buffer[threadIdx.x] = value;
    __syncthreads();
    value = buffer[(threadIdx.x + 1) % n];
    __syncthreads();
  }
  out[threadIdx.x] = value;
}

__global__ void odd_threads_exit_early(int* out) {
  __shared__ int buffer[128];
  if (threadIdx.x % 2 == 1) return;
  buffer[threadIdx.x] = static_cast<int>(threadIdx.x) * 10;
  __syncthreads();
  out[threadIdx.x] = buffer[(threadIdx.x + 2) % blockDim.x];
  __syncthreads();
  out[threadIdx.x] += 1;
}

__global__ void barrier_predicates(int* out) {
  const int tid = static_cast<int>(threadIdx.x);
  const int count = __syncthreads_count(tid % 3 == 0);
  const int all_below = __syncthreads_and(tid < 1000);
  const int all_even = __syncthreads_and(tid % 2 == 0);
  const int any_is_7 = __syncthreads_or(tid == 7);
  const int none = __syncthreads_or(0);
  if (tid == 0) {
    out[0] = count;
    out[1] = all_below;
    out[2] = all_even;
    out[3] = any_is_7;
    out[4] = none;
  }
}

__global__ void record_indices(uint3* thread_out, uint3* block_out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  __syncthreads();  // indices must survive a switch away and back
  thread_out[block * threads + rank] = threadIdx;
  block_out[block * threads + rank] = blockIdx;
}

}  // namespace emu_barrier

using namespace emu_barrier;

TEST(EmuBarrier, SyncthreadsSeparatesSharedMemoryPhases) {
  std::vector<int> in(256), out(256, -1);
  for (int i = 0; i < 256; ++i) in[i] = i * 7 + 3;
  for (auto schedule : {"forward", "reverse", "random:5"}) {
    rl::emu::ScopedSchedule scoped(*rl::emu::parse_schedule(schedule));
    rl::launch(rotate_through_shared, dim3(1), dim3(256), 0, nullptr, in.data(), out.data(), 5);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(out[i], in[(i + 5) % 256]) << schedule << " thread " << i;
  }
}

// Threads that exit while others wait at __syncthreads count as arrived, so
// the barrier completes instead of deadlocking, but a barrier some threads
// never reach is undefined behaviour in CUDA: synccheck fails the launch
// (tests/emu_sanitize checks the message).
TEST(EmuBarrier, ThreadsExitingBeforeABarrierFailTheLaunch) {
  std::vector<int> out(128, -1);
  rl::launch(odd_threads_exit_early, dim3(1), dim3(128), 0, nullptr, out.data());
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);  // recorded again; reading clears it
}

TEST(EmuBarrier, PredicateFormsReduceOverTheBlock) {
  std::vector<int> out(5, -1);
  rl::launch(barrier_predicates, dim3(1), dim3(100), 0, nullptr, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(out[0], 34);  // 0, 3, ..., 99
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], 1);
  EXPECT_EQ(out[4], 0);
}

TEST(EmuBarrier, ThreeDimensionalIndicesAreLinearisedXFastest) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  const unsigned threads = 24, blocks = 12;
  std::vector<uint3> thread_out(threads * blocks), block_out(threads * blocks);
  rl::launch(record_indices, grid, block, 0, nullptr, thread_out.data(), block_out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned r = 0; r < threads; ++r) {
      const uint3 t = thread_out[b * threads + r], bi = block_out[b * threads + r];
      EXPECT_EQ(t.x, r % 4);
      EXPECT_EQ(t.y, (r / 4) % 3);
      EXPECT_EQ(t.z, r / 12);
      EXPECT_EQ(bi.x, b % 3);
      EXPECT_EQ(bi.y, (b / 3) % 2);
      EXPECT_EQ(bi.z, b / 6);
    }
}
