// The vendor-claim verdict line.  Every number here is a synthetic fixture
// chosen to make the arithmetic checkable by hand; none is a measurement.
#include "rl/roofline/verdict.hpp"

#include "rl/roofline/sku.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace rl::roofline {
namespace {

Ceiling synthetic_tensor_ceiling() {
  Ceiling c;
  c.name = "tc.bf16";
  c.kind = "compute";
  c.unit = "FLOP/s";
  c.value = 500e12;
  c.datasheet = 1000e12;
  c.derived_peak = 800e12;
  c.observed_sm_mhz = 1500;
  c.throttle_reasons = {"sw_power_cap"};
  c.throttled_fraction = 0.25;
  return c;
}

TEST(CeilingVerdict, compute_line_sets_measured_against_claim_derived_peak_and_throttling) {
  EXPECT_EQ(verdict_line(synthetic_tensor_ceiling()),
            "tc.bf16: 500 TFLOP/s = 50% of the 1000 TFLOP/s claim; derived at the 1500 MHz seen "
            "during the run: 800 (62%); power-limited for 25% of samples");
}

TEST(CeilingVerdict, memory_ceilings_are_printed_in_terabytes_per_second) {
  Ceiling c;
  c.name = "hbm.copy";
  c.kind = "memory";
  c.unit = "B/s";
  c.value = 2.5e12;
  c.datasheet = 4e12;
  EXPECT_EQ(verdict_line(c), "hbm.copy: 2.50 TB/s = 62% of the 4.00 TB/s claim");
}

TEST(CeilingVerdict, missing_datasheet_figure_is_said_not_invented) {
  Ceiling c = synthetic_tensor_ceiling();
  c.name = "l2.read";
  c.unit = "B/s";
  c.value = 6e12;
  c.datasheet.reset();
  c.derived_peak.reset();
  c.throttle_reasons.clear();
  c.throttled_fraction = 0.0;
  EXPECT_EQ(verdict_line(c),
            "l2.read: 6.00 TB/s (no datasheet figure for this device); not throttled");
}

TEST(CeilingVerdict, zero_or_nonfinite_references_never_divide) {
  EXPECT_FALSE(percent_of(1.0, 0.0).has_value());
  EXPECT_FALSE(percent_of(1.0, -3.0).has_value());
  EXPECT_FALSE(percent_of(1.0, std::numeric_limits<double>::infinity()).has_value());
  EXPECT_FALSE(percent_of(1.0, std::nullopt).has_value());
  ASSERT_TRUE(percent_of(1.0, 4.0).has_value());
  EXPECT_DOUBLE_EQ(*percent_of(1.0, 4.0), 25.0);

  Ceiling c = synthetic_tensor_ceiling();
  c.datasheet = 0.0;
  c.derived_peak = 0.0;
  const std::string line = verdict_line(c);
  EXPECT_NE(line.find("no datasheet figure"), std::string::npos) << line;
  EXPECT_EQ(line.find("derived"), std::string::npos) << line;
  EXPECT_EQ(line.find("inf"), std::string::npos) << line;
}

TEST(CeilingVerdict, derived_peak_without_observed_clock_is_labelled_as_plain_derived_peak) {
  Ceiling c = synthetic_tensor_ceiling();
  c.observed_sm_mhz.reset();
  c.throttle_reasons.clear();
  c.throttled_fraction.reset();
  EXPECT_EQ(verdict_line(c),
            "tc.bf16: 500 TFLOP/s = 50% of the 1000 TFLOP/s claim; derived peak: 800 (62%)");
}

TEST(CeilingVerdict, several_throttle_reasons_are_named_and_unknown_ones_kept_verbatim) {
  Ceiling c = synthetic_tensor_ceiling();
  c.throttle_reasons = {"sw_thermal_slowdown", "some_future_reason"};
  c.throttled_fraction = 0.5;
  const std::string line = verdict_line(c);
  EXPECT_NE(line.find("; thermally limited and some_future_reason for 50% of samples"),
            std::string::npos)
      << line;
}

TEST(CeilingVerdict, throttled_fraction_without_reason_still_reports_throttling) {
  Ceiling c = synthetic_tensor_ceiling();
  c.throttle_reasons.clear();
  c.throttled_fraction = 0.1;
  const std::string line = verdict_line(c);
  EXPECT_NE(line.find("; throttled for 10% of samples"), std::string::npos) << line;
}

TEST(CeilingVerdict, failed_measurement_is_reported_as_not_measured) {
  Ceiling c = synthetic_tensor_ceiling();
  c.value = 0;
  EXPECT_EQ(verdict_line(c), "tc.bf16: not measured");
  c.value = std::nan("");
  EXPECT_EQ(verdict_line(c), "tc.bf16: not measured");
}

TEST(CeilingVerdict, integer_tensor_ceiling_is_printed_in_tera_ops) {
  Ceiling c = synthetic_tensor_ceiling();
  c.name = "tc.int8";
  EXPECT_EQ(verdict_line(c).rfind("tc.int8: 500 TOP/s = 50% of the 1000 TOP/s claim", 0), 0u)
      << verdict_line(c);
}

TEST(CeilingVerdict, one_line_per_ceiling_in_results_order) {
  Results results;
  results.ceilings.push_back(synthetic_tensor_ceiling());
  Ceiling memory;
  memory.name = "hbm.read";
  memory.unit = "B/s";
  memory.value = 1e12;
  results.ceilings.push_back(memory);
  const auto lines = verdict_lines(results);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("tc.bf16: ", 0), 0u);
  EXPECT_EQ(lines[1], "hbm.read: 1.00 TB/s (no datasheet figure for this device)");
}

}  // namespace
}  // namespace rl::roofline

