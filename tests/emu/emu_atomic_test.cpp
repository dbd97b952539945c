// Atomics under contention: many blocks on several host worker threads, all
// updating the same few words.
#include <gtest/gtest.h>

#include <vector>

#include "rl/cuda.hpp"

namespace emu_atomic {

struct Counters {
  int add_int;
  unsigned add_unsigned;
  unsigned long long add_ull;
  float add_float;
  double add_double;
  int sub_int;
  int max_int;
  int min_int;
  unsigned max_unsigned;
  unsigned bits[8];
  int cas_sum;
  unsigned inc_wrapping;
  int exch_seen;
};

__global__ void contend(Counters* c) {
  const int gid = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  atomicAdd(&c->add_int, 1);
  atomicAdd(&c->add_unsigned, 2u);
  atomicAdd(&c->add_ull, 3ull);
  atomicAdd(&c->add_float, 1.0f);
  atomicAdd(&c->add_double, 0.5);
  atomicSub(&c->sub_int, 1);
  atomicMax(&c->max_int, (gid * 7919) % 100003);
  atomicMin(&c->min_int, -((gid * 7919) % 100003));
  atomicMax(&c->max_unsigned, static_cast<unsigned>(gid));
  atomicOr(&c->bits[gid % 8], 1u << (gid / 8 % 32));
  int old = atomicAdd(&c->cas_sum, 0);  // a CAS loop: must lose no increment
  for (;;) {
    const int seen = atomicCAS(&c->cas_sum, old, old + gid);
    if (seen == old) break;
    old = seen;
  }
  atomicInc(&c->inc_wrapping, 999u);
  atomicExch(&c->exch_seen, 1);
}

__global__ void clear_bits(unsigned* words) {
  atomicAnd(&words[threadIdx.x % 4], ~(1u << (threadIdx.x / 4)));
  atomicXor(&words[4], 1u << (threadIdx.x % 32));
}

}  // namespace emu_atomic

using namespace emu_atomic;

TEST(EmuAtomic, ContendedUpdatesFromManyBlocksOnSeveralHostThreadsLoseNothing) {
  for (int workers : {1, 2, 4}) {
    rl::emu::set_worker_threads(workers);
    Counters c{};
    c.min_int = 0;
    const int blocks = 64, threads = 256, n = blocks * threads;
    rl::launch(contend, dim3(blocks), dim3(threads), 0, nullptr, &c);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    int max_expected = 0;
    for (int g = 0; g < n; ++g) max_expected = std::max(max_expected, (g * 7919) % 100003);
    EXPECT_EQ(c.add_int, n) << workers;
    EXPECT_EQ(c.add_unsigned, 2u * n);
    EXPECT_EQ(c.add_ull, 3ull * n);
    EXPECT_EQ(c.add_float, static_cast<float>(n));  // exact below 2^24
    EXPECT_EQ(c.add_double, 0.5 * n);
    EXPECT_EQ(c.sub_int, -n);
    EXPECT_EQ(c.max_int, max_expected);
    EXPECT_EQ(c.min_int, -max_expected);
    EXPECT_EQ(c.max_unsigned, static_cast<unsigned>(n - 1));
    for (int w = 0; w < 8; ++w) EXPECT_EQ(c.bits[w], 0xffffffffu);
    EXPECT_EQ(c.cas_sum, n * (n - 1) / 2);
    EXPECT_EQ(c.inc_wrapping, static_cast<unsigned>(n % 1000));
    EXPECT_EQ(c.exch_seen, 1);
  }
  rl::emu::set_worker_threads(1);
}

TEST(EmuAtomic, AndXorClearAndToggleBits) {
  std::vector<unsigned> words{~0u, ~0u, ~0u, ~0u, 0u};
  rl::launch(clear_bits, dim3(1), dim3(64), 0, nullptr, words.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(words[w], 0xffff0000u);
  EXPECT_EQ(words[4], 0u);  // every bit toggled twice
}

TEST(EmuAtomic, IncDecFollowCudaWrapRules) {
  unsigned v = 5;
  auto kernel = +[](unsigned* p) {
    atomicInc(p, 5u);  // 5 >= 5: wraps to 0
    atomicDec(p, 9u);  // 0: becomes 9
    atomicDec(p, 3u);  // 9 > 3: becomes 3
  };
  rl::launch(kernel, dim3(1), dim3(1), 0, nullptr, &v);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(v, 3u);
}
