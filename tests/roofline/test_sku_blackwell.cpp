// Blackwell's compute units (tc.fp6, tc.fp4 and the block-scaled tc.mxfp8,
// tc.mxfp6, tc.mxfp4, tc.nvfp4) and datasheet rows: their spellings, their
// round trip through results.json and its schema, `roofline skus` and
// `roofline model --sku`.
#include "rl/roofline/cli.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/sku.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rl::roofline {
namespace {

struct Spelling {
  ComputeUnit unit;
  const char* unit_name;
  const char* ceiling_name;
};

// The names other code (records, emulator, reports) uses: changing one is a
// results.json format change.
constexpr Spelling kBlackwellUnits[] = {
    {ComputeUnit::tc_fp6, "tc_fp6", "tc.fp6"},
    {ComputeUnit::tc_fp4, "tc_fp4", "tc.fp4"},
    {ComputeUnit::tc_mxfp8, "tc_mxfp8", "tc.mxfp8"},
    {ComputeUnit::tc_mxfp6, "tc_mxfp6", "tc.mxfp6"},
    {ComputeUnit::tc_mxfp4, "tc_mxfp4", "tc.mxfp4"},
    {ComputeUnit::tc_nvfp4, "tc_nvfp4", "tc.nvfp4"},
};

const char* const kBlackwellRows[] = {
    "b200",     "gb200", "b300", "gb300", "rtx-5090", "rtx-pro-6000-ws", "rtx-pro-6000-server",
    "dgx-spark"};

TEST(BlackwellUnits, are_spelled_once_and_parse_from_either_spelling) {
  for (const auto& s : kBlackwellUnits) {
    EXPECT_EQ(compute_unit_name(s.unit), s.unit_name);
    EXPECT_EQ(compute_ceiling_name(s.unit), s.ceiling_name);
    EXPECT_EQ(parse_compute_unit(s.unit_name), s.unit) << s.unit_name;
    EXPECT_EQ(parse_compute_unit(s.ceiling_name), s.unit) << s.ceiling_name;
  }
  std::set<std::string_view> names;
  for (ComputeUnit u : all_compute_units()) {
    EXPECT_TRUE(names.insert(compute_unit_name(u)).second) << compute_unit_name(u);
    EXPECT_TRUE(names.insert(compute_ceiling_name(u)).second) << compute_ceiling_name(u);
  }
  EXPECT_EQ(names.size(), 2 * kComputeUnitCount);
}

TEST(BlackwellUnits, round_trip_through_results_json) {
  Results in = testing::emulator_fixture();
  const KernelResult model = in.kernels.front();
  for (const auto& s : kBlackwellUnits) {
    KernelResult k = model;
    k.name = std::string("tcgen05_loop_") + s.unit_name;
    k.unit = s.unit;
    in.kernels.push_back(k);
    Ceiling c;
    c.name = s.ceiling_name;
    c.kind = "compute";
    c.value = 1e15;
    c.unit = "FLOP/s";
    c.method = "fixture";
    in.ceilings.push_back(c);
  }
  const std::string text = results_to_text(in);
  const Results out = parse_results(text, "blackwell-units.json");
  std::map<std::string, ComputeUnit> units;
  for (const auto& k : out.kernels) units[k.name] = k.unit;
  for (const auto& s : kBlackwellUnits) {
    const std::string name = std::string("tcgen05_loop_") + s.unit_name;
    ASSERT_TRUE(units.contains(name)) << name;
    EXPECT_EQ(units[name], s.unit) << name;
    EXPECT_NE(text.find(std::string("\"unit\": \"") + s.unit_name + "\""), std::string::npos);
    EXPECT_NE(text.find(std::string("\"name\": \"") + s.ceiling_name + "\""), std::string::npos);
  }
  EXPECT_EQ(results_to_text(out), text);
}

TEST(BlackwellUnits, results_schema_accepts_both_spellings_of_every_unit) {
  std::ifstream file(std::string(RL_ROOFLINE_TEST_DATA) + "/../../../results/schema-v1.json");
  ASSERT_TRUE(file) << "results/schema-v1.json not found";
  const auto schema = nlohmann::json::parse(file);
  std::set<std::string> allowed;
  for (const auto& v : schema["$defs"]["kernel"]["properties"]["unit"]["enum"])
    allowed.insert(v.get<std::string>());
  for (ComputeUnit u : all_compute_units()) {
    EXPECT_TRUE(allowed.contains(std::string(compute_unit_name(u)))) << compute_unit_name(u);
    EXPECT_TRUE(allowed.contains(std::string(compute_ceiling_name(u)))) << compute_ceiling_name(u);
  }
}

// The `roofline` CLI's standard output for these arguments (no kernels registered).
std::string cli_output(std::vector<std::string> args) {
  args.insert(args.begin(), "roofline");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  const int rc = cli_main(static_cast<int>(argv.size()), argv.data(), {});
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << out;
  return out;
}

TEST(BlackwellSkus, skus_lists_every_blackwell_row_and_a_column_per_unit) {
  const std::string out = cli_output({"skus"});
  const std::size_t header_start = out.find('\n') + 1;
  const std::string header = out.substr(header_start, out.find('\n', header_start) - header_start);
  for (ComputeUnit u : all_compute_units()) {
    const std::string_view c = compute_ceiling_name(u);
    const std::string label(c.starts_with("tc.") ? c : compute_unit_name(u));
    EXPECT_NE(header.find(" " + label), std::string::npos) << label << " column missing";
  }
  for (const char* key : kBlackwellRows) {
    EXPECT_NE(out.find(std::string("\n") + key + " "), std::string::npos) << key << " row";
    EXPECT_NE(out.find(std::string("\n  ") + key + ": "), std::string::npos) << key << " source";
  }
}

// Every unit the row has a datasheet figure for gets a ridge point against
// its memory bandwidth, in `roofline model --sku KEY --json`.
TEST(BlackwellSkus, model_shows_a_ridge_point_for_every_datasheet_precision) {
  for (const char* key : kBlackwellRows) {
    const Sku* sku = find_sku(key);
    ASSERT_NE(sku, nullptr) << key;
    const auto model = nlohmann::json::parse(cli_output({"model", "--sku", key, "--json"}));
    std::map<std::string, double> ridge;
    for (const auto& r : model["ridge_points"])
      ridge[r["compute"].get<std::string>()] = r["flop_per_byte"].get<double>();
    int block_scaled = 0;
    for (ComputeUnit u : all_compute_units()) {
      const std::string name(compute_ceiling_name(u));
      const auto peak = sku->datasheet[u];
      ASSERT_EQ(ridge.contains(name), peak.has_value()) << key << " " << name;
      if (!peak) continue;
      EXPECT_NEAR(ridge[name], *peak / sku->memory_bytes_per_s, 1e-9 * ridge[name])
          << key << " " << name;
      block_scaled += u == ComputeUnit::tc_nvfp4 || u == ComputeUnit::tc_mxfp4;
    }
    EXPECT_EQ(block_scaled, 2) << key << ": every Blackwell row has its FP4 figure";
  }
}

TEST(BlackwellSkus, b200_model_has_every_blackwell_precision_but_unscaled_fp4) {
  const auto model = nlohmann::json::parse(cli_output({"model", "--sku", "b200", "--json"}));
  std::map<std::string, double> ridge;
  for (const auto& r : model["ridge_points"])
    ridge[r["compute"].get<std::string>()] = r["flop_per_byte"].get<double>();
  // 4.5 PFLOP/s FP8/FP6 and 9 PFLOP/s FP4 against 8 TB/s.
  for (const char* unit : {"tc.fp8", "tc.fp6", "tc.mxfp8", "tc.mxfp6"})
    EXPECT_NEAR(ridge[unit], 4.5e15 / 8e12, 1e-9) << unit;
  for (const char* unit : {"tc.mxfp4", "tc.nvfp4"}) EXPECT_NEAR(ridge[unit], 9e15 / 8e12, 1e-9);
  EXPECT_FALSE(ridge.contains("tc.fp4")) << "no document gives unscaled FP4's rate";
  const std::string text = cli_output({"model", "--sku", "b200"});
  for (const char* unit : {"tc.fp6", "tc.mxfp8", "tc.mxfp6", "tc.mxfp4", "tc.nvfp4"})
    EXPECT_NE(text.find(std::string("  ") + unit + " "), std::string::npos) << unit;
}

// The datasheets give one FP8/FP6 figure and one FP4 figure (sku.hpp).
TEST(BlackwellSkus, datasheet_figures_map_onto_the_units_one_way) {
  for (const char* key : kBlackwellRows) {
    const Sku& s = *find_sku(key);
    EXPECT_FALSE(s.datasheet[ComputeUnit::tc_fp4].has_value()) << key;
    EXPECT_EQ(s.datasheet[ComputeUnit::tc_mxfp4], s.datasheet[ComputeUnit::tc_nvfp4]) << key;
    EXPECT_EQ(s.datasheet[ComputeUnit::tc_mxfp8], s.datasheet[ComputeUnit::tc_fp6]) << key;
    EXPECT_EQ(s.datasheet[ComputeUnit::tc_mxfp6], s.datasheet[ComputeUnit::tc_fp6]) << key;
    if (s.datasheet[ComputeUnit::tc_fp6]) {
      EXPECT_EQ(s.datasheet[ComputeUnit::tc_fp6], s.datasheet[ComputeUnit::tc_fp8]) << key;
    }
  }
}

TEST(BlackwellSkus, a_row_without_a_sourced_sm_count_never_matches_a_device) {
  DeviceInfo d;
  d.name = "NVIDIA GB200";
  d.compute_capability = "10.0";
  d.sm_count = 148;
  d.memory_bytes = static_cast<std::int64_t>(184.0 * 1024 * 1024 * 1024);
  const SkuMatch m = match_sku(d);
  EXPECT_EQ(m.sku, nullptr);
  EXPECT_NE(m.reason.find("gb200 (its SM count is not in its sources"), std::string::npos)
      << m.reason;
  EXPECT_FALSE(
      derived_peak_at_datasheet_clock(*find_sku("gb200"), ComputeUnit::tc_bf16).has_value());
}

// A figure no source gives (GB200's SM count and boost clock) reads "-" in
// `roofline model`'s headline, never 0.
TEST(BlackwellSkus, model_headline_prints_an_unsourced_sm_count_and_clock_as_a_dash) {
  const std::string out = cli_output({"model", "--sku", "gb200"});
  const std::string headline = out.substr(0, out.find('\n'));
  EXPECT_NE(headline.find(", - SMs, boost - MHz)"), std::string::npos) << headline;
  const std::string b200 = cli_output({"model", "--sku", "b200"});
  EXPECT_EQ(b200.substr(0, b200.find('\n')).find(" - "), std::string::npos) << b200;
}

}  // namespace
}  // namespace rl::roofline
