// SGEMM_CUDA's double-buffering rung ("kernel 12") in its own habits, written
// here and small: two cuda::barrier<thread_scope_block> in __shared__ memory,
// initialised by thread 0 of cooperative_groups::this_thread_block(); the
// next k-tile is loaded with cuda::memcpy_async (A transposed float by float
// with aligned_size_t<4>, B as aligned_size_t<16> float4s) on the back
// barrier while the front one is waited on with arrive_and_wait(), then the
// two swap.  Six k-tiles reuse each barrier for three phases.  Checked against
// a float64 reference under two schedules, bit-identical across them.
#include <gtest/gtest.h>

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cuda/barrier>
#include <utility>
#include <vector>

namespace {

constexpr int BM = 32;
constexpr int BN = 32;
constexpr int BK = 8;
constexpr int TM = 4;
constexpr int TN = 4;
constexpr int NUM_THREADS = (BM / TM) * (BN / TN);  // 64

// One k-tile into shared memory: A's BM x BK tile transposed (As[k][m]), four
// single floats per thread; B's BK x BN tile as one float4 per thread.
template <typename Barrier>
__device__ void loadFromGmem(int N, int K, const float* A, const float* B, float* As, float* Bs,
                             uint innerRowA, uint innerColA, uint innerRowB, uint innerColB,
                             Barrier& barrier) {
  for (uint i = 0; i < 4; ++i)
    cuda::memcpy_async(&As[(innerColA * 4 + i) * BM + innerRowA],
                       &A[innerRowA * K + innerColA * 4 + i],
                       cuda::aligned_size_t<sizeof(float)>(sizeof(float)), barrier);
  cuda::memcpy_async(&Bs[innerRowB * BN + innerColB * 4], &B[innerRowB * N + innerColB * 4],
                     cuda::aligned_size_t<sizeof(float4)>(sizeof(float4)), barrier);
}

__device__ void processFromSmem(float* threadResults, const float* As, const float* Bs,
                                uint threadRow, uint threadCol) {
  for (uint dotIdx = 0; dotIdx < BK; ++dotIdx)
    for (uint m = 0; m < TM; ++m)
      for (uint n = 0; n < TN; ++n)
        threadResults[m * TN + n] +=
            As[dotIdx * BM + threadRow * TM + m] * Bs[dotIdx * BN + threadCol * TN + n];
}

// C = alpha * A * B + beta * C; M, N multiples of 32, K a multiple of 8 (>= 16).
__global__ void sgemmDoubleBuffering(int M, int N, int K, float alpha, const float* A,
                                     const float* B, float beta, float* C) {
  auto block = cooperative_groups::this_thread_block();
  __shared__ cuda::barrier<cuda::thread_scope::thread_scope_block> frontBarrier;
  __shared__ cuda::barrier<cuda::thread_scope::thread_scope_block> backBarrier;
  auto frontBarrierPtr = &frontBarrier;
  auto backBarrierPtr = &backBarrier;
  if (block.thread_rank() == 0) {
    init(&frontBarrier, block.size());
    init(&backBarrier, block.size());
  }
  __syncthreads();

  __shared__ float As[2 * BM * BK];
  __shared__ float Bs[2 * BK * BN];
  (void)M;
  A += blockIdx.y * BM * K;
  B += blockIdx.x * BN;
  C += blockIdx.y * BM * N + blockIdx.x * BN;
  const uint innerRowA = threadIdx.x / (BK / 4), innerColA = threadIdx.x % (BK / 4);
  const uint innerRowB = threadIdx.x / (BN / 4), innerColB = threadIdx.x % (BN / 4);
  const uint threadRow = threadIdx.x / (BN / TN), threadCol = threadIdx.x % (BN / TN);
  float threadResults[TM * TN] = {0.0f};
  int offset = 0;

  loadFromGmem(N, K, A, B, As, Bs, innerRowA, innerColA, innerRowB, innerColB, *frontBarrierPtr);
  for (int bkIdx = 0; bkIdx < K - BK; bkIdx += BK) {
    // the next tile into the other buffer, on the back barrier
    loadFromGmem(N, K, A + BK, B + BK * N, As + (1 - offset) * BM * BK, Bs + (1 - offset) * BK * BN,
                 innerRowA, innerColA, innerRowB, innerColB, *backBarrierPtr);
    frontBarrierPtr->arrive_and_wait();
    processFromSmem(threadResults, As + offset * BM * BK, Bs + offset * BK * BN, threadRow,
                    threadCol);
    A += BK;
    B += BK * N;
    offset = 1 - offset;
    std::swap(frontBarrierPtr, backBarrierPtr);
    __syncthreads();  // nobody still reads the buffer the next load overwrites
  }
  frontBarrierPtr->arrive_and_wait();
  processFromSmem(threadResults, As + offset * BM * BK, Bs + offset * BK * BN, threadRow,
                  threadCol);

  for (uint m = 0; m < TM; ++m)
    for (uint n = 0; n < TN; ++n) {
      float* c = &C[(threadRow * TM + m) * N + threadCol * TN + n];
      *c = alpha * threadResults[m * TN + n] + beta * *c;
    }
}

template <typename T>
T* to_device(const std::vector<T>& host) {
  T* device = nullptr;
  EXPECT_EQ(cudaMalloc(&device, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return device;
}

std::vector<float> sgemm(int M, int N, int K, float alpha, const std::vector<float>& a,
                         const std::vector<float>& b, float beta, const std::vector<float>& c) {
  float* dA = to_device(a);
  float* dB = to_device(b);
  float* dC = to_device(c);
  rl::launch(sgemmDoubleBuffering, dim3(N / BN, M / BM), dim3(NUM_THREADS), 0, nullptr, M, N, K,
             alpha, dA, dB, beta, dC);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<float> out(c.size());
  EXPECT_EQ(cudaMemcpy(out.data(), dC, out.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(cudaFree(dA), cudaSuccess);
  EXPECT_EQ(cudaFree(dB), cudaSuccess);
  EXPECT_EQ(cudaFree(dC), cudaSuccess);
  return out;
}

// Elements with |got - want| > tolerance[i].
int count_outside(const std::vector<float>& got, const std::vector<double>& want,
                  const std::vector<double>& tolerance) {
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance[i])) ++bad;
  return bad;
}

TEST(CudaBarrier, double_buffered_sgemm_matches_float64_under_two_schedules) {
  const int M = 64, N = 64, K = 48;  // 2 x 2 blocks, six k-tiles: three phases per barrier
  const float alpha = 0.75f, beta = -0.5f;
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (int i = 0; i < M * K; ++i) a[i] = static_cast<float>((i * 37 % 101) - 50) / 25.0f;
  for (int i = 0; i < K * N; ++i) b[i] = static_cast<float>((i * 53 % 97) - 48) / 24.0f;
  for (int i = 0; i < M * N; ++i) c[i] = static_cast<float>((i * 29 % 89) - 44) / 16.0f;
  const auto runs =
      rl::emu::run_under_schedules([&] { return sgemm(M, N, K, alpha, a, b, beta, c); });
  ASSERT_EQ(runs[0].size(), runs[1].size());
  EXPECT_EQ(runs[0], runs[1]) << "the result depends on the schedule";
  // K products summed in float, then alpha, beta and one add: within
  // (K + 4) 2^-24 of the sum of magnitudes (Higham's gamma bound, rounded up).
  std::vector<double> want(M * N), tolerance(M * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double dot = 0.0, magnitude = 0.0;
      for (int k = 0; k < K; ++k) {
        const double p = static_cast<double>(a[m * K + k]) * b[k * N + n];
        dot += p;
        magnitude += std::fabs(p);
      }
      want[m * N + n] = alpha * dot + beta * static_cast<double>(c[m * N + n]);
      tolerance[m * N + n] =
          std::ldexp((K + 4) * (alpha * magnitude + std::fabs(beta * c[m * N + n])), -24);
    }
  EXPECT_EQ(count_outside(runs[0], want, tolerance), 0);
  // Negative case: the same tolerance rejects a reference element moved by
  // twice its tolerance.
  std::vector<double> perturbed = want;
  perturbed[M * N - 1] += 2.0 * tolerance[M * N - 1];
  EXPECT_EQ(count_outside(runs[0], perturbed, tolerance), 1);
}

}  // namespace
