// The emulator's errors instead of hangs and bare crashes (emu/README.md,
// "Errors the emulator reports"): the watchdog, SIGSEGV reports, device
// assert and __trap, static __shared__ limits and initcheck, misaligned
// vector accesses.
//
// Cases that crash, leave a sticky error or need an environment variable read
// once per process run in a child process (gtest death tests, "threadsafe"
// style: the child re-runs the test binary from the start).
#undef NDEBUG  // device assert is compiled out under NDEBUG, as with nvcc
#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>

#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

namespace emu_diagnostics {

// Thread 0 waits for a flag that thread 1 sets, without ever yielding: under
// the forward schedule thread 1 never runs.
__global__ void spin_without_yield(int* out) {
  __shared__ volatile int flag;
  if (threadIdx.x == 1) flag = 1;
  if (threadIdx.x == 0) {
    flag = 0;
    while (flag == 0) {
    }
    out[0] = 1;
  }
}

// A thread the watchdog's signal cannot reach (blocked here; under TSan any
// spinning thread) would hang the process for good: it ends with 124 instead.
__global__ void spin_with_the_watchdog_signal_blocked(int* out) {
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
  volatile int forever = 1;
  while (forever != 0) {
  }
  out[0] = 1;
}

// Thread 0 yields in __nanosleep waiting for thread 1, which waits at a
// barrier thread 0 never reaches: every pass runs, nothing progresses.
__global__ void nanosleep_livelock(int* out) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) {
    flag = 0;
    while (flag == 0) __nanosleep(100);
    out[0] = 1;
  } else {
    __syncthreads();
    flag = 1;
  }
}

// Legal and long in total: every thread runs about `ms` milliseconds without
// a barrier, and each exit is progress.
__global__ void busy_threads(double ms, int* out) {
  const auto start = std::chrono::steady_clock::now();
  long spins = 0;
  while (
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() <
      ms)
    ++spins;
  out[threadIdx.x] = spins > 0 ? 1 : 0;
}

__global__ void write_index(int* out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = static_cast<int>(threadIdx.x);
}

__global__ void null_store(int* null) {
  if (blockIdx.x == 1 && threadIdx.x == 3) null[threadIdx.x] = 42;
}

// Touches a local array from its top down, page by page, as a deep stack
// would: the first page below the fiber stack is its guard page.
__global__ void large_local_array(int* out, std::size_t bytes) {
  volatile char local[4 << 20];
  for (std::size_t i = bytes; i >= 4096; i -= 4096) local[i - 1] = 1;
  out[0] = local[bytes - 1];
}

__global__ void asserts_index_below(int* out, int limit) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  assert(i < limit);
  out[i] = i;
}

