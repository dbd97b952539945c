// Where a reader sees the counters (issue 28): the terminal summary, the HTML
// report (headline, kernel-table flag, the counters section) and `roofline
// compare` (markdown, JSON, page).  The fixture's counts are test inputs.
#include "fixtures.hpp"
#include "rl/roofline/compare.hpp"
#include "rl/roofline/counter_agreement.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/text.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace rl::roofline {
namespace {

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The summary's wrapped lines joined again (a continuation line starts with
// two spaces).
std::string unwrapped(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "\n  ") == 0) {
      out += ' ';
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The fixture's wrong model (counters_fixture: gelu fused loads a quarter more).
constexpr const char* kDiffers =
    "counted 25% more bytes loaded from L2 than the model (5.24 MB vs 4.19 MB): the kernel's "
    "instructions did more than its model declares; the count is exact, so fix the model";

TEST(CounterViews, the_report_flags_a_disagreement_and_lists_every_counted_kernel) {
  const Results r = testing::counters_fixture();
  const std::string html = render_report_html(r, report_options_for(r));
  EXPECT_NE(html.find("<p><span class=\"bad\">Counters beside the cost model (CUPTI on GH100, "
                      "exact emulator counts): 1 agree, 1 differ; 1 unavailable: no profiling "
                      "permission (ERR_NVGPUCTRPERM)</span>.</p>"),
            std::string::npos);
  // The kernel table: one flag, on the kernel whose counts differ, the sentence its title.
  EXPECT_EQ(occurrences(html, "(counters differ)"), 1u);
  EXPECT_NE(html.find(std::string("title=\"") + xml_escape(kDiffers)), std::string::npos);
  const auto section = html.find("<h2>Counters beside the model</h2>");
  ASSERT_NE(section, std::string::npos);
  const std::string table = html.substr(section, html.find("</table>", section) - section);
  EXPECT_EQ(occurrences(table, "<tr><td>"), 3u);  // the three counted kernels
  EXPECT_NE(html.find("<span class=\"bad\">differ</span><ul class=\"counters\">", section),
            std::string::npos);
  EXPECT_NE(
      html.find(std::string("<li class=\"bad\"><b>l2_load_bytes</b>: ") + xml_escape(kDiffers),
                section),
      std::string::npos);
  EXPECT_NE(html.find("<b>tensor_ops</b>: equal (exact emulator count)", section),
            std::string::npos);
  EXPECT_NE(html.find("CUPTI on GH100", section), std::string::npos);
  EXPECT_NE(html.find("unavailable: no profiling permission", section), std::string::npos);
}

TEST(CounterViews, a_run_without_counters_shows_none_of_it) {
  const Results r = testing::emulator_fixture();
  const std::string html = render_report_html(r, report_options_for(r));
  EXPECT_EQ(html.find("Counters beside"), std::string::npos);
  EXPECT_EQ(html.find("counters differ"), std::string::npos);
  EXPECT_EQ(render_summary_text(r, report_options_for(r), 120).find("Counters"), std::string::npos);
}

TEST(CounterViews, the_terminal_summary_says_which_kernel_differs_within_its_width) {
  const Results r = testing::counters_fixture();
  for (int columns : {80, 200}) {
    const std::string text = render_summary_text(r, report_options_for(r), columns);
    const std::string flat = unwrapped(text);
    EXPECT_NE(flat.find("Counters beside the cost model (CUPTI on GH100, exact emulator counts): 1 "
                        "agree, 1 differ; 1 unavailable: no profiling permission"),
              std::string::npos)
        << text;
    EXPECT_NE(flat.find(std::string("Counters differ: gelu_tanh_f32_fused_vec4 [n=1048576]: ") +
                        kDiffers + "."),
              std::string::npos)
        << text;
    EXPECT_EQ(occurrences(flat, "Counters differ:"), 1u);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      std::size_t width = 0;
      for (char ch : line) width += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
      EXPECT_LE(width, static_cast<std::size_t>(columns)) << line;
    }
  }
}

// Under --warm-l2 CUPTI's bytes are left out: the report's section and the
// terminal summary say which and why, once per reason.
TEST(CounterViews, bytes_left_out_under_a_warm_l2_are_named_with_the_reason) {
  Results r = testing::counters_fixture();
  KernelResult& k = r.kernels[0];  // the fixture's refused CUPTI kernel, now counted warm
  k.l2_flushed = false;
  k.counters->unavailable.clear();
  k.counters->values = {{"dram_bytes_read", k.bytes_model}, {"dram_bytes_write", 0}};
  compare_counters(k);
  const std::string why = std::string(skipped_comparisons(k).at(0).why);
  const std::string sentence = "dram_bytes not compared for 1 kernel: " + why + ".";
  EXPECT_NE(why.find("--warm-l2"), std::string::npos) << why;

  const std::string html = render_report_html(r, report_options_for(r));
  const auto section = html.find("<h2>Counters beside the model</h2>");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(html.find("<p class=\"muted\">" + xml_escape(sentence) + "</p>", section),
            std::string::npos);
  EXPECT_NE(html.find("<span class=\"muted\">nothing compared</span>", section), std::string::npos);
  EXPECT_NE(html.find("title=\"" + xml_escape(why) + "\"><b>dram_bytes</b>: not compared", section),
            std::string::npos);
  for (int columns : {80, 200}) {
    const std::string text = render_summary_text(r, report_options_for(r), columns);
    EXPECT_EQ(occurrences(unwrapped(text), sentence), 1u) << text;
  }
}

