// cuda::barrier's phases as std::barrier defines them: a phase reused round
// after round with the arrival and the wait split by other work, the
// completion function run once per phase before any waiter goes on, and
// arrive_and_drop counting in its own phase and shrinking the later ones.
// Each kernel's result is exact (integers in float or int) and must be the
// same under two schedules.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <cuda/barrier>
#include <utility>
#include <vector>

namespace {

constexpr int kThreads = 64;

template <typename T>
std::vector<T> read_back(T* device, std::size_t n) {
  std::vector<T> host(n);
  EXPECT_EQ(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  return host;
}

// Round r: each thread copies in[r][tid] into slot[r % 2][tid] (memcpy_async
// with a plain size), arrives, does its own work, then waits and adds its
// neighbours' slots.  One barrier, two slots: a slot is written again two
// rounds later, after a phase that needed every reader's next arrival.
__global__ void split_arrive_wait(const float* in, float* out, int rounds) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ float slot[2][kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) init(&bar, kThreads);
  __syncthreads();
  in += blockIdx.x * rounds * kThreads;
  float own = 0.0f, neighbours = 0.0f;
  for (int r = 0; r < rounds; ++r) {
    cuda::memcpy_async(&slot[r % 2][tid], &in[r * kThreads + tid], sizeof(float), bar);
    auto token = bar.arrive();
    own += 2.0f * in[r * kThreads + tid];  // work between the arrival and the wait
    bar.wait(std::move(token));
    neighbours += slot[r % 2][(tid + 1) % kThreads] + slot[r % 2][(tid + kThreads - 1) % kThreads];
  }
  out[blockIdx.x * kThreads + tid] = own + neighbours;
}

TEST(CudaBarrier, a_phase_reused_every_round_with_work_between_arrive_and_wait) {
  const int blocks = 2, rounds = 5;
  std::vector<float> in(blocks * rounds * kThreads);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i * 7 % 23);
  std::vector<float> want(blocks * kThreads);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < kThreads; ++t) {
      float own = 0.0f, neighbours = 0.0f;
      for (int r = 0; r < rounds; ++r) {
        const float* row = &in[(b * rounds + r) * kThreads];
        own += 2.0f * row[t];
        neighbours += row[(t + 1) % kThreads] + row[(t + kThreads - 1) % kThreads];
      }
      want[b * kThreads + t] = own + neighbours;
    }
  const auto runs = rl::emu::run_under_schedules([&] {
    float *d_in = nullptr, *d_out = nullptr;
    EXPECT_EQ(cudaMalloc(&d_in, in.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&d_out, want.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d_in, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    rl::launch(split_arrive_wait, dim3(blocks), dim3(kThreads), 0, nullptr, d_in, d_out, rounds);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaFree(d_in), cudaSuccess);
    return read_back(d_out, want.size());
  });
  EXPECT_EQ(runs[0], want);
  EXPECT_EQ(runs[1], want);
}

// The completion function counts phases in shared memory; every thread reads
// the count after each wait: it must already include the phase waited for.
struct CountPhases {
  int* completed;
  void operator()() const noexcept { ++*completed; }
};

__global__ void completion_once_per_phase(int* seen, int phases) {
  __shared__ cuda::barrier<cuda::thread_scope_block, CountPhases> bar;
  __shared__ int completed;
  if (threadIdx.x == 0) {
    completed = 0;
    init(&bar, blockDim.x, CountPhases{&completed});
  }
  __syncthreads();
  for (int p = 0; p < phases; ++p) {
    bar.arrive_and_wait();
    seen[p * blockDim.x + threadIdx.x] = completed;
  }
}

TEST(CudaBarrier, the_completion_runs_once_per_phase_before_the_waiters_go_on) {
  const int phases = 4;
  const auto runs = rl::emu::run_under_schedules([&] {
    int* d_seen = nullptr;
    EXPECT_EQ(cudaMalloc(&d_seen, phases * kThreads * sizeof(int)), cudaSuccess);
    rl::launch(completion_once_per_phase, dim3(1), dim3(kThreads), 0, nullptr, d_seen, phases);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    return read_back(d_seen, phases * kThreads);
  });
  std::vector<int> want(phases * kThreads);
  for (int p = 0; p < phases; ++p)
    for (int t = 0; t < kThreads; ++t) want[p * kThreads + t] = p + 1;
  EXPECT_EQ(runs[0], want);
  EXPECT_EQ(runs[1], want);
}

// Phase 0: all 64 threads.  Then the upper half reads its value, drops out
// (an arrival of phase 1 that also removes it from every later phase) and
// exits; the lower 32 go on exchanging values for `phases` more phases, which
// complete with 32 arrivals each.  Without the drop's arrival phase 1 would
// never complete; without the smaller count, phase 2 would not.
__global__ void drop_half_then_continue(int* out, int phases) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int slot[2][kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) init(&bar, kThreads);
  __syncthreads();
  slot[0][tid] = 3 * tid;
  bar.arrive_and_wait();
  int v = slot[0][kThreads - 1 - tid];
  if (tid >= kThreads / 2) {
    out[tid] = v;
    bar.arrive_and_drop();
    return;
  }
  for (int p = 1; p <= phases; ++p) {
    slot[p % 2][tid] = v;
    bar.arrive_and_wait();
    v += slot[p % 2][(tid + 1) % (kThreads / 2)];
  }
  out[tid] = v;
}

TEST(CudaBarrier, arrive_and_drop_counts_in_its_phase_and_leaves_the_later_ones_to_the_rest) {
  const int phases = 3, half = kThreads / 2;
  std::vector<int> want(kThreads), v(half);
  for (int t = 0; t < kThreads; ++t) want[t] = 3 * (kThreads - 1 - t);
  for (int t = 0; t < half; ++t) v[t] = want[t];
  for (int p = 1; p <= phases; ++p) {
    std::vector<int> next(half);
    for (int t = 0; t < half; ++t) next[t] = v[t] + v[(t + 1) % half];
    v = next;
  }
  for (int t = 0; t < half; ++t) want[t] = v[t];
  const auto runs = rl::emu::run_under_schedules([&] {
    int* d_out = nullptr;
    EXPECT_EQ(cudaMalloc(&d_out, kThreads * sizeof(int)), cudaSuccess);
    rl::launch(drop_half_then_continue, dim3(1), dim3(kThreads), 0, nullptr, d_out, phases);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    return read_back(d_out, kThreads);
  });
  EXPECT_EQ(runs[0], want);
  EXPECT_EQ(runs[1], want);
}

}  // namespace
