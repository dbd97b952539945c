// The hierarchy view (`roofline plot --view hierarchy`, chart_hierarchy.hpp)
// from two fixtures: the emulator's counts (emulator_counters_results.json,
// written by `bench_roofline_emu --size small --counters` over six ceilings
// and six kernels, its command line inside: emulator numbers, not GPU data)
// and invented CUPTI-style counts with L1 and DRAM bytes
// (synthetic_cupti_counters_results.json, never measured).  Each kernel's points
// must sit at flops / bytes of each level, counted where a counter says and hollow where the model
// stands in, with no text over another and no leader through a text; a file without counters draws
// an empty chart that says so in one line.
#include "chart_checks.hpp"
#include "fixtures.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/svg.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace rl::roofline {
namespace {

using testing::count;
using testing::drawn_leaders;
using testing::enters;
using testing::overlapping_texts;
using testing::texts_outside_canvas;

Results fixture(const std::string& name) {
  return load_results(std::string(RL_HIERARCHY_FIXTURES) + "/" + name);
}

const std::vector<std::string> kFixtures{"emulator_counters_results.json",
                                         "synthetic_cupti_counters_results.json"};

ChartOptions hierarchy(double width = 1000) {
  ChartOptions options;
  options.view = "hierarchy";
  options.width = width;
  return options;
}

struct Expected {  // one level of one kernel, restated from the file's numbers
  double intensity;
  bool counted;
};

// docs/roofline.md's rule, restated: counted bytes where the counters have
// them, else the model's (L2: both declarations; DRAM: bytes_model), else none.
std::map<std::string, Expected> expected_levels(const KernelResult& k) {
  std::map<std::string, Expected> out;
  const auto& v = k.counters->values;
  auto has = [&](const char* key) { return v.contains(key); };
  if (has("l1_bytes")) out["L1"] = {k.flops / v.at("l1_bytes"), true};
  // The emulator sees only its copy paths: its L2 count is the kernel's
  // whole L2 traffic only where the model declares both L2 figures.
  const bool declared = k.bytes_l2_load && k.bytes_l2_store;
  if (has("l2_bytes") && v.at("l2_bytes") > 0 &&
      (k.counters->source == CounterSource::cupti || declared))
    out["L2"] = {k.flops / v.at("l2_bytes"), true};
  else if (declared)
    out["L2"] = {k.flops / (*k.bytes_l2_load + *k.bytes_l2_store), false};
  if (has("dram_bytes_read") && has("dram_bytes_write"))
    out["DRAM"] = {k.flops / (v.at("dram_bytes_read") + v.at("dram_bytes_write")), true};
  else
    out["DRAM"] = {k.flops / k.bytes_model, false};
  return out;
}

struct DrawnPoint {
  std::string name, level, source;
  double x, y;  // the marker's centre, pixels
};

// The level points of the SVG, their centres from the marker paths
// (svg.cpp's marker_path at radius 4.5: a circle starts at (x - r, y), a
// square at (x - r, y - r), a triangle at (x, y - 1.2 r)).
std::vector<DrawnPoint> drawn_points(const std::string& svg) {
  std::vector<DrawnPoint> out;
  const std::regex point(
      "class=\"kernel-point level-point\" data-name=\"([^\"]+)\" data-level=\"([A-Z0-9]+)\" "
      "data-source=\"([a-z]+)\" d=\"M([-0-9.]+),([-0-9.]+)");
  for (std::sregex_iterator it(svg.begin(), svg.end(), point), end; it != end; ++it) {
    const std::string level = (*it)[2];
    double x = std::stod((*it)[4]), y = std::stod((*it)[5]);
    if (level == "DRAM") x += 4.5;
    if (level == "L2") x += 4.5, y += 4.5;
    if (level == "L1") y += 1.2 * 4.5;
    out.push_back({(*it)[1], level, (*it)[3], x, y});
  }
  return out;
}

// The intensity at pixel x, read off the x axis's tick labels (plain numbers
// below 1000, "1k", "10k", ... above): log-linear between the outermost two.
std::function<double(double)> x_axis(const ChartLayout& layout) {
  std::vector<std::pair<double, double>> ticks;  // (pixel, value)
  for (const auto& t : layout.texts) {
    if (t.role != "x-tick") continue;
    std::string text = t.text;
    double scale = 1;
    if (text.ends_with("k")) scale = 1e3, text.pop_back();
    ticks.push_back({(t.x0 + t.x1) / 2, std::stod(text) * scale});
  }
  EXPECT_GE(ticks.size(), 2u);
  std::sort(ticks.begin(), ticks.end());
  const auto [p0, v0] = ticks.front();
  const auto [p1, v1] = ticks.back();
  return [=](double x) {
    return std::pow(10, std::log10(v0) + (x - p0) / (p1 - p0) * (std::log10(v1) - std::log10(v0)));
  };
}

TEST(HierarchyView, each_kernels_points_sit_at_its_level_intensities) {
  for (const auto& file : kFixtures) {
    SCOPED_TRACE(file);
    const Results r = fixture(file);
    const ChartLayout layout = layout_roofline_chart(r, hierarchy());
    const std::string svg = render_roofline_svg(r, hierarchy());
    const auto intensity_at = x_axis(layout);
    std::map<std::string, std::vector<DrawnPoint>> by_kernel;
    for (const auto& p : drawn_points(svg)) by_kernel[p.name].push_back(p);
    std::size_t expected_points = 0, expected_joins = 0;
    std::set<std::string> placed;
    for (const auto& k : r.kernels) {
      // The ceiling loops are the roofs, not points; a kernel without counts
      // has no levels.
      if (k.family == "ceilings" || !k.counters || k.counters->values.empty() || !k.time_s) {
        EXPECT_FALSE(by_kernel.contains(k.name)) << k.name << " is drawn";
        continue;
      }
      SCOPED_TRACE(k.name);
      const auto expected = expected_levels(k);
      // A kernel no level of which was counted would only repeat the overview
      // in hollow points: not drawn.
      if (std::none_of(expected.begin(), expected.end(),
                       [](const auto& level) { return level.second.counted; })) {
        EXPECT_FALSE(by_kernel.contains(k.name)) << k.name << " is drawn with no counted level";
        continue;
      }
      placed.insert(k.name);
      const auto& drawn = by_kernel[k.name];
      ASSERT_EQ(drawn.size(), expected.size());
      expected_points += expected.size();
      expected_joins += expected.size() - 1;
      for (const auto& p : drawn) {
        SCOPED_TRACE(p.level);
        ASSERT_TRUE(expected.contains(p.level));
        const Expected& e = expected.at(p.level);
        EXPECT_NEAR(intensity_at(p.x) / e.intensity, 1.0, 0.005);
        EXPECT_EQ(p.source, e.counted ? "counted" : "modelled");
        EXPECT_NEAR(p.y, drawn.front().y, 0.01) << "one rate, one height";
      }
    }
    EXPECT_FALSE(placed.empty());
    EXPECT_EQ(layout.points.size(), expected_points);
    EXPECT_EQ(count(svg, "class=\"level-join\""), static_cast<int>(expected_joins));
  }
}

// The hierarchy view's lines through each kernel's levels.
std::vector<std::array<double, 4>> drawn_level_lines(const std::string& svg) {
  return testing::drawn_lines(svg, "level-join");
}

// Like every view (test_chart_layout.cpp): no text over another or off the
// canvas, no leader or level line through a text, one label per kernel at
// most.  Returns the labels drawn.
std::multiset<std::string> expect_legible(const Results& r, double width) {
  const ChartLayout layout = layout_roofline_chart(r, hierarchy(width));
  const std::string svg = render_roofline_svg(r, hierarchy(width));
  auto overlaps = overlapping_texts(layout);
  EXPECT_TRUE(overlaps.empty()) << overlaps.size() << " overlaps, first: " << overlaps.front();
  auto outside = texts_outside_canvas(layout);
  EXPECT_TRUE(outside.empty()) << outside.front();
  for (const auto& leader : drawn_leaders(svg))
    for (const auto& t : layout.texts)
      EXPECT_FALSE(enters(leader, t)) << "a leader crosses '" << t.text << "'";
  for (const auto& line : drawn_level_lines(svg))
    for (const auto& t : layout.texts)
      EXPECT_FALSE(enters(line, t)) << "a level line crosses '" << t.text << "'";
  std::multiset<std::string> labels;
  for (const auto& t : layout.texts)
    if (t.role == "point-label") labels.insert(t.text);
  const std::set<std::string> kernels(layout.points.begin(), layout.points.end());
  for (const auto& name : kernels) EXPECT_LE(labels.count(name), 1u) << name;
  for (const auto& name : labels) EXPECT_TRUE(kernels.contains(name)) << name;
  EXPECT_EQ(count(svg, "class=\"kernel-point"), static_cast<int>(layout.points.size()));
  return labels;
}

TEST(HierarchyView, no_text_overlaps_and_each_kernel_has_one_label) {
  for (const auto& file : kFixtures)
    for (double width : {1400.0, 1000.0, 800.0}) {
      SCOPED_TRACE(file + " at " + std::to_string(static_cast<int>(width)) + " px");
      const Results r = fixture(file);
      const auto labels = expect_legible(r, width);
      const ChartLayout layout = layout_roofline_chart(r, hierarchy(width));
      const std::set<std::string> kernels(layout.points.begin(), layout.points.end());
      EXPECT_EQ(labels.size(), kernels.size()) << "a few kernels: every one labelled";
    }
}

// Forty kernels with counts at nearly one intensity and rate (the roofline
// tests' crowded fixture): the labels that find no room are left to the
// hover titles, and still nothing overlaps.
TEST(HierarchyView, a_crowded_file_keeps_every_text_apart) {
  Results r = testing::crowded_fixture(40);
  for (auto& k : r.kernels) {
    KernelCounters c;
    c.values = {{"l1_bytes", 8 * k.bytes_model},
                {"l2_bytes", 2 * k.bytes_model},
                {"dram_bytes_read", k.bytes_model / 2},
                {"dram_bytes_write", k.bytes_model / 4}};
    k.counters = c;
  }
  for (double width : {1400.0, 800.0}) {
    SCOPED_TRACE(width);
    expect_legible(r, width);
    const ChartLayout layout = layout_roofline_chart(r, hierarchy(width));
    EXPECT_EQ(layout.points.size(), 3u * 40);
    EXPECT_FALSE(layout.hidden.empty());
  }
}

// A second kernel at the same rate whose levels span the first one's: its
// line runs through the spot right of the first one's last point, where a
// label goes first, so that label must go elsewhere.
TEST(HierarchyView, a_label_keeps_off_another_kernels_line) {
  Results r = fixture("synthetic_cupti_counters_results.json");
  KernelResult wide = r.kernels[1];  // layernorm: its levels near 1 FLOP/B
  wide.name = "wide_levels_at_the_same_rate";
  // L1 at 0.3 FLOP/B, DRAM at 300, no L2 level: no marker of its own near
  // the first kernel's label, only its line.
  wide.counters->values = {{"l1_bytes", wide.flops / 0.3},
                           {"dram_bytes_read", wide.flops / 600},
                           {"dram_bytes_write", wide.flops / 600}};
  r.kernels.push_back(wide);
  const ChartLayout layout = layout_roofline_chart(r, hierarchy());
  const std::string svg = render_roofline_svg(r, hierarchy());
  const auto lines = drawn_level_lines(svg);
  for (const auto& line : lines)
    for (const auto& t : layout.texts)
      EXPECT_FALSE(enters(line, t)) << "a level line crosses '" << t.text << "'";
  EXPECT_EQ(lines.size(), 2u + 2 + 1 + 1);  // gemm, layernorm, smem_tiled, the wide kernel
}

// The synthetic file has all three roofs; the memory view, whose kernels are
// judged against HBM and L2, never draws smem.read.
TEST(HierarchyView, draws_the_l1_l2_and_dram_roofs_and_the_modelled_key) {
  const Results r = fixture("synthetic_cupti_counters_results.json");
  const ChartLayout layout = layout_roofline_chart(r, hierarchy());
  const std::set<std::string> roofs(layout.roofs.begin(), layout.roofs.end());
  for (const char* roof : {"smem.read measured", "l2.read measured", "hbm.read measured",
                           "tc.bf16 measured", "fp32.fma measured"})
    EXPECT_TRUE(roofs.contains(roof)) << roof;
  EXPECT_FALSE(roofs.contains("hbm.copy measured")) << "only the best DRAM roof";
  const std::string svg = render_roofline_svg(r, hierarchy());
  EXPECT_NE(svg.find(">hollow: modelled<"), std::string::npos);
  EXPECT_EQ(count(svg, "data-source=\"modelled\""), 1);  // gemm_f32_smem_tiled's DRAM
  ChartOptions memory;
  memory.view = "memory";
  for (const auto& roof : layout_roofline_chart(r, memory).roofs)
    EXPECT_FALSE(roof.starts_with("smem")) << roof;
}

TEST(HierarchyView, a_file_without_counters_draws_a_chart_that_says_so_in_one_line) {
  const Results r =
      load_results(std::string(RL_ROOFLINE_TEST_DATA) + "/emulated_small_results.json");
  const ChartLayout layout = layout_roofline_chart(r, hierarchy());
  EXPECT_TRUE(layout.points.empty());
  int notes = 0;
  for (const auto& t : layout.texts)
    if (t.role == "empty-note") {
      ++notes;
      EXPECT_EQ(t.text,
                "no kernel in this file has counters (bench_roofline --counters collects them)");
    }
  EXPECT_EQ(notes, 1);
  EXPECT_TRUE(overlapping_texts(layout).empty());
  EXPECT_EQ(count(render_roofline_svg(r, hierarchy()), "kernel-point"), 0);
}

// Counters refused on every kernel: the line gives the reason.
TEST(HierarchyView, refused_counters_give_their_reason_in_the_one_line) {
  Results r = fixture("synthetic_cupti_counters_results.json");
  for (auto& k : r.kernels) {
    k.counters->values.clear();
    k.counters->unavailable = "no profiling permission (ERR_NVGPUCTRPERM)";
  }
  const ChartLayout layout = layout_roofline_chart(r, hierarchy());
  EXPECT_TRUE(layout.points.empty());
  bool said = false;
  for (const auto& t : layout.texts)
    said = said || (t.role == "empty-note" && t.text.find("ERR_NVGPUCTRPERM") != std::string::npos);
  EXPECT_TRUE(said);
}

// The report shows the hierarchy chart only for a run that counted something:
// a file without counters gets no empty chart in its report.
TEST(HierarchyView, the_report_has_the_chart_only_when_kernels_were_counted) {
  auto ids = [](const Results& r) {
    std::set<std::string> out;
    for (const auto& v : chart_views(r)) out.insert(v.id);
    return out;
  };
  EXPECT_TRUE(ids(fixture("emulator_counters_results.json")).contains("hierarchy"));
  EXPECT_TRUE(ids(fixture("synthetic_cupti_counters_results.json")).contains("hierarchy"));
  EXPECT_FALSE(
      ids(load_results(std::string(RL_ROOFLINE_TEST_DATA) + "/emulated_small_results.json"))
          .contains("hierarchy"));
}

}  // namespace
}  // namespace rl::roofline
