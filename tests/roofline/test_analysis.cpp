// The derived views (analysis.hpp) the report and results.json carry: the GEMM
// ladder, the precision ladder and why fusion beats naive attention.  Inputs
// are fixture numbers chosen to exercise the code, not measurements.
#include "fixtures.hpp"
#include "rl/roofline/analysis.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using rl::roofline::analyse;
using rl::roofline::KernelResult;
using rl::roofline::Precision;
using rl::roofline::ResultPrecision;
using rl::roofline::Results;
using rl::roofline::testing::emulator_fixture;
using rl::roofline::testing::timed_kernel;

KernelResult gemm(const std::string& name, const std::string& precision, double seconds,
                  const std::string& baseline, const std::string& library = "",
                  std::int64_t n = 256) {
  KernelResult k = timed_kernel(name, seconds, 0.0, 3);
  k.family = "gemm";
  k.variant = name;
  k.precision = ResultPrecision::from_json(precision);
  k.unit = *rl::roofline::parse_compute_unit(precision == "fp32" ? "fp32" : "tc_" + precision);
  k.baseline = baseline;
  k.library = library;
  k.idea = "idea of " + name;
  k.shape = {{"M", n}, {"N", n}, {"K", n}};
  k.flops = 2.0 * static_cast<double>(n * n * n);
  return k;
}

KernelResult attention(const std::string& name, double seconds, double bytes_min,
                       double bytes_model, std::int64_t N = 4096) {
  KernelResult k = timed_kernel(name, seconds, 0.0, 3);
  k.family = "attention";
  k.variant = name.find("naive") != std::string::npos ? "naive" : "fused";
  k.shape = {{"B", 4}, {"H", 16}, {"N", N}, {"d", 128}, {"causal", 0}};
  k.flops = 4.0 * 4 * 16 * static_cast<double>(N) * static_cast<double>(N) * 128;
  k.bytes_min = bytes_min;
  k.bytes_model = bytes_model;
  k.device_bytes = bytes_min;
  return k;
}

Results run_of(std::vector<KernelResult> kernels) {
  Results r = emulator_fixture();
  r.kernels = std::move(kernels);
  return r;
}

TEST(GemmLadder, climbs_by_precision_then_baseline_chain_with_libraries_last_in_each_precision) {
  // Given out of order: the ladder is read from the baseline links.
  const Results r = run_of({
      gemm("gemm_cublaslt_bf16", "bf16", 1.0, "", "cuBLASLt"),
      gemm("gemm_mma_sync_bf16", "bf16", 1.25, "gemm_wmma_bf16"),
      gemm("gemm_wmma_bf16", "bf16", 2.0, "gemm_f32_warptiled"),
      gemm("gemm_f32_warptiled", "fp32", 4.0, "gemm_f32_naive"),
      gemm("gemm_f32_naive", "fp32", 40.0, ""),
      gemm("gemm_cublas_sgemm_fp32", "fp32", 3.0, "", "cuBLAS"),
  });
  const auto a = analyse(r);
  ASSERT_EQ(a.gemm_ladders.size(), 1u);
  std::vector<std::string> order;
  for (const auto& rung : a.gemm_ladders[0].rungs) order.push_back(rung.name);
  EXPECT_EQ(order, (std::vector<std::string>{"gemm_f32_naive", "gemm_f32_warptiled",
                                             "gemm_cublas_sgemm_fp32", "gemm_wmma_bf16",
                                             "gemm_mma_sync_bf16", "gemm_cublaslt_bf16"}));
  const auto& rungs = a.gemm_ladders[0].rungs;
  // % of the library of the same precision: time_library / time_rung.
  EXPECT_DOUBLE_EQ(*rungs[1].pct_of_library, 75.0);  // fp32 warptiled vs cuBLAS SGEMM
  EXPECT_EQ(rungs[1].library_reference, "gemm_cublas_sgemm_fp32");
  EXPECT_DOUBLE_EQ(*rungs[4].pct_of_library, 80.0);  // bf16 mma.sync vs cuBLASLt
  EXPECT_EQ(rungs[4].library_reference, "gemm_cublaslt_bf16");
  EXPECT_FALSE(rungs[5].pct_of_library.has_value());  // the library is not its own reference
  EXPECT_EQ(rungs[3].idea, "idea of gemm_wmma_bf16");
}

