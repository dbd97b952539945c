#include "fixtures.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"
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

// An emulated run measures no clocks and has no NVML: the report says so
// instead of printing zeros as if they were readings.
TEST(Report, unknown_values_read_na_and_nvml_unavailable_not_zeros) {
  Results r = testing::emulator_fixture();
  ASSERT_FALSE(r.ceilings.empty());
  r.context.clocks = {};
  r.context.device.memory_bus_width_bits = 0;
  for (auto& c : r.ceilings) c.throttle_reasons.clear();
  const std::string html = render_report_html(r, report_options_for(r));
  EXPECT_EQ(html.find("0 / 0 MHz"), std::string::npos);
  EXPECT_EQ(html.find(">0 bits<"), std::string::npos);
  EXPECT_EQ(html.find("none seen"), std::string::npos);
  EXPECT_NE(html.find("NVML unavailable"), std::string::npos);
  EXPECT_NE(html.find("<th>SM clock (current / max)</th><td>n/a</td>"), std::string::npos);
  EXPECT_NE(html.find("<th>Memory bus width</th><td>n/a</td>"), std::string::npos);

  // With NVML watching, no reason seen is "none seen"; a known clock is shown.
  r.context.nvml_available = true;
  r.context.clocks.sm_mhz = 1755;
  r.context.clocks.sm_max_mhz = 1980;
  const std::string gpu_html = render_report_html(r, report_options_for(r));
  EXPECT_NE(gpu_html.find("none seen"), std::string::npos);
  EXPECT_NE(gpu_html.find("1755 / 1980 MHz"), std::string::npos);
}

TEST(Report, an_interrupted_run_says_it_is_incomplete) {
  Results r = testing::emulator_fixture();
  r.run.complete = false;
  r.run.interrupted_by = "SIGINT";
  EXPECT_NE(
      render_report_html(r, report_options_for(r)).find("Incomplete run (interrupted by SIGINT)"),
      std::string::npos);
  r.run.complete = true;
  EXPECT_EQ(render_report_html(r, report_options_for(r)).find("Incomplete run"), std::string::npos);
}

TEST(Report, what_a_run_left_out_is_listed_in_run_order_and_the_rest_counted) {
  Results r = testing::emulator_fixture();
  EXPECT_EQ(render_report_html(r, report_options_for(r)).find("Not measured"), std::string::npos);
  for (int i = 0; i < 102; ++i)
    r.run.left_out.push_back({"gelu_kernel_" + std::to_string(i),
                              {{"n", 1000 + i}},
                              i == 0 ? LeftOutReason::interrupted : LeftOutReason::budget});
  const std::string html = render_report_html(r, report_options_for(r));
  EXPECT_NE(html.find("102 instance(s) the run selected were not measured"), std::string::npos);
  EXPECT_NE(html.find("<td>gelu_kernel_0</td><td>n=1000</td><td>interrupted</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td>gelu_kernel_99</td><td>n=1099</td><td>not reached: budget</td>"),
            std::string::npos);
  EXPECT_EQ(html.find("gelu_kernel_100<"), std::string::npos);
  EXPECT_NE(html.find("and 2 more"), std::string::npos);
}

TEST(Report, sku_override_puts_datasheet_and_percent_of_claim_beside_measured) {
  Results r = testing::emulator_fixture();
  r.context.backend = Backend::cuda;
  r.ceilings[0].value = 1.6e12;  // hbm.copy, against A100 80GB's 2039 GB/s
  std::string html = render_report_html(r, report_options_for(r, "a100-sxm4-80gb"));
  EXPECT_EQ(html.find("not GPU performance"), std::string::npos);
  EXPECT_NE(html.find("2.04 TB/s"), std::string::npos);
  EXPECT_NE(html.find("78.5%"), std::string::npos);  // 1.6 / 2.039
  EXPECT_THROW(report_options_for(r, "a100"), std::invalid_argument);
}