__global__ void traps_in_block_one(int* out) {
  if (blockIdx.x == 1 && threadIdx.x == 0) __trap();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// Reads its static shared tile back; with `skip_odd` the odd slots are never
// written.  A template, as tiled kernels usually are.
template <int N>
__global__ void through_static_shared(const float* in, float* out, bool skip_odd) {
  __shared__ float tile[N];
  const unsigned i = threadIdx.x;
  if (!skip_odd || i % 2 == 0) tile[i] = in[i];
  __syncthreads();
  out[i] = tile[i];
}

// 64 KiB of static shared memory: nvcc refuses it (48 KiB per block).
__global__ void oversized_static_shared(float* out) {
  __shared__ float big[16 * 1024];
  big[threadIdx.x * 512] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = big[(threadIdx.x * 512 + 512) % (16 * 1024)];
}

// Exactly 48 KiB: allowed.
__global__ void largest_static_shared(float* out) {
  __shared__ float big[12 * 1024];
  big[threadIdx.x * 384] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = big[threadIdx.x * 384];
}

__global__ void streaming_copy(const unsigned char* in, unsigned char* out) {
  std::uint32_t r[4];
  rl::ptx::ld_global_nc_cs_v4(r, in + 16 * threadIdx.x);
  rl::ptx::st_global_cs_v4(out + 16 * threadIdx.x, r);
}

__global__ void float4_copy(const float* in, float* out) {
  out[threadIdx.x] = reinterpret_cast<const float4*>(in)->x;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs through_static_shared<64>; returns how many outputs are NaN.
int nan_outputs_through_static_shared(bool skip_odd) {
  std::vector<float> in(64, 5.0f), out(64, 0.0f);
  rl::launch(through_static_shared<64>, dim3(1), dim3(64), 0, nullptr, in.data(), out.data(),
             skip_odd);
  if (cudaGetLastError() != cudaSuccess) return -1;
  int nans = 0;
  for (float v : out) {
    if (std::isnan(v))
      ++nans;
    else if (v != 5.0f)
      return -2;
  }
  return nans;
}

}  // namespace emu_diagnostics

using namespace emu_diagnostics;

class Watchdog : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

#if defined(__SANITIZE_THREAD__)
// Under racecheck a signal waits until the thread calls into TSan's runtime,
// which a spinning thread never does: the watchdog ends the process instead
// (exit code 124, one report naming the kernel and block).
TEST_F(Watchdog, ends_the_process_naming_the_block_when_a_thread_spins_without_yielding) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_WATCHDOG_S", "1", 1);
        int out[128] = {};
        rl::launch(spin_without_yield, dim3(1), dim3(64), 0, nullptr, out);
        std::exit(0);
      },
      testing::ExitedWithCode(124),
      "kernel .*spin_without_yield.*block \\(0,0,0\\): watchdog: no thread of the block made "
      "progress for [0-9.]+ s and the running thread could not be stopped.*ThreadSanitizer");
}
#else
TEST_F(Watchdog, stops_a_thread_spinning_without_yielding_and_the_emulator_stays_usable) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_WATCHDOG_S", "1", 1);
        int out[128] = {};
        const auto start = std::chrono::steady_clock::now();
        rl::launch(spin_without_yield, dim3(1), dim3(64), 0, nullptr, out);
        const double took = seconds_since(start);
        if (cudaGetLastError() != cudaErrorLaunchTimeout || out[0] != 0 || took > 5.0) std::exit(1);
        rl::launch(write_index, dim3(2), dim3(64), 0, nullptr, out);
        std::exit(cudaGetLastError() == cudaSuccess && out[127] == 63 ? 0 : 2);
      },
      testing::ExitedWithCode(0),
      "spin_without_yield.*block \\(0,0,0\\): watchdog: no thread of the block made progress for "
      "1 s.*warp 0: .*1 running without ever yielding");
}

TEST_F(Watchdog, stops_a_spinning_block_on_each_of_several_workers) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_WATCHDOG_S", "1", 1);
        rl::emu::set_worker_threads(3);
        int out[3 * 32] = {};
        const auto start = std::chrono::steady_clock::now();
        rl::launch(spin_without_yield, dim3(3), dim3(32), 0, nullptr, out);
        const double took = seconds_since(start);
        if (cudaGetLastError() != cudaErrorLaunchTimeout || took > 5.0) std::exit(1);
        rl::launch(write_index, dim3(3), dim3(32), 0, nullptr, out);
        std::exit(cudaGetLastError() == cudaSuccess && out[95] == 31 ? 0 : 2);
      },
      testing::ExitedWithCode(0), "spin_without_yield.*watchdog");
}
#endif

TEST_F(Watchdog, ends_the_process_when_the_spinning_thread_cannot_be_stopped) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_WATCHDOG_S", "1", 1);
        int out[1] = {};
        rl::launch(spin_with_the_watchdog_signal_blocked, dim3(1), dim3(32), 0, nullptr, out);
        std::exit(0);
      },
      testing::ExitedWithCode(124),
      "spin_with_the_watchdog_signal_blocked.*block \\(0,0,0\\): watchdog: .*could not be "
      "stopped \\(it never yields");
}

TEST_F(Watchdog, stops_threads_that_yield_forever_in_nanosleep) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_WATCHDOG_S", "1", 1);
        int out[1] = {};
        const auto start = std::chrono::steady_clock::now();
        rl::launch(nanosleep_livelock, dim3(1), dim3(64), 0, nullptr, out);
        const double took = seconds_since(start);
        std::exit(cudaGetLastError() == cudaErrorLaunchTimeout && took < 5.0 ? 0 : 1);
      },
      testing::ExitedWithCode(0),
      "nanosleep_livelock.*watchdog: .*warp 0: 1 runnable \\(yielded in __nanosleep or not yet "
      "run\\), 31 at __syncthreads; warp 1: 32 at __syncthreads");
}

