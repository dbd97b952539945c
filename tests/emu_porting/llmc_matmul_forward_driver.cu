// llm.c dev/cuda/matmul_forward.cu, unedited: a naive kernel, cublasSgemm plus
// a bias kernel, cublasLtMatmul with the bias epilogue, and a 128 x 128-tile
// SIMT kernel, driven at a small shape and checked exactly: integer inputs in
// [-2, 2] and C = 64 keep every partial sum an integer below 2^24, so each
// result equals the float64 reference whatever its order of summation.  Its
// own benchmark main() (B = 32, T = 1024, C = 768, OC = 3072) is renamed, not run.
//
// Kernel 4 checks no bounds: B*T and OC must be multiples of its 128-wide
// tiles and C of 32, as in llm.c's own shapes; this shape is.
#define main llmc_matmul_forward_main
#include "../third_party/llm.c/dev/cuda/matmul_forward.cu"
#undef main

#include <vector>

#include "port_check.h"

int main() {
  port_check::Tally tally;
  const int B = 2, T = 64, C = 64, OC = 256;
  const int BT = B * T;
  auto integers = [](std::size_t n, unsigned seed) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = static_cast<float>(static_cast<int>((i * 2654435761u + seed) >> 9) % 5 - 2);
    return v;
  };
  const std::vector<float> inp = integers(BT * C, 1), weight = integers(OC * C, 2),
                           bias = integers(OC, 3);
  std::vector<double> ref(BT * OC);
  for (int r = 0; r < BT; ++r)
    for (int o = 0; o < OC; ++o) {
      double sum = bias[o];
      for (int c = 0; c < C; ++c) sum += static_cast<double>(inp[r * C + c]) * weight[o * C + c];
      ref[r * OC + o] = sum;
    }
  // What llm.c's main sets up for the library kernels (2 and 3).
  cublasCheck(cublasCreate(&cublas_handle));
  cublasCheck(cublasLtCreate(&cublaslt_handle));
  cublas_compute_type = CUBLAS_COMPUTE_32F;
  cudaCheck(cudaMalloc(&cublaslt_workspace, cublaslt_workspace_size));
  float *d_out, *d_inp, *d_weight, *d_bias;
  cudaCheck(cudaMalloc(&d_out, BT * OC * sizeof(float)));
  cudaCheck(cudaMalloc(&d_inp, BT * C * sizeof(float)));
  cudaCheck(cudaMalloc(&d_weight, OC * C * sizeof(float)));
  cudaCheck(cudaMalloc(&d_bias, OC * sizeof(float)));
  cudaCheck(cudaMemcpy(d_inp, inp.data(), inp.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaCheck(
      cudaMemcpy(d_weight, weight.data(), weight.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(d_bias, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> got(BT * OC);
  for (int kernel = 1; kernel <= 4; ++kernel) {
    cudaCheck(cudaMemset(d_out, 0, BT * OC * sizeof(float)));
    matmul_forward(kernel, d_out, d_inp, d_weight, d_bias, B, T, C, OC, 16);
    cudaCheck(cudaDeviceSynchronize());
    cudaCheck(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    char what[64];
    std::snprintf(what, sizeof what, "matmul kernel %d", kernel);
    tally.check(port_check::mismatches(what, got.data(), ref.data(), BT * OC, 0.0, 0.0) == 0, what);
  }
  // The check can fail: the last result against the reference without its bias.
  std::vector<double> no_bias(ref);
  for (int i = 0; i < BT * OC; ++i) no_bias[i] -= bias[i % OC];
  tally.check(port_check::mismatches("(expected) reference without bias", got.data(),
                                     no_bias.data(), BT * OC, 0.0, 0.0) > 0,
              "a reference without the bias is caught");
  for (float* p : {d_out, d_inp, d_weight, d_bias}) cudaCheck(cudaFree(p));
  cudaCheck(cudaFree(cublaslt_workspace));
  cublasCheck(cublasLtDestroy(cublaslt_handle));
  cublasCheck(cublasDestroy(cublas_handle));
  return tally.finish("llm.c matmul_forward");
}