TEST(Report, sku_override_replaces_the_datasheet_figures_the_run_recorded) {
  Results r = testing::emulator_fixture();
  r.context.backend = Backend::cuda;
  r.ceilings[0].value = 1.6e12;
  r.ceilings[0].datasheet = 3.35e12;  // what a run on an H100 recorded for hbm.copy
  std::string html = render_report_html(r, report_options_for(r, "a100-sxm4-80gb"));
  EXPECT_NE(html.find("2.04 TB/s"), std::string::npos);  // the chosen A100 row
  EXPECT_EQ(html.find("3.35 TB/s"), std::string::npos);  // not a mix with the H100's
}

TEST(Report, without_a_ceiling_there_is_no_roof_and_no_gain_for_untimed_pairs) {
  Results r = testing::emulator_fixture();
  r.ceilings.clear();
  r.kernels[0].time_s.reset();
  std::string html = render_report_html(r, {});
  EXPECT_NE(html.find("No ceilings were measured"), std::string::npos);
  EXPECT_EQ(html.find("3.33×"), std::string::npos);
  EXPECT_NE(html.find("not timed"), std::string::npos);
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

TEST(Report, headline_comes_first_with_counts_noise_and_unknown_throttling) {
  Results r = testing::emulator_fixture();
  std::string html = render_report_html(r, report_options_for(r));
  const auto headline = html.find("class=\"headline\"");
  ASSERT_NE(headline, std::string::npos);
  EXPECT_LT(headline, html.find("<h2>"));  // before every section
  EXPECT_NE(html.find("<b>3</b> validated and timed, <span class=\"bad\">1 failed</span>, 0 "
                      "skipped"),
            std::string::npos);
  EXPECT_NE(html.find("Throttling: <b>unknown</b> — NVML not available"), std::string::npos);
  EXPECT_NE(html.find("Noise (spread: stddev / median of the repetitions)"), std::string::npos);
  EXPECT_NE(html.find("no datasheet or derived GPU figure applies"), std::string::npos);
}

TEST(Report, a_ceiling_verdict_names_the_claim_and_the_share_of_it) {
  Results r = testing::emulator_fixture();
  r.context.backend = Backend::cuda;
  r.context.nvml_available = true;
  r.ceilings[0].value = 1.6e12;  // hbm.copy against A100 80GB's 2039 GB/s: 78%
  std::string html = render_report_html(r, report_options_for(r, "a100-sxm4-80gb"));
  EXPECT_NE(html.find("<b>hbm.copy</b> 1.6 TB/s — short of the claim (78% of the datasheet&apos;s "
                      "2.04 TB/s)"),
            std::string::npos);
  EXPECT_NE(html.find("Throttling: none seen by NVML"), std::string::npos);
  r.ceilings[0].value = 0.5e12;
  EXPECT_NE(render_report_html(r, report_options_for(r, "a100-sxm4-80gb"))
                .find("far short of the claim</span> (25% of the datasheet&apos;s"),
            std::string::npos);
}

TEST(Report, kernel_table_sorts_without_a_script) {
  Results r = testing::emulator_fixture();
  std::string html = render_report_html(r, report_options_for(r));
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // A radio button per column and direction, and each row's rank per column.
  EXPECT_NE(html.find("id=\"ks3a\""), std::string::npos);
  EXPECT_NE(html.find("#ks3d:checked~.ktable .kb{order:calc(-1*var(--k3))}"), std::string::npos);
  // Median time (column 3): fused 6 ms ranks 0, naive 20 ms 2, the untimed one last (3).
  EXPECT_NE(html.find("--k3:0;"), std::string::npos);
  EXPECT_NE(html.find("--k3:3;"), std::string::npos);
  EXPECT_NE(html.find("position:sticky"), std::string::npos);
}

TEST(Report, every_chart_view_is_inline_with_its_own_ids) {
  Results r = testing::emulator_fixture();
  std::string html = render_report_html(r, report_options_for(r));
  EXPECT_NE(html.find("id=\"chart-overview\""), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-tensor\""), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-family-gelu\""), std::string::npos);
  EXPECT_NE(html.find("id=\"plot-area-family-gelu\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"plot-area\""), std::string::npos);  // no id shared by two charts
}