TEST(GemmLadder, a_rung_that_was_not_timed_has_no_figures_and_keeps_its_status) {
  KernelResult failed = gemm("gemm_wmma_bf16", "bf16", 2.0, "");
  failed.status = rl::roofline::Status::failed_validation;
  failed.error = "element 3: got 1, expected 2";
  failed.time_s.reset();
  const auto a = analyse(run_of({failed, gemm("gemm_cublaslt_bf16", "bf16", 1.0, "", "cuBLASLt")}));
  const auto& rung = a.gemm_ladders.at(0).rungs.at(0);
  EXPECT_EQ(rung.status, rl::roofline::Status::failed_validation);
  EXPECT_FALSE(rung.flops_per_s.has_value());
  EXPECT_FALSE(rung.pct_of_library.has_value());
}

TEST(PrecisionLadder, takes_the_shape_with_most_precisions_and_shows_each_precisions_roof) {
  const Results r = run_of({
      gemm("gemm_f32_warptiled", "fp32", 4.0, ""), gemm("gemm_mma_sync_bf16", "bf16", 1.0, ""),
      gemm("gemm_cublaslt_bf16", "bf16", 0.5, "", "cuBLASLt"),
      gemm("gemm_f32_warptiled", "fp32", 32.0, "", "", 512),  // one precision only here
  });
  const auto a = analyse(r);
  ASSERT_TRUE(a.precision_ladder.has_value());
  EXPECT_EQ(a.precision_ladder->shape.at(0).second, 256);
  ASSERT_EQ(a.precision_ladder->steps.size(), 2u);
  const auto& fp32 = a.precision_ladder->steps[0];
  const auto& bf16 = a.precision_ladder->steps[1];
  EXPECT_EQ(fp32.precision, "fp32");
  EXPECT_EQ(fp32.roof_name, "fp32.fma");
  EXPECT_DOUBLE_EQ(*fp32.roof, 4.0e9);  // the fixture's measured fp32.fma ceiling
  EXPECT_EQ(bf16.kernel, "gemm_mma_sync_bf16");
  EXPECT_EQ(bf16.library, "gemm_cublaslt_bf16");
  EXPECT_DOUBLE_EQ(*bf16.flops_per_s, 2.0 * 256 * 256 * 256);
  EXPECT_DOUBLE_EQ(*bf16.roof, 1.6e10);
}

TEST(AttentionFusion, compares_fused_with_the_naive_of_its_precision_and_states_the_numbers) {
  const double qkvo = 4 * 4 * 16 * 4096.0 * 128 * 2;
  const double sp = 4 * 4 * 16 * 4096.0 * 4096 * 2;  // S, P written and read back
  KernelResult naive = attention("attention_naive_bf16", 8.0e-3, qkvo, qkvo + sp);
  naive.precision = Precision::bf16;
  KernelResult naive_f32 = attention("attention_f32_naive", 2.0e-2, 2 * qkvo, 2 * qkvo + 2 * sp);
  KernelResult fused = attention("attention_flash_bf16", 1.0e-3, qkvo, 1.5 * qkvo);
  fused.precision = Precision::bf16;
  const auto a = analyse(run_of({fused, naive_f32, naive}));
  ASSERT_EQ(a.attention_fusion.size(), 1u);
  const auto& f = a.attention_fusion[0];
  ASSERT_EQ(f.variants.size(), 3u);
  EXPECT_TRUE(f.variants[0].naive);
  EXPECT_TRUE(f.variants[1].naive);
  const auto& flash = f.variants[2];
  EXPECT_FALSE(flash.naive);
  EXPECT_EQ(flash.speedup_over, "attention_naive_bf16");  // same precision, not the fp32 one
  EXPECT_DOUBLE_EQ(*flash.speedup, 8.0);
  EXPECT_NEAR(f.variants[1].extra_traffic_share, sp / (qkvo + sp), 1e-12);
  ASSERT_GE(f.findings.size(), 2u);
  EXPECT_NE(f.findings[0].find("attention_naive_bf16"), std::string::npos) << f.findings[0];
  EXPECT_NE(f.findings[0].find("97% of it the N×N matrices S and P"), std::string::npos)
      << f.findings[0];
  EXPECT_NE(f.findings[1].find("8.00× faster than attention_naive_bf16"), std::string::npos)
      << f.findings[1];
  // The fixture context is the emulator's: the findings say the times are not a GPU's.
  EXPECT_NE(f.findings.back().find("CPU emulator"), std::string::npos);
}

