// Whole kernels under the emulator: a shared-memory tiled SGEMM against a
// float64 reference and a padded shared-memory transpose (exact), each also
// required to be bitwise identical under two schedules and several workers.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rl/cuda.hpp"

namespace emu_integration {

constexpr int kTile = 16;

// C[M x N] = A[M x K] * B[K x N], row-major, any sizes (bounds-checked tiles).
__global__ void sgemm_smem_tiled(const float* a, const float* b, float* c, int m, int n, int k) {
  __shared__ float tile_a[kTile][kTile];
  __shared__ float tile_b[kTile][kTile];
  const int row = static_cast<int>(blockIdx.y * kTile + threadIdx.y);
  const int col = static_cast<int>(blockIdx.x * kTile + threadIdx.x);
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    tile_a[ty][tx] = row < m && k0 + tx < k ? a[row * k + k0 + tx] : 0.0f;
    tile_b[ty][tx] = k0 + ty < k && col < n ? b[(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) acc = __fmaf_rn(tile_a[ty][kk], tile_b[kk][tx], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

constexpr int kTransposeTile = 32;
constexpr int kRowsPerPass = 8;

// out[N x M] = in[M x N]^T through a padded tile (no bank conflicts on a GPU).
__global__ void transpose_smem_padded(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[kTransposeTile][kTransposeTile + 1];
  const int x = static_cast<int>(blockIdx.x * kTransposeTile + threadIdx.x);
  const int y0 = static_cast<int>(blockIdx.y * kTransposeTile + threadIdx.y);
  for (int j = 0; j < kTransposeTile; j += kRowsPerPass)
    if (x < cols && y0 + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y0 + j) * cols + x];
  __syncthreads();
  const int tx = static_cast<int>(blockIdx.y * kTransposeTile + threadIdx.x);
  const int ty0 = static_cast<int>(blockIdx.x * kTransposeTile + threadIdx.y);
  for (int j = 0; j < kTransposeTile; j += kRowsPerPass)
    if (tx < rows && ty0 + j < cols)
      out[(ty0 + j) * rows + tx] = tile[threadIdx.x][threadIdx.y + j];
}

}  // namespace emu_integration

using namespace emu_integration;

TEST(EmuIntegration, TiledSgemmMatchesFloat64ReferenceAndIsScheduleIndependent) {
  const int m = 70, n = 45, k = 83;
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<float>((i * 37 % 101) - 50) / 25.0f;
  for (int i = 0; i < k * n; ++i) b[i] = static_cast<float>((i * 53 % 97) - 48) / 24.0f;
  rl::emu::set_worker_threads(2);
  const auto outputs = rl::emu::run_under_schedules(
      [&] {
        std::vector<float> c(m * n, NAN);
        rl::launch(sgemm_smem_tiled, dim3((n + kTile - 1) / kTile, (m + kTile - 1) / kTile),
                   dim3(kTile, kTile), 0, nullptr, a.data(), b.data(), c.data(), m, n, k);
        EXPECT_EQ(cudaGetLastError(), cudaSuccess);
        return c;
      },
      {rl::emu::Schedule{rl::emu::ScheduleOrder::forward, 0},
       rl::emu::Schedule{rl::emu::ScheduleOrder::random, 11}});
  rl::emu::set_worker_threads(1);
  ASSERT_EQ(outputs[0], outputs[1]);
  const auto& c = outputs[0];
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0.0, magnitude = 0.0;
      for (int p = 0; p < k; ++p) {
        ref += static_cast<double>(a[i * k + p]) * b[p * n + j];
        magnitude += std::fabs(static_cast<double>(a[i * k + p]) * b[p * n + j]);
      }
      // k fp32 roundings of partial sums: |error| <= k * 2^-24 * sum|a*b|.
      ASSERT_NEAR(c[i * n + j], ref, k * 0x1p-24 * magnitude + 1e-30) << i << "," << j;
    }
}

TEST(EmuIntegration, PaddedTransposeIsExact) {
  const int rows = 100, cols = 67;
  std::vector<float> in(rows * cols), out(rows * cols, NAN);
  for (int i = 0; i < rows * cols; ++i) in[i] = static_cast<float>(i) * 0.25f;
  for (const char* schedule : {"reverse", "random:99"}) {
    rl::emu::ScopedSchedule scoped(*rl::emu::parse_schedule(schedule));
    rl::launch(transpose_smem_padded,
               dim3((cols + kTransposeTile - 1) / kTransposeTile,
                    (rows + kTransposeTile - 1) / kTransposeTile),
               dim3(kTransposeTile, kRowsPerPass), 0, nullptr, in.data(), out.data(), rows, cols);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]) << schedule;
  }
}