TEST(Report, a_ladder_rung_slower_than_its_baseline_is_said_so) {
  Results r = testing::emulator_fixture();
  std::string html = render_report_html(r, report_options_for(r));
  EXPECT_NE(html.find("<h2>Ladders: what each rung buys</h2>"), std::string::npos);
  EXPECT_NE(html.find("3.33×"), std::string::npos);
  std::swap(r.kernels[0].time_s, r.kernels[1].time_s);  // the rung now takes 20 ms
  EXPECT_NE(render_report_html(r, report_options_for(r)).find("0.30× (slower)"), std::string::npos);
}

TEST(Report, compare_page_puts_the_exit_and_the_slow_kernels_first) {
  Results base = testing::emulator_fixture(), next = testing::emulator_fixture();
  base.kernels = {testing::timed_kernel("steady", 1e-3, 0.002, 10),
                  testing::timed_kernel("slower", 1e-3, 0.002, 10)};
  next.kernels = {testing::timed_kernel("steady", 1e-3, 0.002, 10),
                  testing::timed_kernel("slower", 1.2e-3, 0.002, 10)};
  next.kernels[0].name = base.kernels[0].name = "steady";
  Comparison c = compare_results(base, next, {});
  ASSERT_EQ(c.count(Verdict::slow), 1);
  std::string html = render_comparison_html(c);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<b class=\"bad\">exit 1</b>"), std::string::npos);
  const auto slow = html.find("<tr class=\"slow\">"), same = html.find("<tr class=\"same\">");
  ASSERT_NE(slow, std::string::npos);
  ASSERT_NE(same, std::string::npos);
  EXPECT_LT(slow, same);  // worst first
  EXPECT_NE(html.find("1.200 (+20.0%)"), std::string::npos);
  EXPECT_NE(html.find("class=\"ci\""), std::string::npos);  // the interval against the band
}

TEST(Report, fusion_shows_declared_pairs_only_never_a_rung_and_its_baseline) {
  Results r = testing::emulator_fixture();
  // The fixture's fused kernel has the naive one as its ladder baseline only.
  std::string html = render_report_html(r, report_options_for(r));
  EXPECT_NE(html.find("No declared fusion pairs"), std::string::npos);
  EXPECT_EQ(html.find("<table class=\"fusion\">"), std::string::npos);
  r.kernels[1].fuses = r.kernels[0].name;  // declare the pair
  html = render_report_html(r, report_options_for(r));
  const auto fusion = html.find("<table class=\"fusion\">");
  ASSERT_NE(fusion, std::string::npos);
  EXPECT_NE(html.find("3.33×", fusion), std::string::npos);     // 20 ms / 6 ms
  EXPECT_NE(html.find("67% less", fusion), std::string::npos);  // 3x the bytes before
}

TEST(Report, fuses_survives_the_results_file) {
  const rl::test::ScratchDir scratch("rl_report_fuses");
  Results r = testing::emulator_fixture();
  r.kernels[1].fuses = r.kernels[0].name;
  write_results_atomic(scratch.path() / "results.json", r);
  Results back = load_results(scratch.path() / "results.json");
  EXPECT_EQ(back.kernels[1].fuses, r.kernels[0].name);
  EXPECT_EQ(back.kernels[0].fuses, "");
}

TEST(Report, terminal_summary_has_the_headline_and_fits_the_terminal) {
  Results r = testing::crowded_fixture(12);
  r.kernels[3].name += "_with_a_name_far_too_long_for_any_terminal_column_at_all";
  for (int columns : {60, 80, 120, 200}) {
    const std::string text = render_summary_text(r, report_options_for(r), columns);
    EXPECT_NE(text.find("Kernels: 12 validated and timed, 0 failed, 0 skipped"), std::string::npos);
    EXPECT_NE(text.find("Throttling: unknown — NVML not available"), std::string::npos);
    EXPECT_NE(text.find("Noise (spread: stddev / median of the repetitions)"), std::string::npos);
    // The 77-character name is cut, not wrapped, where it does not fit.
    EXPECT_EQ(text.find("…") != std::string::npos, columns <= 120) << columns;
    std::size_t start = 0, lines = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      std::string line = text.substr(start, end - start);
      std::size_t width = 0;
      for (char ch : line) width += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
      EXPECT_LE(width, static_cast<std::size_t>(columns)) << line;
      start = end + 1;
      ++lines;
    }
    EXPECT_GE(lines, 12u + 5u);
  }
}

}  // namespace
}  // namespace rl::roofline
