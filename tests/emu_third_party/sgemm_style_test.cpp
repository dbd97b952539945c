// SGEMM_CUDA style: shared-memory block tiling with a column of TM results
// per thread (the "1D blocktiling" rung) and float4 global loads (the
// "vectorize" rung), with CUDA's mixed min(int, unsigned) for the ragged edge
// tiles, against a float64 reference.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rl/cuda.hpp"
#include "third_party_style.hpp"

namespace {

constexpr unsigned int BM = 32;
constexpr unsigned int BN = 32;
constexpr unsigned int BK = 8;
constexpr unsigned int TM = 4;

// C = alpha * A * B + beta * C; A is M x K, B is K x N, row-major.  K and N
// are multiples of 4 (float4 rows); M and N need not be multiples of the tile.
__global__ void sgemm_1d_blocktiling_vectorized(int M, int N, int K, float alpha, const float* A,
                                                const float* B, float beta, float* C) {
  const uint cRow = blockIdx.y;
  const uint cCol = blockIdx.x;
  const uint threadCol = threadIdx.x % BN;
  const uint threadRow = threadIdx.x / BN;
  __shared__ __align__(16) float As[BM * BK];
  __shared__ __align__(16) float Bs[BK * BN];
  // Rows and columns of this block's tile that exist in C.
  const unsigned int tileRows = min(M - static_cast<int>(cRow * BM), BM);
  const unsigned int tileCols = min(N - static_cast<int>(cCol * BN), BN);
  A += cRow * BM * K;
  B += cCol * BN;
  float threadResults[TM] = {0.0f};
  for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
    // A: BM x BK as BM * BK / 4 float4; B: BK x BN as BK * BN / 4 float4.
    if (threadIdx.x < BM * BK / 4) {
      const uint r = threadIdx.x / (BK / 4), c4 = threadIdx.x % (BK / 4);
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (r < tileRows && bkIdx + static_cast<int>(c4 * 4) < K)
        v = reinterpret_cast<const float4*>(&A[r * K + bkIdx + c4 * 4])[0];
      reinterpret_cast<float4*>(&As[r * BK + c4 * 4])[0] = v;
    } else if (threadIdx.x < BM * BK / 4 + BK * BN / 4) {
      const uint i = threadIdx.x - BM * BK / 4;
      const uint r = i / (BN / 4), c4 = i % (BN / 4);
      float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (bkIdx + static_cast<int>(r) < K && c4 * 4 < tileCols)
        v = reinterpret_cast<const float4*>(&B[(bkIdx + r) * N + c4 * 4])[0];
      reinterpret_cast<float4*>(&Bs[r * BN + c4 * 4])[0] = v;
    }
    __syncthreads();
    for (uint dotIdx = 0; dotIdx < BK; ++dotIdx) {
      const float tmpB = Bs[dotIdx * BN + threadCol];
      for (uint resIdx = 0; resIdx < TM; ++resIdx)
        threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
    }
    __syncthreads();
  }
  for (uint resIdx = 0; resIdx < TM; ++resIdx) {
    const uint row = threadRow * TM + resIdx;
    if (row < tileRows && threadCol < tileCols) {
      float* c = &C[(cRow * BM + row) * N + cCol * BN + threadCol];
      *c = alpha * threadResults[resIdx] + beta * *c;
    }
  }
}

std::vector<float> sgemm(int M, int N, int K, float alpha, const std::vector<float>& a,
                         const std::vector<float>& b, float beta, const std::vector<float>& c) {
  float *dA, *dB, *dC;
  cudaCheck(cudaMalloc(&dA, a.size() * sizeof(float)));
  cudaCheck(cudaMalloc(&dB, b.size() * sizeof(float)));
  cudaCheck(cudaMalloc(&dC, c.size() * sizeof(float)));
  cudaCheck(cudaMemcpy(dA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(dB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(dC, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  rl::launch(sgemm_1d_blocktiling_vectorized, grid, dim3(BM * BN / TM), 0, nullptr, M, N, K, alpha,
             dA, dB, beta, dC);
  cudaCheck(cudaGetLastError());
  std::vector<float> out(c.size());
  cudaCheck(cudaMemcpy(out.data(), dC, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  cudaCheck(cudaFree(dA));
  cudaCheck(cudaFree(dB));
  cudaCheck(cudaFree(dC));
  return out;
}

}  // namespace

TEST(SgemmStyle, BlocktilingWithFloat4LoadsMatchesFloat64AndIsScheduleIndependent) {
  const int M = 67, N = 52, K = 36;  // M ragged, N ragged in the second column of tiles
  const float alpha = 0.75f, beta = -0.5f;
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>((i * 37 % 101) - 50) / 25.0f;
  for (int i = 0; i < K * N; ++i) b[i] = static_cast<float>((i * 53 % 97) - 48) / 24.0f;
  for (int i = 0; i < M * N; ++i) c[i] = static_cast<float>((i * 29 % 89) - 44) / 16.0f;
  const auto runs =
      third_party_style::under_two_schedules([&] { return sgemm(M, N, K, alpha, a, b, beta, c); });
  ASSERT_TRUE(third_party_style::bitwise_equal(runs[0], runs[1]));
  // K products summed in float, then alpha, beta and one add: within
  // (K + 4) 2^-24 of the sum of magnitudes (Higham's gamma bound, rounded up).
  std::vector<double> want(M * N), tolerance(M * N), got(runs[0].begin(), runs[0].end());
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double dot = 0.0, magnitude = 0.0;
      for (int k = 0; k < K; ++k) {
        dot += static_cast<double>(a[m * K + k]) * b[k * N + n];
        magnitude += std::fabs(static_cast<double>(a[m * K + k]) * b[k * N + n]);
      }
      want[m * N + n] = alpha * dot + beta * static_cast<double>(c[m * N + n]);
      tolerance[m * N + n] =
          std::ldexp((K + 4) * (alpha * magnitude + std::fabs(beta * c[m * N + n])), -24);
    }
  }
  EXPECT_EQ(third_party_style::count_outside(got, want, tolerance), 0);
  // Negative case: a reference element moved by twice its tolerance (about
  // 5e-6 of the magnitudes) is rejected.
  const int last = (M - 1) * N + N - 1;
  std::vector<double> perturbed = want;
  perturbed[last] += 2.0 * tolerance[last];
  EXPECT_EQ(third_party_style::count_outside(got, perturbed, tolerance), 1);
}

// CUDA's mixed overloads compare in the unsigned type (math_functions.h):
// min(-1, 1u) is 1u, not -1.
TEST(SgemmStyle, MixedSignMinMaxCompareAsUnsignedLikeCuda) {
  static_assert(std::is_same_v<decltype(min(1, 2u)), unsigned int>);
  static_assert(std::is_same_v<decltype(max(2u, 1)), unsigned int>);
  static_assert(std::is_same_v<decltype(min(1LL, 2ULL)), unsigned long long>);
  static_assert(std::is_same_v<decltype(min(1.0f, 2.0)), double>);
  EXPECT_EQ(min(-1, 1u), 1u);
  EXPECT_EQ(max(-1, 1u), 0xFFFFFFFFu);
  EXPECT_EQ(min(3, 5u), 3u);
  EXPECT_EQ(max(0.5f, 0.25), 0.5);
}
