// RL_EMU_THREADS (ctest sets RL_EMU_THREADS=3 for this executable),
// RL_EMU_SCHEDULE (set in a child process, as the variables are read once),
// and the one-line exit on a malformed value.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/emu/arch.hpp"

namespace emu_environment {

__global__ void record_block(int* out) {
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(blockIdx.x);
}

}  // namespace emu_environment

TEST(EmuEnvironment, ScheduleComesFromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_SCHEDULE", "random:7", 1);
        const rl::emu::Schedule schedule = rl::emu::current_schedule();
        std::exit(schedule.order == rl::emu::ScheduleOrder::random && schedule.seed == 7 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(EmuEnvironment, WorkerCountComesFromTheEnvironment) {
  EXPECT_EQ(rl::emu::worker_threads(), 3);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_EQ(prop.multiProcessorCount, 3);
  std::vector<int> out(100, -1);
  rl::launch(emu_environment::record_block, dim3(100), dim3(64), 0, nullptr, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int b = 0; b < 100; ++b) EXPECT_EQ(out[b], b);
}

TEST(EmuEnvironment, MalformedValuesExitWithOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_THREADS", "zero", 1);
        rl::emu::worker_threads();
      },
      testing::ExitedWithCode(2), "rl::emu: RL_EMU_THREADS='zero' is invalid");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_SCHEDULE", "sideways", 1);
        rl::emu::current_schedule();
      },
      testing::ExitedWithCode(2), "rl::emu: RL_EMU_SCHEDULE='sideways' is invalid");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_CC", "75", 1);
        cudaDeviceProp prop{};
        cudaGetDeviceProperties(&prop, 0);
      },
      testing::ExitedWithCode(2),
      "rl::emu: RL_EMU_CC='75' is invalid \\(expected 89 .*, 90 .*, 100 or 103 .*, 120 or 121");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_CC", "10.1", 1);  // a Blackwell (Thor) the emulator does not model
        rl::emu::compute_capability();
      },
      testing::ExitedWithCode(2), "rl::emu: RL_EMU_CC='10.1' is invalid");
}

// Each emulated architecture is named by RL_EMU_CC in either spelling and
// reports itself through cudaGetDeviceProperties; the instruction families
// follow from it (arch.hpp).
TEST(EmuEnvironment, EveryModelledComputeCapabilityIsAccepted) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* spelling : {"100", "10.0", "103", "12.0", "121", "9.0", "89"}) {
    EXPECT_EXIT(
        {
          setenv("RL_EMU_CC", spelling, 1);
          cudaDeviceProp prop{};
          cudaGetDeviceProperties(&prop, 0);
          const int cc = rl::emu::compute_capability();
          const bool ok = prop.major * 10 + prop.minor == cc &&
                          rl::emu::has_tcgen05() == (cc == 100 || cc == 103) &&
                          rl::emu::has_wgmma() == (cc == 90) && rl::emu::has_tma() == (cc >= 90) &&
                          rl::emu::has_block_scaled_mma_sync() == (cc == 120 || cc == 121);
          std::exit(ok ? 3 : 4);
        },
        testing::ExitedWithCode(3), "")
        << spelling;
  }
}