TEST_F(Watchdog, lets_a_long_kernel_run_whose_threads_keep_finishing) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_WATCHDOG_S", "1", 1);
        std::vector<int> out(32, 0);
        const auto start = std::chrono::steady_clock::now();
        rl::launch(busy_threads, dim3(1), dim3(32), 0, nullptr, 100.0, out.data());
        const bool long_enough = seconds_since(start) > 2.0;  // twice the watchdog's limit
        bool all = true;
        for (int v : out) all = all && v == 1;
        std::exit(cudaGetLastError() == cudaSuccess && all && long_enough ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST_F(Watchdog, malformed_limit_is_one_line_and_exit_code_2) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_WATCHDOG_S", "soon", 1);
        int out[32] = {};
        rl::launch(write_index, dim3(1), dim3(32), 0, nullptr, out);
        std::exit(0);
      },
      testing::ExitedWithCode(2), "RL_EMU_WATCHDOG_S='soon' is invalid");
}

class CrashReport : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(CrashReport, null_store_names_kernel_block_and_thread) {
  EXPECT_DEATH(rl::launch(null_store, dim3(2), dim3(32), 0, nullptr, static_cast<int*>(nullptr)),
               "SIGSEGV in kernel .*null_store.*, block \\(1,0,0\\), thread \\(3,0,0\\): invalid "
               "memory access \\(SIGSEGV\\) at address 0xc");
}

TEST_F(CrashReport, stack_overflow_names_the_stack_size_to_set) {
  EXPECT_DEATH(
      {
        int out[1] = {};
        rl::launch(large_local_array, dim3(1), dim3(1), 0, nullptr, out, std::size_t{4} << 20);
      },
      "SIGSEGV in kernel .*large_local_array.*, block \\(0,0,0\\), thread \\(0,0,0\\): stack "
      "overflow .*set RL_EMU_STACK_KB=[0-9]+ or more");
}

TEST_F(CrashReport, a_host_segfault_is_left_to_the_default_handler) {
  int out[32] = {};
  rl::launch(write_index, dim3(1), dim3(32), 0, nullptr, out);  // installs the handlers
  static volatile std::uintptr_t null_address = 0;              // opaque to the compiler
  EXPECT_DEATH(*reinterpret_cast<volatile int*>(null_address) = 1, "");
}

class DeviceAssert : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(DeviceAssert, failed_assert_reports_and_leaves_a_sticky_cudaErrorAssert) {
  EXPECT_EXIT(
      {
        std::vector<int> out(4 * 32, -1);
        rl::launch(asserts_index_below, dim3(4), dim3(32), 0, nullptr, out.data(), 69);
        bool ok = cudaGetLastError() == cudaErrorAssert;
        ok = ok && cudaGetLastError() == cudaErrorAssert;  // sticky: reading does not clear it
        ok = ok && cudaPeekAtLastError() == cudaErrorAssert;
        ok = ok && cudaDeviceSynchronize() == cudaErrorAssert;
        int host = 0;
        ok = ok && cudaMemcpy(&host, out.data(), sizeof host, cudaMemcpyDefault) == cudaErrorAssert;
        std::vector<int> later(32, -1);
        rl::launch(write_index, dim3(1), dim3(32), 0, nullptr, later.data());
        ok = ok && cudaGetLastError() == cudaErrorAssert && later[5] == -1;  // nothing ran
        ok = ok && cudaDeviceReset() == cudaSuccess;
        rl::launch(write_index, dim3(1), dim3(32), 0, nullptr, later.data());
        ok = ok && cudaGetLastError() == cudaSuccess && later[5] == 5;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0),
      "kernel .*asserts_index_below.*, block \\(2,0,0\\), thread \\(5,0,0\\): device assertion "
      "`i < limit' failed at .*emu_diagnostics_test.cpp:[0-9]+");
}

TEST_F(DeviceAssert, passing_assert_changes_nothing) {
  std::vector<int> out(4 * 32, -1);
  rl::launch(asserts_index_below, dim3(4), dim3(32), 0, nullptr, out.data(), 4 * 32);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < 4 * 32; ++i) ASSERT_EQ(out[i], i);
}

