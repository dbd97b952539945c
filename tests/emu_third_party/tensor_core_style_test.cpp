// Tensor-core GEMMs in the two common third-party styles: an nvcuda::wmma
// GEMM (one warp per 16x16 tile of C, operands zero-padded into pitched
// device buffers with cudaMemcpy2D), and a cp.async + ldmatrix + mma.sync
// HGEMM with f16 accumulators and a two-stage pipeline (through rl::ptx, as
// the project writes inline PTX).  Both against float64 references.
#include <gtest/gtest.h>

#include <cuda_fp16.h>
#include <mma.h>
#include <cmath>
#include <cstdint>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"
#include "third_party_style.hpp"

using namespace nvcuda;

namespace {

constexpr int WMMA_M = 16, WMMA_N = 16, WMMA_K = 16;

// C (M x N, float, ldc) = A (M x K, half, lda) * B (K x N, half, ldb); all
// dimensions multiples of 16 (the caller pads).  Block: 4 warps along N.
__global__ void wmma_gemm(const half* a, const half* b, float* c, int M, int N, int K, int lda,
                          int ldb, int ldc) {
  const int warpM = blockIdx.y;
  const int warpN = blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
  if (warpM * WMMA_M >= M || warpN * WMMA_N >= N) return;
  wmma::fragment<wmma::matrix_a, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> b_frag;
  wmma::fragment<wmma::accumulator, WMMA_M, WMMA_N, WMMA_K, float> acc_frag;
  wmma::fill_fragment(acc_frag, 0.0f);
  for (int k = 0; k < K; k += WMMA_K) {
    wmma::load_matrix_sync(a_frag, a + warpM * WMMA_M * lda + k, lda);
    wmma::load_matrix_sync(b_frag, b + k * ldb + warpN * WMMA_N, ldb);
    wmma::mma_sync(acc_frag, a_frag, b_frag, acc_frag);
  }
  wmma::store_matrix_sync(c + warpM * WMMA_M * ldc + warpN * WMMA_N, acc_frag, ldc,
                          wmma::mem_row_major);
}

int round_up(int v, int to) {
  return (v + to - 1) / to * to;
}

std::vector<half> halves(int count, int seed) {
  std::vector<half> v(count);
  for (int i = 0; i < count; ++i)
    v[i] = __float2half(static_cast<float>((i * seed % 61) - 30) / 16.0f);
  return v;
}

// A (M x K) and B (K x N) as dense host matrices; C (M x N) comes back dense.
std::vector<float> wmma_gemm_padded(const std::vector<half>& a, const std::vector<half>& b, int M,
                                    int N, int K) {
  const int Mp = round_up(M, 16), Np = round_up(N, 64), Kp = round_up(K, 16);
  half *dA, *dB;
  float* dC;
  std::size_t pitchA, pitchB, pitchC;
  cudaCheck(cudaMallocPitch(&dA, &pitchA, Kp * sizeof(half), Mp));
  cudaCheck(cudaMallocPitch(&dB, &pitchB, Np * sizeof(half), Kp));
  cudaCheck(cudaMallocPitch(&dC, &pitchC, Np * sizeof(float), Mp));
  cudaCheck(cudaMemset(dA, 0, pitchA * Mp));  // the padding must be zeros
  cudaCheck(cudaMemset(dB, 0, pitchB * Kp));
  cudaCheck(cudaMemcpy2D(dA, pitchA, a.data(), K * sizeof(half), K * sizeof(half), M,
                         cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy2D(dB, pitchB, b.data(), N * sizeof(half), N * sizeof(half), K,
                         cudaMemcpyHostToDevice));
  rl::launch(wmma_gemm, dim3(Np / 64, Mp / 16), dim3(128), 0, nullptr, dA, dB, dC, Mp, Np, Kp,
             static_cast<int>(pitchA / sizeof(half)), static_cast<int>(pitchB / sizeof(half)),
             static_cast<int>(pitchC / sizeof(float)));
  cudaCheck(cudaGetLastError());
  std::vector<float> c(static_cast<std::size_t>(M) * N);
  cudaCheck(cudaMemcpy2D(c.data(), N * sizeof(float), dC, pitchC, N * sizeof(float), M,
                         cudaMemcpyDeviceToHost));
  cudaCheck(cudaFree(dA));
  cudaCheck(cudaFree(dB));
  cudaCheck(cudaFree(dC));
  return c;
}

// Exact float64 products of the half inputs; `rounding_units` units of
// 2^-24 (f32) or 2^-11 (f16) of the sum of magnitudes as the tolerance.
void gemm_reference(const std::vector<half>& a, const std::vector<half>& b, bool b_transposed,
                    int M, int N, int K, double unit, std::vector<double>& want,
                    std::vector<double>& tolerance) {
  want.assign(static_cast<std::size_t>(M) * N, 0.0);
  tolerance.assign(want.size(), 0.0);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double dot = 0.0, magnitude = 0.0;
      for (int k = 0; k < K; ++k) {
        const double bv = __half2float(b_transposed ? b[n * K + k] : b[k * N + n]);
        const double product = static_cast<double>(__half2float(a[m * K + k])) * bv;
        dot += product;
        magnitude += std::fabs(product);
      }
      want[m * N + n] = dot;
      tolerance[m * N + n] = unit * magnitude;
    }
  }
}

