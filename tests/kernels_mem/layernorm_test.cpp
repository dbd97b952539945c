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
#include "layernorm/layernorm_common.hpp"

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
    "layernorm_vec128_rowcached_f32",
    "layernorm_vec128_rowcached_bf16",
};

// 37 rows: not a multiple of the 8 rows of a warp-per-row block nor of the
// 256 rows of a thread-per-row block.
constexpr int kRows = 37;

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

class LayerNormVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerNormVariant, MatchesFloat64ReferenceAtOddWidthsUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  for (const int C : {1, 33, 1000, 4100}) {
    SCOPED_TRACE("C = " + std::to_string(C));
    auto workload = make_workload(GetParam(), kRows, C, 2000 + static_cast<std::uint64_t>(C));
    ASSERT_NE(workload, nullptr) << GetParam() << " is not registered as an inspectable workload";
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// Rows with |mean| >> std: E[x^2] - E[x]^2 loses every significant digit
// here; the centred two-pass variance does not.  bf16 storage keeps 8
// significant bits, so for bf16 the offset is 8 std (mean 1e4 would round
// every element of a row to the same value).
TEST_P(LayerNormVariant, SurvivesLargeMeanSmallVariance) {
  RL_KERNEL_TEST_SETUP();
  auto workload = make_workload(GetParam(), kRows, 1000, 11);
  ASSERT_NE(workload, nullptr);
  const std::vector<rl::InputSpec> specs =
      is_bf16(GetParam())
          ? std::vector<rl::InputSpec>{{.mean = 8.0, .stddev = 1.0}, {.mean = -8.0, .stddev = 1.0}}
          : std::vector<rl::InputSpec>{{.mean = 1e4, .stddev = 1.0}, {.mean = 1.0, .stddev = 1e-3}};
  for (const rl::InputSpec& spec : specs) {
    SCOPED_TRACE("mean " + std::to_string(spec.mean) + ", std " + std::to_string(spec.stddev));
    workload->redraw_inputs(spec, 12);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

TEST_P(LayerNormVariant, UnwrittenLastRowFailsValidation) {
  RL_KERNEL_TEST_SETUP();
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

TEST(LayerNormRowCached, RejectsRowsTooWideForItsRegisters) {
  RL_KERNEL_TEST_SETUP();
  auto workload = make_workload("layernorm_vec128_rowcached_f32", 1, 12289, 14);
  ASSERT_NE(workload, nullptr);
  EXPECT_THROW(workload->run(nullptr), std::invalid_argument);
}

// The tolerance the large-offset test uses must be able to fail: the
// one-pass E[x^2] - E[x]^2 variance in fp32 (computed here on the CPU) is
// rejected by it, the centred two-pass form in fp32 is accepted.
TEST(LayerNormTolerance, RejectsOnePassVarianceAcceptsTwoPassOnLargeOffsets) {
  const int rows = 4;
  const int C = 1000;
  rl::SeededRng rng(15);
  std::vector<double> x(static_cast<std::size_t>(rows * C)), w(C), b(C);
  for (auto& v : x) v = static_cast<float>(rng.normal(1e4, 1.0));
  for (auto& v : w) v = static_cast<float>(rng.uniform(0.5, 1.5));
  for (auto& v : b) v = static_cast<float>(rng.uniform(-0.5, 0.5));
  const rl::layernorm::Reference ref = rl::layernorm::reference(x, w, b, rows, C);
  const rl::Tolerance tol = rl::layernorm::scaled(rl::tolerance_for("fp32"), ref.condition);

  auto normalise_fp32 = [&](bool one_pass) {
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
      if (one_pass) {
        var = sum_sq / static_cast<float>(C) - m * m;
      } else {
        for (int c = 0; c < C; ++c)
          var += (static_cast<float>(xr[c]) - m) * (static_cast<float>(xr[c]) - m);
        var /= static_cast<float>(C);
      }
      const float s = 1.0f / std::sqrt(var + rl::layernorm::kEps);
      for (int c = 0; c < C; ++c)
        y[static_cast<std::size_t>(r * C + c)] =
            (static_cast<float>(xr[c]) - m) * s *
                static_cast<float>(w[static_cast<std::size_t>(c)]) +
            static_cast<float>(b[static_cast<std::size_t>(c)]);
    }
    return rl::compare_to_reference(y, ref.y, tol);
  };
  EXPECT_TRUE(normalise_fp32(false).passed) << normalise_fp32(false).detail;
  EXPECT_FALSE(normalise_fp32(true).passed);
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

TEST(LayerNormCostModel, CountsFormulaFlopsAndEachRungsPasses) {
  const rl::Shape shape{{{"rows", 43691}, {"C", 768}}};
  const double rows = 43691, C = 768;
  const double x_bytes = rows * C * 4;
  const double compulsory = 2 * x_bytes + 2 * C * 4 + 2 * rows * 4;
  auto cost = [&](const char* name) { return rl::find_kernel(name)->cost(shape); };

  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rowcached_f32").flops, rows * (8 * C + 5));
  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rowcached_f32").bytes_min, compulsory);
  EXPECT_DOUBLE_EQ(cost("layernorm_vec128_rowcached_f32").bytes_model, compulsory);
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

TEST(LayerNormShapes, LargePresetCoversTheWidthsAtAtLeast256MiB) {
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "layernorm") continue;
    SCOPED_TRACE(record.name);
    std::vector<std::int64_t> widths;
    for (const rl::Shape& shape : record.shapes(rl::SizePreset::large)) {
      widths.push_back(shape.at("C"));
      const double io = static_cast<double>(shape.at("rows") * shape.at("C")) * 2 *
                        (record.precision == "bf16" ? 2 : 4);
      EXPECT_GE(io, 256.0 * 1024 * 1024);
    }
    const std::vector<std::int64_t> expected =
        record.variant == "block_per_row" ? std::vector<std::int64_t>{4096, 8192, 12288}
                                          : std::vector<std::int64_t>{768, 1024, 4096, 8192, 12288};
    EXPECT_EQ(widths, expected);
  }
}

}  // namespace
