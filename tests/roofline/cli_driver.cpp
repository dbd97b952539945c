// roofline_cli_for_tests: the `roofline` CLI with a small fixed kernel list, so
// the e2e tests exercise cli_main without the kernel registry (bench/ builds
// the real executable).  The costs follow the architecture notes' formulas.
#include "rl/roofline/cli.hpp"

#include <array>
#include <string>

namespace {

using rl::roofline::ComputeUnit;
using rl::roofline::Cost;
using rl::roofline::RegisteredKernel;
using rl::roofline::ShapeDims;

RegisteredKernel gelu(std::string name, std::string variant, std::string baseline, double passes) {
  const double n = 1 << 26;
  // GELU (tanh form): ~8 FLOP per element; naive writes and re-reads an intermediate.
  return {.name = std::move(name),
          .family = "gelu",
          .variant = std::move(variant),
          .precision = "fp32",
          .unit = ComputeUnit::fp32,
          .baseline = std::move(baseline),
          .min_cc = 0,
          .shape = {{"n", 1 << 26}},
          .cost = Cost{8 * n, 8 * n, 8 * n * passes, ComputeUnit::fp32},
          .cost_of = {}};
}

// A compute-ceiling loop as the registry lists it on a 1-SM device: 2 blocks
// of 128 threads, each thread 1000 iterations of one m16n8k32 (8192 FLOP per
// warp, so 256 per thread), writing 16 bytes per thread.
RegisteredKernel tensor_loop(std::string name, std::string precision, ComputeUnit unit, int min_cc,
                             int max_cc = 0) {
  auto cost_of = [unit](const ShapeDims& dims) {
    double threads = 1, iters = 0;
    for (const auto& [dim, extent] : dims) {
      if (dim == "blocks" || dim == "threads") threads *= static_cast<double>(extent);
      if (dim == "iters") iters = static_cast<double>(extent);
    }
    return Cost{256 * threads * iters, 16 * threads, 16 * threads, unit};
  };
  const ShapeDims shape{{"blocks", 2}, {"threads", 128}, {"iters", 1000}};
  return {.name = std::move(name),
          .family = "ceilings",
          .variant = "mma_sync",
          .precision = std::move(precision),
          .unit = unit,
          .baseline = "",
          .min_cc = min_cc,
          .max_cc = max_cc,
          .shape = shape,
          .cost = cost_of(shape),
          .cost_of = cost_of};
}

}  // namespace

int main(int argc, char** argv) {
  const double m = 8192, n = 8192, k = 8192;
  const double gemm_bytes = 2 * (m * k + k * n + m * n);
  const std::array<RegisteredKernel, 7> kernels{
      gelu("gelu_tanh_f32_naive", "naive", "", 3),
      gelu("gelu_tanh_f32_fused", "fused", "gelu_tanh_f32_naive", 1),
      RegisteredKernel{.name = "gemm_bf16_tc",
                       .family = "gemm",
                       .variant = "tc",
                       .precision = "bf16",
                       .unit = ComputeUnit::tc_bf16,
                       .baseline = "",
                       .min_cc = 0,
                       .shape = {{"M", 8192}, {"N", 8192}, {"K", 8192}},
                       .cost = Cost{2 * m * n * k, gemm_bytes, gemm_bytes, ComputeUnit::tc_bf16},
                       .cost_of = {}},
      RegisteredKernel{.name = "hbm_copy_vec16",
                       .family = "ceilings",
                       .variant = "vec16",
                       .precision = "fp32",
                       .unit = ComputeUnit::fp32,
                       .baseline = "",
                       .min_cc = 0,
                       .shape = {{"n", 1 << 28}},
                       .cost = Cost{0, 8.0 * (1 << 28), 8.0 * (1 << 28), ComputeUnit::fp32},
                       .cost_of = {}},
      tensor_loop("mma_sync_loop_bf16", "bf16", ComputeUnit::tc_bf16, 80),
      tensor_loop("mma_sync_loop_fp8_e4m3", "fp8", ComputeUnit::tc_fp8, 89),
      // sm_90a-only code: compute capability 9.0 and nothing newer.
      tensor_loop("wgmma_loop_bf16", "bf16", ComputeUnit::tc_bf16, 90, 90),
  };
  return rl::roofline::cli_main(argc, argv, kernels, /*sm_count_listed=*/1,
                                "roofline (test driver) 0.0.0\n");
}
