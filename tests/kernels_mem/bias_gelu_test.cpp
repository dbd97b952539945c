// Bias + GELU, unfused pair vs fused kernel: both against the float64
// reference at odd shapes (vectors that straddle row ends, widths below the
// vector length), under two emulator schedules; the cost model that makes the
// fusion visible on the roofline.  Built twice: label emu and label gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "emu_kernel_test.hpp"
#include "gelu/bias_gelu.hpp"

namespace {

const std::vector<std::string> kBiasGeluLadder = {
    "bias_gelu_tanh_f32_unfused",
    "bias_gelu_tanh_f32_fused",
    "bias_gelu_tanh_bf16_unfused",
    "bias_gelu_tanh_bf16_fused",
};

rl::Shape shape_of(std::int64_t rows, std::int64_t width) {
  return rl::Shape{{{"rows", rows}, {"C", width}}};
}

class BiasGeluVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(BiasGeluVariant, MatchesFloat64ReferenceAtOddShapesUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_BF16_TWIN_UNDER_RACECHECK(GetParam());
  // Widths that are multiples of the vector length (4, 8, 24, 1000, 3072)
  // take the 128-bit bias path, the others (odd, 4100 for bf16) the scalar one.
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1}, {3, 3}, {2, 4}, {1, 8}, {3, 24}, {2, 33}, {7, 1000}, {5, 1003}, {3, 4100}, {3, 3072}};
  for (const auto& [rows, width] : shapes) {
    SCOPED_TRACE("rows = " + std::to_string(rows) + ", C = " + std::to_string(width));
    auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(rows, width),
                                                        static_cast<std::uint64_t>(rows * width));
    ASSERT_NE(workload, nullptr) << GetParam() << " is not registered as an inspectable workload";
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

TEST_P(BiasGeluVariant, StaysAccurateOnLargeCommonOffsets) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(4, 1003), 7);
  ASSERT_NE(workload, nullptr);
  for (const double mean : {1e4, -1e4}) {
    SCOPED_TRACE("mean = " + std::to_string(mean));
    workload->redraw_inputs(rl::InputSpec{.mean = mean, .stddev = 1.0}, 8);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// Makes the workload's kernel(s) skip the last row.
template <typename T>
bool skip_last_row(rl::InspectableWorkload& workload) {
  auto* typed = dynamic_cast<rl::gelu::BiasGeluWorkload<T>*>(&workload);
  if (typed == nullptr) return false;
  typed->launch = [inner = typed->launch](const rl::gelu::BiasGeluArgs<T>& a, cudaStream_t stream) {
    // The last row stays poisoned (NaN): validation must name its first element.
    rl::gelu::BiasGeluArgs<T> all_but_last_row = a;
    all_but_last_row.rows -= 1;
    inner(all_but_last_row, stream);
  };
  return true;
}

// Makes the workload launch at most `max_blocks` blocks per kernel.
template <typename T>
bool cap_grid(rl::InspectableWorkload& workload, std::int64_t max_blocks) {
  auto* typed = dynamic_cast<rl::gelu::BiasGeluWorkload<T>*>(&workload);
  if (typed == nullptr) return false;
  typed->launch = [inner = typed->launch, max_blocks](const rl::gelu::BiasGeluArgs<T>& a,
                                                      cudaStream_t stream) {
    rl::gelu::BiasGeluArgs<T> capped = a;
    capped.max_blocks = max_blocks;
    inner(capped, stream);
  };
  return true;
}

// At the benchmark sizes one pass of the grid covers the work, so only a
// capped grid makes threads go round the grid-stride loop, where each carries
// its column forward instead of recomputing it.
TEST_P(BiasGeluVariant, GridStrideLoopCarriesTheColumnAcrossIterations) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_BF16_TWIN_UNDER_RACECHECK(GetParam());
  for (const std::int64_t width : {1, 7, 1003, 8, 1000}) {
    for (const std::int64_t max_blocks : {1, 3}) {
      SCOPED_TRACE("C = " + std::to_string(width) + ", blocks = " + std::to_string(max_blocks));
      auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(9, width), 5);
      ASSERT_NE(workload, nullptr);
      ASSERT_TRUE(cap_grid<float>(*workload, max_blocks) ||
                  cap_grid<__nv_bfloat16>(*workload, max_blocks));
      rl::test::expect_passes_under_two_schedules(*workload);
    }
  }
}

