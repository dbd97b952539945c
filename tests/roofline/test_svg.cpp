#include "fixtures.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/svg.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

namespace rl::roofline {
namespace {

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// fmt prints non-finite doubles as "nan"/"inf"; neither may reach the SVG.
bool has_non_finite_text(std::string svg) {
  std::transform(svg.begin(), svg.end(), svg.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return svg.find("nan") != std::string::npos || svg.find("inf") != std::string::npos;
}

void expect_no_overlap(const ChartLayout& layout) {
  for (std::size_t i = 0; i < layout.texts.size(); ++i)
    for (std::size_t j = i + 1; j < layout.texts.size(); ++j) {
      const auto &a = layout.texts[i], &b = layout.texts[j];
      bool overlap = a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
      EXPECT_FALSE(overlap) << "'" << a.text << "' overlaps '" << b.text << "'";
    }
}

TEST(RooflineSvg, draws_every_ceiling_point_arrow_and_the_emulator_banner) {
  Results r = testing::emulator_fixture();
  apply_roofline(r);
  std::string svg = render_roofline_svg(r);
  EXPECT_EQ(count(svg, "class=\"memory-ceiling\""), 2);
  EXPECT_EQ(count(svg, "class=\"compute-ceiling\""), 2);
  EXPECT_EQ(count(svg, "class=\"kernel-point\""), 3);  // the failed kernel is not timed
  EXPECT_EQ(count(svg, "class=\"rung-arrow fusion-arrow\""), 1);
  EXPECT_NE(svg.find("CPU emulator — not GPU performance"), std::string::npos);
  EXPECT_NE(svg.find("tc.bf16 16 GFLOP/s"), std::string::npos);
  EXPECT_NE(svg.find("hbm.copy 2 GB/s"), std::string::npos);
  // One ridge per compute roof, where it meets the best DRAM roof (not every pair).
  EXPECT_EQ(count(svg, "class=\"ridge\""), 2);
}

TEST(RooflineSvg, cuda_results_carry_no_emulator_banner) {
  Results r = testing::emulator_fixture();
  r.context.backend = Backend::cuda;
  std::string svg = render_roofline_svg(r);
  EXPECT_EQ(svg.find("not GPU performance"), std::string::npos);
  EXPECT_EQ(svg.find("emulator-banner"), std::string::npos);
}

TEST(RooflineSvg, arrow_needs_the_same_shape) {
  Results r = testing::emulator_fixture();
  r.kernels[1].shape = {{"n", 7}};
  EXPECT_EQ(count(render_roofline_svg(r), "fusion-arrow"), 0);
}

TEST(RooflineSvg, coordinates_are_finite_even_for_degenerate_input) {
  Results r = testing::emulator_fixture();
  r.ceilings.push_back(r.ceilings[0]);
  r.ceilings.back().value = 0;  // unusable ceiling is skipped, not divided by
  r.kernels[0].achieved_flops_per_s = 0;
  std::string svg = render_roofline_svg(r);
  EXPECT_FALSE(has_non_finite_text(svg));
  Results empty;
  empty.context.backend = Backend::cuda;
  std::string blank = render_roofline_svg(empty);
  EXPECT_NE(blank.find("no timed kernels"), std::string::npos);
  EXPECT_FALSE(has_non_finite_text(blank));
}

TEST(RooflineSvg, labels_of_a_crowded_chart_never_overlap) {
  ChartLayout layout = layout_roofline_chart(testing::crowded_fixture(40));
  expect_no_overlap(layout);
  // Most labels still find room; the rest are listed, not drawn on top.
  int point_labels = 0;
  for (const auto& t : layout.texts) point_labels += t.role == "point-label";
  EXPECT_GE(point_labels, 30);
  EXPECT_EQ(point_labels + static_cast<int>(layout.hidden.size()), 40);
  EXPECT_EQ(layout.points.size(), 40u);
}

TEST(RooflineSvg, user_text_is_escaped) {
  Results r = testing::emulator_fixture();
  r.context.device.name = "GPU <&> \"x\"";
  r.kernels[0].name = "a<b>&c";
  std::string svg = render_roofline_svg(r);
  EXPECT_EQ(svg.find("<&>"), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b&gt;&amp;c"), std::string::npos);
}

TEST(SiFormat, prints_datasheet_style_values) {
  EXPECT_EQ(si(989.4e12), "989 T");
  EXPECT_EQ(si(3.35e12), "3.35 T");
  EXPECT_EQ(si(2e9), "2 G");
  EXPECT_EQ(si(1.5e-6), "1.5 µ");
}

}  // namespace
}  // namespace rl::roofline
