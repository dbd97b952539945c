#include "rl/roofline/sku.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace rl::roofline {
namespace {

TEST(Sku, compute_capability_text_reads_as_min_cc_units) {
  EXPECT_EQ(compute_capability_x10("9.0"), 90);
  EXPECT_EQ(compute_capability_x10("8.9"), 89);
  EXPECT_EQ(compute_capability_x10("12.0"), 120);
  EXPECT_EQ(compute_capability_x10(""), 0);
  EXPECT_EQ(compute_capability_x10("9"), 0);
  EXPECT_EQ(compute_capability_x10("x.y"), 0);
}

TEST(SkuTable, lists_every_required_product) {
  for (const char* key : {"a100-sxm4-40gb",
                          "a100-sxm4-80gb",
                          "a100-pcie-40gb",
                          "a100-pcie-80gb",
                          "a10",
                          "a10g",
                          "t4",
                          "l4",
                          "l40s",
                          "rtx-3090",
                          "rtx-4090",
                          "rtx-5090",
                          "h100-sxm",
                          "h100-pcie",
                          "h100-nvl",
                          "h200-sxm",
                          "h200-nvl",
                          "b200",
                          "gb200",
                          "b300",
                          "gb300",
                          "rtx-pro-6000-ws",
                          "rtx-pro-6000-server",
                          "dgx-spark"})
    EXPECT_NE(find_sku(key), nullptr) << key;
}

TEST(SkuTable, every_row_has_a_source_and_unique_key) {
  std::set<std::string_view> keys;
  for (const auto& s : sku_table()) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    EXPECT_FALSE(s.source.empty()) << s.key;
    EXPECT_FALSE(s.note.empty()) << s.key;
    EXPECT_GE(s.sm_count, 0) << s.key;
    if (s.sm_count == 0 || s.boost_clock_mhz == 0) {
      // Not in the row's sources: the note says so, and no clock is claimed
      // without an SM count to derive from.
      EXPECT_NE(s.note.find("0: no derived peaks"), std::string_view::npos) << s.key;
      EXPECT_EQ(s.boost_clock_mhz, 0) << s.key;
      EXPECT_EQ(s.tensor_clock_mhz, 0) << s.key;
      continue;
    }
    EXPECT_GT(s.boost_clock_mhz, 0) << s.key;
    EXPECT_GT(s.tensor_clock_mhz, 0) << s.key;
    EXPECT_LE(s.tensor_clock_mhz, s.boost_clock_mhz) << s.key;
    // A tensor clock below boost is an explicit, documented exception.
    if (s.tensor_clock_mhz != s.boost_clock_mhz) {
      EXPECT_FALSE(s.tensor_clock_note.empty()) << s.key;
    }
  }
}

// The check that catches table typos and wrong per-SM rates (the "2x peak"
// bug): SMs x per-SM rate x the row's clock must give the datasheet figure.
TEST(SkuTable, derived_peak_matches_datasheet_within_two_percent_for_every_precision) {
  int checked = 0;
  for (const auto& s : sku_table()) {
    if (s.sm_count == 0 || s.boost_clock_mhz == 0) continue;  // nothing to derive from
    for (ComputeUnit unit : all_compute_units()) {
      auto sheet = s.datasheet[unit];
      if (!sheet) continue;
      auto derived = derived_peak_at_datasheet_clock(s, unit);
      ASSERT_TRUE(derived.has_value())
          << s.key << " " << compute_ceiling_name(unit) << ": datasheet figure but no per-SM rate";
      EXPECT_NEAR(*derived / *sheet, 1.0, 0.02)
          << s.key << " " << compute_ceiling_name(unit) << ": derived " << *derived / 1e12
          << " TFLOP/s vs datasheet " << *sheet / 1e12;
      ++checked;
    }
  }
  EXPECT_GT(checked, 80);
}

TEST(SkuTable, derived_peak_scales_with_the_clock) {
  const Sku* a100 = find_sku("a100-sxm4-80gb");
  ASSERT_NE(a100, nullptr);
  // 108 SMs x 128 FLOP/clk x 1410 MHz = 19.49 TFLOP/s, by hand.
  EXPECT_NEAR(*derived_peak(*a100, ComputeUnit::fp32, 1410) / 1e12, 19.49, 0.01);
  EXPECT_NEAR(*derived_peak(*a100, ComputeUnit::fp32, 705) / 1e12, 9.746, 0.01);
  EXPECT_FALSE(derived_peak(*a100, ComputeUnit::tc_fp8, 1410).has_value());  // no FP8 on sm_80
}

