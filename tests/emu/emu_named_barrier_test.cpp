// Named barriers (rl::ptx::named_barrier_sync / named_barrier_arrive, i.e.
// bar.sync / bar.arrive with an id and a thread count) on the emulator: the
// pingpong of two consumer warpgroups that FlashAttention-3 schedules with
// them, a hand-off through shared memory, and each misuse reported with one
// line.  Racecheck's view of them: tests/emu_sanitize/named_barrier_race_cases.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

namespace {

constexpr unsigned kWarpgroup = 128;
constexpr unsigned kRounds = 5;

// The order-dependent update the two consumers take turns at: a turn taken
// out of order changes the result.
__host__ __device__ unsigned step(unsigned acc, unsigned value, unsigned consumer) {
  return acc * 3U + value * (consumer + 1U);
}

// Warpgroup 0 stages the inputs in shared memory and leaves; consumer
// warpgroups 1 and 2 then take turns at one shared accumulator per column,
// FA3-style: consumer c waits for its turn at barrier 1 + c and hands the
// turn on at the other's barrier, 256 threads each (its own 128 waiting, the
// other's 128 arriving).  Consumer 1 arrives first at consumer 0's barrier,
// so consumer 0 goes first.  `hand_on_early` hands the turn on before the
// update: the sabotage the negative test needs.
__global__ void consumers_take_turns(const unsigned* in, unsigned* out, bool hand_on_early) {
  __shared__ unsigned staged[kRounds * kWarpgroup];
  __shared__ unsigned acc[kWarpgroup];
  const unsigned warpgroup = threadIdx.x / kWarpgroup;
  const unsigned column = threadIdx.x % kWarpgroup;
  if (warpgroup == 0) {
    for (unsigned r = 0; r < kRounds; ++r)
      staged[r * kWarpgroup + column] = in[r * kWarpgroup + column];
    acc[column] = 1;
  }
  __syncthreads();
  if (warpgroup == 0) return;
  const unsigned me = warpgroup - 1;
  const unsigned other = 1 - me;
  if (me == 1) rl::ptx::named_barrier_arrive(1, 2 * kWarpgroup);
  for (unsigned r = 0; r < kRounds; ++r) {
    rl::ptx::named_barrier_sync(1 + me, 2 * kWarpgroup);
    const bool last_turn = me == 1 && r == kRounds - 1;  // nobody waits for a turn after it
    if (hand_on_early && !last_turn) rl::ptx::named_barrier_arrive(1 + other, 2 * kWarpgroup);
    acc[column] = step(acc[column], staged[r * kWarpgroup + column], me);
    if (!hand_on_early && !last_turn) rl::ptx::named_barrier_arrive(1 + other, 2 * kWarpgroup);
  }
  if (me == 1) out[blockIdx.x * kWarpgroup + column] = acc[column];
}

std::vector<unsigned> pingpong_inputs() {
  std::vector<unsigned> in(kRounds * kWarpgroup);
  for (unsigned i = 0; i < in.size(); ++i) in[i] = i * 2654435761U + 17U;
  return in;
}

constexpr unsigned kBlocks = 2;  // each block's barriers are its own

std::vector<unsigned> pingpong_reference(const std::vector<unsigned>& in) {
  std::vector<unsigned> out(kBlocks * kWarpgroup);
  for (unsigned i = 0; i < out.size(); ++i) {
    const unsigned column = i % kWarpgroup;
    unsigned acc = 1;
    for (unsigned r = 0; r < kRounds; ++r)
      for (unsigned consumer = 0; consumer < 2; ++consumer)
        acc = step(acc, in[r * kWarpgroup + column], consumer);
    out[i] = acc;
  }
  return out;
}

std::vector<std::vector<unsigned>> run_pingpong(bool hand_on_early) {
  const std::vector<unsigned> in = pingpong_inputs();
  return rl::emu::run_under_schedules([&] {
    std::vector<unsigned> out(kBlocks * kWarpgroup, 0);
    rl::launch(consumers_take_turns, dim3(kBlocks), dim3(3 * kWarpgroup), 0, nullptr, in.data(),
               out.data(), hand_on_early);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    return out;
  });
}

TEST(EmuNamedBarrier, two_consumer_warpgroups_take_turns_under_both_schedules) {
  const std::vector<unsigned> expected = pingpong_reference(pingpong_inputs());
  for (const std::vector<unsigned>& out : run_pingpong(false)) EXPECT_EQ(out, expected);
}

TEST(EmuNamedBarrier, handing_the_turn_on_before_the_update_is_caught_by_a_schedule) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the early hand-on is a data race, which racecheck reports and ends the run on "
                  "(the named_barrier race cases check that)";
#endif
  const std::vector<unsigned> expected = pingpong_reference(pingpong_inputs());
  const auto outs = run_pingpong(true);
  EXPECT_TRUE(std::any_of(outs.begin(), outs.end(), [&](const auto& o) { return o != expected; }))
      << "the early hand-on went unnoticed under both schedules";
}

// Warp 0 writes, then bar.arrive; warp 1 bar.sync's and reads.  Under the
// reverse schedule warp 1 reaches the barrier first and must wait.
__global__ void arrive_hands_a_write_to_sync(unsigned* out) {
  __shared__ unsigned handed[32];
  const unsigned lane = threadIdx.x % 32;
  if (threadIdx.x < 32) {
    handed[lane] = lane * 7U + 1U;
    rl::ptx::named_barrier_arrive(3, 64);
  } else {
    rl::ptx::named_barrier_sync(3, 64);
    out[lane] = handed[31 - lane];
  }
}

