// Warp intrinsics against the closed forms of ptx-emulation-reference.md §6:
// every shuffle variant with widths 32/16/8/4 and out-of-range lane arguments,
// partial masks and exited lanes, votes, __activemask, reductions.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "rl/cuda.hpp"

namespace emu_warp {

enum class Shfl { idx, up, down, bfly };

// The reference's table, written out independently of the emulator.
unsigned expected_source(Shfl kind, unsigned lane, int arg, unsigned width) {
  const unsigned base = lane & ~(width - 1);
  const unsigned a = static_cast<unsigned>(arg) & 31u;
  switch (kind) {
    case Shfl::idx:
      return base + (static_cast<unsigned>(arg) & (width - 1));
    case Shfl::up:
      return lane < base + a ? lane : lane - a;
    case Shfl::down:
      return lane + a > base + width - 1 ? lane : lane + a;
    case Shfl::bfly:
      return (lane ^ a) > base + width - 1 ? lane : (lane ^ a);
  }
  return lane;
}

__global__ void shuffle_all(Shfl kind, int arg, int width, int* out) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int value = 1000 * static_cast<int>(threadIdx.x / 32) + lane;
  int r = 0;
  switch (kind) {
    case Shfl::idx:
      r = __shfl_sync(0xffffffffu, value, arg, width);
      break;
    case Shfl::up:
      r = __shfl_up_sync(0xffffffffu, value, static_cast<unsigned>(arg), width);
      break;
    case Shfl::down:
      r = __shfl_down_sync(0xffffffffu, value, static_cast<unsigned>(arg), width);
      break;
    case Shfl::bfly:
      r = __shfl_xor_sync(0xffffffffu, value, arg, width);
      break;
  }
  out[threadIdx.x] = r;
}

__global__ void shuffle_wide_types(double* out_double, float4* out_vec) {
  const unsigned lane = threadIdx.x;
  const double d = 0.5 + lane;
  const float4 v = make_float4(static_cast<float>(lane), 1.0f, 2.0f, -static_cast<float>(lane));
  out_double[lane] = __shfl_down_sync(0xffffffffu, d, 3);
  out_vec[lane] = __shfl_xor_sync(0xffffffffu, v, 5);
}

__global__ void shuffle_with_exited_lanes(int* out) {
  const int lane = static_cast<int>(threadIdx.x);
  if (lane >= 24) return;
  out[lane] = __shfl_down_sync(0x00ffffffu, lane * 10, 4);  // sources 24..27 have exited
}

__global__ void shuffle_disjoint_halves(int* out) {
  const int lane = static_cast<int>(threadIdx.x);
  const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  out[lane] = __shfl_sync(mask, lane * 3, lane < 16 ? 15 : 16);
}

__global__ void votes(int predicate_modulus, unsigned* out) {
  const unsigned lane = threadIdx.x;
  const int p = static_cast<int>(lane % static_cast<unsigned>(predicate_modulus) == 0);
  out[lane * 4 + 0] = __ballot_sync(0xffffffffu, p);
  out[lane * 4 + 1] = static_cast<unsigned>(__any_sync(0xffffffffu, p));
  out[lane * 4 + 2] = static_cast<unsigned>(__all_sync(0xffffffffu, p));
  out[lane * 4 + 3] = __ballot_sync(0x0f0f0f0fu | (1u << lane), 1);
}

__global__ void votes_after_exit(unsigned* out) {
  if (threadIdx.x >= 20) return;
  out[0 + threadIdx.x * 2] = __ballot_sync(0xffffffffu, 1);
  out[1 + threadIdx.x * 2] = static_cast<unsigned>(__all_sync(0xffffffffu, 1));
}

__global__ void active_masks(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  out[threadIdx.x] = __activemask();  // converged: every lane
  __syncwarp();
  if (lane >= 10) return;
  out[64 + threadIdx.x] = __activemask();  // the others have exited
}

__global__ void reductions(const int* in, int* out) {
  const int v = in[threadIdx.x];
  const unsigned u = static_cast<unsigned>(v);
  out[threadIdx.x * 8 + 0] = __reduce_add_sync(0xffffffffu, v);
  out[threadIdx.x * 8 + 1] = __reduce_min_sync(0xffffffffu, v);
  out[threadIdx.x * 8 + 2] = __reduce_max_sync(0xffffffffu, v);
  out[threadIdx.x * 8 + 3] = static_cast<int>(__reduce_min_sync(0xffffffffu, u));
  out[threadIdx.x * 8 + 4] = static_cast<int>(__reduce_max_sync(0xffffffffu, u));
  out[threadIdx.x * 8 + 5] = static_cast<int>(__reduce_and_sync(0xffffffffu, u));
  out[threadIdx.x * 8 + 6] = static_cast<int>(__reduce_or_sync(0xffffffffu, u));
  out[threadIdx.x * 8 + 7] = static_cast<int>(__reduce_xor_sync(0xffffffffu, u));
}