namespace rl::roofline {
namespace {

// A device that is, by every matching rule, the table's H100 SXM row: the
// figures compared below come from the table itself, not from this test.
Results results_on_table_device(const Sku& sku) {
  Results results;
  results.context.device.name = std::string(sku.name);
  results.context.device.sm_count = sku.sm_count;
  results.context.device.compute_capability = std::string(sku.compute_capability);
  results.context.device.memory_bytes =
      static_cast<std::int64_t>(sku.memory_gib * 1024.0 * 1024.0 * 1024.0 * 0.98);
  Ceiling tensor;
  tensor.name = "tc.bf16";
  tensor.unit = "FLOP/s";
  tensor.value = 1;
  tensor.observed_sm_mhz = 1500;
  Ceiling memory;
  memory.name = "hbm.copy";
  memory.unit = "B/s";
  memory.value = 1;
  memory.observed_sm_mhz = 1500;
  Ceiling l2 = memory;
  l2.name = "l2.read";
  results.ceilings = {tensor, memory, l2};
  return results;
}

TEST(VendorClaims, matched_sku_supplies_datasheet_and_derived_peak_at_the_observed_clock) {
  const Sku* sku = find_sku("h100-sxm");
  ASSERT_NE(sku, nullptr);
  Results results = results_on_table_device(*sku);
  attach_vendor_claims(results);
  const Ceiling& tensor = results.ceilings[0];
  ASSERT_TRUE(tensor.datasheet.has_value());
  EXPECT_EQ(*tensor.datasheet, *sku->datasheet[ComputeUnit::tc_bf16]);
  ASSERT_TRUE(tensor.derived_peak.has_value());
  EXPECT_EQ(*tensor.derived_peak,
            *derived_peak_for_device(results.context.device, sku, ComputeUnit::tc_bf16, 1500));
  const Ceiling& memory = results.ceilings[1];
  ASSERT_TRUE(memory.datasheet.has_value());
  EXPECT_EQ(*memory.datasheet, sku->memory_bytes_per_s);
  EXPECT_FALSE(memory.derived_peak.has_value()) << "no bandwidth follows from the SM clock";
  const Ceiling& l2 = results.ceilings[2];
  EXPECT_FALSE(l2.datasheet.has_value());
  EXPECT_FALSE(l2.derived_peak.has_value());
}

TEST(VendorClaims, unknown_device_gets_no_datasheet_figure) {
  const Sku* sku = find_sku("h100-sxm");
  ASSERT_NE(sku, nullptr);
  Results results = results_on_table_device(*sku);
  results.context.device.name = "Prototype accelerator without a datasheet";
  const std::string reason = attach_vendor_claims(results);
  EXPECT_FALSE(reason.empty());
  for (const Ceiling& c : results.ceilings) EXPECT_FALSE(c.datasheet.has_value()) << c.name;
  EXPECT_NE(verdict_line(results.ceilings[0]).find("no datasheet figure"), std::string::npos);
}

TEST(VendorClaims, no_derived_peak_without_an_observed_clock) {
  const Sku* sku = find_sku("h100-sxm");
  ASSERT_NE(sku, nullptr);
  Results results = results_on_table_device(*sku);
  results.ceilings[0].observed_sm_mhz.reset();
  attach_vendor_claims(results);
  EXPECT_TRUE(results.ceilings[0].datasheet.has_value());
  EXPECT_FALSE(results.ceilings[0].derived_peak.has_value());
}

}  // namespace
}  // namespace rl::roofline
