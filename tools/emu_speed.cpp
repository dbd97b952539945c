// emu_speed: how fast the emulator runs the workloads that bound CI cost.
// Prints one line per measurement (best of several runs; build Release):
//   sgemm_smem_tiled 256^3 (16x16 tiles), one worker thread
//   one __syncthreads round of a 1024-thread block
//   a many-block grid with 1 and 2 worker threads, and the speed-up
//   microseconds per warp op: a shuffle (the cheapest warp rendezvous, for
//   scale), mma.sync m16n8k16 (f16, f32 accumulators), ldmatrix.x4 and
//   wmma::mma_sync 16x16x16 (__half, float accumulators)
// `emu_speed warp` measures only the warp ops, `emu_speed barrier` only the
// __syncthreads round (each for a profiler).
// Single-thread numbers are given as wall time and as the launching thread's
// CPU time (robust when other processes share the cores); the speed-up is
// wall time, so the load average is printed beside it.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

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

// Warp-op kernels: `rounds` dependent ops per warp, so the time per op is the
// emulator's cost for one warp instruction (rendezvous plus arithmetic).
__global__ void shuffle_rounds(int rounds, int* sink) {
  int x = static_cast<int>(threadIdx.x);
  for (int r = 0; r < rounds; ++r) x += __shfl_xor_sync(0xffffffffu, x, 1);
  if (x == 42) sink[threadIdx.x] = x;
}

__global__ void mma_rounds(int rounds, float* sink) {
  const std::uint32_t a[4] = {0x3c003c00u + threadIdx.x, 0x3c00u, 0x3800u, 0x3c003800u};
  const std::uint32_t b[2] = {0x3c00u + threadIdx.x, 0x38003c00u};
  float acc[4] = {0.0f, 1.0f, 2.0f, 3.0f};
  for (int r = 0; r < rounds; ++r) rl::ptx::mma_m16n8k16_f16_f32(acc, a, b, acc);
  sink[threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3];
}

__global__ void ldmatrix_rounds(int rounds, std::uint32_t* sink) {
  __shared__ __align__(16) std::uint16_t tile[32 * 8];
  const unsigned lane = threadIdx.x % 32;
  for (unsigned i = lane; i < 32 * 8; i += 32) tile[i] = static_cast<std::uint16_t>(i);
  __syncwarp();
  std::uint32_t x = 0;
  for (int r = 0; r < rounds; ++r) {
    std::uint32_t out[4];
    rl::ptx::ldmatrix_x4(out, &tile[8 * ((lane + static_cast<unsigned>(r)) % 32)]);
    x += out[0] ^ out[1] ^ out[2] ^ out[3];
  }
  sink[threadIdx.x] = x;
}