// HGEMM, one warp per 16 x 8 tile of C: A (M x K) row-major, B given as B^T
// (N x K, row-major: the ".col" operand), C (M x N) half.  Dimensions are
// multiples of the tile (16, 8, 16).  Stage s of the pipeline holds one
// 16 x 16 slice of A and one 8 x 16 slice of B^T in shared memory.
__global__ void hgemm_mma_f16acc(const half* A, const half* Bt, half* C, int M, int N, int K) {
  __shared__ __align__(16) half As[2][16][16];
  __shared__ __align__(16) half Bs[2][8][16];
  const unsigned lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 8;
  if (row0 >= M || col0 >= N) return;  // whole warps only: the grid may be rounded up
  const int k_tiles = K / 16;
  auto load_stage = [&](int stage, int kt) {
    // A: 16 rows of two 16-byte chunks (one per lane); B^T: 8 rows of two (lanes 0..15).
    rl::ptx::cp_async_16(&As[stage][lane / 2][(lane % 2) * 8],
                         A + (row0 + lane / 2) * K + kt * 16 + (lane % 2) * 8);
    if (lane < 16)
      rl::ptx::cp_async_16(&Bs[stage][lane / 2][(lane % 2) * 8],
                           Bt + (col0 + lane / 2) * K + kt * 16 + (lane % 2) * 8);
    rl::ptx::cp_async_commit();
  };
  std::uint32_t acc[2] = {0U, 0U};  // four f16 zeros
  load_stage(0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
    if (kt + 1 < k_tiles) {
      load_stage((kt + 1) % 2, kt + 1);
      rl::ptx::cp_async_wait<1>();  // stage kt has landed; kt + 1 may be in flight
    } else {
      rl::ptx::cp_async_wait_all();
    }
    __syncwarp();
    const int s = kt % 2;
    std::uint32_t a[4], b[2];
    rl::ptx::ldmatrix_x4(a, &As[s][lane % 16][(lane / 16) * 8]);
    rl::ptx::ldmatrix_x2(b, &Bs[s][lane % 8][((lane / 8) % 2) * 8]);
    rl::ptx::mma_m16n8k16_f16_f16(acc, a, b, acc);
    __syncwarp();  // every lane has read stage s before it is refilled
  }
  const unsigned g = lane / 4, t = lane % 4;
  reinterpret_cast<std::uint32_t*>(&C[(row0 + g) * N + col0 + 2 * t])[0] = acc[0];
  reinterpret_cast<std::uint32_t*>(&C[(row0 + g + 8) * N + col0 + 2 * t])[0] = acc[1];
}

