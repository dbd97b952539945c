#include "fixtures.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/svg.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

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
  // The rung arrows are the family views' (the overview has one family's rungs
  // at several intensities beside every other family's).
  EXPECT_EQ(count(svg, "class=\"rung-arrow fusion-arrow\""), 0);
  ChartOptions gelu;
  gelu.view = "family:gelu";
  EXPECT_EQ(count(render_roofline_svg(r, gelu), "class=\"rung-arrow fusion-arrow\""), 1);
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
  ChartOptions gelu;
  gelu.view = "family:gelu";
  ASSERT_EQ(count(render_roofline_svg(r, gelu), "fusion-arrow"), 1);
  r.kernels[1].shape = {{"n", 7}};
  EXPECT_EQ(count(render_roofline_svg(r, gelu), "fusion-arrow"), 0);
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
  // The memory view labels every kernel it can (the overview only one per family).
  ChartOptions memory;
  memory.view = "memory";
  ChartLayout layout = layout_roofline_chart(testing::crowded_fixture(40), memory);
  expect_no_overlap(layout);
  // Most labels still find room; the rest are listed, not drawn on top.
  int point_labels = 0;
  for (const auto& t : layout.texts) point_labels += t.role == "point-label";
  EXPECT_GE(point_labels, 30);
  EXPECT_EQ(point_labels + static_cast<int>(layout.hidden.size()), 40);
  EXPECT_EQ(layout.points.size(), 40u);
}

// The overview draws each kernel once: at its family's busiest shape (the
// most timed kernels), or at its own shape with the most FLOPs when it was not
// timed there; it labels only the family's fastest kernel at the busiest shape.
TEST(RooflineSvg, overview_draws_each_kernel_once_and_labels_the_fastest_of_a_family) {
  Results r = testing::emulator_fixture();
  auto at = [](KernelResult k, std::int64_t n, double time) {
    k.shape = {{"n", n}};
    k.flops = k.bytes_min = 8.0 * static_cast<double>(n);
    k.bytes_model = 3 * k.bytes_min;
    for (auto* t : {&k.time_s->median, &k.time_s->min, &k.time_s->max}) *t = time;
    k.achieved_flops_per_s = k.flops / time;
    return k;
  };
  // naive also at a bigger shape (faster there than fused at the busiest one);
  // a third kernel only at two bigger shapes.
  KernelResult naive = r.kernels[0];
  r.kernels.push_back(at(naive, 1 << 22, 1e-3));
  KernelResult big = naive;
  big.name = "gelu_only_big";
  r.kernels.push_back(at(big, 1 << 21, 1e-3));
  r.kernels.push_back(at(big, 1 << 23, 1e-3));
  const std::string svg = render_roofline_svg(r);
  EXPECT_EQ(count(svg, "class=\"kernel-point\""), 4);
  EXPECT_NE(svg.find("gelu_tanh_f32_naive (gelu, fp32 on fp32, n=1048576)"), std::string::npos);
  EXPECT_NE(svg.find("gelu_only_big (gelu, fp32 on fp32, n=8388608)"), std::string::npos);
  ChartLayout layout = layout_roofline_chart(r);
  std::vector<std::string> labels;
  for (const auto& t : layout.texts)
    if (t.role == "point-label") labels.push_back(t.text);
  std::sort(labels.begin(), labels.end());
  EXPECT_EQ(labels, (std::vector<std::string>{"gelu_tanh_f32_fused_vec4", "gemm_bf16_wmma"}));
  EXPECT_EQ(layout.hidden.size(), 2u);  // naive and only_big: hover titles
  EXPECT_NE(svg.find("the fastest kernel of each family"), std::string::npos);
  EXPECT_EQ(svg.find("did not fit"), std::string::npos);
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
