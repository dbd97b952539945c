// GELU ladder: every variant against the float64 reference (odd sizes, large
// offsets), under two emulator schedules, poisoned outputs, cost model and
// shapes.  Built twice: label emu (emulator) and label gpu (CUDA device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "emu_kernel_test.hpp"
#include "gelu/gelu_cost.hpp"
#include "gelu/gelu_forms.hpp"
#include "gelu/gelu_launch.hpp"
#include "gelu/gelu_reference.hpp"
#include "gelu/gelu_workload.hpp"

namespace {

const std::vector<std::string> kGeluLadder = {
    "gelu_tanh_f32_scalar",         "gelu_erf_f32_scalar", "gelu_tanh_bf16_scalar",
    "gelu_erf_bf16_scalar",         "gelu_tanh_f32_vec4",  "gelu_erf_f32_vec4",
    "gelu_tanh_bf16_vec8",          "gelu_erf_bf16_vec8",  "gelu_tanh_f32_vec4_fastmath",
    "gelu_tanh_bf16_vec8_fastmath",
};

std::unique_ptr<rl::InspectableWorkload> make_workload(const std::string& name, std::int64_t n,
                                                       std::uint64_t seed) {
  return rl::test::make_inspectable_workload(name, rl::Shape{{{"n", n}}}, seed);
}

// Makes the workload launch its kernel on all elements but the last.
template <typename T>
bool skip_last_element(rl::InspectableWorkload& workload) {
  auto* typed = dynamic_cast<rl::gelu::GeluWorkload<T>*>(&workload);
  if (typed == nullptr) return false;
  typed->launch = [inner = typed->launch](const rl::gelu::Args<T>& a, cudaStream_t stream) {
    rl::gelu::Args<T> shorter = a;
    shorter.n -= 1;
    inner(shorter, stream);
  };
  return true;
}

class GeluVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(GeluVariant, MatchesFloat64ReferenceAtOddSizesUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_BF16_TWIN_UNDER_RACECHECK(GetParam());
  for (const std::int64_t n : {1, 31, 1000, 4097}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto workload = make_workload(GetParam(), n, 1000 + static_cast<std::uint64_t>(n));
    ASSERT_NE(workload, nullptr) << GetParam() << " is not registered as an inspectable workload";
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// x^3 of |x| ~ 1e4 is 1e12 (no overflow in fp32), tanh saturates: GELU is the
// identity on the positive side and (minus) zero on the negative side.
TEST_P(GeluVariant, StaysAccurateOnLargeCommonOffsets) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), 1000, 7);
  ASSERT_NE(workload, nullptr);
  for (const double mean : {1e4, -1e4}) {
    SCOPED_TRACE("mean = " + std::to_string(mean));
    workload->redraw_inputs(rl::InputSpec{.mean = mean, .stddev = 1.0}, 8);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

TEST_P(GeluVariant, UnwrittenLastElementFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), 4097, 9);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(skip_last_element<float>(*workload) || skip_last_element<__nv_bfloat16>(*workload));
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("non-finite output at 4096"), std::string::npos) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Ladder, GeluVariant, ::testing::ValuesIn(kGeluLadder),
                         [](const auto& p) { return p.param; });

// The fast-math bound must hold for a tanh that is off by the full 2^-10.987
// and reject one off by twice that (the emulator's tanh_approx is exact, so
// this host test is what shows the tolerance is not vacuous).
TEST(GeluErrorBound, AdmitsTheDocumentedTanhApproxErrorAndNoMore) {
  const std::vector<double> x = [] {
    rl::SeededRng rng(21);
    std::vector<double> v(4097);
    for (auto& e : v) e = static_cast<float>(rng.normal(0.0, 2.0));
    return v;
  }();
  std::vector<double> reference(x.size()), bounds(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    reference[i] = rl::gelu::reference(rl::gelu::Form::tanh, x[i]);
    bounds[i] = rl::gelu::error_bound("fp32", x[i], reference[i], rl::gelu::kTanhApproxMaxRelError);
  }
  auto with_tanh_error = [&](double relative) {
    std::vector<float> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double t =
          std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x[i] + 0.044715 * x[i] * x[i] * x[i]));
      // Push tanh away from the truth in the direction that hurts most.
      y[i] = static_cast<float>(0.5 * x[i] * (1.0 + t * (1.0 - relative)));
    }
    return rl::compare_with_bounds(y, reference, bounds);
  };
  EXPECT_TRUE(with_tanh_error(rl::gelu::kTanhApproxMaxRelError).passed);
  EXPECT_FALSE(with_tanh_error(2 * rl::gelu::kTanhApproxMaxRelError).passed);
}

// The exact rungs' bound is the storage format's: a bf16 output one ulp
// further from the truth than the correctly rounded value fails it (except
// deep in the negative tail, where the fp32 math's absolute error governs).
TEST(GeluErrorBound, RejectsABf16OutputOneUlpOff) {
  rl::SeededRng rng(22);
  const int p = rl::significand_bits("bf16");
  int failures = 0;
  for (int i = 0; i < 1000; ++i) {
    const double x = static_cast<float>(rng.normal(0.0, 2.0));
    const double y = rl::gelu::reference(rl::gelu::Form::tanh, x);
    const double bound = rl::gelu::error_bound("bf16", x, y, 0.0);
    if (y == 0) continue;
    const double ulp = std::ldexp(1.0, std::ilogb(y) - (p - 1));
    const double rounded = std::nearbyint(y / ulp) * ulp;
    EXPECT_LE(std::fabs(rounded - y), bound) << "the correctly rounded output passes, x = " << x;
    const double one_ulp_off = rounded + (rounded >= y ? ulp : -ulp);
    if (std::fabs(one_ulp_off - y) > bound) ++failures;
  }
  EXPECT_GT(failures, 950);
}