// A newer writer's quantity (read as ResultCounterQuantity keeps it) is shown
// as written, with the writer's verdict and sentence: the report lists it,
// compare flags it where the writer found a difference, and the current
// policy neither judges it nor names it as not compared.
TEST(CounterViews, an_unknown_quantity_is_shown_as_written_and_never_judged_here) {
  Results r = testing::counters_fixture();
  KernelResult& fused = r.kernels[1];
  CounterComparison newer;
  newer.quantity = ResultCounterQuantity::from_json("smem_bytes");
  newer.counted = 3e6;
  newer.modelled = 2e6;
  newer.tolerance = 0;
  newer.agrees = false;
  newer.sentence = "counted 50% more shared-memory bytes than the model";
  fused.counters->comparisons = {newer};
  KernelResult& gemm = r.kernels[2];
  CounterComparison agreeing = newer;
  agreeing.agrees = true;
  agreeing.sentence = "equal (a newer writer's check)";
  gemm.counters->comparisons.push_back(agreeing);

  const std::string html = render_report_html(r, report_options_for(r));
  const auto section = html.find("<h2>Counters beside the model</h2>");
  ASSERT_NE(section, std::string::npos);
  EXPECT_NE(
      html.find("<li class=\"bad\"><b>smem_bytes</b>: " + xml_escape(newer.sentence) + "</li>",
                section),
      std::string::npos);
  EXPECT_NE(html.find("<li><b>smem_bytes</b>: " + xml_escape(agreeing.sentence) + "</li>", section),
            std::string::npos);
  EXPECT_EQ(html.find("not compared", section), std::string::npos);
  EXPECT_EQ(counter_verdict(*gemm.counters).text, "agree");
  EXPECT_EQ(counter_verdict(*fused.counters).text, newer.sentence);

  const Comparison flagged = compare_results(r, r, {});
  ASSERT_EQ(flagged.counter_flags.size(), 2u);  // BASE and NEW
  EXPECT_EQ(flagged.counter_flags[0].sentence, newer.sentence);
  EXPECT_NE(render_summary_text(r, report_options_for(r), 200).find(newer.sentence),
            std::string::npos);
}

TEST(CounterViews, compare_flags_counters_that_differ_in_either_file_without_failing_the_gate) {
  const Results plain = testing::emulator_fixture(), counted = testing::counters_fixture();
  const Comparison without = compare_results(plain, plain, {});
  const Comparison in_new = compare_results(plain, counted, {});
  EXPECT_TRUE(without.counter_flags.empty());
  ASSERT_EQ(in_new.counter_flags.size(), 1u);
  EXPECT_EQ(in_new.counter_flags[0].kernel, "gelu_tanh_f32_fused_vec4 [n=1048576]");
  EXPECT_EQ(in_new.counter_flags[0].file, "NEW");
  EXPECT_EQ(in_new.counter_flags[0].sentence, kDiffers);
  EXPECT_EQ(in_new.exit_status(), without.exit_status());  // flagged, not judged

  const Comparison in_base = compare_results(counted, plain, {});
  ASSERT_EQ(in_base.counter_flags.size(), 1u);
  EXPECT_EQ(in_base.counter_flags[0].file, "BASE");

  const std::string markdown = comparison_markdown(in_new);
  EXPECT_NE(markdown.find("**Counters differ from the cost model** (flagged; the gate does not "
                          "judge them):\n- gelu_tanh_f32_fused_vec4 [n=1048576] in NEW: counted "
                          "25% more"),
            std::string::npos)
      << markdown;
  EXPECT_EQ(comparison_markdown(without).find("Counters differ"), std::string::npos);
  const nlohmann::json json = comparison_json(in_new);
  ASSERT_EQ(json["counter_flags"].size(), 1u);
  EXPECT_EQ(json["counter_flags"][0]["file"], "NEW");
  EXPECT_EQ(json["counter_flags"][0]["sentence"], kDiffers);
  EXPECT_TRUE(comparison_json(without)["counter_flags"].empty());
  const std::string page = render_comparison_html(in_new);
  EXPECT_NE(page.find("<h2>Counters differ from the cost model</h2>"), std::string::npos);
  EXPECT_NE(page.find("<b>gelu_tanh_f32_fused_vec4 [n=1048576]</b> in NEW"), std::string::npos);
}

}  // namespace
}  // namespace rl::roofline