TEST(AttentionFusion, a_slower_fused_kernel_is_reported_as_slower_not_hidden) {
  const auto a = analyse(run_of({attention("attention_f32_naive", 1.0e-3, 1e6, 5e7),
                                 attention("attention_f32_fused", 4.0e-3, 1e6, 2e6)}));
  const auto& fused = a.attention_fusion.at(0).variants.at(1);
  EXPECT_DOUBLE_EQ(*fused.speedup, 0.25);
  EXPECT_NE(a.attention_fusion[0].findings[1].find("0.25× faster"), std::string::npos);
}

TEST(AttentionFusion, the_naive_out_of_memory_point_is_a_finding_with_both_footprints) {
  KernelResult naive = attention("attention_f32_naive", 1.0, 1e9, 7e10, 16384);
  naive.status = rl::roofline::Status::skipped;
  naive.error = "needs 69.8 GB of device memory, 79.1 GB free";
  naive.time_s.reset();
  KernelResult fused = attention("attention_f32_fused", 1.0e-2, 1e9, 2e9, 16384);
  const auto a = analyse(run_of({naive, fused}));
  const auto& findings = a.attention_fusion.at(0).findings;
  bool found = false;
  for (const auto& s : findings)
    if (s.find("attention_f32_naive did not run: it needs 69.8 GB of device memory, 79.1 GB "
               "free; attention_f32_fused needs 1 GB") != std::string::npos)
      found = true;
  EXPECT_TRUE(found) << ::testing::PrintToString(findings);
}

TEST(Analysis, is_written_to_results_json_and_rendered_in_the_report) {
  const Results r = run_of({gemm("gemm_f32_naive", "fp32", 4.0, ""),
                            attention("attention_f32_naive", 1.0e-3, 1e6, 5e7),
                            attention("attention_f32_fused", 2.0e-4, 1e6, 2e6)});
  const auto json = nlohmann::json::parse(rl::roofline::results_to_text(r));
  ASSERT_TRUE(json.contains("analysis"));
  EXPECT_EQ(json["analysis"]["gemm_ladders"][0]["rungs"][0]["name"], "gemm_f32_naive");
  EXPECT_DOUBLE_EQ(json["analysis"]["attention_fusion"][0]["variants"][1]["speedup"].get<double>(),
                   5.0);
  // Read back: the analysis is derived, so the kernels round-trip unchanged.
  const Results back = rl::roofline::parse_results(rl::roofline::results_to_text(r), "test");
  EXPECT_EQ(back.kernels.size(), 3u);
  const std::string html = rl::roofline::render_report_html(r, rl::roofline::report_options_for(r));
  EXPECT_NE(html.find("<h2>GEMM ladder</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Why fusion beats naive attention</h2>"), std::string::npos);
  EXPECT_NE(html.find("5.00×"), std::string::npos);
}

}  // namespace
