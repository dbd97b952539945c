// The story up each attention ladder (analysis.hpp, AttentionLadder): the
// steps read from the records' declared baselines, each with a sentence
// generated from its numbers.  Inputs are fixture numbers chosen to exercise
// the code, not measurements: 1.6e9 FLOPs, each record judged by
// apply_roofline against the fixture's ceilings as a run's writer does, so a
// bf16 step taking t seconds is at 10/t % of tc.bf16 (1.6e10 FLOP/s), an fp32
// one at 40/t % of fp32.fma (4e9 FLOP/s), and the fp16 and fp8 rungs, with no
// tensor roof measured, are judged against hbm.copy (2e9 B/s) at their
// intensity.
#include "fixtures.hpp"
#include "rl/roofline/analysis.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {

using rl::roofline::analyse;
using rl::roofline::AttentionLadder;
using rl::roofline::Backend;
using rl::roofline::KernelResult;
using rl::roofline::ResultPrecision;
using rl::roofline::Results;
using rl::roofline::Status;

KernelResult rung(const std::string& name, const std::string& precision, double seconds,
                  double bytes_model, const std::string& baseline,
                  const std::string& library = "") {
  KernelResult k = rl::roofline::testing::timed_kernel(name, seconds, 0.0, 3);
  k.family = "attention";
  k.variant = name;
  k.precision = ResultPrecision::from_json(precision);
  k.unit = *rl::roofline::parse_compute_unit(precision == "fp32" ? "fp32" : "tc_" + precision);
  k.baseline = baseline;
  k.library = library;
  k.idea = "idea of " + name;
  k.shape = {{"B", 1}, {"H", 32}, {"N", 16384}, {"d", 64}, {"causal", 0}};
  k.flops = 1.6e9;
  k.bytes_min = 1e6;
  k.bytes_model = bytes_model;
  return k;
}

KernelResult not_run(KernelResult k, Status status, const std::string& why) {
  k.status = status;
  k.error = why;
  k.time_s.reset();
  return k;
}

// The bf16 ladder as the suite declares it, given out of order, with the
// cuBLAS naive path (a library record, cuDNN's declared baseline) and an
// fp16 rung beside it.
std::vector<KernelResult> ladder_kernels() {
  return {
      rung("attention_cudnn_sdpa_bf16", "bf16", 0.25, 1e6, "attention_naive_cublas_bf16", "cuDNN"),
      rung("attention_wgmma_pingpong_bf16", "bf16", 0.4, 2e6, "attention_wgmma_tma_bf16"),
      rung("attention_flash_mma_sync_fp16", "fp16", 1.0, 2e6, "attention_f32_fused"),
      rung("attention_f32_fused", "fp32", 10.0, 4e6, "attention_f32_naive"),
      rung("attention_naive_cublas_bf16", "bf16", 20.0, 5e7, "", "cuBLAS"),
      rung("attention_wgmma_tma_bf16", "bf16", 0.5, 2e6, "attention_flash_mma_sync_bf16"),
      rung("attention_f32_naive", "fp32", 100.0, 1e8, ""),
      rung("attention_flash_mma_sync_bf16", "bf16", 1.0, 2e6, "attention_f32_fused"),
  };
}

Results run_of(std::vector<KernelResult> kernels, Backend backend = Backend::cuda) {
  Results r = rl::roofline::testing::emulator_fixture();
  r.context.backend = backend;
  r.kernels = std::move(kernels);
  // Each record's own rate and verdict, as results.json carries them.
  for (KernelResult& k : r.kernels)
    if (k.time_s) k.achieved_flops_per_s = k.flops / k.time_s->median;
  rl::roofline::apply_roofline(r);
  return r;
}

