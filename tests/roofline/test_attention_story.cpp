// The story up each attention ladder (analysis.hpp, AttentionLadder): the
// steps read from the records' declared baselines, each with a sentence
// generated from its numbers.  Inputs are fixture numbers chosen to exercise
// the code (FLOPs of 1.6e9 against the fixture's 1.6e10 FLOP/s tc.bf16 roof,
// so a step taking t seconds is at 10/t % of it), not measurements.
#include "fixtures.hpp"
#include "rl/roofline/analysis.hpp"
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
  EXPECT_EQ(bf16.roof_name, "tc.bf16");
  EXPECT_EQ(bf16.steps[4].compared_with, "attention_wgmma_tma_bf16");
  EXPECT_DOUBLE_EQ(*bf16.steps[4].speedup, 1.25);
  EXPECT_DOUBLE_EQ(*bf16.steps[1].bytes_factor, 25.0);
  EXPECT_DOUBLE_EQ(*bf16.steps[5].pct_of_tensor_roof, 40.0);
  EXPECT_FALSE(bf16.steps[0].speedup.has_value());  // nothing below the root
  const std::string& fused = bf16.steps[1].sentence;
  EXPECT_TRUE(has(fused,
                  "attention_f32_fused — idea of attention_f32_fused — moves 4 MB per the "
                  "cost model, 25× less than attention_f32_naive, at 400 FLOP/B; it takes "
                  "10 s, 10.00× faster than attention_f32_naive, 1% of the tc.bf16 roof."))
      << fused;
  // The fp16 ladder has no library record and no measured tc.fp16 roof.
  EXPECT_EQ(ladders[0].steps.back().name, "attention_flash_mma_sync_fp16");
  EXPECT_EQ(ladders[0].roof_name, "tc.fp16");
  EXPECT_FALSE(ladders[0].steps.back().pct_of_tensor_roof.has_value());
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
  EXPECT_TRUE(has(after, "40% of the tc.bf16 roof")) << after;
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

TEST(AttentionStory, is_in_results_json_and_in_the_reports_fusion_table) {
  const Results r = run_of(ladder_kernels());
  const auto json = nlohmann::json::parse(rl::roofline::results_to_text(r));
  const auto& step = json["analysis"]["attention_fusion"][0]["ladders"][1]["steps"][5];
  EXPECT_EQ(step["name"], "attention_cudnn_sdpa_bf16");
  EXPECT_DOUBLE_EQ(step["pct_of_tensor_roof"].get<double>(), 40.0);
  EXPECT_EQ(step["compared_with"], "attention_wgmma_pingpong_bf16");
  EXPECT_TRUE(has(step["sentence"].get<std::string>(), "1.60× faster"));
  const std::string html = rl::roofline::render_report_html(r, rl::roofline::report_options_for(r));
  EXPECT_TRUE(has(html, "<th>% of tensor roof</th>"));
  EXPECT_TRUE(has(html, "bf16 ladder (% of tensor roof: of tc.bf16 16 GFLOP/s)")) << html;
  EXPECT_TRUE(has(
      html,
      "<li>attention_cudnn_sdpa_bf16 — idea of attention_cudnn_sdpa_bf16 — moves 1 MB per the cost "
      "model (Q, K, V and O once: the library&apos;s own re-reads are not modelled)"));
  EXPECT_TRUE(has(html, "<td class=\"num\">40.0%</td>"));  // cuDNN's share of the roof
  EXPECT_TRUE(has(html, "on no ladder"));                  // the cuBLAS naive path
}

}  // namespace