__global__ void warp_sum_tree(const float* in, float* out) {
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

}  // namespace emu_warp

using namespace emu_warp;

TEST(EmuWarp, EveryShuffleMatchesTheClosedFormForAllWidthsAndLaneArguments) {
  const int args[] = {0, 1, 3, 7, 8, 15, 16, 31, 32, 33, 40, 63, -1, -5};
  for (Shfl kind : {Shfl::idx, Shfl::up, Shfl::down, Shfl::bfly})
    for (int width : {32, 16, 8, 4})
      for (int arg : args) {
        if (kind != Shfl::idx && kind != Shfl::bfly && arg < 0) continue;  // delta is unsigned
        std::vector<int> out(64, -1);
        rl::launch(shuffle_all, dim3(1), dim3(64), 0, nullptr, kind, arg, width, out.data());
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
        for (unsigned t = 0; t < 64; ++t) {
          const unsigned lane = t % 32;
          const int expected =
              1000 * static_cast<int>(t / 32) +
              static_cast<int>(expected_source(kind, lane, arg, static_cast<unsigned>(width)));
          ASSERT_EQ(out[t], expected) << "kind " << static_cast<int>(kind) << " width " << width
                                      << " arg " << arg << " thread " << t;
        }
      }
}

TEST(EmuWarp, ShuffleHandComputedCases) {
  std::vector<int> out(32);
  rl::launch(shuffle_all, dim3(1), dim3(32), 0, nullptr, Shfl::up, 1, 8, out.data());
  EXPECT_EQ(out[8], 8);  // first lane of a segment keeps its own value
  EXPECT_EQ(out[9], 8);
  rl::launch(shuffle_all, dim3(1), dim3(32), 0, nullptr, Shfl::bfly, 16, 8, out.data());
  EXPECT_EQ(out[0], 0);   // 0 ^ 16 lies beyond the segment: own value
  EXPECT_EQ(out[24], 8);  // 24 ^ 16 = 8 lies in an earlier segment: it is read
  rl::launch(shuffle_all, dim3(1), dim3(32), 0, nullptr, Shfl::idx, 40, 32, out.data());
  EXPECT_EQ(out[0], 8);  // only the low bits of srcLane count
  rl::launch(shuffle_all, dim3(1), dim3(32), 0, nullptr, Shfl::idx, 16, 32, out.data());
  EXPECT_EQ(out[3], 16);  // warpSize / 2 with width 32: every lane reads lane 16
  rl::launch(shuffle_all, dim3(1), dim3(32), 0, nullptr, Shfl::down, 33, 32, out.data());
  EXPECT_EQ(out[0], 1);  // delta uses 5 bits
  EXPECT_EQ(out[31], 31);
}

