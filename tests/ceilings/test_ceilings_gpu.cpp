// Ceilings on a real GPU (label gpu; skipped, with the reason, without one).
// The workloads are timed here directly with CUDA events (best of a few
// launches after a warm-up), independent of the harness, so that the physical
// sanity of every roof is checked even where the harness is not built.
#include "gpu.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace rl {
namespace {

bool is_bandwidth_ceiling(const std::string& ceiling) {
  return ceiling.starts_with("hbm.") || ceiling.starts_with("l2.");
}

int device_cc() {
  int device = 0, major = 0, minor = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

// Seconds of the fastest of `reps` launches, after one warm-up launch.
double best_seconds(Workload& workload, cudaStream_t stream, int reps) {
  cudaEvent_t start = nullptr, stop = nullptr;
  RL_CUDA_CHECK(cudaEventCreate(&start));
  RL_CUDA_CHECK(cudaEventCreate(&stop));
  workload.run(stream);
  RL_CUDA_CHECK(cudaGetLastError());
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    RL_CUDA_CHECK(cudaEventRecord(start, stream));
    workload.run(stream);
    RL_CUDA_CHECK(cudaEventRecord(stop, stream));
    RL_CUDA_CHECK(cudaEventSynchronize(stop));
    RL_CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    RL_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, static_cast<double>(ms) * 1e-3);
  }
  RL_CUDA_CHECK(cudaEventDestroy(start));
  RL_CUDA_CHECK(cudaEventDestroy(stop));
  return best;
}

// Every ceiling record this device can run, validated then timed: rate per
// ceiling name (bytes/s for memory roofs, FLOP/s for compute roofs).
std::map<std::string, double> measure_ceilings() {
  std::map<std::string, double> rates;
  const int cc = device_cc();
  for (const KernelRecord& record : kernel_registry()) {
    if (record.ceiling.empty() || record.min_cc > cc) continue;
    const Shape shape = record.shapes(SizePreset::small).front();
    auto workload = record.make_workload(shape, 1234);
    const Validation validation = workload->validate(nullptr);
    EXPECT_TRUE(validation.passed) << record.name << ": " << validation.detail;
    const double seconds = best_seconds(*workload, nullptr, 5);
    const roofline::Cost cost = record.cost(shape);
    const double rate =
        (is_bandwidth_ceiling(record.ceiling) ? cost.bytes_model : cost.flops) / seconds;
    rates[record.ceiling] = std::max(rates[record.ceiling], rate);
  }
  return rates;
}

TEST(CeilingsOnGpu, every_ceiling_validates_and_measures_a_positive_finite_rate) {
  RL_REQUIRE_GPU();
  const auto rates = measure_ceilings();
  ASSERT_FALSE(rates.empty());
  for (const auto& [ceiling, rate] : rates) {
    EXPECT_GT(rate, 0.0) << ceiling;
    EXPECT_LT(rate, 1e17) << ceiling;  // 100 PB/s or PFLOP/s x 100: a timing bug
  }
}

TEST(CeilingsOnGpu, l2_read_is_faster_than_every_hbm_ceiling) {
  RL_REQUIRE_GPU();
  const auto rates = measure_ceilings();
  ASSERT_TRUE(rates.contains("l2.read"));
  for (const auto& [ceiling, rate] : rates)
    if (ceiling.starts_with("hbm.")) EXPECT_GT(rates.at("l2.read"), rate) << ceiling;
}

TEST(CeilingsOnGpu, no_ceiling_exceeds_the_derived_peak_at_the_observed_clock) {
  RL_REQUIRE_GPU();
  GTEST_SKIP() << "needs the SKU table's derived peak and NVML clock sampling during the "
                  "measurement (roofline SKU table and bench harness), not on this branch";
}

}  // namespace
}  // namespace rl