TEST_P(BiasGeluVariant, UnwrittenLastRowFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(5, 1003), 9);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(skip_last_row<float>(*workload) || skip_last_row<__nv_bfloat16>(*workload));
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("non-finite output at 4012"), std::string::npos) << v.detail;
}

// Makes the workload read the bias one column off (bias[(c + 1) % C]), the
// off-by-one a wrong column carry at row ends would produce.
template <typename T>
bool shift_bias_one_column(rl::InspectableWorkload& workload) {
  auto* typed = dynamic_cast<rl::gelu::BiasGeluWorkload<T>*>(&workload);
  if (typed == nullptr) return false;
  typed->launch = [inner = typed->launch](const rl::gelu::BiasGeluArgs<T>& a, cudaStream_t stream) {
    std::vector<T> bias(static_cast<std::size_t>(a.width));
    RL_CUDA_CHECK(cudaMemcpy(bias.data(), a.bias, bias.size() * sizeof(T), cudaMemcpyDeviceToHost));
    std::rotate(bias.begin(), bias.begin() + 1, bias.end());
    rl::DeviceBuffer<T> shifted(bias.size());
    shifted.upload(bias);
    rl::gelu::BiasGeluArgs<T> wrong = a;
    wrong.bias = shifted.get();
    inner(wrong, stream);
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  return true;
}

TEST_P(BiasGeluVariant, BiasOneColumnOffFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(5, 1003), 23);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(shift_bias_one_column<float>(*workload) ||
              shift_bias_one_column<__nv_bfloat16>(*workload));
  EXPECT_FALSE(workload->validate(nullptr).passed);
}

INSTANTIATE_TEST_SUITE_P(Ladder, BiasGeluVariant, ::testing::ValuesIn(kBiasGeluLadder),
                         [](const auto& p) { return p.param; });

// The unfused bf16 pair's bound carries the rounding of t to bf16; without
// that term (the fused kernel's bound) the same outputs fail, so a fused
// kernel that rounded t in storage would be caught.  CPU model: t = x + b in
// fp32, rounded to bf16, GELU in fp32, rounded to bf16.
TEST(BiasGeluErrorBound, IntermediateRoundingIsNeededForUnfusedBf16AndCaughtInFused) {
  rl::SeededRng rng(24);
  bool fails_fused_bound = false;
  for (int i = 0; i < 4096; ++i) {
    const double x = rl::to_f32(rl::from_f32<__nv_bfloat16>(static_cast<float>(rng.normal(0, 2))));
    const double b = rl::to_f32(rl::from_f32<__nv_bfloat16>(static_cast<float>(rng.normal(0, 1))));
    const double t = x + b;
    const float t_stored = rl::to_f32(rl::from_f32<__nv_bfloat16>(static_cast<float>(t)));
    const float inner = rl::gelu::kSqrt2OverPi *
                        (t_stored + rl::gelu::kCubicCoeff * t_stored * t_stored * t_stored);
    const float gelu = 0.5f * t_stored * (1.0f + std::tanh(inner));
    const float y = rl::to_f32(rl::from_f32<__nv_bfloat16>(gelu));
    const double ref = rl::gelu::reference(rl::gelu::Form::tanh, t);
    const double err = std::fabs(y - ref);
    EXPECT_LE(err, rl::gelu::bias_gelu_error_bound("bf16", t, ref, true)) << "t = " << t;
    fails_fused_bound |= err > rl::gelu::bias_gelu_error_bound("bf16", t, ref, false);
  }
  EXPECT_TRUE(fails_fused_bound);
}

