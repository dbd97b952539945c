// LayerNorm ladder: every variant against the float64 reference (odd C, row
// counts that are not a multiple of the block, large offsets, tiny variance),
// under two emulator schedules, poisoned outputs, cost model and shapes.
// Built twice: label emu (emulator) and label gpu (CUDA device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu_kernel_test.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "layernorm/layernorm_reference.hpp"
#include "layernorm/layernorm_workload.hpp"

namespace {

const std::vector<std::string> kLayerNormLadder = {
    "layernorm_thread_per_row_naive_f32",
    "layernorm_thread_per_row_naive_bf16",
    "layernorm_unfused_f32",
    "layernorm_unfused_bf16",
    "layernorm_warp_per_row_twopass_f32",
    "layernorm_warp_per_row_twopass_bf16",
    "layernorm_block_per_row_f32",
    "layernorm_block_per_row_bf16",
    "layernorm_vec128_block_per_row_f32",
    "layernorm_vec128_block_per_row_bf16",
    "layernorm_vec128_rowcached_f32",
    "layernorm_vec128_rowcached_bf16",
    "layernorm_vec128_rows_per_block_f32",
    "layernorm_vec128_rows_per_block_bf16",
    "layernorm_vec128_rows_per_block_streaming_f32",
    "layernorm_vec128_rows_per_block_streaming_bf16",
};

// The rungs whose blocks loop over rows with weight and bias loaded once
// (rung 7, and rung 8 which adds streaming cache hints on x and y).
const std::vector<std::string> kRowsPerBlockRungs = {
    "layernorm_vec128_rows_per_block_f32",
    "layernorm_vec128_rows_per_block_bf16",
    "layernorm_vec128_rows_per_block_streaming_f32",
    "layernorm_vec128_rows_per_block_streaming_bf16",
};

// 37 rows: not a multiple of the 8 rows of a warp-per-row block nor of the
// 256 rows of a thread-per-row block.
constexpr int kRows = 37;

// The rungs that give each row a block of its own (512 threads whatever C, or
// the row-cached rung's up to 1024 sized to C): their row count is their grid,
// with no rows per block to be ragged, so 3 rows (3 blocks, the last one's row
// offset checked) prove at each width what 37 would, at a twelfth of the
// threads (each costs ~1 ms under racecheck).
constexpr int kBlockPerRowRows = 3;

int ladder_rows(const std::string& name) {
  const bool block_per_row = name.starts_with("layernorm_block_per_row_") ||
                             name.starts_with("layernorm_vec128_block_per_row_") ||
                             name.starts_with("layernorm_vec128_rowcached_");
  return block_per_row ? kBlockPerRowRows : kRows;
}

std::unique_ptr<rl::InspectableWorkload> make_workload(const std::string& name, int rows, int C,
                                                       std::uint64_t seed) {
  return rl::test::make_inspectable_workload(name, rl::Shape{{{"rows", rows}, {"C", C}}}, seed);
}

template <typename T>
bool skip_last_row(rl::InspectableWorkload& workload) {
  auto* typed = dynamic_cast<rl::layernorm::LayerNormWorkload<T>*>(&workload);
  if (typed == nullptr) return false;
  typed->launch = [inner = typed->launch](const rl::layernorm::Args<T>& a, cudaStream_t stream) {
    rl::layernorm::Args<T> fewer = a;
    fewer.rows -= 1;
    inner(fewer, stream);
  };
  return true;
}

bool is_bf16(const std::string& name) {
  return name.ends_with("_bf16");
}

std::vector<rl::InputSpec> large_mean_small_variance(bool bf16) {
  if (bf16) return {{.mean = 1e4, .stddev = 64.0}, {.mean = -1e4, .stddev = 64.0}};
  return {{.mean = 1e4, .stddev = 1.0}, {.mean = 1.0, .stddev = 1e-3}};
}

class LayerNormVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerNormVariant, MatchesFloat64ReferenceAtOddWidthsUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_BF16_TWIN_UNDER_RACECHECK(GetParam());
  for (const int C : {1, 33, 1000, 4100}) {
    SCOPED_TRACE("C = " + std::to_string(C));
    auto workload =
        make_workload(GetParam(), ladder_rows(GetParam()), C, 2000 + static_cast<std::uint64_t>(C));
    ASSERT_NE(workload, nullptr) << GetParam() << " is not registered as an inspectable workload";
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// Rows with |mean| >> std: E[x^2] - E[x]^2 loses every significant digit
// here; the centred two-pass variance does not.  bf16 storage keeps 8
// significant bits, so its rows are the hardest it can hold: mean 1e4 on a
// grid of 64, std 64 (condition ~160; std 1 would round every element of a
// row to the same value).  The one-pass variance fails at both (see
// LayerNormErrorModel below).
TEST_P(LayerNormVariant, SurvivesLargeMeanSmallVariance) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), kRows, 1000, 11);
  ASSERT_NE(workload, nullptr);
  for (const rl::InputSpec& spec : large_mean_small_variance(is_bf16(GetParam()))) {
    SCOPED_TRACE("mean " + std::to_string(spec.mean) + ", std " + std::to_string(spec.stddev));
    workload->redraw_inputs(spec, 12);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

TEST_P(LayerNormVariant, UnwrittenLastRowFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), kRows, 33, 13);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(skip_last_row<float>(*workload) || skip_last_row<__nv_bfloat16>(*workload));
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed);
  // The first unwritten element of y is row 36, column 0.
  EXPECT_NE(v.detail.find("non-finite output at " + std::to_string(36 * 33)), std::string::npos)
      << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Ladder, LayerNormVariant, ::testing::ValuesIn(kLayerNormLadder),
                         [](const auto& p) { return p.param; });