std::vector<half> hgemm(const std::vector<half>& a, const std::vector<half>& bt, int M, int N,
                        int K) {
  half *dA, *dB, *dC;
  cudaCheck(cudaMalloc(&dA, a.size() * sizeof(half)));
  cudaCheck(cudaMalloc(&dB, bt.size() * sizeof(half)));
  cudaCheck(cudaMalloc(&dC, static_cast<std::size_t>(M) * N * sizeof(half)));
  cudaCheck(cudaMemcpy(dA, a.data(), a.size() * sizeof(half), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(dB, bt.data(), bt.size() * sizeof(half), cudaMemcpyHostToDevice));
  rl::launch(hgemm_mma_f16acc, dim3(N / 8, M / 16), dim3(32), 0, nullptr, dA, dB, dC, M, N, K);
  cudaCheck(cudaGetLastError());
  std::vector<half> c(static_cast<std::size_t>(M) * N);
  cudaCheck(cudaMemcpy(c.data(), dC, c.size() * sizeof(half), cudaMemcpyDeviceToHost));
  cudaCheck(cudaFree(dA));
  cudaCheck(cudaFree(dB));
  cudaCheck(cudaFree(dC));
  return c;
}

}  // namespace

TEST(TensorCoreStyle, WmmaGemmOnPitchedPaddedOperandsMatchesFloat64) {
  const int M = 37, N = 45, K = 29;  // padded to 48 x 64 x 32 on the device
  const std::vector<half> a = halves(M * K, 17), b = halves(K * N, 23);
  const auto runs =
      third_party_style::under_two_schedules([&] { return wmma_gemm_padded(a, b, M, N, K); });
  ASSERT_TRUE(third_party_style::bitwise_equal(runs[0], runs[1]));
  // Exact products, one rounding to f32 per 16-deep mma (two here) plus the
  // f32 accumulation between them: 4 units of 2^-24.
  std::vector<double> want, tolerance;
  gemm_reference(a, b, false, M, N, K, std::ldexp(4.0, -24), want, tolerance);
  const std::vector<double> got(runs[0].begin(), runs[0].end());
  EXPECT_EQ(third_party_style::count_outside(got, want, tolerance), 0);
  // Negative case: a reference that ignores the last k (what a wrong pitch or
  // a dropped padding row would give) is far outside the tolerance.
  std::vector<double> short_k_want, unused;
  gemm_reference(a, b, false, M, N, K - 1, std::ldexp(4.0, -24), short_k_want, unused);
  EXPECT_GT(third_party_style::count_outside(got, short_k_want, tolerance), M * N / 2);
}

TEST(TensorCoreStyle, CpAsyncLdmatrixMmaF16AccumulatorHgemmMatchesFloat64) {
  const int M = 48, N = 40, K = 80;  // 3 x 5 warps, five k tiles through two stages
  const std::vector<half> a = halves(M * K, 13), bt = halves(N * K, 19);
  const auto runs = third_party_style::under_two_schedules([&] { return hgemm(a, bt, M, N, K); });
  ASSERT_EQ(runs[0].size(), runs[1].size());
  ASSERT_TRUE(third_party_style::bitwise_equal(runs[0], runs[1]));
  // f16 accumulators: one rounding to f16 per 16-deep mma (K / 16 of them),
  // each within 2^-11 of a partial sum bounded by the sum of magnitudes.
  std::vector<double> want, tolerance;
  gemm_reference(a, bt, true, M, N, K, std::ldexp(K / 16.0, -11), want, tolerance);
  std::vector<double> got(runs[0].size());
  for (std::size_t i = 0; i < got.size(); ++i) got[i] = __half2float(runs[0][i]);
  EXPECT_EQ(third_party_style::count_outside(got, want, tolerance), 0);
  // Negative case: the result of a pipeline that skipped the last k tile.
  std::vector<double> short_want, unused;
  std::vector<half> bt_short = bt;
  for (int n = 0; n < N; ++n)
    for (int k = K - 16; k < K; ++k) bt_short[n * K + k] = __float2half(0.0f);
  gemm_reference(a, bt_short, true, M, N, K, std::ldexp(K / 16.0, -11), short_want, unused);
  EXPECT_GT(third_party_style::count_outside(got, short_want, tolerance), M * N / 2);
}
