#include "rl/bench/options.hpp"
#include "rl/bench/run_info.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace {

using rl::bench::Options;
using rl::bench::parse_options;
using rl::bench::UsageError;

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(CommandLine, our_flags_accept_separate_and_equals_values) {
  const Options a = parse_options({"--size", "small", "--out", "o", "--seed", "7", "--warm-l2"});
  EXPECT_EQ(a.size, "small");
  EXPECT_EQ(a.out_dir, std::filesystem::path("o"));
  EXPECT_EQ(a.seed, 7u);
  EXPECT_TRUE(a.warm_l2);
  const Options b =
      parse_options({"--size=large", "--out=dir", "--seed=0", "--list", "--ceilings-only"});
  EXPECT_EQ(b.size, "large");
  EXPECT_EQ(b.out_dir, std::filesystem::path("dir"));
  EXPECT_EQ(b.seed, 0u);
  EXPECT_TRUE(b.list);
  EXPECT_TRUE(b.ceilings_only);
  EXPECT_FALSE(b.warm_l2);
}

TEST(CommandLine, google_benchmark_flags_pass_through_in_order) {
  const Options o = parse_options(
      {"--benchmark_filter=scale", "--size", "small", "--benchmark_repetitions=3", "--v=2"});
  EXPECT_EQ(o.benchmark_args, (std::vector<std::string>{"--benchmark_filter=scale",
                                                        "--benchmark_repetitions=3", "--v=2"}));
}

TEST(CommandLine, display_aggregates_only_is_applied_by_us_and_report_aggregates_only_refused) {
  EXPECT_TRUE(parse_options({"--benchmark_display_aggregates_only"}).display_aggregates_only);
  const Options o = parse_options({"--benchmark_display_aggregates_only=true"});
  EXPECT_TRUE(o.display_aggregates_only);
  EXPECT_TRUE(o.benchmark_args.empty());  // not handed to Google Benchmark
  EXPECT_FALSE(
      parse_options({"--benchmark_display_aggregates_only=false"}).display_aggregates_only);
  EXPECT_THROW(parse_options({"--benchmark_display_aggregates_only=maybe"}), UsageError);
  EXPECT_THROW(parse_options({"--benchmark_report_aggregates_only=true"}), UsageError);
}

TEST(CommandLine, unknown_flags_and_bad_values_are_usage_errors) {
  EXPECT_THROW(parse_options({"--bogus"}), UsageError);
  EXPECT_THROW(parse_options({"stray"}), UsageError);
  EXPECT_THROW(parse_options({"--size"}), UsageError);
  EXPECT_THROW(parse_options({"--size", "--warm-l2"}), UsageError);
  EXPECT_THROW(parse_options({"--seed", "-3"}), UsageError);
  EXPECT_THROW(parse_options({"--seed", "12abc"}), UsageError);
  EXPECT_THROW(parse_options({"--warm-l2=yes"}), UsageError);
  EXPECT_THROW(parse_options({"--out="}), UsageError);
}

TEST(CommandLine, sampling_and_budget_flags_take_seconds_and_fractions) {
  const Options o =
      parse_options({"--timeout", "0.05", "--max-noise=1", "--min-samples", "3", "--budget=510"});
  EXPECT_DOUBLE_EQ(o.sampling.timeout_s, 0.05);
  EXPECT_DOUBLE_EQ(o.sampling.max_noise, 0.01);
  EXPECT_EQ(o.sampling.min_samples, 3);
  EXPECT_EQ(o.budget_s, 510.0);
  EXPECT_FALSE(parse_options({}).budget_s.has_value());
  EXPECT_THROW(parse_options({"--budget", "0"}), UsageError);
  EXPECT_THROW(parse_options({"--budget", "soon"}), UsageError);
}

TEST(CommandLine, counters_is_off_by_default_and_takes_no_value) {
  EXPECT_FALSE(parse_options({}).counters);
  EXPECT_TRUE(parse_options({"--counters"}).counters);
  EXPECT_TRUE(parse_options({"--size", "small", "--counters", "--warm-l2"}).counters);
  EXPECT_THROW(parse_options({"--counters=yes"}), UsageError);
  // Not a Google Benchmark flag: it is never handed to benchmark::Initialize.
  EXPECT_TRUE(parse_options({"--counters"}).benchmark_args.empty());
}