__global__ void wmma_rounds(int rounds, const __half* ab, float* out) {
  namespace wmma = nvcuda::wmma;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(fa, ab, 16);
  wmma::load_matrix_sync(fb, ab, 16);
  wmma::fill_fragment(acc, 0.0f);
  for (int r = 0; r < rounds; ++r) wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(out + 256 * (threadIdx.x / 32), acc, 16, wmma::mem_row_major);
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

struct Timing {
  double wall = 1e30;
  double cpu = 1e30;          // the launching thread's CPU time
  double process_cpu = 1e30;  // all worker threads together
};

template <typename F>
Timing best_of(int repeats, F&& f) {
  Timing best;
  for (int i = 0; i < repeats; ++i) {
    const double c0 = thread_cpu_seconds();
    const double p0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best.process_cpu = std::min(best.process_cpu, process_cpu_seconds() - p0);
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

int main(int argc, char** argv) {
  const std::string_view only = argc > 1 ? argv[1] : "";
  if (only != "" && only != "warp" && only != "barrier") {
    std::fprintf(stderr, "usage: emu_speed [warp|barrier]\n");
    return 2;
  }
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
  if (only == "") {
    const Timing gemm = best_of(5, [&] {
      rl::launch(sgemm_smem_tiled, dim3(n / kTile, n / kTile), dim3(kTile, kTile), 0, nullptr, a, b,
                 c, n);
    });
    std::printf(
        "sgemm_smem_tiled 256x256x256, 16x16 tiles, 1 thread: %.3f s wall, %.3f s CPU "
        "(target < 0.4 s)\n",
        gemm.wall, gemm.cpu);
  }
  if (only == "" || only == "barrier") {
    const int rounds = 500;
    const Timing barrier = best_of(
        5, [&] { rl::launch(barrier_rounds, dim3(1), dim3(1024), 0, nullptr, rounds, sink); });
    std::printf(
        "__syncthreads round, 1024-thread block: %.1f us wall, %.1f us CPU (target < 30 us)\n",
        barrier.wall / rounds * 1e6, barrier.cpu / rounds * 1e6);
  }
  if (only == "") {
    const auto grid_run = [&] {
      rl::launch(barrier_rounds, dim3(512), dim3(256), 0, nullptr, 20, sink);
    };
    rl::emu::set_worker_threads(1);
    const Timing one = best_of(5, grid_run);
    rl::emu::set_worker_threads(2);
    const Timing two = best_of(5, grid_run);
    std::printf(
        "512 blocks x 256 threads x 20 barriers: 1 thread %.3f s, 2 threads %.3f s wall, "
        "speed-up %.2fx (target >= 1.7x; load average now %.2f); CPU time of all threads "
        "%.3f s vs %.3f s (equal: no parallel overhead)\n",
        one.wall, two.wall, one.wall / two.wall, load_average(), one.process_cpu, two.process_cpu);
  }

  // Warp ops: one block of 4 warps, one worker thread.
  if (only == "" || only == "warp") {
    float* scratch;
    cudaMalloc(reinterpret_cast<void**>(&scratch), 4096 * sizeof(float));
    rl::emu::set_worker_threads(1);
    constexpr int kWarps = 4;
    const auto per_warp_op = [&](const char* what, int warp_rounds, auto&& launch_once) {
      const Timing t = best_of(5, launch_once);
      std::printf("%s: %.2f us wall, %.2f us CPU per warp op\n", what,
                  t.wall / (kWarps * warp_rounds) * 1e6, t.cpu / (kWarps * warp_rounds) * 1e6);
    };
    const int shuffle_rounds_n = 2000;
    per_warp_op("__shfl_xor_sync", shuffle_rounds_n, [&] {
      rl::launch(shuffle_rounds, dim3(1), dim3(32 * kWarps), 0, nullptr, shuffle_rounds_n, sink);
    });
    const int tensor_rounds = 200;
    per_warp_op("mma.sync m16n8k16 f16->f32", tensor_rounds, [&] {
      rl::launch(mma_rounds, dim3(1), dim3(32 * kWarps), 0, nullptr, tensor_rounds, scratch);
    });
    per_warp_op("ldmatrix.x4", tensor_rounds, [&] {
      rl::launch(ldmatrix_rounds, dim3(1), dim3(32 * kWarps), 0, nullptr, tensor_rounds,
                 reinterpret_cast<std::uint32_t*>(scratch));
    });
    std::vector<__half> hab(256, __float2half(0.25f));
    __half* ab;
    cudaMalloc(reinterpret_cast<void**>(&ab), hab.size() * sizeof(__half));
    cudaMemcpy(ab, hab.data(), hab.size() * sizeof(__half), cudaMemcpyHostToDevice);
    per_warp_op("wmma::mma_sync 16x16x16 half->float", tensor_rounds, [&] {
      rl::launch(wmma_rounds, dim3(1), dim3(32 * kWarps), 0, nullptr, tensor_rounds, ab, scratch);
    });
  }

  const bool right = only != "" || ha[0] * hb[0] * static_cast<float>(n) == [&] {
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