const AttentionLadder& ladder(const rl::roofline::Analysis& a, const std::string& precision) {
  for (const auto& l : a.attention_fusion.at(0).ladders)
    if (l.precision == precision) return l;
  throw std::runtime_error("no " + precision + " ladder");
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(AttentionStory, climbs_the_declared_baselines_in_ladder_order_and_ends_with_the_library) {
  const auto a = analyse(run_of(ladder_kernels()));
  const auto& ladders = a.attention_fusion.at(0).ladders;
  ASSERT_EQ(ladders.size(), 2u);            // fp32 is below both tops: no ladder of its own
  EXPECT_EQ(ladders[0].precision, "fp16");  // the precision ladder's order
  std::vector<std::string> order;
  for (const auto& s : ladders[1].steps) order.push_back(s.name);
  EXPECT_EQ(order, (std::vector<std::string>{
                       "attention_f32_naive", "attention_f32_fused",
                       "attention_flash_mma_sync_bf16", "attention_wgmma_tma_bf16",
                       "attention_wgmma_pingpong_bf16", "attention_cudnn_sdpa_bf16"}));
  const auto& bf16 = ladders[1];
  EXPECT_EQ(bf16.steps[4].compared_with, "attention_wgmma_tma_bf16");
  EXPECT_DOUBLE_EQ(*bf16.steps[4].speedup, 1.25);
  EXPECT_DOUBLE_EQ(*bf16.steps[1].bytes_factor, 25.0);
  EXPECT_DOUBLE_EQ(*bf16.steps[5].pct_of_roof, 40.0);
  EXPECT_EQ(bf16.steps[5].roof_name, "tc.bf16");
  EXPECT_EQ(bf16.steps[1].roof_name, "fp32.fma");   // its own, not the ladder's
  EXPECT_FALSE(bf16.steps[0].speedup.has_value());  // nothing below the root
  const std::string& fused = bf16.steps[1].sentence;
  EXPECT_TRUE(has(fused,
                  "attention_f32_fused — idea of attention_f32_fused — moves 4 MB per the "
                  "cost model, 25× less than attention_f32_naive, at 400 FLOP/B; it takes "
                  "10 s, 10.00× faster than attention_f32_naive, 4% of its fp32.fma roof."))
      << fused;
  // The fp16 ladder has no library record; with no tc.fp16 roof measured,
  // its top rung was judged against the sloped hbm.copy roof.
  EXPECT_EQ(ladders[0].steps.back().name, "attention_flash_mma_sync_fp16");
  EXPECT_EQ(ladders[0].steps.back().roof_name, "hbm.copy");
}

TEST(AttentionStory,
     a_rung_that_did_not_run_is_a_gap_and_the_next_compares_with_the_last_that_ran) {
  auto kernels = ladder_kernels();
  kernels[5] =
      not_run(kernels[5], Status::skipped, "needs compute capability 9.0, the device has 8.0");
  const auto a = analyse(run_of(kernels));
  const auto& steps = ladder(a, "bf16").steps;
  EXPECT_EQ(
      steps[3].sentence,
      "attention_wgmma_tma_bf16 — idea of attention_wgmma_tma_bf16 — did not run here: it was "
      "skipped (needs compute capability 9.0, the device has 8.0); the next step is "
      "compared with attention_flash_mma_sync_bf16.");
  EXPECT_EQ(steps[4].compared_with, "attention_flash_mma_sync_bf16");
  EXPECT_DOUBLE_EQ(*steps[4].speedup, 2.5);
  EXPECT_TRUE(has(steps[4].sentence, "2.50× faster than attention_flash_mma_sync_bf16"));
}

TEST(AttentionStory, a_step_that_got_slower_is_said_to_be_slower) {
  auto kernels = ladder_kernels();
  kernels[1].time_s->median = 0.625;  // pingpong, after the 0.5 s wgmma + TMA rung
  const auto a = analyse(run_of(kernels));
  const auto& s = ladder(a, "bf16").steps[4];
  EXPECT_DOUBLE_EQ(*s.speedup, 0.8);
  EXPECT_TRUE(has(s.sentence, "1.25× slower than attention_wgmma_tma_bf16")) << s.sentence;
  EXPECT_FALSE(has(s.sentence, "faster")) << s.sentence;
}

TEST(AttentionStory, on_the_emulator_times_and_speedups_are_marked_as_not_a_gpus) {
  const auto emulated = ladder(analyse(run_of(ladder_kernels(), Backend::emulator)), "bf16");
  EXPECT_TRUE(has(emulated.steps[2].sentence,
                  "on the CPU emulator, not a GPU, it takes 1 s, 10.00× faster than "
                  "attention_f32_fused there"))
      << emulated.steps[2].sentence;
  const auto gpu = ladder(analyse(run_of(ladder_kernels(), Backend::cuda)), "bf16");
  EXPECT_FALSE(has(gpu.steps[2].sentence, "emulator")) << gpu.steps[2].sentence;
}

// The negative: change one step's numbers and its sentence must change with
// them (a canned sentence would not).
TEST(AttentionStory, a_steps_sentence_is_computed_from_its_numbers) {
  auto kernels = ladder_kernels();
  const std::string before = ladder(analyse(run_of(kernels)), "bf16").steps[3].sentence;
  kernels[5].time_s->median = 0.25;
  kernels[5].bytes_model = 4e6;
  const std::string after = ladder(analyse(run_of(kernels)), "bf16").steps[3].sentence;
  EXPECT_NE(before, after);
  EXPECT_TRUE(has(before, "as many as attention_flash_mma_sync_bf16")) << before;
  EXPECT_TRUE(has(before, "2.00× faster")) << before;
  EXPECT_TRUE(has(after, "2× more than attention_flash_mma_sync_bf16")) << after;
  EXPECT_TRUE(has(after, "it takes 250 ms, 4.00× faster")) << after;
  EXPECT_TRUE(has(after, "40% of its tc.bf16 roof")) << after;
}

// The naive path out of device memory (the harness's skip reason, as
// bench/src/selection.cpp writes it): the ladder starts with that gap.
TEST(AttentionStory, a_naive_root_out_of_memory_says_so_and_the_next_step_stands_alone) {
  auto kernels = ladder_kernels();
  kernels[6] = not_run(kernels[6], Status::skipped, "needs 69.3 GB of device memory, 24.0 GB free");
  const auto a = analyse(run_of(kernels));
  const auto& steps = ladder(a, "bf16").steps;
  EXPECT_TRUE(has(steps[0].sentence,
                  "did not run here: it was skipped (needs 69.3 GB of device memory, 24.0 GB "
                  "free); no step below it ran"))
      << steps[0].sentence;
  EXPECT_TRUE(steps[1].compared_with.empty());
  EXPECT_TRUE(has(steps[1].sentence, "; no step below it ran.")) << steps[1].sentence;
}

TEST(AttentionStory, a_ladder_whose_lowest_baseline_is_not_in_the_run_says_so) {
  const auto a = analyse(run_of({ladder_kernels()[0], ladder_kernels()[1], ladder_kernels()[5]}));
  const auto& l = ladder(a, "bf16");
  EXPECT_EQ(l.missing_baseline, "attention_flash_mma_sync_bf16");
  ASSERT_EQ(l.steps.size(), 3u);
  EXPECT_TRUE(has(l.steps[0].sentence,
                  "its baseline attention_flash_mma_sync_bf16 is not in "
                  "this run"))
      << l.steps[0].sentence;
}

// Review finding 1: a step is quoted against the roof its own record was
// judged against (its unit's), never the top rung's: the fp32 rungs are
// shared by every ladder and read the same in each.
TEST(AttentionStory, each_step_is_quoted_against_the_roof_its_own_record_was_judged_against) {
  const auto a = analyse(run_of(ladder_kernels()));
  const auto& fp16 = ladder(a, "fp16").steps;
  const auto& bf16 = ladder(a, "bf16").steps;
  EXPECT_TRUE(has(bf16[1].sentence, ", 4% of its fp32.fma roof.")) << bf16[1].sentence;
  EXPECT_EQ(fp16[1].sentence, bf16[1].sentence);  // attention_f32_fused, one record
  EXPECT_TRUE(has(bf16[2].sentence, ", 10% of its tc.bf16 roof")) << bf16[2].sentence;
  // No tc.fp16 ceiling in the fixture: the fp16 rung's roof is hbm.copy at
  // its 800 FLOP/B (1.6e12 FLOP/s), of which 1.6e9 FLOP/s is 0.1%.
  EXPECT_TRUE(has(fp16[2].sentence, ", 0.1% of its hbm.copy roof")) << fp16[2].sentence;
  for (const auto& s : bf16) EXPECT_FALSE(has(s.sentence, "the tc.")) << s.sentence;
}

// Review finding 2: a step that changes precision says so beside the factor
// and the speed-up, which the rung's idea does not earn alone.
TEST(AttentionStory, a_change_of_precision_is_said_and_not_credited_to_the_idea_alone) {
  auto kernels = ladder_kernels();
  kernels.push_back(
      rung("attention_wgmma_fp8_e4m3", "fp8", 0.25, 1.5e6, "attention_wgmma_tma_bf16"));
  const auto a = analyse(run_of(kernels));
  const std::string& fp16 = ladder(a, "fp16").steps[2].sentence;
  EXPECT_TRUE(has(fp16,
                  "2× less than attention_f32_fused (fp32 -> fp16: half the bytes per element, "
                  "which is all of that factor)"))
      << fp16;
  EXPECT_TRUE(has(fp16,
                  "10.00× faster than attention_f32_fused (its idea and the change to fp16 "
                  "together)"))
      << fp16;
  const auto& fp8 = ladder(a, "fp8").steps;
  ASSERT_EQ(fp8.back().name, "attention_wgmma_fp8_e4m3");
  EXPECT_TRUE(has(fp8.back().sentence,
                  "1.33× less than attention_wgmma_tma_bf16 (bf16 -> fp8: half the bytes per "
                  "element; 1.5× more beyond that)"))
      << fp8.back().sentence;
  EXPECT_TRUE(has(fp8.back().sentence, "(its idea and the change to fp8 together)"))
      << fp8.back().sentence;
  const std::string& same = ladder(a, "bf16").steps[4].sentence;  // bf16 -> bf16
  EXPECT_FALSE(has(same, "->")) << same;
  EXPECT_FALSE(has(same, "together")) << same;
}

// Review finding 3: on the emulator a step's sentence quotes no roof
// percentage (they do not hold there), and a step above its roof is not
// trusted, on the emulator and on a GPU, as the findings say.
TEST(AttentionStory, on_the_emulator_no_roof_percentage_and_above_the_roof_is_not_trusted) {
  auto kernels = ladder_kernels();
  kernels[0].time_s->median = 0.05;  // cuDNN at 200% of tc.bf16
  const auto emulated = ladder(analyse(run_of(kernels, Backend::emulator)), "bf16");
  for (const auto& s : emulated.steps) EXPECT_FALSE(has(s.sentence, "%")) << s.sentence;
  EXPECT_TRUE(has(emulated.steps[5].sentence, "above its roof: not trusted"))
      << emulated.steps[5].sentence;
  const auto gpu = ladder(analyse(run_of(kernels, Backend::cuda)), "bf16");
  EXPECT_TRUE(has(gpu.steps[5].sentence, "200% of its tc.bf16 roof: above it, not trusted"))
      << gpu.steps[5].sentence;
  EXPECT_FALSE(has(gpu.steps[4].sentence, "trusted")) << gpu.steps[4].sentence;
  // The findings likewise: the bound, its roof's percentage on a GPU only.
  const auto findings = [&](Backend backend) {
    const auto a = analyse(run_of(kernels, backend));
    std::string all;
    for (const auto& f : a.attention_fusion.at(0).findings) all += f;
    return all;
  };

  EXPECT_FALSE(has(findings(Backend::emulator), "% of its")) << findings(Backend::emulator);
  EXPECT_TRUE(has(findings(Backend::emulator), "(above its roof: not trusted)"))
      << findings(Backend::emulator);
  EXPECT_TRUE(
      has(findings(Backend::cuda), "(above its roof: not trusted, 200% of its tc.bf16 roof)"))
      << findings(Backend::cuda);
}

// Review finding 5: a baseline the run has at other shapes is said to be
// missing at this shape, not from the run.
TEST(AttentionStory, a_baseline_run_only_at_another_shape_is_not_at_this_shape) {
  auto kernels = ladder_kernels();
  kernels[7].shape = {{"B", 1}, {"H", 32}, {"N", 4096}, {"d", 64}, {"causal", 0}};
  const auto a = analyse(run_of({kernels[0], kernels[1], kernels[5], kernels[7]}));
  const auto& l = ladder(a, "bf16");
  EXPECT_EQ(l.missing_baseline, "attention_flash_mma_sync_bf16");
  EXPECT_TRUE(
      has(l.steps[0].sentence, "its baseline attention_flash_mma_sync_bf16 is not at this shape"))
      << l.steps[0].sentence;
}

// Names decide two things only (docs/roofline.md): a library record whose
// name says naive never closes a ladder, and between equally deep top rungs
// the one whose name does not say naive is the top.
TEST(AttentionStory, a_naive_library_record_never_closes_a_ladder) {
  auto kernels = ladder_kernels();
  kernels.erase(kernels.begin());  // no cuDNN: only the cuBLAS naive path is a library record
  const auto a = analyse(run_of(kernels));
  EXPECT_EQ(ladder(a, "bf16").steps.back().name, "attention_wgmma_pingpong_bf16");
}

// Review finding 4: a record on several ladders (the fp32 rungs) has one row
// with its numbers; the later ladders point back to it.
TEST(AttentionStory, a_record_on_several_ladders_has_one_row_of_numbers) {
  const Results r = run_of(ladder_kernels());
  const std::string html = rl::roofline::render_report_html(r, rl::roofline::report_options_for(r));
  auto count = [&](const std::string& part) {
    std::size_t n = 0;
    for (auto at = html.find(part); at != std::string::npos; at = html.find(part, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<tr><td>attention_f32_naive <span class=\"muted\">(naive)</span></td><td>fp32"
                  "</td><td class=\"num\">"),
            1u);
  EXPECT_EQ(count("<td colspan=\"9\" class=\"muted\">as in the fp16 ladder above</td>"), 2u);
}

TEST(AttentionStory, is_in_results_json_and_in_the_reports_fusion_table) {
  const Results r = run_of(ladder_kernels());
  const auto json = nlohmann::json::parse(rl::roofline::results_to_text(r));
  const auto& step = json["analysis"]["attention_fusion"][0]["ladders"][1]["steps"][5];
  EXPECT_EQ(step["name"], "attention_cudnn_sdpa_bf16");
  EXPECT_DOUBLE_EQ(step["pct_of_roof"].get<double>(), 40.0);
  EXPECT_EQ(step["roof_name"], "tc.bf16");
  EXPECT_EQ(step["bound"], "below_both");
  EXPECT_EQ(step["compared_with"], "attention_wgmma_pingpong_bf16");
  EXPECT_TRUE(has(step["sentence"].get<std::string>(), "1.60× faster"));
  const std::string html = rl::roofline::render_report_html(r, rl::roofline::report_options_for(r));
  EXPECT_FALSE(has(html, "tensor roof"));
  EXPECT_TRUE(has(html, ">bf16 ladder</th>")) << html;
  EXPECT_TRUE(has(
      html,
      "<li>attention_cudnn_sdpa_bf16 — idea of attention_cudnn_sdpa_bf16 — moves 1 MB per the cost "
      "model (Q, K, V and O once: the library&apos;s own re-reads are not modelled)"));
  EXPECT_TRUE(has(html, "<td class=\"num\">40.0% <small>of tc.bf16</small></td>"));  // cuDNN
  EXPECT_TRUE(has(html, "on no ladder"));  // the cuBLAS naive path
}

}  // namespace