// Each exact rung computes the form it is asked for: the tanh record's
// workload running the erf kernel of the same rung (and the other way round)
// fails validation, in bf16 as in fp32 -- the erf and tanh forms differ by
// up to 4.7e-4 absolute, 11% relative at x = -3.  (Not the fast-math rungs:
// tanh.approx's documented 2^-10.987 moves y by up to 2.5e-4 |x|, more than
// the two forms differ anywhere, so their bound cannot tell the forms apart.)
class GeluWrongForm : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

template <typename T>
bool swap_launcher(rl::InspectableWorkload& asked, rl::InspectableWorkload& other) {
  auto* a = dynamic_cast<rl::gelu::GeluWorkload<T>*>(&asked);
  auto* o = dynamic_cast<rl::gelu::GeluWorkload<T>*>(&other);
  if (a == nullptr || o == nullptr) return false;
  a->launch = o->launch;
  return true;
}

TEST_P(GeluWrongForm, FailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  const auto& [asked, wrong] = GetParam();
  auto workload = make_workload(asked, 4097, 31);
  auto other = make_workload(wrong, 1, 31);
  ASSERT_NE(workload, nullptr);
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(workload->validate(nullptr).passed) << "the right form passes first";
  ASSERT_TRUE(swap_launcher<float>(*workload, *other) ||
              swap_launcher<__nv_bfloat16>(*workload, *other));
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed) << asked << " passed with " << wrong << "'s kernel (max abs err "
                         << v.max_abs_err << ")";
}

INSTANTIATE_TEST_SUITE_P(
    Ladder, GeluWrongForm,
    ::testing::Values(
        std::pair<std::string, std::string>{"gelu_tanh_bf16_vec8", "gelu_erf_bf16_vec8"},
        std::pair<std::string, std::string>{"gelu_erf_bf16_vec8", "gelu_tanh_bf16_vec8"},
        std::pair<std::string, std::string>{"gelu_tanh_bf16_scalar", "gelu_erf_bf16_scalar"},
        std::pair<std::string, std::string>{"gelu_tanh_f32_vec4", "gelu_erf_f32_vec4"},
        std::pair<std::string, std::string>{"gelu_erf_f32_scalar", "gelu_tanh_f32_scalar"}),
    [](const auto& p) { return p.param.first + "_with_" + p.param.second; });

TEST(GeluRegistry, RegistersExactlyTheLadder) {
  std::vector<std::string> registered;
  for (const auto& record : rl::kernel_registry())
    if (record.family == "gelu") registered.push_back(record.name);
  std::vector<std::string> expected = kGeluLadder;
  std::sort(registered.begin(), registered.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(registered, expected);
}

TEST(GeluRegistry, OptimisedRungsPointAtTheirScalarSibling) {
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "gelu" || record.variant == "scalar") continue;
    SCOPED_TRACE(record.name);
    const rl::KernelRecord* baseline = rl::find_kernel(record.baseline);
    ASSERT_NE(baseline, nullptr) << "baseline '" << record.baseline << "' not registered";
    EXPECT_EQ(baseline->variant, "scalar");
    EXPECT_EQ(baseline->cost(rl::Shape{{{"n", 1000}}}).flops,
              record.cost(rl::Shape{{{"n", 1000}}}).flops)
        << "a rung and its baseline compute the same form";
    EXPECT_EQ(baseline->precision, record.precision);
  }
}

TEST(GeluCostModel, CountsFormulaFlopsAndOneReadOneWritePerElement) {
  const rl::Shape shape{{{"n", 1000}}};
  const rl::roofline::Cost tanh_f32 = rl::find_kernel("gelu_tanh_f32_vec4")->cost(shape);
  EXPECT_DOUBLE_EQ(tanh_f32.flops, 9000.0);
  EXPECT_DOUBLE_EQ(tanh_f32.bytes_min, 8000.0);
  const rl::roofline::Cost erf_bf16 = rl::find_kernel("gelu_erf_bf16_vec8")->cost(shape);
  EXPECT_DOUBLE_EQ(erf_bf16.flops, 5000.0);
  EXPECT_DOUBLE_EQ(erf_bf16.bytes_min, 4000.0);
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "gelu") continue;
    SCOPED_TRACE(record.name);
    const rl::roofline::Cost c = record.cost(shape);
    EXPECT_EQ(c.bytes_model, c.bytes_min);  // a pure stream: nothing to re-read
    EXPECT_EQ(c.unit, rl::roofline::ComputeUnit::fp32);
  }
}

TEST(GeluShapes, LargePresetStreamsOneGiBPerArrayAndSmallIsOdd) {
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "gelu") continue;
    SCOPED_TRACE(record.name);
    for (const rl::Shape& shape : record.shapes(rl::SizePreset::large))
      EXPECT_GE(record.cost(shape).bytes_min / 2, 1024.0 * 1024 * 1024)
          << "1 GiB per array, as the ceilings";
    for (const rl::Shape& shape : record.shapes(rl::SizePreset::small))
      EXPECT_EQ(shape.at("n") % 2, 1) << "small sizes are odd so the vector tails run";
  }
}

}  // namespace