TEST(EmuWarp, ShuffleMovesEightAndSixteenByteValuesWhole) {
  std::vector<double> d(32);
  std::vector<float4> v(32);
  rl::launch(shuffle_wide_types, dim3(1), dim3(32), 0, nullptr, d.data(), v.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (unsigned lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(d[lane], 0.5 + (lane + 3 > 31 ? lane : lane + 3));
    const float src = static_cast<float>(lane ^ 5);
    EXPECT_EQ(v[lane].x, src);
    EXPECT_EQ(v[lane].y, 1.0f);
    EXPECT_EQ(v[lane].z, 2.0f);
    EXPECT_EQ(v[lane].w, -src);
  }
}

TEST(EmuWarp, ShuffleFromExitedLaneReturnsOwnValue) {
  std::vector<int> out(32, -1);
  rl::launch(shuffle_with_exited_lanes, dim3(1), dim3(32), 0, nullptr, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int lane = 0; lane < 24; ++lane)
    EXPECT_EQ(out[lane], lane + 4 < 24 ? (lane + 4) * 10 : lane * 10) << lane;
}

TEST(EmuWarp, DisjointMasksCompleteIndependently) {
  std::vector<int> out(32, -1);
  rl::launch(shuffle_disjoint_halves, dim3(1), dim3(32), 0, nullptr, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(out[lane], lane < 16 ? 45 : 48) << lane;
}

TEST(EmuWarp, BallotAnyAllFollowPredicatesAndMask) {
  std::vector<unsigned> out(128);
  rl::launch(votes, dim3(1), dim3(32), 0, nullptr, 3, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  unsigned expected_ballot = 0;
  for (unsigned l = 0; l < 32; l += 3) expected_ballot |= 1u << l;
  for (unsigned lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(out[lane * 4 + 0], expected_ballot);
    EXPECT_EQ(out[lane * 4 + 1], 1u);
    EXPECT_EQ(out[lane * 4 + 2], 0u);
  }
  rl::launch(votes, dim3(1), dim3(32), 0, nullptr, 1, out.data());
  for (unsigned lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(out[lane * 4 + 0], 0xffffffffu);
    EXPECT_EQ(out[lane * 4 + 2], 1u);
  }
}

TEST(EmuWarp, VotesIgnoreExitedLanes) {
  std::vector<unsigned> out(40, 7);
  rl::launch(votes_after_exit, dim3(1), dim3(32), 0, nullptr, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int lane = 0; lane < 20; ++lane) {
    EXPECT_EQ(out[lane * 2], 0x000fffffu);
    EXPECT_EQ(out[lane * 2 + 1], 1u);
  }
}

TEST(EmuWarp, ActivemaskIsFullWhenConvergedAndExcludesExitedLanes) {
  for (auto schedule : {"forward", "reverse", "random:3"}) {
    rl::emu::ScopedSchedule scoped(*rl::emu::parse_schedule(schedule));
    std::vector<unsigned> out(128, 0);
    rl::launch(active_masks, dim3(1), dim3(64), 0, nullptr, out.data());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], 0xffffffffu) << schedule << " " << t;
    for (int t = 0; t < 64; ++t)
      EXPECT_EQ(out[64 + t], t % 32 < 10 ? 0x3ffu : 0u) << schedule << " " << t;
  }
}

TEST(EmuWarp, ReductionsOverSignedAndUnsignedValues) {
  std::vector<int> in(32), out(32 * 8);
  for (int i = 0; i < 32; ++i) in[i] = (i % 2 == 0 ? 1 : -1) * (i * 37 % 101) + 5;
  rl::launch(reductions, dim3(1), dim3(32), 0, nullptr, in.data(), out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  int sum = 0, mn = in[0], mx = in[0];
  unsigned umn = ~0u, umx = 0, a = ~0u, o = 0, x = 0;
  for (int v : in) {
    sum += v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    const unsigned u = static_cast<unsigned>(v);
    umn = std::min(umn, u);
    umx = std::max(umx, u);
    a &= u;
    o |= u;
    x ^= u;
  }
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(out[lane * 8 + 0], sum);
    EXPECT_EQ(out[lane * 8 + 1], mn);
    EXPECT_EQ(out[lane * 8 + 2], mx);
    EXPECT_EQ(static_cast<unsigned>(out[lane * 8 + 3]), umn);
    EXPECT_EQ(static_cast<unsigned>(out[lane * 8 + 4]), umx);
    EXPECT_EQ(static_cast<unsigned>(out[lane * 8 + 5]), a);
    EXPECT_EQ(static_cast<unsigned>(out[lane * 8 + 6]), o);
    EXPECT_EQ(static_cast<unsigned>(out[lane * 8 + 7]), x);
  }
}

TEST(EmuWarp, ButterflySumGivesEveryLaneTheWarpTotal) {
  const int blocks = 3, threads = 96;
  std::vector<float> in(blocks * threads), out(in.size());
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 17);
  rl::launch(warp_sum_tree, dim3(blocks), dim3(threads), 0, nullptr, in.data(), out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (size_t w = 0; w < in.size() / 32; ++w) {
    float total = 0;
    for (size_t l = 0; l < 32; ++l) total += in[w * 32 + l];
    for (size_t l = 0; l < 32; ++l) EXPECT_EQ(out[w * 32 + l], total);
  }
}

TEST(EmuWarp, AllgatherGivesEveryLaneEveryLanesDataAndZeroFillsExited) {
  // Exercised through a kernel lambda-free function below.
  struct Out {
    unsigned mask;
    int data[32];
  };
  std::vector<Out> out(32);
  auto kernel = +[](Out* o) {
    if (threadIdx.x >= 30) return;
    const int mine = static_cast<int>(threadIdx.x) * 11 + 1;
    int all[32];
    const unsigned mask = rl::emu::warp_allgather(&mine, all, sizeof(int));
    o[threadIdx.x].mask = mask;
    std::memcpy(o[threadIdx.x].data, all, sizeof all);
  };
  rl::launch(kernel, dim3(1), dim3(32), 0, nullptr, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int lane = 0; lane < 30; ++lane) {
    EXPECT_EQ(out[lane].mask, 0x3fffffffu);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(out[lane].data[j], j < 30 ? j * 11 + 1 : 0);
  }
}
