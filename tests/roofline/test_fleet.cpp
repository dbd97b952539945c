// roofline fleet: the outlier rule, failed GPUs, drift, the fleet folder
// reader, and the per-GPU gate of --baseline.  Every run is the test fixture
// (emulator context, fixture numbers, never GPU data) given a host and a uuid.
#include "fixtures.hpp"
#include "rl/roofline/fleet.hpp"
#include "rl/roofline/results_io.hpp"
#include "scratch_dir.hpp"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rl::roofline {
namespace {

// GPU i of a fleet: the fixture's timed kernels (the failed one dropped), its
// ceilings and kernel rates multiplied by `scale`.
FleetRun gpu(int i, double scale = 1.0, double ceiling_scale = -1) {
  Results r = testing::emulator_fixture();
  std::erase_if(r.kernels, [](const KernelResult& k) { return k.status != Status::ok; });
  r.context.host = "node" + std::to_string(i);
  r.context.device.uuid = "GPU-" + std::to_string(i);
  for (auto& c : r.ceilings) c.value *= ceiling_scale < 0 ? scale : ceiling_scale;
  for (auto& k : r.kernels) {
    k.achieved_flops_per_s *= scale;
    k.achieved_bytes_per_s *= scale;
  }
  FleetRun run;
  run.host = r.context.host;
  run.uuid = r.context.device.uuid;
  run.folder = run.host;
  run.source = run.host + "/results.json";
  run.results = std::move(r);
  return run;
}

std::vector<FleetRun> fleet(const std::vector<double>& scales) {
  std::vector<FleetRun> runs;
  for (std::size_t i = 0; i < scales.size(); ++i)
    runs.push_back(gpu(static_cast<int>(i), scales[i]));
  return runs;
}

std::vector<std::string> outlier_gpus(const FleetReport& r) {
  std::vector<std::string> out;
  for (const auto& o : r.outliers)
    if (out.empty() || out.back() != r.runs[o.run].label()) out.push_back(r.runs[o.run].label());
  return out;
}

TEST(Fleet, HealthyFleetWithinTheThresholdFlagsNothing) {
  FleetReport r = analyse_fleet(fleet({1.0, 0.99, 1.01, 0.97, 1.02, 0.985, 1.0, 0.96}), {});
  EXPECT_TRUE(r.outliers.empty());
  EXPECT_TRUE(r.failed().empty());
  EXPECT_EQ(r.exit_status(), 0);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_TRUE(r.groups[0].judged);
  EXPECT_EQ(r.groups[0].ceilings.size(), 4u);
  EXPECT_EQ(r.groups[0].kernels.size(), 3u);  // the timed kernels, each with its shape
}

TEST(Fleet, GpuBelowTheMedianByMoreThanTheThresholdIsTheOnlyOutlierWithItsReason) {
  std::vector<FleetRun> runs = fleet({1, 1, 1, 1, 1, 1});
  runs[4] = gpu(4, 1.0, 0.902);  // its roofs at 90.2%, its kernels unchanged
  FleetReport r = analyse_fleet(std::move(runs), {});
  EXPECT_EQ(outlier_gpus(r), std::vector<std::string>{"node4 GPU-4"});
  ASSERT_EQ(r.outliers.size(), 4u);  // every ceiling, no kernel
  EXPECT_EQ(r.outliers[0].reason,
            "hbm.copy 1.8 GB/s, 9.8% below the fleet median 2 GB/s (limit 5%)");
  EXPECT_EQ(r.exit_status(), 1);
}

TEST(Fleet, JustInsideTheLimitIsNotAnOutlierJustOutsideIs) {
  std::vector<FleetRun> runs = fleet({1, 1, 1, 1, 1});
  runs[2] = gpu(2, 1.0, 0.9501);
  EXPECT_TRUE(analyse_fleet(runs, {}).outliers.empty());
  runs[2] = gpu(2, 1.0, 0.9499);
  EXPECT_EQ(outlier_gpus(analyse_fleet(runs, {})), std::vector<std::string>{"node2 GPU-2"});
}

TEST(Fleet, SpreadTermWidensTheLimitOfANoisyMetric) {
  // Ceilings spread by about 10% (robust spread ~7.4%): 3 x spread > 20%, so a
  // GPU 20% below is within the fleet's own variation; k = 0 leaves the 5% floor.
  std::vector<double> scales{1.0, 1.1, 0.9, 1.05, 0.95, 1.1, 0.9, 0.8};
  FleetReport wide = analyse_fleet(fleet(scales), {});
  EXPECT_GT(wide.groups[0].ceilings[0].limit, 0.2);
  EXPECT_TRUE(wide.outliers.empty());
  FleetOptions floor_only;
  floor_only.spread_k = 0;
  FleetReport narrow = analyse_fleet(fleet(scales), floor_only);
  EXPECT_DOUBLE_EQ(narrow.groups[0].ceilings[0].limit, 0.05);
  EXPECT_EQ(outlier_gpus(narrow),
            (std::vector<std::string>{"node2 GPU-2", "node6 GPU-6", "node7 GPU-7"}));
}

TEST(Fleet, TheMedianAndSpreadAreNotMovedByTheOutlierTheyHunt) {
  // One GPU at a tenth of the others: the median stays 1 x, the spread 0.
  FleetReport r = analyse_fleet(fleet({1, 1, 1, 1, 0.1}), {});
  EXPECT_DOUBLE_EQ(r.groups[0].ceilings[0].median, 2.0e9);
  EXPECT_DOUBLE_EQ(r.groups[0].ceilings[0].spread, 0);
  EXPECT_EQ(outlier_gpus(r), std::vector<std::string>{"node4 GPU-4"});
}

TEST(Fleet, AFasterGpuIsNeverAnOutlier) {
  FleetReport r = analyse_fleet(fleet({1, 1, 1, 1, 1.5}), {});
  EXPECT_TRUE(r.outliers.empty());
  EXPECT_EQ(r.exit_status(), 0);
}

TEST(Fleet, FewerThanMinGpusOfAModelAreNotJudgedAndNothingJudgedIsExit3) {
  FleetReport r = analyse_fleet(fleet({1, 0.5}), {});
  EXPECT_FALSE(r.groups[0].judged);
  EXPECT_TRUE(r.outliers.empty());
  EXPECT_EQ(r.exit_status(), 3);
  FleetOptions two;
  two.min_gpus = 2;
  two.spread_k = 0;  // two values: the spread is half their distance
  EXPECT_EQ(analyse_fleet(fleet({1, 0.5}), two).exit_status(), 1);
}

TEST(Fleet, ModelsAreJudgedApart) {
  // Three GPUs of another model at half the rate: no outlier in either group.
  std::vector<FleetRun> runs = fleet({1, 1, 1});
  for (int i = 3; i < 6; ++i) {
    FleetRun other = gpu(i, 0.5);
    other.results->context.device.name = "another model (fixture)";
    runs.push_back(std::move(other));
  }
  FleetReport r = analyse_fleet(std::move(runs), {});
  EXPECT_EQ(r.groups.size(), 2u);
  EXPECT_TRUE(r.outliers.empty());
}

TEST(Fleet, FailedValidationIncompleteRunOrMarkerFailsTheGpu) {
  std::vector<FleetRun> runs = fleet({1, 1, 1, 1});
  runs[1].kernel_failures = {"gelu_tanh_f32_naive [n=1048576] failed validation"};
  runs[2].task_failures = {"run incomplete (interrupted by SIGTERM)"};
  FleetRun marker;
  marker.host = "node9";
  marker.folder = "node9_unknown-gpu-task9";
  marker.task_failures = {"task 9: no results.json: no CUDA device (exit 2)"};
  runs.push_back(marker);
  FleetReport r = analyse_fleet(std::move(runs), {});
  EXPECT_EQ(r.failed(), (std::vector<std::size_t>{1, 2, 4}));
  EXPECT_EQ(r.exit_status(), 1);
  EXPECT_EQ(r.runs[4].label(), "node9 (no uuid) node9_unknown-gpu-task9");
  EXPECT_EQ(r.groups[0].runs.size(), 4u);  // the marker has no results to group
}

TEST(Fleet, ExpectedGpusWithoutARunFail) {
  FleetOptions o;
  o.expect = 5;
  FleetReport r = analyse_fleet(fleet({1, 1, 1, 1}), o);
  EXPECT_EQ(r.missing, 1);
  EXPECT_EQ(r.exit_status(), 1);
  o.expect = 4;
  EXPECT_EQ(analyse_fleet(fleet({1, 1, 1, 1}), o).exit_status(), 0);
}

TEST(Fleet, DriftNamesTheGpusWithAnotherDriverOrEccOff) {
  std::vector<FleetRun> runs = fleet({1, 1, 1, 1});
  for (auto& run : runs) {
    run.results->context.driver_version = "550.54.15";
    run.results->context.ecc_enabled = true;
  }
  runs[3].results->context.driver_version = "535.104.05";
  runs[3].results->context.ecc_enabled = false;
  FleetReport r = analyse_fleet(std::move(runs), {});
  ASSERT_EQ(r.groups[0].drift.size(), 2u);
  const FleetDrift& driver = r.groups[0].drift[0];
  EXPECT_EQ(driver.field, "driver");
  EXPECT_EQ(driver.values[0].first, "550.54.15");
  EXPECT_EQ(driver.values[0].second.size(), 3u);
  EXPECT_EQ(driver.values[1].first, "535.104.05");
  EXPECT_EQ(driver.values[1].second, std::vector<std::size_t>{3});
  EXPECT_EQ(r.groups[0].drift[1].field, "ECC");
  EXPECT_EQ(r.exit_status(), 0);  // drift is listed, not judged
}

TEST(Fleet, HtmlHasAPointPerGpuPerCeilingAndNamesTheOutlierWithoutExternalResources) {
  std::vector<FleetRun> runs = fleet({1, 1, 1, 1, 1});
  runs[0] = gpu(0, 1.0, 0.5);
  const std::string html = fleet_html(analyse_fleet(std::move(runs), {}));
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = html.find(needle); pos != std::string::npos; pos = html.find(needle, pos + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("<circle class=\"gpu-point"), 4u * 5u);
  EXPECT_EQ(count("<circle class=\"gpu-point outlier\""), 4u);
  EXPECT_EQ(count(">node0 GPU-0</text>"), 4u);
  EXPECT_EQ(count("<script"), 0u);
  // Nothing fetched: no link, image, stylesheet or font (the SVG namespace is a name).
  EXPECT_EQ(count("href="), 0u);
  EXPECT_EQ(count("src="), 0u);
  EXPECT_EQ(count("url("), 0u);
  EXPECT_EQ(count("@import"), 0u);
}

TEST(FleetLoad, ReadsRunsAndMarkersAtAnyDepthAndRefusesBadInput) {
  test::ScratchDir dir("fleet_load");
  const auto root = dir.path() / "fleet";
  std::filesystem::create_directories(root / "rack1" / "a");
  std::filesystem::create_directories(root / "rack2" / "b");
  std::filesystem::create_directories(root / "rack2" / "dead");
  write_results_atomic(root / "rack1" / "a" / "results.json", *gpu(1).results);
  write_results_atomic(root / "rack2" / "b" / "results.json", *gpu(2).results);
  std::ofstream(root / "rack2" / "dead" / "task-failed.txt")
      << "host=node7\nuuid=GPU-7\ntask=7\nexit_status=134\nreason=Aborted\n";
  const std::vector<std::filesystem::path> roots{root};
  std::vector<FleetRun> runs = load_fleet(roots);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].label(), "node1 GPU-1");
  EXPECT_EQ(runs[0].folder, "rack1/a");
  EXPECT_EQ(runs[2].label(), "node7 GPU-7");
  EXPECT_FALSE(runs[2].results);
  EXPECT_EQ(runs[2].task_failures, std::vector<std::string>{"task 7: Aborted (exit 134)"});

  std::filesystem::create_directories(dir.path() / "empty" / "sub");
  const std::vector<std::filesystem::path> empty{dir.path() / "empty"};
  EXPECT_THROW(load_fleet(empty), FleetInputError);
  const std::vector<std::filesystem::path> missing{dir.path() / "nowhere"};
  EXPECT_THROW(load_fleet(missing), FleetInputError);
  // The same GPU twice (its results copied into another folder).
  std::filesystem::create_directories(root / "rack3");
  write_results_atomic(root / "rack3" / "results.json", *gpu(1).results);
  EXPECT_THROW(load_fleet(roots), FleetInputError);
}

