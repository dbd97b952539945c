// SGEMM_CUDA's runner (src/runner.cu, unedited: kernels 1-12 launched with
// <<<>>> on template kernels, cuBLAS as kernel 0) driven at a small shape and
// checked exactly: integer inputs in [-2, 2] and K = 64 keep every partial
// sum an integer below 2^24, and beta = 0.5 adds halves, so every kernel's
// float result equals the float64 reference exactly, whatever its order.
//
// The kernels check no bounds: M, N and K must be multiples of each one's
// block tile.  Kernel 11's tile is 128 x 256 (BM x BN), so N is 256 here.
// SGEMM_CUDA's own benchmark starts at N = 128 (in 4096^2 buffers), where
// kernel 11's block reads B and writes C 128 columns past the end of each
// row.  `--narrow` runs that case in buffers of the exact size, where the last
// rows' accesses leave the allocation: the asan preset's test expects
// memcheck (ASan) to report it.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../third_party/SGEMM_CUDA/src/runner.cuh"
#include "port_check.h"

int main(int argc, char** argv) {
  port_check::Tally tally;
  const bool narrow = argc > 1 && std::string(argv[1]) == "--narrow";
  const int M = 128, N = narrow ? 128 : 256, K = 64;  // K: four 16-wide k-tiles
  const float alpha = 1.0f, beta = 0.5f;
  std::vector<float> a(M * K), b(K * N), c0(M * N);
  auto integers = [](std::vector<float>& v, unsigned seed) {
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<float>(static_cast<int>((i * 2654435761u + seed) >> 7) % 5 - 2);
  };
  integers(a, 1);
  integers(b, 2);
  integers(c0, 3);
  std::vector<double> ref(M * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double sum = 0;
      for (int k = 0; k < K; ++k) sum += static_cast<double>(a[m * K + k]) * b[k * N + n];
      ref[m * N + n] = alpha * sum + beta * c0[m * N + n];
    }
  float *d_a, *d_b, *d_c;
  cudaMalloc(&d_a, a.size() * sizeof(float));
  cudaMalloc(&d_b, b.size() * sizeof(float));
  cudaMalloc(&d_c, c0.size() * sizeof(float));
  cudaMemcpy(d_a, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_b, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice);
  cublasHandle_t handle;
  tally.check(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  std::vector<float> got(M * N);
  if (narrow) {
    cudaMemcpy(d_c, c0.data(), c0.size() * sizeof(float), cudaMemcpyHostToDevice);
    run_kernel(11, M, N, K, alpha, d_a, d_b, beta, d_c, handle);
    std::printf("kernel 11 at N = %d: %s\n", N, cudaGetErrorString(cudaDeviceSynchronize()));
  }
  for (int kernel = 0; kernel <= 12 && !narrow; ++kernel) {
    cudaMemcpy(d_c, c0.data(), c0.size() * sizeof(float), cudaMemcpyHostToDevice);
    run_kernel(kernel, M, N, K, alpha, d_a, d_b, beta, d_c, handle);
    const cudaError_t error = cudaDeviceSynchronize();
    cudaMemcpy(got.data(), d_c, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
    char what[64];
    std::snprintf(what, sizeof what, "SGEMM_CUDA kernel %d", kernel);
    tally.check(error == cudaSuccess &&
                    port_check::mismatches(what, got.data(), ref.data(), M * N, 0.0, 0.0) == 0,
                what);
  }
  cublasDestroy(handle);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_c);
  if (narrow) return 0;
  // The check can fail: the last result against a reference missing its last k.
  std::vector<double> short_k(ref);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) short_k[m * N + n] -= alpha * a[m * K + K - 1] * b[(K - 1) * N + n];
  tally.check(port_check::mismatches("(expected) reference without the last k", got.data(),
                                     short_k.data(), M * N, 0.0, 0.0) > 0,
              "a reference missing one k is caught");
  return tally.finish("SGEMM_CUDA");
}
