// cuda::barrier and cuda::memcpy_async under racecheck (RL_SANITIZE=thread,
// preset tsan): `barrier_race_cases <case>` runs one kernel and exits 0 when
// its result is right (a racy case's result is not checked).  CMakeLists.txt
// registers each case with what ThreadSanitizer must say.
//
// A phase's waiters see what every participant did before arriving,
// memcpy_async's bytes included; an arrival gives the arriving thread nothing.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <cuda/barrier>
#include <utility>

namespace racecheck {

constexpr int kThreads = 32;

// The correct hand-off: copy, arrive, wait, then read a neighbour's copy.
__global__ void copy_read_after_wait(const int* in, int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int slot[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) init(&bar, kThreads);
  __syncthreads();
  cuda::memcpy_async(&slot[tid], &in[tid], sizeof(int), bar);
  auto token = bar.arrive();
  bar.wait(std::move(token));
  out[tid] = slot[(tid + 1) % kThreads];
}

// The neighbour's copy is read between the arrival and the wait: nothing
// orders it after the neighbour's copy.
__global__ void copy_read_before_wait(const int* in, int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int slot[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) init(&bar, kThreads);
  __syncthreads();
  cuda::memcpy_async(&slot[tid], &in[tid], sizeof(int), bar);
  auto token = bar.arrive();
  out[tid] = slot[(tid + 1) % kThreads];
  bar.wait(std::move(token));
}

// A write after the writer's own arrival is not part of the phase its
// neighbour waits for.
__global__ void copy_write_after_arrive(const int* in, int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int slot[kThreads];
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0) init(&bar, kThreads);
  __syncthreads();
  auto token = bar.arrive();
  slot[tid] = in[tid];
  bar.wait(std::move(token));
  out[tid] = slot[(tid + 1) % kThreads];
}

int run(const char* name) {
  int *in = nullptr, *out = nullptr;
  int host[kThreads];
  for (int i = 0; i < kThreads; ++i) host[i] = 3 * i + 1;
  if (cudaMalloc(&in, sizeof host) != cudaSuccess || cudaMalloc(&out, sizeof host) != cudaSuccess ||
      cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess)
    return 1;
  void (*kernel)(const int*, int*) = nullptr;
  if (std::strcmp(name, "copy_read_after_wait") == 0) kernel = copy_read_after_wait;
  if (std::strcmp(name, "copy_read_before_wait") == 0) kernel = copy_read_before_wait;
  if (std::strcmp(name, "copy_write_after_arrive") == 0) kernel = copy_write_after_arrive;
  if (kernel == nullptr) {
    std::fprintf(stderr, "barrier_race_cases: unknown case %s\n", name);
    return 2;
  }
  rl::launch(kernel, dim3(1), dim3(kThreads), 0, nullptr, in, out);
  int got[kThreads];
  if (cudaGetLastError() != cudaSuccess ||
      cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost) != cudaSuccess)
    return 1;
  if (kernel != copy_read_after_wait) return 0;  // a racy case's result is not checked
  for (int i = 0; i < kThreads; ++i)
    if (got[i] != host[(i + 1) % kThreads]) return 1;
  return 0;
}

}  // namespace racecheck

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: barrier_race_cases <case>\n");
    return 2;
  }
  return racecheck::run(argv[1]);
}
