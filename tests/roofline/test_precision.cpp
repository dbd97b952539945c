// Precision as a typed state: one spelling per precision, converted in one
// place, and a results.json whose precision this build does not know (the
// schema allows any string: a newer writer's format) is read, analysed and
// written back as it came.
#include "fixtures.hpp"
#include "rl/roofline/analysis.hpp"
#include "rl/roofline/precision.hpp"
#include "rl/roofline/results_io.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl::roofline {
namespace {

const std::vector<Precision> kEvery{
    Precision::fp64,  Precision::fp32,  Precision::tf32, Precision::fp16, Precision::bf16,
    Precision::fp8,   Precision::int8,  Precision::fp6,  Precision::fp4,  Precision::mxfp8,
    Precision::mxfp6, Precision::mxfp4, Precision::nvfp4};

TEST(Precision, every_precision_has_one_spelling_that_parses_back_to_it) {
  std::set<std::string_view> spellings;
  for (const Precision p : kEvery) {
    const std::string_view s = to_string(p);
    EXPECT_FALSE(s.empty());
    EXPECT_TRUE(spellings.insert(s).second) << s;
    EXPECT_EQ(parse_precision(s), p) << s;
    EXPECT_EQ(ResultPrecision(p).spelling(), s);
    EXPECT_EQ(ResultPrecision::from_json(s).known(), p) << s;
  }
}

TEST(Precision, spellings_are_the_ones_results_files_already_carry) {
  // What earlier runs wrote (tests/roofline/data, results/): unchanged.
  for (const std::string_view s : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"})
    EXPECT_TRUE(parse_precision(s).has_value()) << s;
  // Blackwell's formats, as issue 25's units name them.
  for (const std::string_view s : {"fp6", "fp4", "mxfp8", "mxfp6", "mxfp4", "nvfp4"})
    EXPECT_TRUE(parse_precision(s).has_value()) << s;
  EXPECT_FALSE(parse_precision("FP32").has_value());  // case matters, as in the file
  EXPECT_FALSE(parse_precision("").has_value());
}

TEST(Precision, an_unknown_spelling_is_kept_as_written_and_differs_from_every_known_one) {
  for (const std::string_view s : {"fp2_e1m1", "", "BF16"}) {
    const ResultPrecision p = ResultPrecision::from_json(s);
    EXPECT_FALSE(p.known().has_value()) << s;
    EXPECT_EQ(p.spelling(), s);
    for (const Precision k : kEvery) EXPECT_FALSE(p == ResultPrecision(k)) << s;
  }
  EXPECT_TRUE(ResultPrecision::from_json("fp2_e1m1") == ResultPrecision::from_json("fp2_e1m1"));
  EXPECT_FALSE(ResultPrecision::from_json("fp2_e1m1") == ResultPrecision::from_json("fp2"));
}

TEST(ResultsIo, a_precision_this_build_does_not_know_reads_and_writes_back_unchanged) {
  Results in = testing::emulator_fixture();
  nlohmann::json file = to_json(in);
  file["kernels"][0]["precision"] = "fp2_e1m1";
  file["kernels"][1]["precision"] = "";
  const std::string text = file.dump(2) + "\n";
  const Results read = parse_results(text, "newer.json");
  EXPECT_EQ(read.kernels[0].precision.spelling(), "fp2_e1m1");
  EXPECT_FALSE(read.kernels[0].precision.known().has_value());
  EXPECT_EQ(read.kernels[1].precision.spelling(), "");
  EXPECT_EQ(read.kernels[2].precision, Precision::bf16);  // the others as they were
  // Written back: the same document, the unknown spellings included.
  EXPECT_EQ(to_json(read), file);
}

TEST(PrecisionLadderOrder, orders_known_precisions_down_and_unknown_ones_after) {
  Results r;
  r.context = testing::emulator_fixture().context;
  auto gemm = [](const char* name, ResultPrecision precision) {
    KernelResult k = testing::timed_kernel(name, 1e-3, 0, 3);
    k.family = "gemm";
    k.shape = {{"M", 256}, {"N", 256}, {"K", 256}};
    k.flops = 2.0 * 256 * 256 * 256;
    k.precision = std::move(precision);
    return k;
  };
  r.kernels = {gemm("g_unknown", ResultPrecision::from_json("fp2_e1m1")),
               gemm("g_nvfp4", Precision::nvfp4), gemm("g_fp64", Precision::fp64),
               gemm("g_fp8", Precision::fp8), gemm("g_fp32", Precision::fp32)};
  const Analysis a = analyse(r);
  ASSERT_TRUE(a.precision_ladder.has_value());
  std::vector<std::string> order;
  for (const PrecisionStep& s : a.precision_ladder->steps) order.push_back(s.precision);
  // The ladder's order, then the rest by spelling.
  EXPECT_EQ(order, (std::vector<std::string>{"fp32", "fp8", "nvfp4", "fp2_e1m1", "fp64"}));
}

}  // namespace
}  // namespace rl::roofline
