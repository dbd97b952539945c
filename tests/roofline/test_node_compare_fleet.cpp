// `roofline compare` and `roofline fleet` on node roofs (issue 29 item 5),
// from the NVML-shaped 8xH100 fixture (a test input, not a measurement) and
// the same run with the GPU3 <-> GPU5 pair slowed.
#include "rl/roofline/compare.hpp"
#include "rl/roofline/fleet.hpp"
#include "rl/roofline/results_io.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace rl::roofline {
namespace {

bool is_pair(const KernelResult& k, const std::string& name, int src, int dst) {
  return k.name == name && k.shape.size() >= 2 && k.shape[0].second == src &&
         k.shape[1].second == dst;
}

// The fixture with 11 samples per node kernel (a 2% spread around the median, enough for the U
// test to decide), and the 3 <-> 5 bidirectional copy at `pair_speed` of it.
Results h100_node_run(double pair_speed) {
  Results r =
      load_results(std::string(RL_ROOFLINE_TEST_DATA) + "/../fixtures/node_h100x8_nvml.json");
  for (auto& k : r.kernels) {
    const double scale = is_pair(k, "node_peer_ce_bidir", 3, 5) ? 1 / pair_speed : 1.0;
    TimeStats& t = *k.time_s;
    t.samples.clear();
    for (int i = 0; i <= 10; ++i) t.samples.push_back(t.median * scale * (1 + 0.002 * (i - 5)));
    t.median *= scale;
    t.min = *std::min_element(t.samples.begin(), t.samples.end());
    t.max = *std::max_element(t.samples.begin(), t.samples.end());
    t.repetitions = 11;
    k.achieved_bytes_per_s = k.bytes_model / t.median;
  }
  return r;
}

TEST(NodeCompare, compare_matches_node_records_by_name_and_src_dst_and_flags_the_slow_pair) {
  const Comparison c = compare_results(h100_node_run(1.0), h100_node_run(0.4), CompareOptions{});
  int slow = 0;
  for (const auto& k : c.kernels) {
    if (k.verdict != Verdict::slow) continue;
    ++slow;
    EXPECT_EQ(k.name, "node_peer_ce_bidir");
    EXPECT_EQ(k.shape, "src=3,dst=5,bytes=268435456");
  }
  EXPECT_EQ(slow, 1);
  EXPECT_EQ(c.exit_status(), GateExit::fail);
  // Every node record and shape of the run was matched, none left over.
  EXPECT_EQ(c.kernels.size(), h100_node_run(1.0).kernels.size());
  EXPECT_TRUE(c.failures.empty());
}

FleetRun run_of(Results r) {
  FleetRun run;
  run.host = "node0";
  run.uuid = r.context.device.uuid;
  run.folder = run.host;
  run.source = "node0/results.json";
  run.results = std::move(r);
  return run;
}

TEST(NodeFleet, a_slow_nvlink_pair_is_an_outlier_named_with_its_peer) {
  const FleetReport ok = analyse_fleet({run_of(h100_node_run(1.0))}, FleetOptions{});
  EXPECT_TRUE(ok.outliers.empty());
  const FleetReport slow = analyse_fleet({run_of(h100_node_run(0.4))}, FleetOptions{});
  ASSERT_EQ(slow.outliers.size(), 1u);
  const FleetOutlier& o = slow.outliers[0];
  EXPECT_EQ(o.kind, "node link");
  EXPECT_EQ(o.metric, "node_peer_ce_bidir [src=3,dst=5]");
  EXPECT_NE(o.reason.find("GPU3 (00000000:48:00.0) with its peer GPU5 (00000000:68:00.0)"),
            std::string::npos)
      << o.reason;
  EXPECT_NE(o.reason.find("NVLink 4, 18 links"), std::string::npos) << o.reason;
  EXPECT_EQ(slow.exit_status(), 1);
}

// GPU3 <-> GPU5 trained 17 of 18 NVLinks and carries 17/18 of its
// siblings' rate: not slow per link, but a link is down.
TEST(NodeFleet, an_nvlink_pair_with_a_link_down_is_an_outlier) {
  Results r = h100_node_run(17.0 / 18);
  for (auto& p : r.context.topology->pairs)
    if ((p.a == 3 && p.b == 5) || (p.a == 5 && p.b == 3)) p.nvlink_count = 17;
  const FleetReport fleet = analyse_fleet({run_of(std::move(r))}, FleetOptions{});
  ASSERT_EQ(fleet.outliers.size(), 1u);
  const FleetOutlier& o = fleet.outliers[0];
  EXPECT_EQ(o.kind, "node link");
  EXPECT_EQ(o.unit, "NVLinks");
  EXPECT_NE(o.reason.find("GPU3 (00000000:48:00.0) with its peer GPU5 (00000000:68:00.0): 17 of "
                          "the node's usual 18 NVLinks (a link down)"),
            std::string::npos)
      << o.reason;
  EXPECT_EQ(fleet.exit_status(), 1);
}

TEST(NodeFleet, an_emulated_run_is_never_a_link_outlier) {
  Results r = h100_node_run(0.4);
  r.context.backend = Backend::emulator;
  EXPECT_TRUE(analyse_fleet({run_of(std::move(r))}, FleetOptions{}).outliers.empty());
}

}  // namespace
}  // namespace rl::roofline