// --baseline: each GPU's runs through compare's gate.
FleetRun timed_gpu(int i, double time_scale) {
  FleetRun run = gpu(i);
  for (auto& k : run.results->kernels) {
    std::vector<double> samples;
    for (int s = 0; s < 10; ++s) samples.push_back(1e-3 * time_scale * (1 + 0.001 * (s % 5 - 2)));
    k = testing::kernel_with_samples(k.name, samples);
  }
  return run;
}

TEST(FleetBaseline, OneSlowGpuIsLocalEverySlowGpuIsFleetWide) {
  std::vector<FleetRun> before, after;
  for (int i = 0; i < 5; ++i) {
    before.push_back(timed_gpu(i, 1.0));
    after.push_back(timed_gpu(i, i == 3 ? 1.1 : 1.0));
  }
  FleetBaselineReport local = compare_fleets(before, after, {}, "BEFORE", "AFTER");
  EXPECT_EQ(local.exit_status(), GateExit::fail);
  ASSERT_EQ(local.regressions.size(), 3u);
  for (const auto& reg : local.regressions) {
    EXPECT_FALSE(reg.fleet_wide());
    EXPECT_EQ(reg.slow, std::vector<std::size_t>{3});
    EXPECT_EQ(reg.compared, 5);
  }
  EXPECT_EQ(local.gpus[3].exit_status(), GateExit::fail);
  EXPECT_EQ(local.gpus[0].exit_status(), GateExit::pass);

  for (int i = 0; i < 5; ++i) after[static_cast<std::size_t>(i)] = timed_gpu(i, 1.1);
  FleetBaselineReport wide = compare_fleets(before, after, {}, "BEFORE", "AFTER");
  ASSERT_EQ(wide.regressions.size(), 3u);
  EXPECT_TRUE(wide.regressions[0].fleet_wide());
  EXPECT_NEAR(wide.regressions[0].median_ratio, 1.1, 1e-9);
}

