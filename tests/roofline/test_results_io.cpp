#include "fixtures.hpp"
#include "rl/roofline/results_io.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rl::roofline {
namespace {

std::string fixture_text() {
  return results_to_text(testing::emulator_fixture());
}

// Parses `text` expecting a ResultsError and returns its message.
std::string parse_error(const std::string& text) {
  try {
    parse_results(text, "in.json");
  } catch (const ResultsError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for: " << text.substr(0, 200);
  return {};
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

TEST(ResultsIo, round_trip_preserves_every_field) {
  Results in = testing::emulator_fixture();
  in.context.ecc_enabled = true;
  in.context.power_limit_w = 300;
  in.ceilings[0].datasheet = 2.5e9;
  in.ceilings[0].throttle_reasons = {"sw_power_cap"};
  in.kernels[1].roof = 1.5e9;
  in.kernels[1].pct_of_roof = 42.5;
  in.kernels[1].bound = Bound::memory;
  in.kernels[1].sm_clock_mhz = 1410;
  Results out = parse_results(results_to_text(in), "round-trip");

  EXPECT_EQ(results_to_text(out), results_to_text(in));
  EXPECT_EQ(out.context.backend, Backend::emulator);
  EXPECT_EQ(out.context.ecc_enabled, std::optional<bool>(true));
  EXPECT_FALSE(out.context.persistence_mode.has_value());
  EXPECT_EQ(out.ceilings[0].throttle_reasons.size(), 1u);
  ASSERT_TRUE(out.kernels[1].roof.has_value());
  EXPECT_DOUBLE_EQ(*out.kernels[1].roof, 1.5e9);
  EXPECT_EQ(out.kernels[1].baseline, "gelu_tanh_f32_naive");
  ASSERT_TRUE(out.kernels[0].time_s.has_value());
  EXPECT_EQ(out.kernels[0].time_s->samples, in.kernels[0].time_s->samples);
}

TEST(ResultsIo, run_state_round_trips_and_is_absent_in_older_files) {
  Results r = testing::emulator_fixture();
  r.run.complete = false;
  r.run.interrupted_by = "SIGTERM";
  r.run.command_line = {"bench_roofline", "--size", "large"};
  const Results back = parse_results(results_to_text(r), "run.json");
  EXPECT_EQ(back.run.complete, std::optional<bool>(false));
  EXPECT_EQ(back.run.interrupted_by, "SIGTERM");
  EXPECT_EQ(back.run.command_line, r.run.command_line);

  nlohmann::json older = to_json(r);
  older.erase("run");  // written before "run" existed
  EXPECT_FALSE(results_from_json(older).run.complete.has_value());
}

TEST(ResultsIo, left_out_and_budget_round_trip_and_are_absent_when_empty) {
  Results r = testing::emulator_fixture();
  EXPECT_EQ(to_json(r)["run"].count("left_out"), 0u);  // nothing left out: no key
  r.run.settings = RunSettings{};
  EXPECT_EQ(to_json(r)["run"]["settings"].count("budget_s"), 0u);  // no --budget: no key
  r.run.settings->budget_s = 20;
  r.run.left_out = {
      {"scale_f32_scalar", {{"n", 1000}}, LeftOutReason::budget},
      {"gemm_f32_naive", {{"M", 8}, {"N", 9}, {"K", 10}}, LeftOutReason::interrupted}};
  const nlohmann::json json = to_json(r);
  EXPECT_EQ(json["run"]["left_out"][0]["reason"], "not reached: budget");
  EXPECT_EQ(json["run"]["left_out"][1]["reason"], "interrupted");
  EXPECT_EQ(json["run"]["settings"]["budget_s"], 20.0);
  const Results back = parse_results(results_to_text(r), "left-out.json");
  ASSERT_EQ(back.run.left_out.size(), 2u);
  EXPECT_EQ(back.run.left_out[1].name, "gemm_f32_naive");
  EXPECT_EQ(back.run.left_out[1].shape, r.run.left_out[1].shape);  // order kept
  EXPECT_EQ(back.run.left_out[0].reason, LeftOutReason::budget);
  EXPECT_EQ(back.run.settings->budget_s, std::optional<double>(20));
  EXPECT_EQ(results_to_text(back), results_to_text(r));
}

TEST(ResultsIo, unknown_left_out_reason_names_the_pointer) {
  Results r = testing::emulator_fixture();
  r.run.left_out = {{"scale_f32_scalar", {{"n", 1000}}, LeftOutReason::budget}};
  std::string text = results_to_text(r);
  replace_once(text, "\"not reached: budget\"", "\"bored\"");
  EXPECT_NE(parse_error(text).find("/run/left_out/0/reason"), std::string::npos);
}

TEST(ResultsIo, shape_keeps_dimension_order) {
  Results out = parse_results(fixture_text(), "fixture");
  const auto& shape = out.kernels[2].shape;  // gemm: m, n, k
  ASSERT_EQ(shape.size(), 3u);
  EXPECT_EQ(shape[0].first, "m");
  EXPECT_EQ(shape[1].first, "n");
  EXPECT_EQ(shape[2].first, "k");
}

TEST(ResultsIo, infinite_validation_error_is_written_as_null_and_reads_back_infinite) {
  std::string text = fixture_text();
  EXPECT_NE(text.find("\"max_rel_err\": null"), std::string::npos);
  EXPECT_EQ(text.find("inf"), std::string::npos);
  EXPECT_EQ(text.find("nan"), std::string::npos);
  Results out = parse_results(text, "fixture");
  EXPECT_TRUE(std::isinf(out.kernels[3].max_rel_err));
  EXPECT_FALSE(out.kernels[3].time_s.has_value());
}

TEST(ResultsIo, nan_measurement_is_written_as_null_not_as_invalid_json) {
  Results in = testing::emulator_fixture();
  in.kernels[0].roof = std::nan("");
  std::string text = results_to_text(in);
  EXPECT_TRUE(nlohmann::json::accept(text));
  EXPECT_FALSE(parse_results(text, "x").kernels[0].roof.has_value());
}

TEST(ResultsIo, every_non_finite_figure_the_writer_can_produce_reads_back) {
  Results in = testing::emulator_fixture();
  KernelResult& k = in.kernels[0];
  k.flops = k.bytes_min = k.bytes_model = k.intensity = std::nan("");
  k.achieved_flops_per_s = k.achieved_bytes_per_s = std::numeric_limits<double>::infinity();
  const Results out = parse_results(results_to_text(in), "x");
  EXPECT_TRUE(std::isnan(out.kernels[0].flops));
  EXPECT_TRUE(std::isnan(out.kernels[0].bytes_model));
  EXPECT_TRUE(std::isnan(out.kernels[0].achieved_bytes_per_s));
  EXPECT_EQ(out.kernels[1].name, in.kernels[1].name);
}

TEST(ResultsIo, to_json_and_results_from_json_agree_with_the_text_form) {
  Results in = testing::emulator_fixture();
  Results out = results_from_json(to_json(in));
  EXPECT_EQ(out.kernels.size(), in.kernels.size());
  EXPECT_EQ(out.kernels[2].name, "gemm_bf16_wmma");
  EXPECT_EQ(to_json(out), to_json(in));
}

TEST(ResultsIo, truncated_file_names_the_position) {
  std::string text = fixture_text();
  std::string message = parse_error(text.substr(0, text.size() / 2));
  EXPECT_NE(message.find("in.json: malformed JSON at line "), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(ResultsIo, nan_literal_is_a_syntax_error_with_line_and_column) {
  std::string text = fixture_text();
  replace_once(text, "\"flops\": 8388608.0", "\"flops\": NaN");
  std::string message = parse_error(text);
  EXPECT_NE(message.find("malformed JSON at line"), std::string::npos) << message;
  EXPECT_NE(message.find("column"), std::string::npos) << message;
}

TEST(ResultsIo, number_overflow_is_an_error_with_position) {
  std::string text = fixture_text();
  replace_once(text, "\"flops\": 8388608.0", "\"flops\": 1e999");
  std::string message = parse_error(text);
  EXPECT_NE(message.find("malformed JSON at line"), std::string::npos) << message;
  EXPECT_NE(message.find("overflow"), std::string::npos) << message;
}

TEST(ResultsIo, huge_integer_where_a_count_belongs_names_the_pointer) {
  std::string text = fixture_text();
  replace_once(text, "\"sm_count\": 4", "\"sm_count\": 99999999999999999999999");
  EXPECT_NE(parse_error(text).find("in.json: /context/device/sm_count: expected an integer"),
            std::string::npos);
  text = fixture_text();
  replace_once(text, "\"sm_count\": 4", "\"sm_count\": 4294967296");
  EXPECT_NE(parse_error(text).find("/context/device/sm_count: integer 4294967296 out of range"),
            std::string::npos);
}

TEST(ResultsIo, wrong_type_names_the_json_pointer) {
  std::string text = fixture_text();
  replace_once(text, "\"median\": 0.02", "\"median\": \"fast\"");
  EXPECT_EQ(parse_error(text), "in.json: /kernels/0/time_s/median: expected a number, got string");
}

TEST(ResultsIo, missing_required_key_names_the_json_pointer) {
  std::string text = fixture_text();
  replace_once(text, "\"bytes_min\"", "\"bytes_minimum\"");
  EXPECT_EQ(parse_error(text), "in.json: /kernels/0/bytes_min: missing required key");
}

TEST(ResultsIo, unknown_backend_and_schema_version_are_rejected) {
  std::string text = fixture_text();
  replace_once(text, "\"emulator\"", "\"opencl\"");
  EXPECT_NE(parse_error(text).find("/context/backend: \"opencl\" is not one of"),
            std::string::npos);
  text = fixture_text();
  replace_once(text, "\"schema_version\": 1", "\"schema_version\": 2");
  EXPECT_NE(parse_error(text).find("unsupported schema_version 2"), std::string::npos);
}

TEST(ResultsIo, deep_nesting_is_rejected_without_recursion) {
  std::string text = std::string(100000, '[') + std::string(100000, ']');
  std::string message = parse_error(text);
  EXPECT_NE(message.find("nested deeper than 64 levels at line 1, column 65"), std::string::npos)
      << message;
}

TEST(ResultsIo, brackets_inside_strings_do_not_count_as_nesting) {
  Results in = testing::emulator_fixture();
  in.context.host = std::string(200, '[') + "\"{\\";
  EXPECT_EQ(parse_results(results_to_text(in), "x").context.host, in.context.host);
}

TEST(ResultsIo, non_object_top_level_and_empty_input_are_errors) {
  EXPECT_EQ(parse_error("[1, 2]"), "in.json: /: expected an object, got array");
  EXPECT_NE(parse_error("").find("malformed JSON at line 1, column 1"), std::string::npos);
}

TEST(ResultsIo, control_characters_in_input_never_reach_the_message) {
  std::string message = parse_error("{\"a\n\x01\x7f");
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(message.find('\x01'), std::string::npos);
}

// The counter fields (issue 28): a kernel's optional cost-model declarations
// (bytes_l2_load, bytes_l2_store, tensor_ops) and its "counters" block.
TEST(ResultsCounters, declarations_and_counters_round_trip) {
  const Results in = testing::counters_fixture();
  const Results out = parse_results(results_to_text(in), "counters.json");
  EXPECT_EQ(results_to_text(out), results_to_text(in));

  const KernelResult& gemm = out.kernels[2];
  EXPECT_EQ(gemm.bytes_l2_load, in.kernels[2].bytes_l2_load);
  EXPECT_EQ(gemm.bytes_l2_store, in.kernels[2].bytes_l2_store);
  EXPECT_EQ(gemm.tensor_ops, in.kernels[2].tensor_ops);
  ASSERT_TRUE(gemm.counters.has_value());
  EXPECT_EQ(gemm.counters->source, CounterSource::emulator);
  EXPECT_EQ(gemm.counters->passes, 1);
  EXPECT_EQ(gemm.counters->values, in.kernels[2].counters->values);
  ASSERT_EQ(gemm.counters->comparisons.size(), 4u);  // l2, l2 load, l2 store, tensor ops
  const CounterComparison& c = gemm.counters->comparisons[3];
  EXPECT_EQ(c.quantity, CounterQuantity::tensor_ops);
  EXPECT_EQ(c.counted, *in.kernels[2].tensor_ops);
  EXPECT_EQ(c.tolerance, 0.0);
  EXPECT_TRUE(c.agrees);
  EXPECT_EQ(c.sentence, "equal (exact emulator count)");
  EXPECT_FALSE(out.kernels[1].counters->comparisons[0].agrees);  // the fixture's wrong model

  ASSERT_TRUE(out.kernels[0].counters.has_value());
  EXPECT_EQ(out.kernels[0].counters->source, CounterSource::cupti);
  EXPECT_EQ(out.kernels[0].counters->chip, "GH100");
  EXPECT_EQ(out.kernels[0].counters->unavailable, in.kernels[0].counters->unavailable);
  EXPECT_TRUE(out.kernels[0].counters->values.empty());
}

TEST(ResultsCounters, keys_are_written_only_when_set) {
  const nlohmann::json plain = to_json(testing::emulator_fixture());
  for (const auto& k : plain["kernels"])
    for (const char* key : {"bytes_l2_load", "bytes_l2_store", "tensor_ops", "counters"})
      EXPECT_FALSE(k.contains(key)) << key;

  const nlohmann::json json = to_json(testing::counters_fixture());
  EXPECT_EQ(json["kernels"][2]["counters"]["source"], "emulator");
  EXPECT_FALSE(json["kernels"][2]["counters"].contains("chip"));  // only when non-empty
  EXPECT_FALSE(json["kernels"][2]["counters"].contains("unavailable"));
  EXPECT_EQ(json["kernels"][0]["counters"]["chip"], "GH100");
  EXPECT_FALSE(json["kernels"][3].contains("counters"));
}

TEST(ResultsCounters, files_without_them_read_as_before) {
  const Results out = parse_results(results_to_text(testing::emulator_fixture()), "old.json");
  for (const KernelResult& k : out.kernels) {
    EXPECT_FALSE(k.counters.has_value()) << k.name;
    EXPECT_FALSE(k.bytes_l2_load || k.bytes_l2_store || k.tensor_ops) << k.name;
  }
}

TEST(ResultsCounters, unknown_source_is_one_error_naming_the_pointer) {
  std::string text = results_to_text(testing::counters_fixture());
  replace_once(text, "\"source\": \"emulator\"", "\"source\": \"nsight\"");
  EXPECT_EQ(parse_error(text),
            "in.json: /kernels/1/counters/source: \"nsight\" is not one of \"cupti\", "
            "\"emulator\"");
}

// The one spelling table: every quantity is written as before (old files
// read) and read back as the same quantity; an unknown one (a newer writer's)
// is kept as written: the file reads and writes back unchanged.
TEST(ResultsCounters, every_quantity_keeps_its_json_spelling_and_an_unknown_one_is_kept) {
  const std::vector<std::pair<CounterQuantity, std::string>> spellings = {
      {CounterQuantity::dram_bytes, "dram_bytes"},
      {CounterQuantity::l2_bytes, "l2_bytes"},
      {CounterQuantity::l2_load_bytes, "l2_load_bytes"},
      {CounterQuantity::l2_store_bytes, "l2_store_bytes"},
      {CounterQuantity::tensor_ops, "tensor_ops"},
      {CounterQuantity::flops, "flops"}};
  Results in = testing::counters_fixture();
  std::vector<CounterComparison>& list = in.kernels[2].counters->comparisons;
  list.resize(spellings.size(), list.front());
  for (std::size_t i = 0; i < spellings.size(); ++i) list[i].quantity = spellings[i].first;
  const nlohmann::json json = to_json(in);
  const Results out = parse_results(json.dump(), "in.json");
  for (std::size_t i = 0; i < spellings.size(); ++i) {
    EXPECT_EQ(to_string(spellings[i].first), spellings[i].second);
    EXPECT_EQ(json["kernels"][2]["counters"]["comparisons"][i]["quantity"], spellings[i].second);
    EXPECT_EQ(out.kernels[2].counters->comparisons[i].quantity, spellings[i].first);
    EXPECT_EQ(out.kernels[2].counters->comparisons[i].quantity.known(), spellings[i].first);
  }

  std::string text = results_to_text(testing::counters_fixture());
  replace_once(text, "\"quantity\": \"l2_load_bytes\"", "\"quantity\": \"smem_bytes\"");
  const Results newer = parse_results(text, "in.json");
  const ResultCounterQuantity& kept = newer.kernels[1].counters->comparisons[1].quantity;
  EXPECT_FALSE(kept.known().has_value());
  EXPECT_EQ(to_string(kept), "smem_bytes");
  EXPECT_FALSE(kept == CounterQuantity::l2_load_bytes);
  EXPECT_EQ(results_to_text(newer), text);
}

TEST(ResultsCounters, bad_values_name_the_pointer) {
  std::string text = results_to_text(testing::counters_fixture());
  replace_once(text, "\"tensor_ops\": 33554432.0", "\"tensor_ops\": -1");
  EXPECT_EQ(parse_error(text), "in.json: /kernels/2/tensor_ops: negative");

  text = results_to_text(testing::counters_fixture());
  replace_once(text, "\"tensor_bf16\": 33554432.0", "\"tensor_bf16\": \"many\"");
  EXPECT_EQ(parse_error(text),
            "in.json: /kernels/2/counters/values/tensor_bf16: expected a number, got string");

  text = results_to_text(testing::counters_fixture());
  replace_once(text, "\"agrees\": false", "\"agrees\": 0");
  EXPECT_EQ(parse_error(text),
            "in.json: /kernels/1/counters/comparisons/0/agrees: expected true or false, got "
            "number");
}

class AtomicWrite : public ::testing::Test {
 protected:
  rl::test::ScratchDir scratch_{"rl_atomic"};
  const std::filesystem::path& dir_ = scratch_.path();
};

TEST_F(AtomicWrite, replaces_the_file_and_leaves_no_temporary_behind) {
  auto path = dir_ / "results.json";
  write_file_atomic(path, "old");
  write_results_atomic(path, testing::emulator_fixture());
  Results back = load_results(path);
  EXPECT_EQ(back.kernels.size(), 4u);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(AtomicWrite, unwritable_directory_is_an_error_naming_the_path) {
  auto path = dir_ / "missing" / "results.json";
  try {
    write_file_atomic(path, "x");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST_F(AtomicWrite, load_of_missing_file_is_a_results_error) {
  EXPECT_THROW(load_results(dir_ / "nope.json"), ResultsError);
}

}  // namespace
}  // namespace rl::roofline