#if !defined(RL_EMULATE) && defined(RL_HAVE_CUDNN)
// The cuDNN baseline (GPU only): the same reference and tolerances, at the
// widths of the large preset that fit a quick test.
class LayerNormCudnn : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerNormCudnn, MatchesFloat64Reference) {
  RL_KERNEL_TEST_SETUP();
  const rl::KernelRecord* record = rl::find_kernel(GetParam());
  ASSERT_NE(record, nullptr);
  EXPECT_TRUE(record->gpu_only);
  for (const int C : {768, 1024, 4096}) {
    SCOPED_TRACE("C = " + std::to_string(C));
    auto workload = make_workload(GetParam(), kRows, C, 3000 + static_cast<std::uint64_t>(C));
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

INSTANTIATE_TEST_SUITE_P(Library, LayerNormCudnn,
                         ::testing::Values("layernorm_cudnn_f32", "layernorm_cudnn_bf16"),
                         [](const auto& p) { return std::string(p.param); });
#endif

// Rows wide enough for 4 chunks a thread (up to 768 threads): the path only
// the large preset's widest rows (C = 12288) reach.
TEST(LayerNormRowCached, WideRowsUseFourChunksPerThread) {
  RL_KERNEL_TEST_SETUP();
  for (const int C : {9000, 12288}) {
    SCOPED_TRACE("C = " + std::to_string(C));
    auto workload = make_workload("layernorm_vec128_rowcached_f32", 2, C, 17);
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// Makes the workload launch at most `max_blocks` blocks (the rungs whose
// blocks loop over rows honour it: the rows-per-block rungs and the unfused
// rung's normalisation).
template <typename T>
bool cap_blocks(rl::InspectableWorkload& workload, std::int64_t max_blocks) {
  auto* typed = dynamic_cast<rl::layernorm::LayerNormWorkload<T>*>(&workload);
  if (typed == nullptr) return false;
  typed->launch = [inner = typed->launch, max_blocks](const rl::layernorm::Args<T>& a,
                                                      cudaStream_t stream) {
    rl::layernorm::Args<T> capped = a;
    capped.max_blocks = max_blocks;
    inner(capped, stream);
  };
  return true;
}

// The workload of `name` at rows x C on at most `blocks` blocks, validated
// under two schedules.
void expect_passes_on_capped_grid(const std::string& name, int rows, int C, std::int64_t blocks,
                                  std::uint64_t seed) {
  auto workload = make_workload(name, rows, C, seed);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(cap_blocks<float>(*workload, blocks) || cap_blocks<__nv_bfloat16>(*workload, blocks));
  rl::test::expect_passes_under_two_schedules(*workload);
}

// A benchmark-sized grid covers the test's rows in one trip; a capped one
// makes every block go round the row loop.  7 rows over 3 blocks: trips of
// 3, 2 and 2, so every block comes round at least once and the last trip
// leaves a block idle (7 is not a multiple of 3).  More rows or a grid of one
// block would only repeat those trips, two barriers each.
constexpr int kLoopRows = 7;
constexpr std::int64_t kLoopBlocks = 3;

// Every large-preset shape has more rows than the unfused normalisation's
// 2048 blocks, so its blocks go round the row loop; a capped grid takes that
// path with a few rows.  C = 3: odd and below a block's 256 threads, as the
// loop under test is the one over rows.
TEST(LayerNormUnfused, NormaliseBlocksLoopOverMoreRowsThanBlocks) {
  RL_KERNEL_TEST_SETUP();
  for (const char* name : {"layernorm_unfused_f32", "layernorm_unfused_bf16"}) {
    SCOPED_TRACE(name);
    expect_passes_on_capped_grid(name, kLoopRows, 3, kLoopBlocks, 23);
  }
}

// The rows-per-block rungs' blocks reuse the weight and bias they loaded once
// on every trip round the row loop, at aligned and odd widths.
TEST(LayerNormRowsPerBlock, BlocksLoopOverRowsReusingWeightAndBias) {
  RL_KERNEL_TEST_SETUP();
  for (const std::string& name : kRowsPerBlockRungs) {
    for (const int C : {1, 33, 1000, 4100}) {
      SCOPED_TRACE(name + ", C = " + std::to_string(C));
      expect_passes_on_capped_grid(name, kLoopRows, C, kLoopBlocks, 29);
    }
  }
}

// The width tests below are about how a row is spread over a block's threads
// (chunks a thread, the thread limit): one block taking 2 rows keeps the row
// loop in at each width; how rows split over several blocks is the test above.
constexpr int kWidthRows = 2;
constexpr std::int64_t kWidthBlocks = 1;

// The large preset's widest rows: four chunks a thread in fp32 (up to 768
// threads), two in bf16; one element more does not fit.
TEST(LayerNormRowsPerBlock, WideRowsFitUpTo12288) {
  RL_KERNEL_TEST_SETUP();
  for (const std::string& name : kRowsPerBlockRungs) {
    for (const int C : {9000, 12288}) {
      SCOPED_TRACE(name + ", C = " + std::to_string(C));
      expect_passes_on_capped_grid(name, kWidthRows, C, kWidthBlocks, 31);
    }
    auto too_wide = make_workload(name, 1, 12289, 14);
    ASSERT_NE(too_wide, nullptr);
    EXPECT_THROW(too_wide->run(nullptr), std::invalid_argument);
  }
}

// The rows-per-block rungs must serve every C the large preset times (issue
// 13: "at every C the large preset uses"), taken from each record's own
// shapes so that a width added there is tested here; two rows on one block
// (see kWidthRows), two schedules.
TEST(LayerNormRowsPerBlock, RunsAtEveryWidthOfTheLargePreset) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();  // the same code paths run in the wide-row and odd-width tests
  for (const std::string& name : kRowsPerBlockRungs) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    const std::vector<rl::Shape> large = record->shapes(rl::SizePreset::large);
    ASSERT_FALSE(large.empty());
    for (const rl::Shape& shape : large) {
      const int C = static_cast<int>(shape.at("C"));
      SCOPED_TRACE(name + ", C = " + std::to_string(C));
      expect_passes_on_capped_grid(name, kWidthRows, C, kWidthBlocks,
                                   37 + static_cast<std::uint64_t>(C));
    }
  }
}

#if defined(RL_EMULATE)
// Rung 8 differs from rung 7 only in its cache hints, which the emulator
// cannot time; what it can show is that the emulated kernel goes through
// rl::ptx's streaming wrapper, whose 16-byte alignment check fails a launch
// whose x starts one float late (C a multiple of 4: the 128-bit path) with
// cudaErrorMisalignedAddress, as the GPU's launch would.  A plain load128
// would not notice.  The error is sticky, so the launch runs in a child.
TEST(LayerNormRowsPerBlockStreamingDeathTest, ReadsXThroughTheStreamingWrapper) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto workload = make_workload("layernorm_vec128_rows_per_block_streaming_f32", 2, 8, 41);
  ASSERT_NE(workload, nullptr);
  auto* typed = dynamic_cast<rl::layernorm::LayerNormWorkload<float>*>(workload.get());
  ASSERT_NE(typed, nullptr);
  typed->launch = [inner = typed->launch](const rl::layernorm::Args<float>& a,
                                          cudaStream_t stream) {
    rl::layernorm::Args<float> shifted = a;
    shifted.x = a.x + 1;
    inner(shifted, stream);
  };
  EXPECT_EXIT(
      {
        try {
          workload->run(nullptr);
          RL_CUDA_CHECK(cudaDeviceSynchronize());
        } catch (const rl::CudaError& e) {
          std::exit(e.code() == cudaErrorMisalignedAddress ? 0 : 1);
        }
        std::exit(1);
      },
      testing::ExitedWithCode(0), "ld.global.cs.nc.v4.b32 address .* is not 16-byte aligned");
}
#endif

TEST(LayerNormRowCached, RejectsRowsTooWideForItsRegisters) {
  RL_KERNEL_TEST_SETUP();
  auto workload = make_workload("layernorm_vec128_rowcached_f32", 1, 12289, 14);
  ASSERT_NE(workload, nullptr);
  EXPECT_THROW(workload->run(nullptr), std::invalid_argument);
}

// The error model must be able to fail: deliberately wrong LayerNorms,
// computed here on the CPU in fp32 as a kernel would (sequential sums, the
// output rounded to the storage type), against the same reference and
// bounds as the kernels.
enum class Variance { two_pass, one_pass, divided_by_c_minus_1 };

struct ModelRun {
  bool passed;
  std::string detail;
};

template <typename T>
ModelRun layernorm_on_cpu(Variance variance, const rl::InputSpec& spec, int rows, int C) {
  rl::SeededRng rng(15);
  auto draw = [](double v) {
    return static_cast<double>(rl::to_f32(rl::from_f32<T>(static_cast<float>(v))));
  };
  std::vector<double> x(static_cast<std::size_t>(rows * C)), w(static_cast<std::size_t>(C)),
      b(static_cast<std::size_t>(C));
  for (auto& v : x) v = draw(rng.normal(spec.mean, spec.stddev));
  for (auto& v : w) v = draw(rng.uniform(0.5, 1.5));
  for (auto& v : b) v = draw(rng.uniform(-0.5, 0.5));
  const rl::layernorm::Reference ref = rl::layernorm::reference(x, w, b, rows, C);
  const rl::layernorm::Bounds bounds =
      rl::layernorm::error_bounds(ref, x, w, rows, C, rl::precision_name<T>());
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* xr = &x[static_cast<std::size_t>(r * C)];
    float sum = 0, sum_sq = 0;
    for (int c = 0; c < C; ++c) {
      sum += static_cast<float>(xr[c]);
      sum_sq += static_cast<float>(xr[c]) * static_cast<float>(xr[c]);
    }
    const float m = sum / static_cast<float>(C);
    float var = 0;
    if (variance == Variance::one_pass) {
      var = sum_sq / static_cast<float>(C) - m * m;
    } else {
      for (int c = 0; c < C; ++c)
        var += (static_cast<float>(xr[c]) - m) * (static_cast<float>(xr[c]) - m);
      var /= static_cast<float>(variance == Variance::two_pass ? C : C - 1);
    }
    const float s = 1.0f / std::sqrt(var + rl::layernorm::kEps);
    for (int c = 0; c < C; ++c) {
      const float out =
          (static_cast<float>(xr[c]) - m) * s * static_cast<float>(w[static_cast<std::size_t>(c)]) +
          static_cast<float>(b[static_cast<std::size_t>(c)]);
      y[static_cast<std::size_t>(r * C + c)] = rl::to_f32(rl::from_f32<T>(out));
    }
  }
  const rl::Validation v = rl::compare_with_bounds(y, ref.y, bounds.y);
  return {v.passed, v.detail};
}