TEST(FleetBaseline, UnmatchedGpusAreListedAndAGpuMissingAfterFailsTheGate) {
  std::vector<FleetRun> before{timed_gpu(0, 1), timed_gpu(1, 1), timed_gpu(2, 1)};
  std::vector<FleetRun> after{timed_gpu(0, 1), timed_gpu(1, 1), timed_gpu(5, 1)};
  FleetBaselineReport r = compare_fleets(before, after, {}, "BEFORE", "AFTER");
  EXPECT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.only_before, std::vector<std::size_t>{2});
  EXPECT_EQ(r.only_after, std::vector<std::size_t>{2});
  EXPECT_EQ(r.exit_status(), GateExit::fail);
  after[2] = timed_gpu(2, 1);
  EXPECT_EQ(compare_fleets(before, after, {}, "BEFORE", "AFTER").exit_status(), GateExit::pass);
}

TEST(FleetBaseline, AFailureMarkerAfterTheUpgradeFailsThatGpu) {
  std::vector<FleetRun> before{timed_gpu(0, 1), timed_gpu(1, 1)};
  std::vector<FleetRun> after{timed_gpu(0, 1), FleetRun{}};
  after[1].host = "node1";
  after[1].uuid = "GPU-1";
  after[1].task_failures = {"task 1: no results.json: no CUDA device (exit 2)"};
  FleetBaselineReport r = compare_fleets(before, after, {}, "BEFORE", "AFTER");
  EXPECT_EQ(r.gpus[1].exit_status(), GateExit::fail);
  EXPECT_EQ(r.gpus[0].exit_status(), GateExit::pass);
  EXPECT_EQ(r.exit_status(), GateExit::fail);
}

}  // namespace
}  // namespace rl::roofline
