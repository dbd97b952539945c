// The fiber context switch (emu/src/fiber_switch.*): what a CUDA thread keeps
// across a wait point while other threads run, exceptions on fiber stacks,
// the unwinding of an aborted block's threads, and the floating-point mode
// kernels compute in.
#include <gtest/gtest.h>

#include <atomic>
#include <cfenv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "rl/cuda.hpp"

namespace emu_fiber {

// Eight values that depend on the thread index and stay live across every
// barrier: more than the six callee-saved registers, so the compiler keeps
// most of them there and spills the rest to the fiber's stack.
inline std::uint64_t mix_rounds(unsigned thread, int rounds, bool with_barriers) {
  std::uint64_t a = (thread + 1) * 0x9e3779b97f4a7c15ull, b = a * 3, c = a * 5, d = a * 7,
                e = a * 11, f = a * 13, g = a * 17, h = a * 19;
  for (int r = 0; r < rounds; ++r) {
    if (with_barriers) __syncthreads();
    a = a * 6364136223846793005ull + b;
    b ^= c >> 7;
    c += d * 3;
    d ^= e << 5;
    e += f;
    f ^= g >> 11;
    g += h * 5;
    h ^= a;
  }
  return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h;
}

__global__ void values_live_across_barriers(std::uint64_t* out, int rounds) {
  out[threadIdx.x] = mix_rounds(threadIdx.x, rounds, true);
}

__global__ void catches_its_own_exception_after_a_barrier(int* out) {
  int result = 0;
  try {
    __syncthreads();
    if (threadIdx.x % 2 == 1) throw std::runtime_error("odd thread");
    result = static_cast<int>(threadIdx.x);
  } catch (const std::runtime_error&) {
    result = -1;
  }
  __syncthreads();  // every thread still takes part after its catch
  out[threadIdx.x] = result;
}

std::atomic<int> g_destroyed{0};
struct CountsItsDestruction {
  ~CountsItsDestruction() { g_destroyed.fetch_add(1); }
};

// Each level of the recursion holds an object whose destructor counts, so an
// unwound thread is counted once per frame between its wait point and the
// kernel's first frame.
void wait_forever_at_depth(int depth) {
  CountsItsDestruction guard;
  if (depth > 0) {
    wait_forever_at_depth(depth - 1);
    return;
  }
  if (threadIdx.x < 16)
    __syncthreads();  // waits for lanes 16..31 ...
  else
    __syncwarp();  // ... which wait for lanes 0..15: a deadlock
}

__global__ void deadlocks_three_frames_deep(int* out) {
  CountsItsDestruction guard;
  wait_forever_at_depth(2);
  out[threadIdx.x] = 1;
}

std::atomic<int> g_started{0};
__global__ void first_thread_throws(int* out) {
  g_started.fetch_add(1);
  if (threadIdx.x == 0) throw std::runtime_error("first thread");
  __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void divide_across_a_barrier(const float* num, const float* den, float* out) {
  const unsigned i = threadIdx.x;
  out[i] = num[i] / den[i];
  __syncthreads();
  out[blockDim.x + i] = num[i] / den[i];
}

}  // namespace emu_fiber

using namespace emu_fiber;

TEST(EmuFiber, ValuesInCalleeSavedRegistersSurviveOtherThreadsRunning) {
  constexpr int kThreads = 256, kRounds = 40;
  std::vector<std::uint64_t> out(kThreads, 0);
  rl::launch(values_live_across_barriers, dim3(1), dim3(kThreads), 0, nullptr, out.data(), kRounds);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (unsigned t = 0; t < kThreads; ++t)
    ASSERT_EQ(out[t], mix_rounds(t, kRounds, false)) << "thread " << t;
}

TEST(EmuFiber, AnExceptionThrownAndCaughtInsideAKernelLeavesTheBlockRunning) {
  std::vector<int> out(64, 0);
  rl::launch(catches_its_own_exception_after_a_barrier, dim3(1), dim3(64), 0, nullptr, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], t % 2 == 1 ? -1 : t) << "thread " << t;
}

TEST(EmuFiber, AnAbortedBlocksWaitingThreadsAreUnwoundThroughEveryFrame) {
  g_destroyed = 0;
  std::vector<int> out(32, 0);
  testing::internal::CaptureStderr();
  rl::launch(deadlocks_three_frames_deep, dim3(1), dim3(32), 0, nullptr, out.data());
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  cudaDeviceSynchronize();
  cudaGetLastError();
  EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
  // The kernel's frame and three levels of recursion, in each of 32 threads.
  EXPECT_EQ(g_destroyed.load(), 32 * 4);
  EXPECT_EQ(out[0], 0);
}

TEST(EmuFiber, ThreadsOfAnAbortedBlockThatNeverStartedRunNoKernelCode) {
  const rl::emu::Schedule before = rl::emu::current_schedule();
  rl::emu::set_schedule(rl::emu::Schedule{rl::emu::ScheduleOrder::forward, 0});
  g_started = 0;
  std::vector<int> out(64, 0);
  testing::internal::CaptureStderr();
  rl::launch(first_thread_throws, dim3(1), dim3(64), 0, nullptr, out.data());
  const std::string message = testing::internal::GetCapturedStderr();
  rl::emu::set_schedule(before);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  cudaDeviceSynchronize();
  cudaGetLastError();
  EXPECT_NE(message.find("first thread"), std::string::npos) << message;
  EXPECT_EQ(g_started.load(), 1);  // thread 0 ran first and aborted the block
  // The emulator stays usable, with fresh fibers on the same stacks.
  rl::launch(first_thread_throws, dim3(1), dim3(1), 0, nullptr, out.data());
  cudaGetLastError();
  EXPECT_EQ(g_started.load(), 2);
}

// Kernels compute in the launching thread's floating-point mode on both sides
// of a switch (the switch leaves MXCSR alone; see fiber_switch.cpp).
TEST(EmuFiber, KernelsDivideInTheLaunchingThreadsRoundingMode) {
  rl::emu::set_worker_threads(1);
  std::vector<float> num(32, 1.0f), den(32, 3.0f), out(64, 0.0f);
  const auto quotient_in = [&](int mode) {
    std::fesetround(mode);
    rl::launch(divide_across_a_barrier, dim3(1), dim3(32), 0, nullptr, num.data(), den.data(),
               out.data());
    volatile float one = 1.0f, three = 3.0f;
    const float host = one / three;
    std::fesetround(FE_TONEAREST);
    return host;
  };
  for (const int mode : {FE_UPWARD, FE_DOWNWARD}) {
    const float expected = quotient_in(mode);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(out[i], expected) << "mode " << mode << " at " << i;
  }
  EXPECT_NE(quotient_in(FE_UPWARD), quotient_in(FE_DOWNWARD));  // the modes differ here
}
