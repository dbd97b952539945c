// roofline_cli_for_tests: the `roofline` CLI with a small fixed kernel list, so
// the e2e tests exercise cli_main without the kernel registry (bench/ builds
// the real executable).  The costs follow the architecture notes' formulas.
#include "rl/roofline/cli.hpp"

#include <array>

namespace {

using rl::roofline::ComputeUnit;
using rl::roofline::Cost;
using rl::roofline::RegisteredKernel;

RegisteredKernel gelu(std::string name, std::string variant, std::string baseline, double passes) {
  const double n = 1 << 26;
  // GELU (tanh form): ~8 FLOP per element; naive writes and re-reads an intermediate.
  return {std::move(name),    "gelu",
          std::move(variant), "fp32",
          ComputeUnit::fp32,  std::move(baseline),
          {{"n", 1 << 26}},   Cost{8 * n, 8 * n, 8 * n * passes, ComputeUnit::fp32}};
}

}  // namespace

int main(int argc, char** argv) {
  const double m = 8192, n = 8192, k = 8192;
  const std::array<RegisteredKernel, 4> kernels{
      gelu("gelu_tanh_f32_naive", "naive", "", 3),
      gelu("gelu_tanh_f32_fused", "fused", "gelu_tanh_f32_naive", 1),
      RegisteredKernel{"gemm_bf16_tc",
                       "gemm",
                       "tc",
                       "bf16",
                       ComputeUnit::tc_bf16,
                       "",
                       {{"m", 8192}, {"n", 8192}, {"k", 8192}},
                       Cost{2 * m * n * k, 2 * (m * k + k * n + m * n), 2 * (m * k + k * n + m * n),
                            ComputeUnit::tc_bf16}},
      RegisteredKernel{"hbm_copy_vec16",
                       "ceilings",
                       "vec16",
                       "fp32",
                       ComputeUnit::fp32,
                       "",
                       {{"n", 1 << 28}},
                       Cost{0, 8.0 * (1 << 28), 8.0 * (1 << 28), ComputeUnit::fp32}},
  };
  return rl::roofline::cli_main(argc, argv, kernels);
}
