// What a run cut short writes: benchmarks.json without the benchmarks that
// did not finish and marked incomplete, results.json listing what was left
// out (and byte for byte roofline's file when nothing was), the progress line.
#include "rl/bench/run_output.hpp"

#include "rl/bench/assembly.hpp"
#include "rl/roofline/results_io.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace {

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json gbench_entry(const std::string& run_name, const std::string& name,
                            const char* error = nullptr) {
  nlohmann::json entry = {{"name", name}, {"run_name", run_name}, {"run_type", "iteration"}};
  if (error != nullptr) {
    entry["error_occurred"] = true;
    entry["error_message"] = error;
  }
  return entry;
}

TEST(MarkBenchmarksJson, drops_every_entry_of_an_unfinished_benchmark_and_marks_the_context) {
  rl::test::ScratchDir dir("rl_run_output_test");
  const auto file = dir.path() / "benchmarks.json";
  const std::string done = "scale/n=1000/iterations:1/manual_time";
  const std::string cut = "scale/n=4097/iterations:1/manual_time";
  const std::string never = "other/n=10/iterations:1/manual_time";
  nlohmann::json gb = {
      {"context", {{"executable", "bench_roofline_emu"}}},
      {"benchmarks",
       {gbench_entry(done, done), gbench_entry(done, done + "_median"), gbench_entry(cut, cut),
        gbench_entry(cut, cut), gbench_entry(cut, cut, "interrupted"),
        gbench_entry(cut, cut + "_median"), gbench_entry(never, never, "interrupted")}}};
  std::ofstream(file) << gb.dump(2);
  rl::bench::mark_benchmarks_json_incomplete(file, "SIGINT", {"scale/n=4097"});
  const nlohmann::json marked = nlohmann::json::parse(read_text(file));
  EXPECT_EQ(marked["context"]["bench_roofline_complete"], false);
  EXPECT_EQ(marked["context"]["bench_roofline_interrupted_by"], "SIGINT");
  EXPECT_EQ(marked["context"]["executable"], "bench_roofline_emu");
  ASSERT_EQ(marked["benchmarks"].size(), 2u);
  for (const auto& entry : marked["benchmarks"]) EXPECT_EQ(entry["run_name"], done);
}

TEST(MarkBenchmarksJson, non_finite_counters_google_benchmark_writes_become_null) {
  rl::test::ScratchDir dir("rl_run_output_test");
  const auto file = dir.path() / "benchmarks.json";
  std::ofstream(file) << R"({"context": {}, "benchmarks": [{"name": "copy_cv", )"
                         R"("run_name": "copy/n=1/iterations:1/manual_time", "FLOP/s": NaN, )"
                         R"("x": -Infinity, "label": "NaN"}]})";
  rl::bench::mark_benchmarks_json_incomplete(file, "SIGINT", {});
  const nlohmann::json marked = nlohmann::json::parse(read_text(file));
  EXPECT_EQ(marked["context"]["bench_roofline_complete"], false);
  ASSERT_EQ(marked["benchmarks"].size(), 1u);
  EXPECT_TRUE(marked["benchmarks"][0]["FLOP/s"].is_null());
  EXPECT_TRUE(marked["benchmarks"][0]["x"].is_null());
  EXPECT_EQ(marked["benchmarks"][0]["label"], "NaN");  // a string stays a string
}

TEST(MarkBenchmarksJson, a_budget_names_no_signal_and_a_torn_file_is_left_alone) {
  rl::test::ScratchDir dir("rl_run_output_test");
  const auto file = dir.path() / "benchmarks.json";
  std::ofstream(file) << R"({"context": {}, "benchmarks": []})";
  rl::bench::mark_benchmarks_json_incomplete(file, "", {});
  const nlohmann::json marked = nlohmann::json::parse(read_text(file));
  EXPECT_EQ(marked["context"]["bench_roofline_complete"], false);
  EXPECT_FALSE(marked["context"].contains("bench_roofline_interrupted_by"));
  std::ofstream(file) << R"({"context": {}, "benchmarks": [{"na)";
  rl::bench::mark_benchmarks_json_incomplete(file, "SIGINT", {});
  EXPECT_EQ(read_text(file), R"({"context": {}, "benchmarks": [{"na)");
}

TEST(ProgressLine, names_count_kernel_shape_outcome_and_elapsed_time) {
  rl::roofline::KernelResult kernel;
  kernel.name = "layernorm_f32";
  kernel.shape = {{"rows", 9}, {"C", 4100}};
  kernel.status = rl::roofline::Status::failed_validation;
  kernel.error = "y[3] = nan";
  EXPECT_EQ(rl::bench::progress_line(3, 12, kernel, std::chrono::seconds(83)),
            "[3/12] layernorm_f32 rows=9,C=4100 ... failed_validation: y[3] = nan (1m23s)");
}

}  // namespace