TEST(BiasGeluBiasLoads, AreVectorsExactlyWhenTheWidthIsAMultipleOfTheVectorLength) {
  EXPECT_TRUE(rl::gelu::bias_loads_are_vectors<float>(3072));
  EXPECT_TRUE(rl::gelu::bias_loads_are_vectors<float>(4));
  EXPECT_FALSE(rl::gelu::bias_loads_are_vectors<float>(1003));
  EXPECT_TRUE(rl::gelu::bias_loads_are_vectors<__nv_bfloat16>(3072));
  EXPECT_FALSE(rl::gelu::bias_loads_are_vectors<__nv_bfloat16>(4));
  EXPECT_FALSE(rl::gelu::bias_loads_are_vectors<__nv_bfloat16>(4100));
  // The benchmark width takes the vector path in both precisions.
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "bias_gelu") continue;
    for (const rl::Shape& s : record.shapes(rl::SizePreset::large))
      EXPECT_EQ(s.at("C") % 8, 0) << record.name;
  }
}

TEST(BiasGeluRegistry, RegistersExactlyTheLadderAndFusedPointsAtUnfused) {
  std::vector<std::string> registered;
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "bias_gelu") continue;
    registered.push_back(record.name);
    if (record.variant != "fused") continue;
    SCOPED_TRACE(record.name);
    const rl::KernelRecord* baseline = rl::find_kernel(record.baseline);
    ASSERT_NE(baseline, nullptr) << "baseline '" << record.baseline << "' not registered";
    EXPECT_EQ(baseline->variant, "unfused");
    EXPECT_EQ(baseline->precision, record.precision);
    const rl::Shape shape = shape_of(10, 3072);
    EXPECT_EQ(baseline->cost(shape).flops, record.cost(shape).flops)
        << "fusion changes the traffic, not the arithmetic";
  }
  std::vector<std::string> expected = kBiasGeluLadder;
  std::sort(registered.begin(), registered.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(registered, expected);
}

TEST(BiasGeluCostModel, UnfusedMovesTheIntermediateTwiceMoreAndFusedOnlyTheCompulsoryBytes) {
  const rl::Shape shape = shape_of(10, 100);  // N = 1000, C = 100
  const rl::roofline::Cost fused = rl::find_kernel("bias_gelu_tanh_f32_fused")->cost(shape);
  const rl::roofline::Cost unfused = rl::find_kernel("bias_gelu_tanh_f32_unfused")->cost(shape);
  EXPECT_DOUBLE_EQ(fused.flops, 10.0 * 1000);  // tanh GELU's 9 + the bias add
  EXPECT_DOUBLE_EQ(fused.bytes_min, (2 * 1000 + 100) * 4.0);
  EXPECT_DOUBLE_EQ(fused.bytes_model, fused.bytes_min);
  EXPECT_DOUBLE_EQ(unfused.bytes_min, fused.bytes_min);
  EXPECT_DOUBLE_EQ(unfused.bytes_model, (4 * 1000 + 100) * 4.0);
  const rl::roofline::Cost bf16 = rl::find_kernel("bias_gelu_tanh_bf16_fused")->cost(shape);
  EXPECT_DOUBLE_EQ(bf16.bytes_model, (2 * 1000 + 100) * 2.0);
}

TEST(BiasGeluShapes, LargePresetStreamsOneGiBPerArrayAndSmallStraddlesRows) {
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "bias_gelu") continue;
    SCOPED_TRACE(record.name);
    const std::size_t element_bytes = record.precision == rl::roofline::Precision::bf16 ? 2 : 4;
    for (const rl::Shape& s : record.shapes(rl::SizePreset::large)) {
      const std::int64_t n = s.at("rows") * s.at("C");
      EXPECT_GE(n * static_cast<std::int64_t>(element_bytes), std::int64_t{1} << 30)
          << "1 GiB per array, as the ceilings";
    }
    for (const rl::Shape& s : record.shapes(rl::SizePreset::small)) {
      EXPECT_NE(s.at("C") % 8, 0) << "small C must not be a multiple of any vector width";
      EXPECT_GT(s.at("rows"), 1);
    }
  }
}

}  // namespace
