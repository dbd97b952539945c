// llm.c dev/cuda/softmax_forward.cu, unedited (cooperative groups, cg::reduce,
// extern __shared__), all eight kernels driven at a small odd shape and
// checked against a float64 reference.  Its own benchmark main() is renamed,
// not run.
//
// Kernel 7 ("optimised for very large Cs") returns early in the threads with
// tid >= C, before two __syncthreads the others reach: a divergent barrier
// (and a warp shuffle with exited lanes) whenever C < blockDim.x, which
// llm.c's own main (C = 50257) never runs.  The checked shape has C = 161 >=
// every block size; `--small-c` runs kernel 7 at C = 61 with 128 threads,
// where the emulator's synccheck fails the launch (a test expects its line).
#define main llmc_softmax_forward_main
#include "../third_party/llm.c/dev/cuda/softmax_forward.cu"
#undef main

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "port_check.h"

int main(int argc, char** argv) {
  port_check::Tally tally;
  const bool small_c = argc > 1 && std::string(argv[1]) == "--small-c";
  const int N = 13, C = small_c ? 61 : 161;  // rows, columns: neither a multiple of a warp
  std::vector<float> inp = port_check::uniform(N * C, 2);
  for (int r = 0; r < N; ++r)
    inp[r * C + (r * 7) % C] *= 20.0f;  // one outlier per row, as llm.c's main
  std::vector<double> ref(N * C);
  for (int r = 0; r < N; ++r) {
    const float* x = &inp[r * C];
    const double m = *std::max_element(x, x + C);
    double sum = 0;
    for (int c = 0; c < C; ++c) sum += std::exp(x[c] - m);
    for (int c = 0; c < C; ++c) ref[r * C + c] = std::exp(x[c] - m) / sum;
  }
  float* d_inp;
  float* d_out;
  cudaCheck(cudaMalloc(&d_inp, N * C * sizeof(float)));
  cudaCheck(cudaMalloc(&d_out, N * C * sizeof(float)));
  cudaCheck(cudaMemcpy(d_inp, inp.data(), N * C * sizeof(float), cudaMemcpyHostToDevice));
  if (small_c) {
    softmax_forward(7, d_out, d_inp, N, C, 128);
    std::printf("kernel 7 at C = %d, 128 threads: %s\n", C,
                cudaGetErrorString(cudaDeviceSynchronize()));
    cudaCheck(cudaFree(d_inp));
    cudaCheck(cudaFree(d_out));
    return 0;
  }
  std::vector<float> got(N * C);
  // A float sum of C terms and a float exp: (C + 8) float epsilons relative.
  const double rel = (C + 8) * static_cast<double>(FLT_EPSILON);
  for (int kernel = 1; kernel <= 8; ++kernel) {
    for (int block : {32, 128}) {
      cudaCheck(cudaMemset(d_out, 0, N * C * sizeof(float)));
      softmax_forward(kernel, d_out, d_inp, N, C, block);
      cudaCheck(cudaDeviceSynchronize());
      cudaCheck(cudaMemcpy(got.data(), d_out, N * C * sizeof(float), cudaMemcpyDeviceToHost));
      char what[64];
      std::snprintf(what, sizeof what, "softmax kernel %d, block %d", kernel, block);
      tally.check(port_check::mismatches(what, got.data(), ref.data(), N * C, rel, 1e-12) == 0,
                  what);
    }
  }
  // The check can fail: the last answer against the reference shifted by one column.
  std::vector<double> shifted(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) shifted[i] = ref[(i + 1) % ref.size()];
  tally.check(port_check::mismatches("(expected) shifted reference", got.data(), shifted.data(),
                                     N * C, rel, 1e-12) > 0,
              "a shifted reference is caught");
  cudaCheck(cudaFree(d_inp));
  cudaCheck(cudaFree(d_out));
  return tally.finish("llm.c softmax_forward");
}
