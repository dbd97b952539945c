// Kernels for racecheck (RL_SANITIZE=thread, preset tsan): `racecheck_cases
// <case>` runs one and exits 0 when its result is right (a racy case's result
// is not checked).  CMakeLists.txt registers each case with what ThreadSanitizer
// must say about it: a data race naming this file's line, or nothing.
#include <cstdio>
#include <cstring>
#include <vector>

#include "rl/cuda.hpp"

namespace racecheck {

// The pre-Volta warp-synchronous reduction: volatile shared memory and no
// __syncwarp.  Since Volta the lanes of a warp are not in lockstep, so a lane
// can read s[t + 16] before lane t + 16 wrote it: a race.
__global__ void warp_sum_volatile(const int* in, int* out) {
  __shared__ int s[64];
  const unsigned t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  if (t < 32) {
    volatile int* v = s;
    v[t] = v[t] + v[t + 32];
    v[t] = v[t] + v[t + 16];
    v[t] = v[t] + v[t + 8];
    v[t] = v[t] + v[t + 4];
    v[t] = v[t] + v[t + 2];
    v[t] = v[t] + v[t + 1];
  }
  if (t == 0) *out = s[0];
}

// The same reduction made correct: each step reads into a register, then
// __syncwarp separates the reads of one step from the writes of the next.
__global__ void warp_sum_syncwarp(const int* in, int* out) {
  __shared__ int s[64];
  const unsigned t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  if (t < 32) {
    int v = s[t] + s[t + 32];
    s[t] = v;
    for (unsigned offset = 16; offset > 0; offset /= 2) {
      __syncwarp();
      if (t < offset) v += s[t + offset];
      __syncwarp();
      if (t < offset) s[t] = v;
    }
  }
  __syncthreads();
  if (t == 0) *out = s[0];
}

// A shared-memory tree reduction with a __syncthreads between its steps.
__global__ void tree_sum_syncthreads(const int* in, int* out) {
  __shared__ int s[64];
  const unsigned t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) *out = s[0];
}

// A warp collective orders every participant's arrival before every
// participant's departure, nothing after it: lane 0 writes x after a shuffle
// and lane 1 reads x after the same shuffle, with no __syncwarp between.
__global__ void shfl_then_unordered(int* out) {
  __shared__ int x;
  const int lane = static_cast<int>(threadIdx.x);
  const int v = __shfl_sync(0xffffffffu, lane, 0);
  if (lane == 0) x = v + 1;
  if (lane == 1) *out = x;
}

// The same race across a later collective that lane 2 (the reader) takes
// no part in.  Lane 0 writes x, then meets lane 1 in __syncwarp(0x3); lane 2
// lets one pass go by (both leave that __syncwarp and its sync object is
// freed), then meets only itself in __syncwarp(0x4) and reads x.  The
// emulator gives each collective instance a sync object in fresh heap
// memory, and TSan's allocator hands lane 2's __syncwarp the memory lanes 0
// and 1 just freed: a race only if TSan dropped what lane 0 released there.
__global__ void shfl_then_reused_sync_object(int* out) {
  __shared__ int x;
  const int lane = static_cast<int>(threadIdx.x);
  const int v = __shfl_sync(0x7u, lane, 0);
  if (lane == 0) x = v + 1;
  if (lane < 2) {
    __syncwarp(0x3u);
    return;
  }
  __nanosleep(1);
  __syncwarp(0x4u);
  *out = x;
}

// Lanes 0 and 1 wait in a shuffle whose mask names lane 2 too; lane 2 writes
// x and exits instead, which completes the shuffle for them: its write is
// ordered before nothing.
__global__ void shfl_completed_by_exit(int* out) {
  __shared__ int x;
  const int lane = static_cast<int>(threadIdx.x);
  if (lane == 2) {
    x = 7;
    return;
  }
  const int v = __shfl_sync(0x7u, lane, 1);
  if (lane == 0) *out = x + v;
}

// Its correct form: lane 0 writes x before the shuffle, lane 1 reads it after.
__global__ void shfl_orders_write_before_read(int* out) {
  __shared__ int x;
  const int lane = static_cast<int>(threadIdx.x);
  if (lane == 0) x = 41;
  const int v = __shfl_sync(0xffffffffu, lane, 1);
  if (lane == 1) *out = x + v;
}

// Every block increments one global counter without an atomic: blocks are
// unordered, so the read-modify-writes of two blocks race.
__global__ void blocks_increment_plainly(int* counter) {
  if (threadIdx.x == 0) *counter += 1;
}

__global__ void blocks_increment_atomically(int* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1);
}

// The "last block" pattern (CUDA sample threadFenceReduction): each block
// publishes a partial result, fences, takes a ticket; the block that takes
// the last ticket sums every partial.  Without the fence the partials are
// not ordered before the ticket: a race.
template <bool kFence>
__global__ void last_block_sums(const int* in, int* partial, unsigned* tickets, int* out) {
  if (threadIdx.x != 0) return;
  partial[blockIdx.x] = in[blockIdx.x];
  if (kFence) __threadfence();
  if (atomicInc(tickets, gridDim.x) == gridDim.x - 1) {
    int sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += partial[b];
    *out = sum;
  }
}

