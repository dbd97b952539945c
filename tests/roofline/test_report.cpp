#include "fixtures.hpp"
#include "rl/roofline/report.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rl::roofline {
namespace {

TEST(Report, emulator_results_get_the_banner_and_an_unknown_device) {
  Results r = testing::emulator_fixture();
  ReportOptions options = report_options_for(r);
  EXPECT_EQ(options.sku, nullptr);
  std::string html = render_report_html(r, options);
  EXPECT_NE(html.find("CPU emulator — not GPU performance"), std::string::npos);
  EXPECT_NE(html.find("unknown device"), std::string::npos);
  EXPECT_NE(html.find("<h2>Fusion</h2>"), std::string::npos);
  EXPECT_NE(html.find("3.33×"), std::string::npos);  // 20 ms naive / 6 ms fused
}

TEST(Report, sku_override_puts_datasheet_and_percent_of_claim_beside_measured) {
  Results r = testing::emulator_fixture();
  r.context.backend = "cuda";
  r.ceilings[0].value = 1.6e12;  // hbm.copy, against A100 80GB's 2039 GB/s
  std::string html = render_report_html(r, report_options_for(r, "a100-sxm4-80gb"));
  EXPECT_EQ(html.find("not GPU performance"), std::string::npos);
  EXPECT_NE(html.find("2.04 TB/s"), std::string::npos);
  EXPECT_NE(html.find("78.5%"), std::string::npos);  // 1.6 / 2.039
  EXPECT_THROW(report_options_for(r, "a100"), std::invalid_argument);
}

TEST(Report, without_a_ceiling_there_is_no_roof_and_no_fusion_for_untimed_pairs) {
  Results r = testing::emulator_fixture();
  r.ceilings.clear();
  r.kernels[0].time_s.reset();
  std::string html = render_report_html(r, {});
  EXPECT_NE(html.find("No ceilings were measured"), std::string::npos);
  EXPECT_EQ(html.find("<h2>Fusion</h2>"), std::string::npos);
}

TEST(Report, chart_and_report_are_written_beside_the_results) {
  const rl::test::ScratchDir scratch("rl_report_test_artifacts");
  const auto& dir = scratch.path();
  write_chart_and_report(dir, testing::emulator_fixture());
  std::ifstream svg(dir / "roofline.svg"), html(dir / "report.html");
  std::stringstream s, h;
  s << svg.rdbuf();
  h << html.rdbuf();
  EXPECT_TRUE(s.str().starts_with("<?xml"));
  EXPECT_NE(h.str().find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace rl::roofline