TEST(SkuTable, geforce_tensor_rate_is_half_the_datacenter_rate_except_int8) {
  const Sku* rtx = find_sku("rtx-3090");
  ASSERT_NE(rtx, nullptr);
  double clock = rtx->boost_clock_mhz;
  EXPECT_NEAR(*derived_peak(*rtx, ComputeUnit::tc_fp16, clock) / 1e12, 71.2, 0.1);
  EXPECT_NEAR(*derived_peak(*rtx, ComputeUnit::tc_int8, clock) / 1e12, 284.7, 0.1);
}

DeviceInfo device(std::string name, int sms, std::string cc, double gib) {
  DeviceInfo d;
  d.name = std::move(name);
  d.sm_count = sms;
  d.compute_capability = std::move(cc);
  d.memory_bytes = static_cast<std::int64_t>(gib * 1024 * 1024 * 1024);
  return d;
}

TEST(SkuMatching, matches_by_name_sm_count_and_memory) {
  EXPECT_EQ(match_sku(device("NVIDIA H100 80GB HBM3", 132, "9.0", 79.1)).sku, find_sku("h100-sxm"));
  EXPECT_EQ(match_sku(device("NVIDIA H100 PCIe", 114, "9.0", 79.2)).sku, find_sku("h100-pcie"));
  EXPECT_EQ(match_sku(device("NVIDIA H100 NVL", 132, "9.0", 93.6)).sku, find_sku("h100-nvl"));
  EXPECT_EQ(match_sku(device("NVIDIA A100-SXM4-40GB", 108, "8.0", 39.4)).sku,
            find_sku("a100-sxm4-40gb"));
  EXPECT_EQ(match_sku(device("NVIDIA A100-SXM4-80GB", 108, "8.0", 79.2)).sku,
            find_sku("a100-sxm4-80gb"));
  EXPECT_EQ(match_sku(device("NVIDIA A100 80GB PCIe", 108, "8.0", 79.2)).sku,
            find_sku("a100-pcie-80gb"));
  EXPECT_EQ(match_sku(device("Tesla T4", 40, "7.5", 14.7)).sku, find_sku("t4"));
  EXPECT_EQ(match_sku(device("NVIDIA A10G", 80, "8.6", 22.3)).sku, find_sku("a10g"));
  EXPECT_EQ(match_sku(device("NVIDIA A10", 72, "8.6", 22.3)).sku, find_sku("a10"));
  EXPECT_EQ(match_sku(device("NVIDIA GeForce RTX 4090", 128, "8.9", 23.6)).sku,
            find_sku("rtx-4090"));
  EXPECT_EQ(match_sku(device("NVIDIA H200", 132, "9.0", 139.8)).sku, find_sku("h200-sxm"));
}

TEST(SkuMatching, unknown_device_is_unknown_not_the_closest_row) {
  auto cut_down = match_sku(device("NVIDIA H100 80GB HBM3", 114, "9.0", 79.1));  // wrong SMs
  EXPECT_EQ(cut_down.sku, nullptr);
  EXPECT_NE(cut_down.reason.find("h100-sxm"), std::string::npos) << cut_down.reason;
  EXPECT_EQ(match_sku(device("NVIDIA GeForce RTX 3090 Ti", 84, "8.6", 24)).sku, nullptr);
  EXPECT_EQ(match_sku(device("CPU emulator (test fixture, not GPU data)", 4, "8.0", 1)).sku,
            nullptr);
  EXPECT_EQ(match_sku(device("NVIDIA A100-SXM4-40GB", 108, "8.0", 60)).sku, nullptr);  // memory
}

TEST(SkuMatching, sku_override_accepts_key_or_name_case_insensitively) {
  EXPECT_EQ(find_sku("H100-SXM"), find_sku("h100-sxm"));
  EXPECT_EQ(find_sku("nvidia l40s"), find_sku("l40s"));
  EXPECT_EQ(find_sku("h100"), nullptr);
}

TEST(SkuTable, datasheet_ceilings_carry_the_figures_and_their_source) {
  auto c = datasheet_ceilings(*find_sku("l4"));
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0].name, "hbm.datasheet");
  EXPECT_DOUBLE_EQ(c[0].value, 300e9);
  for (const auto& ceiling : c) EXPECT_NE(ceiling.method.find("L4"), std::string::npos);
}

}  // namespace
}  // namespace rl::roofline