TEST(LayerNormErrorModel, RejectsOnePassVarianceAcceptsTwoPassOnLargeOffsets) {
  for (const bool bf16 : {false, true}) {
    for (const rl::InputSpec& spec : large_mean_small_variance(bf16)) {
      SCOPED_TRACE(std::string(bf16 ? "bf16" : "fp32") + ", mean " + std::to_string(spec.mean) +
                   ", std " + std::to_string(spec.stddev));
      auto run = [&](Variance v) {
        return bf16 ? layernorm_on_cpu<__nv_bfloat16>(v, spec, kRows, 1000)
                    : layernorm_on_cpu<float>(v, spec, kRows, 1000);
      };
      const ModelRun two_pass = run(Variance::two_pass);
      EXPECT_TRUE(two_pass.passed) << two_pass.detail;
      EXPECT_FALSE(run(Variance::one_pass).passed);
    }
  }
}

// Off by one in the divisor (the unbiased variance): rstd off by 1/(2C)
// relative, caught at every C in fp32 and, above bf16's 2^-8, at C = 33.
TEST(LayerNormErrorModel, RejectsVarianceDividedByCMinusOne) {
  const rl::InputSpec unit{.mean = 0.0, .stddev = 1.0};
  EXPECT_TRUE(layernorm_on_cpu<float>(Variance::two_pass, unit, kRows, 1000).passed);
  EXPECT_FALSE(layernorm_on_cpu<float>(Variance::divided_by_c_minus_1, unit, kRows, 1000).passed);
  EXPECT_TRUE(layernorm_on_cpu<__nv_bfloat16>(Variance::two_pass, unit, kRows, 33).passed);
  EXPECT_FALSE(
      layernorm_on_cpu<__nv_bfloat16>(Variance::divided_by_c_minus_1, unit, kRows, 33).passed);
}

