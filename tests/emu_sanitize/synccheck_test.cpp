// synccheck (always on): a __syncthreads that completes after some threads of
// the block exited without reaching it is a divergent barrier, undefined in
// CUDA; the launch fails with one line naming kernel, block and call site.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "rl/cuda.hpp"

namespace synccheck {

// Half of every block returns before the barrier the other half waits at.
__global__ void half_block_returns_before_barrier(int* out) {
  if (threadIdx.x < 16) return;
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// The same through __syncthreads_count, in the second block only.
__global__ void second_block_diverges_at_count(int* out) {
  if (blockIdx.x == 1 && threadIdx.x % 2 == 1) return;
  out[blockIdx.x * blockDim.x + threadIdx.x] = __syncthreads_count(1);
}

// Every thread reaches both barriers; then half exit with no barrier after.
__global__ void uniform_barriers_then_early_exit(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  const int mine = s[(threadIdx.x + 1) % blockDim.x];
  __syncthreads();
  if (threadIdx.x < 16) return;
  out[blockIdx.x * blockDim.x + threadIdx.x] = mine;
}

std::string launch_capturing_stderr(void (*kernel)(int*), std::vector<int>& out,
                                    cudaError_t& error) {
  testing::internal::CaptureStderr();
  rl::launch(kernel, dim3(2), dim3(64), 0, nullptr, out.data());
  error = cudaGetLastError();
  cudaDeviceSynchronize();
  cudaGetLastError();
  return testing::internal::GetCapturedStderr();
}

}  // namespace synccheck

using namespace synccheck;

TEST(SyncCheck, ThreadsReturningBeforeABarrierOthersWaitAtFailTheLaunch) {
  std::vector<int> out(128, 0);
  cudaError_t error = cudaSuccess;
  const std::string err = launch_capturing_stderr(half_block_returns_before_barrier, out, error);
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(err.find("kernel synccheck::half_block_returns_before_barrier(int*) failed in block "
                     "(0,0,0): divergent __syncthreads: 16 of 64 threads exited"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("called from "), std::string::npos) << err;  // file+offset for addr2line
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST(SyncCheck, TheVariantsAreCheckedAndTheFailingBlockIsNamed) {
  std::vector<int> out(128, 0);
  cudaError_t error = cudaSuccess;
  const std::string err = launch_capturing_stderr(second_block_diverges_at_count, out, error);
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(err.find("second_block_diverges_at_count(int*) failed in block (1,0,0): divergent "
                     "__syncthreads: 32 of 64"),
            std::string::npos)
      << err;
}

TEST(SyncCheck, UniformBarriersFollowedByEarlyExitsPass) {
  std::vector<int> out(128, -1);
  cudaError_t error = cudaErrorUnknown;
  const std::string err = launch_capturing_stderr(uniform_barriers_then_early_exit, out, error);
  EXPECT_EQ(error, cudaSuccess);
  EXPECT_EQ(err, "");
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 64; ++t)
      EXPECT_EQ(out[b * 64 + t], t < 16 ? -1 : (t + 1) % 64) << b << " " << t;
}