TEST(EmuNamedBarrier, a_write_before_bar_arrive_is_seen_after_bar_sync) {
  const auto outs = rl::emu::run_under_schedules([] {
    std::vector<unsigned> out(32, 0);
    rl::launch(arrive_hands_a_write_to_sync, dim3(1), dim3(64), 0, nullptr, out.data());
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    return out;
  });
  for (const auto& out : outs)
    for (unsigned lane = 0; lane < 32; ++lane) EXPECT_EQ(out[lane], (31 - lane) * 7U + 1U);
}

// ---- misuse: one line naming the kernel, the launch fails ------------------------

__global__ void bar_with(unsigned id, unsigned threads, int* out) {
  rl::ptx::named_barrier_sync(id, threads);
  out[threadIdx.x] = 1;
}

// Warp 0 arrives counting 64, warp 1 syncs counting 96 in the same phase
// (warp 2 takes no part).
__global__ void two_counts_in_one_phase(int* out) {
  if (threadIdx.x < 32)
    rl::ptx::named_barrier_arrive(2, 64);
  else if (threadIdx.x < 64)
    rl::ptx::named_barrier_sync(2, 96);
  out[threadIdx.x] = 1;
}

// Lanes 0..15 at barrier 1, lanes 16..31 at barrier 2: not .aligned.
__global__ void lanes_at_two_barriers(int* out) {
  rl::ptx::named_barrier_sync(threadIdx.x < 16 ? 1 : 2, 32);
  out[threadIdx.x] = 1;
}

// Warp 0 waits for 64 threads at barrier 5; warp 1 leaves without arriving.
__global__ void sync_nobody_arrives_at(int* out) {
  if (threadIdx.x < 32) rl::ptx::named_barrier_sync(5, 64);
  out[threadIdx.x] = 1;
}

// The one line the failed launch printed, after checking the launch failed.
template <typename Launch>
std::string failure_line(Launch launch) {
  testing::internal::CaptureStderr();
  launch();
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  cudaGetLastError();
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  std::printf("%s", message.c_str());  // the report, for the test log
  return message;
}

std::string bar_failure(unsigned id, unsigned threads) {
  std::vector<int> out(64, 0);
  return failure_line(
      [&] { rl::launch(bar_with, dim3(1), dim3(64), 0, nullptr, id, threads, out.data()); });
}

TEST(EmuNamedBarrier, a_barrier_id_above_15_fails_the_launch) {
  const std::string message = bar_failure(16, 64);
  EXPECT_NE(message.find("bar_with"), std::string::npos) << message;
  EXPECT_NE(message.find("bar.sync 16, 64: barrier id 16 is out of range"), std::string::npos)
      << message;
}

TEST(EmuNamedBarrier, a_count_of_no_whole_warps_or_above_the_block_fails_the_launch) {
  for (const unsigned threads : {0U, 48U, 96U}) {
    const std::string message = bar_failure(1, threads);
    EXPECT_NE(message.find("bar.sync 1, " + std::to_string(threads) +
                           ": the thread count must be a non-zero multiple of 32"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("the block's 64 threads"), std::string::npos) << message;
  }
}

TEST(EmuNamedBarrier, two_counts_in_one_phase_fail_the_launch) {
  std::vector<int> out(96, 0);
  const std::string message = failure_line(
      [&] { rl::launch(two_counts_in_one_phase, dim3(1), dim3(96), 0, nullptr, out.data()); });
  EXPECT_NE(message.find("two_counts_in_one_phase"), std::string::npos) << message;
  EXPECT_NE(message.find("every arrival of a phase names the same count"), std::string::npos)
      << message;
}

TEST(EmuNamedBarrier, lanes_of_a_warp_at_different_barriers_fail_the_launch) {
  std::vector<int> out(32, 0);
  const std::string message = failure_line(
      [&] { rl::launch(lanes_at_two_barriers, dim3(1), dim3(32), 0, nullptr, out.data()); });
  EXPECT_NE(message.find("in a warp whose other lanes execute bar.sync"), std::string::npos)
      << message;
}

TEST(EmuNamedBarrier, a_phase_that_can_never_complete_is_a_deadlock) {
  std::vector<int> out(64, 0);
  const std::string message = failure_line(
      [&] { rl::launch(sync_nobody_arrives_at, dim3(1), dim3(64), 0, nullptr, out.data()); });
  EXPECT_NE(message.find("deadlock"), std::string::npos) << message;
  EXPECT_NE(message.find("named barrier 5 (bar.sync; its phase has 32 of 64 threads arrived"),
            std::string::npos)
      << message;
}

// A lane that exited makes the warp incomplete: the process stops (as for
// every .sync.aligned instruction, rl/emu/ptx_warp.hpp).
__global__ void half_warp_exits_before(int* out) {
  if (threadIdx.x < 16) return;
  rl::ptx::named_barrier_arrive(1, 32);
  out[threadIdx.x] = 1;
}

TEST(EmuNamedBarrierDeathTest, an_incomplete_warp_stops_the_process) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<int> out(32, 0);
  EXPECT_DEATH(rl::launch(half_warp_exits_before, dim3(1), dim3(32), 0, nullptr, out.data()),
               "bar.arrive executed by an incomplete warp");
}

}  // namespace