TEST(LayerNormRegistry, RegistersExactlyTheLadder) {
  std::vector<std::string> registered;
  for (const auto& record : rl::kernel_registry())
    if (record.family == "layernorm" && !record.gpu_only) registered.push_back(record.name);
  std::vector<std::string> expected = kLayerNormLadder;
  std::sort(registered.begin(), registered.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(registered, expected);
}

// The report's ladder table prints each rung's idea beside its gain over its
// baseline: every rung says in one line what it changes.
TEST(LayerNormRegistry, EveryRungSaysWhatItChanges) {
  for (const std::string& name : kLayerNormLadder) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_FALSE(record->idea.empty()) << name;
    EXPECT_TRUE(record->library.empty()) << name << " is hand-written";
  }
  EXPECT_EQ(rl::find_kernel("layernorm_vec128_rows_per_block_streaming_bf16")->idea,
            "streaming (evict-first) cache hints on x and y");
}

TEST(LayerNormCostModel, CountsFormulaFlopsAndEachRungsPasses) {
  const rl::Shape shape{{{"rows", 43691}, {"C", 768}}};
  const double rows = 43691, C = 768;
  const double x_bytes = rows * C * 4;
  const double compulsory = 2 * x_bytes + 2 * C * 4 + 2 * rows * 4;
  auto cost = [&](const char* name) { return rl::find_kernel(name)->cost(shape); };

  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rowcached_f32").flops, rows * (8 * C + 5));
  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rowcached_f32").bytes_min, compulsory);
  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rowcached_f32").bytes_model, compulsory);
  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rows_per_block_f32").bytes_model, compulsory);
  // Streaming hints change what L2 keeps, not the compulsory traffic.
  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rows_per_block_streaming_f32").bytes_model, compulsory);
  // Three sweeps by 512 threads a row: 528 rows in flight, their re-reads in L2.
  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_block_per_row_f32").bytes_model, compulsory);
  // A thread per row: too many rows in flight for cache, x read three times.
  EXPECT_DOUBLE_EQ(cost("layernorm_thread_per_row_naive_f32").bytes_model,
                   compulsory + 2 * x_bytes);
  // Three kernels: x three times, plus the statistics' round trips.
  EXPECT_DOUBLE_EQ(cost("layernorm_unfused_f32").bytes_model,
                   compulsory + 2 * x_bytes + 3 * rows * 4);
  // A warp per 3 KB row: the re-reads stay in L2.
  EXPECT_DOUBLE_EQ(cost("layernorm_warp_per_row_twopass_f32").bytes_model, compulsory);
  // ... but not for 48 KB rows.
  const rl::Shape wide{{{"rows", 2731}, {"C", 12288}}};
  EXPECT_DOUBLE_EQ(rl::find_kernel("layernorm_warp_per_row_twopass_f32")->cost(wide).bytes_model,
                   rl::find_kernel("layernorm_warp_per_row_twopass_f32")->cost(wide).bytes_min +
                       2 * 2731.0 * 12288 * 4);
  EXPECT_DOUBLE_EQ(rl::find_kernel("layernorm_block_per_row_f32")->cost(wide).bytes_model,
                   rl::find_kernel("layernorm_block_per_row_f32")->cost(wide).bytes_min);
}

TEST(LayerNormShapes, LargePresetCoversTheWidthsAtOneGiBPerArray) {
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "layernorm") continue;
    SCOPED_TRACE(record.name);
    std::vector<std::int64_t> widths;
    for (const rl::Shape& shape : record.shapes(rl::SizePreset::large)) {
      widths.push_back(shape.at("C"));
      const double x_bytes = static_cast<double>(shape.at("rows") * shape.at("C")) *
                             (record.precision == rl::roofline::Precision::bf16 ? 2 : 4);
      EXPECT_GE(x_bytes, 1024.0 * 1024 * 1024) << "1 GiB per array, as the ceilings";
    }
    const std::vector<std::int64_t> expected =
        record.variant == "block_per_row" ? std::vector<std::int64_t>{4096, 8192, 12288}
                                          : std::vector<std::int64_t>{768, 1024, 4096, 8192, 12288};
    EXPECT_EQ(widths, expected);
  }
}

}  // namespace
