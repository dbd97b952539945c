// Named barriers (bar.sync / bar.arrive) under racecheck (RL_SANITIZE=thread,
// preset tsan): `named_barrier_race_cases <case>` runs one kernel and exits 0
// when its result is right (a racy case's result is not checked).
// CMakeLists.txt registers each case with what ThreadSanitizer must say.
//
// Warp 0 is the producer, warp 1 the consumer; CUDA orders what every
// participant did before arriving before what a bar.sync waiter does after
// the phase completes, and gives a bar.arrive'ing thread nothing.
#include <cstdio>
#include <cstring>

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

namespace racecheck {

// The hand-off: the producer writes, then bar.arrive; the consumer bar.sync's,
// then reads.
__global__ void named_barrier_hands_off_write(int* out) {
  __shared__ int x[32];
  const unsigned lane = threadIdx.x % 32;
  if (threadIdx.x < 32) {
    x[lane] = static_cast<int>(lane) + 1;
    rl::ptx::named_barrier_arrive(1, 64);
  } else {
    rl::ptx::named_barrier_sync(1, 64);
    out[lane] = x[31 - lane];
  }
}

// The producer writes again after its bar.arrive: nothing orders that write
// with the consumer's read after its bar.sync.
__global__ void named_barrier_write_after_arrive(int* out) {
  __shared__ int x[32];
  const unsigned lane = threadIdx.x % 32;
  if (threadIdx.x < 32) {
    x[lane] = 1;
    rl::ptx::named_barrier_arrive(1, 64);
    x[lane] = 2;
  } else {
    rl::ptx::named_barrier_sync(1, 64);
    out[lane] = x[31 - lane];
  }
}

// bar.arrive acquires nothing: the producer reads what the consumer wrote
// before its bar.sync, after the producer's own bar.arrive.
__global__ void named_barrier_read_after_arrive(int* out) {
  __shared__ int y[32];
  const unsigned lane = threadIdx.x % 32;
  if (threadIdx.x < 32) {
    rl::ptx::named_barrier_arrive(2, 64);
    out[lane] = y[31 - lane];
  } else {
    y[lane] = 5;
    rl::ptx::named_barrier_sync(2, 64);
  }
}

// A turn handed back and forth, FA3's pingpong in miniature: each side
// updates x in its turn (bar.sync at its own barrier) and hands the turn on
// (bar.arrive at the other's); every phase of both barriers is used twice
// or more, so a later phase's arrivals must not be mistaken for an earlier's.
__global__ void named_barrier_pingpong(int* out) {
  __shared__ int x[32];
  const unsigned lane = threadIdx.x % 32;
  const unsigned me = threadIdx.x / 32;
  if (me == 0) x[lane] = 0;
  if (me == 1) rl::ptx::named_barrier_arrive(3, 64);  // side 0 goes first
  for (int turn = 0; turn < 4; ++turn) {
    rl::ptx::named_barrier_sync(3 + me, 64);
    x[lane] = x[lane] * 2 + static_cast<int>(me) + 1;
    if (!(me == 1 && turn == 3)) rl::ptx::named_barrier_arrive(3 + (me ^ 1U), 64);
  }
  if (me == 1) out[lane] = x[lane];
}

int run(const char* name) {
  int out[32] = {};
  const auto launch = [&](void (*kernel)(int*)) {
    rl::launch(kernel, dim3(1), dim3(64), 0, nullptr, out);
    return cudaGetLastError() == cudaSuccess;
  };
  if (std::strcmp(name, "named_barrier_hands_off_write") == 0) {
    bool right = launch(named_barrier_hands_off_write);
    for (int lane = 0; lane < 32; ++lane) right = right && out[lane] == 32 - lane;
    return right ? 0 : 1;
  }
  if (std::strcmp(name, "named_barrier_write_after_arrive") == 0)
    return launch(named_barrier_write_after_arrive) ? 0 : 1;
  if (std::strcmp(name, "named_barrier_read_after_arrive") == 0)
    return launch(named_barrier_read_after_arrive) ? 0 : 1;
  if (std::strcmp(name, "named_barrier_pingpong") == 0) {
    // Turns 0, 1 (side 0 adds 1, side 1 adds 2), four rounds.
    int expected = 0;
    for (int turn = 0; turn < 4; ++turn) expected = (expected * 2 + 1) * 2 + 2;
    bool right = launch(named_barrier_pingpong);
    for (int lane = 0; lane < 32; ++lane) right = right && out[lane] == expected;
    return right ? 0 : 1;
  }
  std::fprintf(stderr, "named_barrier_race_cases: unknown case '%s'\n", name);
  return 2;
}

}  // namespace racecheck

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: named_barrier_race_cases <case>\n");
    return 2;
  }
  return racecheck::run(argv[1]);
}
