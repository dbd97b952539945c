// llm.c dev/cuda/gelu_forward.cu, unedited, driven at small odd shapes and
// checked against a float64 reference.  Its own main() (a benchmark at
// B=8, T=1024, C=768, repeated 1000 times) is renamed and not run.
#define main llmc_gelu_forward_main
#include "../third_party/llm.c/dev/cuda/gelu_forward.cu"
#undef main

#include <cmath>
#include <vector>

#include "port_check.h"

int main() {
  port_check::Tally tally;
  const int B = 2, T = 17, C = 40;  // B*T*C a multiple of 8: kernel 2 moves 8 bf16 per thread
  const int n = B * T * C;
  std::vector<float> inp = port_check::uniform(n, 1);
  for (float& x : inp) x *= 4.0f;
  // The kernels read bf16: the reference starts from the rounded inputs.
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) {
    const double x = static_cast<double>(__bfloat162float(__float2bfloat16(inp[i])));
    ref[i] = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  floatX* d_inp;
  floatX* d_out;
  cudaCheck(cudaMalloc(&d_inp, n * sizeof(floatX)));
  cudaCheck(cudaMalloc(&d_out, n * sizeof(floatX)));
  cudaCheck(memcpy_convert(d_inp, inp.data(), n));
  std::vector<floatX> out(n);
  std::vector<float> got(n);
  for (int kernel = 1; kernel <= 2; ++kernel) {
    for (int block : {32, 96, 1024}) {
      cudaCheck(cudaMemset(d_out, 0, n * sizeof(floatX)));
      gelu_forward(kernel, d_out, d_inp, B, T, C, block);
      cudaCheck(cudaDeviceSynchronize());
      cudaCheck(cudaMemcpy(out.data(), d_out, n * sizeof(floatX), cudaMemcpyDeviceToHost));
      for (int i = 0; i < n; ++i) got[i] = __bfloat162float(out[i]);
      // One bf16 rounding of a float result: 2^-9 relative, with float's own
      // error in tanhf far below it; 2^-8 leaves room for both.
      char what[64];
      std::snprintf(what, sizeof what, "gelu kernel %d, block %d", kernel, block);
      tally.check(port_check::mismatches(what, got.data(), ref.data(), n, 1.0 / 256, 1e-6) == 0,
                  what);
    }
  }
  // The check can fail: the answer against the reference of a wrong constant.
  std::vector<double> wrong(ref);
  for (int i = 0; i < n; ++i) wrong[i] *= 1.01;
  tally.check(port_check::mismatches("(expected) wrong reference", got.data(), wrong.data(), n,
                                     1.0 / 256, 1e-6) > 0,
              "a 1% wrong reference is caught");
  cudaCheck(cudaFree(d_inp));
  cudaCheck(cudaFree(d_out));
  return tally.finish("llm.c gelu_forward");
}
