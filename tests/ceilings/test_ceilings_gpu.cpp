// Ceilings on a real GPU (label gpu; skipped, with the reason, without one).
// The workloads are timed here directly with CUDA events (best of a few
// launches after a warm-up), independent of the harness, so that the physical
// sanity of every roof is checked even where the harness is not built.
#include "gpu.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/sku.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rl {
namespace {

bool is_bandwidth_ceiling(const std::string& ceiling) {
  return ceiling.starts_with("hbm.") || ceiling.starts_with("l2.") || ceiling.starts_with("smem.");
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
    if (record.ceiling.empty() || record.min_cc > cc || (record.max_cc != 0 && cc > record.max_cc))
      continue;
    // fp8 mma.sync is emulated by the compiler on sm_90 and sm_100: the workload
    // refuses it there (rl::ptx::fp8_mma_sync_is_native).
    if (record.name == "mma_sync_loop_fp8_e4m3" && (cc / 10 == 9 || cc / 10 == 10)) continue;
    // A roof that throws (a library answering NOT_SUPPORTED, say) fails the
    // test by name; the others are still measured, so one bad roof does not
    // hide what the rest of the checks would say.
    try {
      const Shape shape = record.shapes(SizePreset::small).front();
      auto workload = record.make_workload(shape, 1234);
      const Validation validation = workload->validate(nullptr);
      EXPECT_TRUE(validation.passed) << record.name << ": " << validation.detail;
      const double seconds = best_seconds(*workload, nullptr, 5);
      const roofline::Cost cost = record.cost(shape);
      const double rate =
          (is_bandwidth_ceiling(record.ceiling) ? cost.bytes_model : cost.flops) / seconds;
      rates[record.ceiling] = std::max(rates[record.ceiling], rate);
    } catch (const std::exception& e) {
      ADD_FAILURE() << record.name << " threw: " << e.what();
    }
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
  for (const auto& [ceiling, rate] : rates) {
    if (ceiling.starts_with("hbm.")) {
      EXPECT_GT(rates.at("l2.read"), rate) << ceiling;
    }
  }
}

// The current device's maximum SM clock (kHz) and SM count.
std::pair<int, int> max_clock_khz_and_sms() {
  int device = 0, clock_khz = 0, sms = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return {clock_khz, sms};
}

// Shared memory serves 32 banks of 4 bytes a clock per SM (the CUDA C++
// Programming Guide's shared-memory section): at the maximum SM clock that
// bounds smem.read from above, and L2, shared by all SMs, from below.
TEST(CeilingsOnGpu, smem_read_lies_between_l2_read_and_32_banks_a_clock) {
  RL_REQUIRE_GPU();
  const auto [clock_khz, sms] = max_clock_khz_and_sms();
  const auto rates = measure_ceilings();
  ASSERT_TRUE(rates.contains("smem.read") && rates.contains("l2.read"));
  EXPECT_GT(rates.at("smem.read"), rates.at("l2.read"));
  EXPECT_LE(rates.at("smem.read"), 1.05 * sms * 32 * 4 * clock_khz * 1e3);
}

// The issue asks for "<= 1.05 x derived peak at the observed clock"; the SM
// clock is sampled by the harness (NVML), not here, so this test bounds by the
// device's maximum SM clock instead: a looser bound (observed <= maximum) that
// still catches a wrong FLOP count or a broken timer.
TEST(CeilingsOnGpu, no_ceiling_exceeds_its_physical_peak_at_the_maximum_clock) {
  RL_REQUIRE_GPU();
  const auto [clock_khz, sms] = max_clock_khz_and_sms();
  int device = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  RL_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  roofline::DeviceInfo info;
  info.name = prop.name;
  info.sm_count = sms;
  info.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  const roofline::SkuMatch match = roofline::match_sku(info);

  for (const auto& [ceiling, rate] : measure_ceilings()) {
    if (ceiling.starts_with("hbm.")) {
      if (match.sku != nullptr) {
        EXPECT_LE(rate, 1.05 * match.sku->memory_bytes_per_s) << ceiling << " vs datasheet";
      }
      continue;
    }
    const auto unit = roofline::parse_compute_unit(ceiling);
    if (!unit.has_value()) continue;  // l2.read: no published or derivable figure
    const auto peak = roofline::derived_peak_for_device(info, match.sku, *unit, clock_khz / 1e3);
    if (!peak.has_value()) continue;
    EXPECT_LE(rate, 1.05 * *peak) << ceiling << " at " << clock_khz / 1e3 << " MHz";
  }
}

}  // namespace
}  // namespace rl