TEST_F(DeviceAssert, host_assert_still_aborts) {
  int out[32] = {};
  rl::launch(write_index, dim3(1), dim3(32), 0, nullptr, out);
  const int zero = out[0];
  EXPECT_DEATH(assert(zero == 1), "Assertion `zero == 1' failed");
}

TEST_F(DeviceAssert, trap_leaves_a_sticky_launch_failure) {
  EXPECT_EXIT(
      {
        std::vector<int> out(2 * 32, 0);
        rl::launch(traps_in_block_one, dim3(2), dim3(32), 0, nullptr, out.data());
        bool ok = cudaGetLastError() == cudaErrorLaunchFailure;
        ok = ok && cudaDeviceSynchronize() == cudaErrorLaunchFailure;
        ok = ok && cudaGetLastError() == cudaErrorLaunchFailure;
        std::exit(ok ? 0 : 1);
      },
      testing::ExitedWithCode(0), "block \\(1,0,0\\), thread \\(0,0,0\\): __trap\\(\\)");
}

class StaticShared : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(StaticShared, never_written_static_shared_reads_as_nan_under_initcheck) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_POISON", "1", 1);
        // A first block leaves 5.0 everywhere; the next launch's block must
        // still start poisoned.
        const int all_written = nan_outputs_through_static_shared(false);
        std::exit(all_written == 0 && nan_outputs_through_static_shared(true) == 32 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST_F(StaticShared, written_static_shared_reads_back_under_initcheck) {
  EXPECT_EXIT(
      {
        setenv("RL_EMU_POISON", "1", 1);
        std::exit(nan_outputs_through_static_shared(false) == 0 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST_F(StaticShared, more_than_48_KiB_is_refused_naming_the_kernel) {
  std::vector<float> out(32, 0.0f);
  testing::internal::CaptureStderr();
  rl::launch(oversized_static_shared, dim3(1), dim3(32), 0, nullptr, out.data());
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_NE(err.find("oversized_static_shared"), std::string::npos) << err;
  EXPECT_NE(err.find("65536 bytes of static __shared__"), std::string::npos) << err;
  rl::launch(largest_static_shared, dim3(1), dim3(32), 0, nullptr, out.data());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(out[31], 31.0f);
}

TEST_F(StaticShared, static_plus_dynamic_beyond_the_opt_in_maximum_is_refused) {
  std::vector<float> out(32, 0.0f);
  ASSERT_EQ(cudaFuncSetAttribute(largest_static_shared, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 200 * 1024),
            cudaSuccess);
  rl::launch(largest_static_shared, dim3(1), dim3(32), 200 * 1024, nullptr, out.data());
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);  // 48 + 200 KiB > 227 KiB
  rl::launch(largest_static_shared, dim3(1), dim3(32), 100 * 1024, nullptr, out.data());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(Alignment, misaligned_v4_access_fails_the_launch_naming_the_thread) {
  alignas(16) unsigned char in[16 * 33] = {};
  alignas(16) unsigned char out[16 * 33] = {};
  testing::internal::CaptureStderr();
  rl::launch(streaming_copy, dim3(1), dim3(32), 0, nullptr, in + 4, out);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorMisalignedAddress);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMisalignedAddress);
  EXPECT_NE(err.find("streaming_copy"), std::string::npos) << err;
  EXPECT_NE(err.find("block (0,0,0): thread (0,0,0): misaligned address: ld.global.cs.nc.v4.b32"),
            std::string::npos)
      << err;
  // Not sticky: the aligned copy runs.
  for (int i = 0; i < 16 * 33; ++i) in[i] = static_cast<unsigned char>(i);
  rl::launch(streaming_copy, dim3(1), dim3(32), 0, nullptr, in, out);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(out[16 * 32 - 1], static_cast<unsigned char>(16 * 32 - 1));
}

#if defined(__SANITIZE_ADDRESS__)
// The asan preset also runs UBSan (halting); float4 carries CUDA's 16-byte
// alignment, so a misaligned plain dereference is reported too.
TEST(Alignment, misaligned_float4_dereference_is_reported_by_ubsan) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  alignas(16) float in[8] = {};
  float out[32] = {};
  rl::launch(float4_copy, dim3(1), dim3(32), 0, nullptr, in, out);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_DEATH(rl::launch(float4_copy, dim3(1), dim3(32), 0, nullptr, in + 1, out),
               "misaligned address .* for type 'const struct float4'");
}
#endif
