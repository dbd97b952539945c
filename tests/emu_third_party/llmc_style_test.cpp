// llm.c dev/cuda style: a softmax forward with one warp per row, written as
// that code is (cooperative groups tiles and cg::reduce, __ldcs / __stcs
// streaming accesses, typed cudaMalloc, a cudaCheck macro, isfinite in device
// code), against a float64 reference.
#include <gtest/gtest.h>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
#include <cmath>
#include <vector>

#include "rl/cuda.hpp"
#include "third_party_style.hpp"

namespace cg = cooperative_groups;

namespace {

// out[row] = softmax(inp[row]); rows are N, each of C floats.  nonfinite
// counts outputs that are Inf or NaN (a guard such code keeps while
// debugging).
__global__ void softmax_forward_kernel(float* out, const float* inp, int N, int C, int* nonfinite) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int idx = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (idx >= N) return;
  const float* x = inp + idx * C;
  float maxval = -INFINITY;
  for (int i = warp.thread_rank(); i < C; i += warp.size()) maxval = fmaxf(maxval, __ldcs(x + i));
  maxval = cg::reduce(warp, maxval, cg::greater<float>{});
  float sumval = 0.0f;
  for (int i = warp.thread_rank(); i < C; i += warp.size()) sumval += expf(__ldcs(x + i) - maxval);
  sumval = cg::reduce(warp, sumval, cg::plus<float>{});
  for (int i = warp.thread_rank(); i < C; i += warp.size()) {
    float v = expf(__ldcs(x + i) - maxval) / sumval;
    if (!isfinite(v)) atomicAdd(nonfinite, 1);
    __stcs(out + idx * C + i, v);
  }
}

struct SoftmaxRun {
  std::vector<float> out;
  int nonfinite;
};

SoftmaxRun softmax_forward(const std::vector<float>& inp, int N, int C) {
  float* d_inp;
  float* d_out;
  int* d_nonfinite;
  cudaCheck(cudaMalloc(&d_inp, inp.size() * sizeof(float)));
  cudaCheck(cudaMalloc(&d_out, inp.size() * sizeof(float)));
  cudaCheck(cudaMalloc(&d_nonfinite, sizeof(int)));
  cudaCheck(cudaMemcpy(d_inp, inp.data(), inp.size() * sizeof(float), cudaMemcpyHostToDevice));
  cudaCheck(cudaMemset(d_nonfinite, 0, sizeof(int)));
  const int block_size = 128;  // four rows per block
  const int grid_size = (N * 32 + block_size - 1) / block_size;
  rl::launch(softmax_forward_kernel, dim3(grid_size), dim3(block_size), 0, nullptr, d_out, d_inp, N,
             C, d_nonfinite);
  cudaCheck(cudaGetLastError());
  SoftmaxRun run{std::vector<float>(inp.size()), 0};
  cudaCheck(cudaMemcpy(run.out.data(), d_out, inp.size() * sizeof(float), cudaMemcpyDeviceToHost));
  cudaCheck(cudaMemcpy(&run.nonfinite, d_nonfinite, sizeof(int), cudaMemcpyDeviceToHost));
  cudaCheck(cudaFree(d_inp));
  cudaCheck(cudaFree(d_out));
  cudaCheck(cudaFree(d_nonfinite));
  return run;
}

std::vector<double> softmax_reference(const std::vector<float>& inp, int N, int C) {
  std::vector<double> out(inp.size());
  for (int r = 0; r < N; ++r) {
    double maxval = -INFINITY;
    for (int i = 0; i < C; ++i) maxval = std::fmax(maxval, inp[r * C + i]);
    double sum = 0.0;
    for (int i = 0; i < C; ++i) sum += std::exp(inp[r * C + i] - maxval);
    for (int i = 0; i < C; ++i) out[r * C + i] = std::exp(inp[r * C + i] - maxval) / sum;
  }
  return out;
}

std::vector<float> logits(int N, int C) {
  std::vector<float> inp(static_cast<std::size_t>(N) * C);
  for (std::size_t i = 0; i < inp.size(); ++i)
    inp[i] = static_cast<float>(static_cast<int>(i * 7919 % 601) - 300) / 37.0f;
  return inp;
}

}  // namespace

// Tolerance: expf is within 2 ulp (1 here), the C-term float sum within
// C ulp of the sum, and one division: a relative 4 (C + 4) 2^-24 covers them.
TEST(LlmcStyle, SoftmaxForwardMatchesFloat64AndIsScheduleIndependent) {
  const int N = 37, C = 203;  // odd: a partial last block, a ragged last pass over C
  const std::vector<float> inp = logits(N, C);
  const auto runs =
      third_party_style::under_two_schedules([&] { return softmax_forward(inp, N, C); });
  ASSERT_TRUE(third_party_style::bitwise_equal(runs[0].out, runs[1].out));
  EXPECT_EQ(runs[0].nonfinite, 0);
  const std::vector<double> want = softmax_reference(inp, N, C);
  const std::vector<double> got(runs[0].out.begin(), runs[0].out.end());
  std::vector<double> tolerance(want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    tolerance[i] = 4.0 * (C + 4) * std::ldexp(want[i], -24);
  EXPECT_EQ(third_party_style::count_outside(got, want, tolerance), 0);
  // Negative case: the same tolerance rejects a reference off by 1e-4 relative.
  std::vector<double> perturbed = want;
  perturbed[5 * C + 17] *= 1.0 + 1e-4;
  EXPECT_EQ(third_party_style::count_outside(got, perturbed, tolerance), 1);
}

// isfinite in device code: a row holding +Inf gives NaN outputs, which the
// kernel counts; the clean input above counted none.
TEST(LlmcStyle, IsfiniteInDeviceCodeCountsNonFiniteOutputs) {
  const int N = 3, C = 40;
  std::vector<float> inp = logits(N, C);
  inp[C + 3] = INFINITY;  // row 1: max is Inf, exp(Inf - Inf) is NaN for every element
  const SoftmaxRun run = softmax_forward(inp, N, C);
  EXPECT_EQ(run.nonfinite, C);
  EXPECT_TRUE(std::isnan(run.out[C]));
  EXPECT_FALSE(std::isnan(run.out[0]));
}

// The cudaCheck macro reports a failing call with its file and line.
TEST(LlmcStyle, CudaCheckReportsTheFailingCallsErrorString) {
  try {
    cudaCheck(cudaMemcpy(nullptr, nullptr, 4, cudaMemcpyHostToDevice));
    FAIL() << "cudaCheck let an error pass";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("llmc_style_test.cpp"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("invalid argument"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}