// Each thread keeps a local array on its fiber's stack, written and read
// through pointers in calls kept out of line (noipa: so TSan checks those
// accesses; GCC leaves a local whose address is not taken unchecked), and
// every block's thread r runs on the stack that thread r of the block before
// used: race-free only because each block's stacks are new memory to TSan,
// with no edge between the blocks.
__attribute__((noipa)) void copy_to_local(int* local, const int* in) {
  for (int i = 0; i < 64; ++i) local[i] = in[i];
}

__attribute__((noipa)) int sum_of_local(const int* local) {
  int sum = 0;
  for (int i = 0; i < 64; ++i) sum += local[i];
  return sum;
}

__device__ int sum_of_local_copy(const int* in) {
  int local[64];
  copy_to_local(local, in);
  return sum_of_local(local);
}

__global__ void blocks_reuse_stacks(const int* in, int* sums) {
  const int sum = sum_of_local_copy(in);
  if (threadIdx.x == 0) sums[blockIdx.x] = sum;
}

int run(const char* name) {
  std::vector<int> in(64);
  int expected = 0;
  for (int i = 0; i < 64; ++i) expected += in[i] = i * 3 + 1;
  int out = -1;
  if (std::strcmp(name, "warp_sum_volatile") == 0) {
    rl::launch(warp_sum_volatile, dim3(1), dim3(64), 0, nullptr, in.data(), &out);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  if (std::strcmp(name, "warp_sum_syncwarp") == 0) {
    rl::launch(warp_sum_syncwarp, dim3(1), dim3(64), 0, nullptr, in.data(), &out);
    return cudaGetLastError() == cudaSuccess && out == expected ? 0 : 1;
  }
  if (std::strcmp(name, "tree_sum_syncthreads") == 0) {
    rl::launch(tree_sum_syncthreads, dim3(1), dim3(64), 0, nullptr, in.data(), &out);
    return cudaGetLastError() == cudaSuccess && out == expected ? 0 : 1;
  }
  if (std::strcmp(name, "shfl_then_unordered") == 0) {
    rl::launch(shfl_then_unordered, dim3(1), dim3(32), 0, nullptr, &out);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  if (std::strcmp(name, "shfl_then_reused_sync_object") == 0) {
    rl::launch(shfl_then_reused_sync_object, dim3(1), dim3(3), 0, nullptr, &out);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  if (std::strcmp(name, "shfl_completed_by_exit") == 0) {
    rl::launch(shfl_completed_by_exit, dim3(1), dim3(3), 0, nullptr, &out);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
  }
  if (std::strcmp(name, "shfl_orders_write_before_read") == 0) {
    rl::launch(shfl_orders_write_before_read, dim3(1), dim3(32), 0, nullptr, &out);
    return cudaGetLastError() == cudaSuccess && out == 42 ? 0 : 1;
  }
  if (std::strcmp(name, "blocks_increment_plainly") == 0 ||
      std::strcmp(name, "blocks_increment_atomically") == 0) {
    const bool plain = std::strcmp(name, "blocks_increment_plainly") == 0;
    int counter = 0;
    rl::launch(plain ? blocks_increment_plainly : blocks_increment_atomically, dim3(4), dim3(32), 0,
               nullptr, &counter);
    return cudaGetLastError() == cudaSuccess && counter == 4 ? 0 : 1;
  }
  if (std::strcmp(name, "last_block_sums_fenced") == 0 ||
      std::strcmp(name, "last_block_sums_unfenced") == 0) {
    const bool fenced = std::strcmp(name, "last_block_sums_fenced") == 0;
    std::vector<int> partial(8, 0);
    unsigned tickets = 0;
    rl::launch(fenced ? last_block_sums<true> : last_block_sums<false>, dim3(8), dim3(32), 0,
               nullptr, in.data(), partial.data(), &tickets, &out);
    int sum = 0;
    for (int b = 0; b < 8; ++b) sum += in[b];
    return cudaGetLastError() == cudaSuccess && out == sum ? 0 : 1;
  }
  if (std::strcmp(name, "blocks_reuse_stacks") == 0) {
    std::vector<int> sums(8, -1);
    rl::launch(blocks_reuse_stacks, dim3(8), dim3(32), 0, nullptr, in.data(), sums.data());
    bool right = true;
    for (const int s : sums) right = right && s == expected;
    return cudaGetLastError() == cudaSuccess && right ? 0 : 1;
  }
  std::fprintf(stderr, "racecheck_cases: unknown case '%s'\n", name);
  return 2;
}

}  // namespace racecheck

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: racecheck_cases <case>\n");
    return 2;
  }
  return racecheck::run(argv[1]);
}
