// llm.c dev/cuda/layernorm_forward.cu, unedited (cooperative groups,
// extern __shared__ char, cudaFuncSetAttribute, Packed128 through int4*), all
// six kernels driven at a small shape and checked against a float64
// reference.  Its own benchmark main() is renamed, not run.
//
// Kernel 2's normalization_kernel has no bounds check: it needs B*T*C to be a
// multiple of its 256-thread block (llm.c's own main uses 8*1024*768), so the
// checked shape is one.  `--ragged` runs it at B*T*C = 780 instead, where 244
// threads of its last block read `inp`, `mean` and `rstd` and write `out` past
// their ends: the asan preset's test expects memcheck (ASan) to report it.
#define main llmc_layernorm_forward_main
#include "../third_party/llm.c/dev/cuda/layernorm_forward.cu"
#undef main

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "port_check.h"

int main(int argc, char** argv) {
  port_check::Tally tally;
  const bool ragged = argc > 1 && std::string(argv[1]) == "--ragged";
  // C a multiple of 4 (kernel 6 moves float4), not of 32; B*T*C a multiple of 256.
  const int B = ragged ? 3 : 4, T = ragged ? 5 : 16, C = ragged ? 52 : 48;
  const int N = B * T;
  const std::vector<float> inp = port_check::uniform(N * C, 3);
  const std::vector<float> weight = port_check::uniform(C, 4);
  const std::vector<float> bias = port_check::uniform(C, 5);
  std::vector<double> ref_out(N * C), ref_mean(N), ref_rstd(N);
  for (int r = 0; r < N; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < C; ++c) m += inp[r * C + c];
    m /= C;
    for (int c = 0; c < C; ++c) v += (inp[r * C + c] - m) * (inp[r * C + c] - m);
    const double s = 1.0 / std::sqrt(v / C + 1e-5);
    ref_mean[r] = m;
    ref_rstd[r] = s;
    for (int c = 0; c < C; ++c) ref_out[r * C + c] = (inp[r * C + c] - m) * s * weight[c] + bias[c];
  }
  float *d_inp, *d_weight, *d_bias, *d_out, *d_mean, *d_rstd;
  cudaCheck(cudaMalloc(&d_inp, N * C * sizeof(float)));
  cudaCheck(cudaMalloc(&d_weight, C * sizeof(float)));
  cudaCheck(cudaMalloc(&d_bias, C * sizeof(float)));
  cudaCheck(cudaMalloc(&d_out, N * C * sizeof(float)));
  cudaCheck(cudaMalloc(&d_mean, N * sizeof(float)));
  cudaCheck(cudaMalloc(&d_rstd, N * sizeof(float)));
  cudaCheck(cudaMemcpy(d_inp, inp.data(), N * C * sizeof(float), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(d_weight, weight.data(), C * sizeof(float), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemcpy(d_bias, bias.data(), C * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> out(N * C), mean(N), rstd(N);
  // Float sums of C terms (inputs in [-1, 1), rstd about 1.7): (C + 16)
  // float epsilons, relative, and as much again absolute for values near 0.
  const double tol = (C + 16) * static_cast<double>(FLT_EPSILON);
  if (ragged) {
    layernorm_forward(2, d_out, d_mean, d_rstd, d_inp, d_weight, d_bias, B, T, C, 32);
    std::printf("kernel 2 at B*T*C = %d: %s\n", N * C, cudaGetErrorString(cudaDeviceSynchronize()));
  }
  for (int kernel = 1; kernel <= 6 && !ragged; ++kernel) {
    for (int block : {32, 128}) {
      cudaCheck(cudaMemset(d_out, 0, N * C * sizeof(float)));
      cudaCheck(cudaMemset(d_mean, 0, N * sizeof(float)));
      cudaCheck(cudaMemset(d_rstd, 0, N * sizeof(float)));
      layernorm_forward(kernel, d_out, d_mean, d_rstd, d_inp, d_weight, d_bias, B, T, C, block);
      cudaCheck(cudaDeviceSynchronize());
      cudaCheck(cudaMemcpy(out.data(), d_out, N * C * sizeof(float), cudaMemcpyDeviceToHost));
      cudaCheck(cudaMemcpy(mean.data(), d_mean, N * sizeof(float), cudaMemcpyDeviceToHost));
      cudaCheck(cudaMemcpy(rstd.data(), d_rstd, N * sizeof(float), cudaMemcpyDeviceToHost));
      char what[64];
      std::snprintf(what, sizeof what, "layernorm kernel %d, block %d", kernel, block);
      const int bad = port_check::mismatches(what, out.data(), ref_out.data(), N * C, tol, tol) +
                      port_check::mismatches(what, mean.data(), ref_mean.data(), N, tol, tol) +
                      port_check::mismatches(what, rstd.data(), ref_rstd.data(), N, tol, tol);
      tally.check(bad == 0, what);
    }
  }
  for (float* p : {d_inp, d_weight, d_bias, d_out, d_mean, d_rstd}) cudaCheck(cudaFree(p));
  if (ragged) return 0;
  // The check can fail: the last output against a reference without the bias.
  std::vector<double> no_bias(ref_out);
  for (int i = 0; i < N * C; ++i) no_bias[i] -= bias[i % C];
  tally.check(port_check::mismatches("(expected) reference without bias", out.data(),
                                     no_bias.data(), N * C, tol, tol) > 0,
              "a reference without the bias is caught");
  return tally.finish("llm.c layernorm_forward");
}