TEST(CommandLine, help_is_recognised_and_lists_every_flag) {
  EXPECT_TRUE(parse_options({"--help"}).help);
  EXPECT_TRUE(parse_options({"-h"}).help);
  const std::string help = rl::bench::our_flags_help("bench_roofline");
  for (const char* flag :
       {"--size", "--out", "--warm-l2", "--seed", "--list", "--ceilings-only", "--budget",
        "--timeout", "--max-noise", "--min-samples", "--counters", "--benchmark_filter"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
}

TEST(CommandLine, benchmark_argv_adds_repetitions_and_json_out_by_default) {
  const auto argv = rl::bench::benchmark_argv("bench_roofline", parse_options({}), "/tmp/run");
  EXPECT_EQ(argv.front(), "bench_roofline");
  EXPECT_TRUE(contains(argv, "--benchmark_repetitions=5"));
  EXPECT_TRUE(contains(argv, "--benchmark_out=/tmp/run/benchmarks.json"));
  EXPECT_TRUE(contains(argv, "--benchmark_out_format=json"));
}

TEST(CommandLine, benchmark_argv_keeps_the_users_choices) {
  const auto argv = rl::bench::benchmark_argv(
      "bench_roofline",
      parse_options(
          {"--benchmark_repetitions=2", "--benchmark_out=mine.csv", "--benchmark_out_format=csv"}),
      "/tmp/run");
  EXPECT_TRUE(contains(argv, "--benchmark_repetitions=2"));
  EXPECT_FALSE(contains(argv, "--benchmark_repetitions=5"));
  EXPECT_TRUE(contains(argv, "--benchmark_out=mine.csv"));
  EXPECT_FALSE(contains(argv, "--benchmark_out=/tmp/run/benchmarks.json"));
  EXPECT_FALSE(contains(argv, "--benchmark_out_format=json"));
}

TEST(OutputDir, is_created_with_parents_and_must_be_writable) {
  const rl::test::ScratchDir scratch("rl_bench_options_test");
  const auto& base = scratch.path();
  rl::bench::prepare_output_dir(base / "a" / "b");
  EXPECT_TRUE(std::filesystem::is_directory(base / "a" / "b"));
  EXPECT_TRUE(std::filesystem::is_empty(base / "a" / "b"));  // the probe file is gone
  std::ofstream(base / "file") << "x";
  EXPECT_THROW(rl::bench::prepare_output_dir(base / "file"), UsageError);
  EXPECT_THROW(rl::bench::prepare_output_dir(base / "file" / "sub"), UsageError);
}

TEST(RunInfo, device_slug_is_lowercase_words_joined_by_dashes) {
  EXPECT_EQ(rl::bench::device_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(rl::bench::device_slug("  A100-SXM4 (40GB) "), "a100-sxm4-40gb");
  EXPECT_EQ(rl::bench::device_slug("***"), "unknown-device");
}

TEST(RunInfo, timestamps_spell_one_instant_in_utc) {
  const auto when = std::chrono::system_clock::time_point(std::chrono::seconds(1795304234));
  EXPECT_EQ(rl::bench::utc_compact_timestamp(when), "20261121T233714Z");
  EXPECT_EQ(rl::bench::utc_iso_timestamp(when), "2026-11-21T23:37:14Z");
}

TEST(ParseOptions, selection_flags_are_collected_in_order) {
  const Options o = parse_options({"--family", "gemm,attention", "--family=layernorm", "--shape",
                                   "gemm:M=64,N=32,K=16", "--no-ceilings", "--dump-tensors", "d"});
  EXPECT_EQ(o.families, (std::vector<std::string>{"gemm", "attention", "layernorm"}));
  EXPECT_EQ(o.shape_specs, (std::vector<std::string>{"gemm:M=64,N=32,K=16"}));
  EXPECT_TRUE(o.no_ceilings);
  ASSERT_TRUE(o.dump_tensors.has_value());
  EXPECT_EQ(*o.dump_tensors, "d");
}

TEST(ParseShapeOverride, splits_family_and_dimensions_in_the_order_given) {
  const auto o = rl::bench::parse_shape_override("attention:B=1,H=2,N=64,d=64,causal=0");
  EXPECT_EQ(o.family, "attention");
  ASSERT_EQ(o.dims.size(), 5u);
  EXPECT_EQ(o.dims[2], (std::pair<std::string, std::int64_t>{"N", 64}));
  EXPECT_EQ(o.dims[4], (std::pair<std::string, std::int64_t>{"causal", 0}));
}

TEST(ParseShapeOverride, malformed_specs_are_usage_errors) {
  for (const char* bad : {"gemm", ":M=1", "gemm:", "gemm:M", "gemm:=4", "gemm:M=x", "gemm:M=-1",
                          "gemm:M=1,M=2", "gemm:M=1,"})
    EXPECT_THROW(rl::bench::parse_shape_override(bad), UsageError) << bad;
}

}  // namespace
