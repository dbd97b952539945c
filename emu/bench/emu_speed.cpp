// emu_speed: how fast the emulator runs the workloads that bound CI cost.
// Prints one line per measurement (best of several runs; build Release):
//   sgemm_smem_tiled 256^3 (16x16 tiles), one worker thread
//   one __syncthreads round of a 1024-thread block
//   a many-block grid with 1 and 2 worker threads, and the speed-up
// Single-thread numbers are given as wall time and as the launching thread's
// CPU time (robust when other processes share the cores); the speed-up is
// wall time, so the load average is printed beside it.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "rl/cuda.hpp"

namespace {

constexpr int kTile = 16;

__global__ void sgemm_smem_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float tile_a[kTile][kTile];
  __shared__ float tile_b[kTile][kTile];
  const int row = static_cast<int>(blockIdx.y * kTile + threadIdx.y);
  const int col = static_cast<int>(blockIdx.x * kTile + threadIdx.x);
  float acc = 0.0f;
  for (int k0 = 0; k0 < n; k0 += kTile) {
    tile_a[threadIdx.y][threadIdx.x] = a[row * n + k0 + static_cast<int>(threadIdx.x)];
    tile_b[threadIdx.y][threadIdx.x] = b[(k0 + static_cast<int>(threadIdx.y)) * n + col];
    __syncthreads();
    for (int k = 0; k < kTile; ++k) acc += tile_a[threadIdx.y][k] * tile_b[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

__global__ void barrier_rounds(int rounds, int* sink) {
  int x = 0;
  for (int r = 0; r < rounds; ++r) {
    x += r;
    __syncthreads();
  }
  if (threadIdx.x == 0) sink[blockIdx.x] = x;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double wall = 1e30;
  double cpu = 1e30;  // the launching thread's CPU time
};

template <typename F>
Timing best_of(int repeats, F&& f) {
  Timing best;
  for (int i = 0; i < repeats; ++i) {
    const double c0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best.wall = std::min(best.wall, wall);
    best.cpu = std::min(best.cpu, thread_cpu_seconds() - c0);
  }
  return best;
}

double load_average() {
  double load[1] = {0.0};
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

}  // namespace

int main() {
  const int n = 256;
  std::vector<float> ha(static_cast<std::size_t>(n) * n, 1.0f), hb(ha.size(), 0.5f);
  float *a, *b, *c;
  int* sink;
  cudaMalloc(reinterpret_cast<void**>(&a), ha.size() * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&b), ha.size() * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&c), ha.size() * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&sink), 4096 * sizeof(int));
  cudaMemcpy(a, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice);
  std::printf("load average (1 min) at start: %.2f\n", load_average());

  rl::emu::set_worker_threads(1);
  const Timing gemm = best_of(5, [&] {
    rl::launch(sgemm_smem_tiled, dim3(n / kTile, n / kTile), dim3(kTile, kTile), 0, nullptr, a, b,
               c, n);
  });
  std::printf(
      "sgemm_smem_tiled 256x256x256, 16x16 tiles, 1 thread: %.3f s wall, %.3f s CPU "
      "(target < 0.4 s)\n",
      gemm.wall, gemm.cpu);

  const int rounds = 500;
  const Timing barrier = best_of(
      5, [&] { rl::launch(barrier_rounds, dim3(1), dim3(1024), 0, nullptr, rounds, sink); });
  std::printf(
      "__syncthreads round, 1024-thread block: %.1f us wall, %.1f us CPU (target < 40 us)\n",
      barrier.wall / rounds * 1e6, barrier.cpu / rounds * 1e6);

  const auto grid_run = [&] {
    rl::launch(barrier_rounds, dim3(512), dim3(256), 0, nullptr, 20, sink);
  };
  rl::emu::set_worker_threads(1);
  const Timing one = best_of(5, grid_run);
  rl::emu::set_worker_threads(2);
  const Timing two = best_of(5, grid_run);
  std::printf(
      "512 blocks x 256 threads x 20 barriers: 1 thread %.3f s, 2 threads %.3f s wall, "
      "speed-up %.2fx (target >= 1.7x; load average now %.2f)\n",
      one.wall, two.wall, one.wall / two.wall, load_average());

  const bool right = ha[0] * hb[0] * static_cast<float>(n) == [&] {
    float first = 0.0f;
    cudaMemcpy(&first, c, sizeof first, cudaMemcpyDeviceToHost);
    return first;
  }();
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess || !right) {
    std::fprintf(stderr, "emu_speed: %s\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "sgemm gave a wrong result");
    return 1;
  }
  return 0;
}
