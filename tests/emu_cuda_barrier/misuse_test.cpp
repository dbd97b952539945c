// Misuse of cuda::barrier and cuda::memcpy_async is one line naming kernel,
// block and (where one is to blame) thread, and a failed launch; never a hang.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <cuda/barrier>
#include <functional>
#include <string>
#include <utility>

namespace {

using Barrier = cuda::barrier<cuda::thread_scope_block>;

// Runs `launch`, which must fail with `error`; returns what the emulator printed.
std::string stderr_of_failed_launch(const std::function<void()>& launch,
                                    cudaError_t error = cudaErrorLaunchFailure) {
  (void)cudaGetLastError();
  testing::internal::CaptureStderr();
  launch();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), error) << err;
  (void)cudaDeviceSynchronize();  // the failure is reported there once more,
  (void)cudaGetLastError();       // and recorded as the last error again
  return err;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Block 1 never initialises its barrier: block 0's initialisation, still in
// the host worker's copy of the __shared__ object, does not count.
__global__ void only_block_zero_initialises() {
  __shared__ Barrier bar;
  if (blockIdx.x == 0 && threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  bar.arrive_and_wait();
}

TEST(CudaBarrierMisuse, a_barrier_this_block_never_initialised_names_kernel_block_and_barrier) {
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(only_block_zero_initialises, dim3(2), dim3(32), 0, nullptr); });
  EXPECT_TRUE(has(err, "kernel ")) << err;
  EXPECT_TRUE(has(err, "only_block_zero_initialises")) << err;
  EXPECT_TRUE(has(err,
                  "block (1,0,0): thread (0,0,0): arrive on the cuda::barrier at shared "
                  "address"))
      << err;
  EXPECT_TRUE(has(err, "which this block never initialised")) << err;
}

// init() without the __syncthreads() after it: under the forward schedule
// thread 0 initialises before the others run, under the reverse one thread
// 31 arrives first, on a barrier not yet initialised.
__global__ void init_without_syncthreads(int* done) {
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  bar.arrive_and_wait();
  done[threadIdx.x] = 1;
}

TEST(CudaBarrierMisuse, a_missing_syncthreads_after_init_fails_under_the_reverse_schedule) {
  int* done = nullptr;
  ASSERT_EQ(cudaMalloc(&done, 32 * sizeof(int)), cudaSuccess);
  {
    const rl::emu::ScopedSchedule reverse({rl::emu::ScheduleOrder::reverse, 0});
    const std::string err = stderr_of_failed_launch(
        [&] { rl::launch(init_without_syncthreads, dim3(1), dim3(32), 0, nullptr, done); });
    EXPECT_TRUE(has(err, "thread (31,0,0): arrive on the cuda::barrier")) << err;
    EXPECT_TRUE(has(err, "never initialised")) << err;
  }
  // The positive case: the forward schedule happens to initialise first.
  const rl::emu::ScopedSchedule forward({rl::emu::ScheduleOrder::forward, 0});
  rl::launch(init_without_syncthreads, dim3(1), dim3(32), 0, nullptr, done);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaFree(done), cudaSuccess);
}

// Half the block returns before arriving: the rest wait for a phase that can
// never complete.
__global__ void half_the_block_never_arrives() {
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  if (threadIdx.x >= 32) return;
  bar.arrive_and_wait();
}

TEST(CudaBarrierMisuse, threads_that_never_arrive_are_a_deadlock_naming_the_barrier) {
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(half_the_block_never_arrives, dim3(1), dim3(64), 0, nullptr); });
  EXPECT_TRUE(has(err, "half_the_block_never_arrives")) << err;
  EXPECT_TRUE(has(err, "block (0,0,0): deadlock: 32 of 64 threads alive")) << err;
  EXPECT_TRUE(has(err, "waits on the cuda::barrier at shared address")) << err;
  EXPECT_TRUE(has(err, "(phase 0 still expects 32 of its 64 arrivals)")) << err;
}

// Each of 32 threads counts two arrivals on a barrier expecting 63 a phase:
// the last of them finds one left.
__global__ void arrivals_beyond_the_expected_count() {
  __shared__ Barrier bar;
  if (threadIdx.x == 0) init(&bar, 2 * blockDim.x - 1);
  __syncthreads();
  (void)bar.arrive(2);
}

TEST(CudaBarrierMisuse, more_arrivals_than_the_phase_expects_fail_naming_the_barrier) {
  const std::string err = stderr_of_failed_launch(
      [] { rl::launch(arrivals_beyond_the_expected_count, dim3(1), dim3(32), 0, nullptr); });
  EXPECT_TRUE(has(err, "arrive on the cuda::barrier at shared address")) << err;
  EXPECT_TRUE(has(err,
                  "counts 2 arrivals in phase 0, which expects only 1 more (of 63 a phase): "
                  "more arrivals than the barrier expects"))
      << err;
}

// A token kept across two completed phases is stale (on a GPU the parity
// comparison could wait forever).
__global__ void stale_token() {
  __shared__ Barrier bar;
  init(&bar, 1);
  auto first = bar.arrive();  // completes phase 0
  (void)bar.arrive();         // completes phase 1
  bar.wait(std::move(first));
}

TEST(CudaBarrierMisuse, a_wait_with_a_token_two_phases_old_is_refused) {
  const std::string err =
      stderr_of_failed_launch([] { rl::launch(stale_token, dim3(1), dim3(1), 0, nullptr); });
  EXPECT_TRUE(has(err, "with the token of phase 0 while the barrier is in phase 2")) << err;
}

// aligned_size_t<16> promises 16-byte alignment; the destination is 4 off.
__global__ void misaligned_copy(const float* src) {
  __shared__ Barrier bar;
  __shared__ __align__(16) float tile[8];
  init(&bar, 1);
  cuda::memcpy_async(&tile[1], src, cuda::aligned_size_t<16>(16), bar);
  bar.arrive_and_wait();
}

TEST(CudaBarrierMisuse, an_aligned_size_copy_to_a_misaligned_address_is_reported_as_misaligned) {
  float* src = nullptr;
  ASSERT_EQ(cudaMalloc(&src, 4 * sizeof(float)), cudaSuccess);
  const std::string err = stderr_of_failed_launch(
      [&] { rl::launch(misaligned_copy, dim3(1), dim3(1), 0, nullptr, src); },
      cudaErrorMisalignedAddress);
  EXPECT_TRUE(has(err, "cuda::memcpy_async with cuda::aligned_size_t<16>(16)")) << err;
  EXPECT_TRUE(has(err, "the destination 0x")) << err;
  EXPECT_TRUE(has(err, "is not a multiple of 16")) << err;
  EXPECT_EQ(cudaFree(src), cudaSuccess);
}

__global__ void init_with_zero() {
  __shared__ Barrier bar;
  init(&bar, 0);
}

TEST(CudaBarrierMisuse, an_expected_count_outside_one_to_max_is_refused) {
  const std::string err =
      stderr_of_failed_launch([] { rl::launch(init_with_zero, dim3(1), dim3(1), 0, nullptr); });
  EXPECT_TRUE(has(err, "init(&bar, 0) on the cuda::barrier")) << err;
  EXPECT_TRUE(has(err, "must be 1 .. 1048575")) << err;
  static_assert(Barrier::max() == (1 << 20) - 1);
}

}  // namespace
