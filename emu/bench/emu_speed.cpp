// emu_speed: how fast the emulator runs the workloads that bound CI cost.
// Prints one line per measurement (best of several runs, Release build):
//   sgemm_smem_tiled 256^3 (16x16 tiles), one worker thread
//   one __syncthreads round of a 1024-thread block
//   a many-block grid with 1 and 2 worker threads, and the speed-up
#include <algorithm>
#include <chrono>
#include <cstdio>
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

template <typename F>
double best_seconds(int repeats, F&& f) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main() {
  const int n = 256;
  std::vector<float> ha(static_cast<std::size_t>(n) * n, 1.0f), hb(ha.size(), 0.5f);
  float *a, *b, *c;
  cudaMalloc(reinterpret_cast<void**>(&a), ha.size() * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&b), ha.size() * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&c), ha.size() * sizeof(float));
  cudaMemcpy(a, ha.data(), ha.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), hb.size() * sizeof(float), cudaMemcpyHostToDevice);
  int* sink;
  cudaMalloc(reinterpret_cast<void**>(&sink), 4096 * sizeof(int));

  rl::emu::set_worker_threads(1);
  const double gemm = best_seconds(3, [&] {
    rl::launch(sgemm_smem_tiled, dim3(n / kTile, n / kTile), dim3(kTile, kTile), 0, nullptr, a, b,
               c, n);
  });
  std::printf("sgemm_smem_tiled 256x256x256, 16x16 tiles, 1 thread: %.3f s (target < 0.4 s)\n",
              gemm);

  const int rounds = 200;
  const double barrier = best_seconds(
      3, [&] { rl::launch(barrier_rounds, dim3(1), dim3(1024), 0, nullptr, rounds, sink); });
  std::printf("__syncthreads round, 1024-thread block: %.1f us (target < 40 us)\n",
              barrier / rounds * 1e6);

  const auto grid_run = [&] {
    rl::launch(barrier_rounds, dim3(512), dim3(256), 0, nullptr, 20, sink);
  };
  rl::emu::set_worker_threads(1);
  const double one = best_seconds(3, grid_run);
  rl::emu::set_worker_threads(2);
  const double two = best_seconds(3, grid_run);
  std::printf(
      "512 blocks x 256 threads x 20 barriers: 1 thread %.3f s, 2 threads %.3f s, "
      "speed-up %.2fx (target >= 1.7x)\n",
      one, two, one / two);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "emu_speed: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
