// GEMM ladder: every rung against the float64 reference at odd shapes (1x1x1,
// no dimension a multiple of any tile, K below BlockK, 128-bit-aligned rows
// with tails, an exact multiple of every tile) under two emulator schedules;
// wrong variants (a dropped K step, a wrong leading dimension, an unwritten
// row) failing validation; the bound itself; the sampled check of large
// shapes forced on a small one; cost model, registry chain and shapes.
// Built twice: label emu (emulator) and label gpu (CUDA device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu_kernel_test.hpp"
#include "gemm/gemm_cost.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_workload.hpp"

namespace {

using rl::gemm::Dims;

// Bottom to top: each rung's baseline is the one before it.
const std::vector<std::string> kFp32Ladder = {
    "gemm_f32_naive",        "gemm_f32_coalesced", "gemm_f32_smem_tiled", "gemm_f32_blocktile_1d",
    "gemm_f32_blocktile_2d", "gemm_f32_vec128",    "gemm_f32_warptiled",
};

// Largest tiles of the ladder: BlockM = BlockN = 128, BlockK <= 32.
const std::vector<Dims> kOddShapes = {
    {1, 1, 1},       // one output, one term
    {67, 45, 33},    // no dimension a multiple of 4, 8, 32, 64 or 128
    {129, 127, 65},  // one past / one short of the 128 tile, K one past 64
    {70, 50, 5},     // K smaller than every BlockK
    {132, 68, 36},   // rows 16-byte aligned (128-bit paths) with tails in M, N and K
    {128, 128, 32},  // an exact multiple of every tile
};

// The first three rungs compute one output per thread on 32 x 32 tiles
// (BlockK 32) with no 128-bit path: the same cases at their own tile check
// all of them that the shapes above do, at a fifth to a tenth of the threads
// (each thread one emulated fiber: smem_tiled took 12 s under racecheck).
const std::vector<std::string> kOneOutputPerThreadRungs = {"gemm_f32_naive", "gemm_f32_coalesced",
                                                           "gemm_f32_smem_tiled"};
const std::vector<Dims> kOddShapesOf32Tiles = {
    {1, 1, 1},     // one output, one term
    {67, 45, 33},  // no dimension a multiple of 4, 8 or 32: tails in M, N and K
    {33, 31, 65},  // one past / one short of the 32 tile, K one past two BlockK
    {70, 50, 5},   // K smaller than BlockK
    {64, 64, 32},  // an exact multiple of the tile
};

const std::vector<Dims>& odd_shapes_of(const std::string& rung) {
  return std::ranges::find(kOneOutputPerThreadRungs, rung) != kOneOutputPerThreadRungs.end()
             ? kOddShapesOf32Tiles
             : kOddShapes;
}

std::string to_string(const Dims& d) {
  return std::to_string(d.M) + "x" + std::to_string(d.N) + "x" + std::to_string(d.K);
}

std::unique_ptr<rl::InspectableWorkload> make_workload(const std::string& name, const Dims& d,
                                                       std::uint64_t seed) {
  return rl::test::make_inspectable_workload(name, rl::gemm::make_shape(d.M, d.N, d.K), seed);
}

rl::gemm::GemmWorkload<float>* as_gemm(rl::InspectableWorkload& workload) {
  return dynamic_cast<rl::gemm::GemmWorkload<float>*>(&workload);
}

// Makes the workload launch its kernel with the arguments changed by `edit`.
template <typename Edit>
void wrap_launch(rl::gemm::GemmWorkload<float>& workload, Edit edit) {
  workload.launch = [inner = workload.launch, edit](const rl::gemm::Args<float>& a,
                                                    cudaStream_t stream) {
    rl::gemm::Args<float> changed = a;
    edit(changed);
    inner(changed, stream);
  };
}

class GemmRung : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmRung, MatchesFloat64ReferenceAtOddShapesUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  for (const Dims& d : odd_shapes_of(GetParam())) {
    SCOPED_TRACE(to_string(d));
    auto workload = make_workload(GetParam(), d, 3000 + static_cast<std::uint64_t>(d.M * d.K));
    ASSERT_NE(workload, nullptr) << GetParam() << " is not registered as an inspectable workload";
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// The bound scales with sum |a||b|, not |c|: a large common offset (c ~ K
// mean^2, every term of one sign) must pass as well as centred inputs.
TEST_P(GemmRung, StaysWithinTheBoundOnLargeCommonOffsets) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), {67, 45, 33}, 5);
  ASSERT_NE(workload, nullptr);
  for (const double mean : {1e3, -1e3}) {
    SCOPED_TRACE("mean = " + std::to_string(mean));
    workload->redraw_inputs(rl::InputSpec{.mean = mean, .stddev = 1.0}, 6);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// A launch that stops one step short of K (the strides still right): every
// output misses one term, which the exact check on integer inputs sees.
TEST_P(GemmRung, DroppedLastKStepFailsTheExactCheck) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), {67, 45, 33}, 7);
  ASSERT_NE(workload, nullptr);
  wrap_launch(*as_gemm(*workload), [](rl::gemm::Args<float>& a) { a.K -= 1; });
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("exact check on integer inputs: element "), std::string::npos)
      << v.detail;
}

// A wrong row stride of A (lda = K - 1: row i reads the tail of row i - 1),
// an indexing bug that keeps every read inside the buffer.
TEST_P(GemmRung, WrongLeadingDimensionFailsTheExactCheck) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), {67, 45, 33}, 8);
  ASSERT_NE(workload, nullptr);
  wrap_launch(*as_gemm(*workload), [](rl::gemm::Args<float>& a) { a.lda -= 1; });
  EXPECT_FALSE(workload->validate(nullptr).passed);
}

TEST_P(GemmRung, UnwrittenLastRowFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), {67, 45, 33}, 9);
  ASSERT_NE(workload, nullptr);
  wrap_launch(*as_gemm(*workload), [](rl::gemm::Args<float>& a) { a.M -= 1; });
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("non-finite output at " + std::to_string(66 * 45)), std::string::npos)
      << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Ladder, GemmRung, ::testing::ValuesIn(kFp32Ladder),
                         [](const auto& p) { return p.param; });

// ------------------------------------------------------------ sampled check

// The sampled path (large shapes) forced on a small problem: it passes a
// correct kernel and still catches an unwritten last row and a dropped
// K step, because the first and last row and column are always checked.
// --dump-tensors: A (M x K) and B (K x N) as the kernel read them, C (M x N)
// as validated.
TEST_P(GemmRung, DumpsAAndBAsReadAndTheValidatedC) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make_workload(GetParam(), {5, 7, 3}, 11);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(workload->validate(nullptr).passed);
  const std::vector<rl::TensorDump> t = workload->tensors();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "A");
  EXPECT_EQ(t[0].dims, (std::vector<std::int64_t>{5, 3}));
  EXPECT_EQ(t[1].name, "B");
  EXPECT_EQ(t[1].dims, (std::vector<std::int64_t>{3, 7}));
  EXPECT_EQ(t[2].role, "output");
  EXPECT_EQ(t[2].dims, (std::vector<std::int64_t>{5, 7}));
  EXPECT_EQ(t[2].values, workload->download_outputs());
  // C[0][0] is the dot product of A's first row and B's first column.
  double c00 = 0;
  for (int k = 0; k < 3; ++k) c00 += double{t[0].values[k]} * t[1].values[k * 7];
  EXPECT_NEAR(t[2].values[0], c00, 1e-5 * (1 + std::fabs(c00)));
}

TEST(GemmSampledCheck, ForcedOnASmallShapePassesAndCatchesEdgeErrors) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  for (const std::string name : {"gemm_f32_smem_tiled", "gemm_f32_warptiled"}) {
    SCOPED_TRACE(name);
    auto workload = make_workload(name, {129, 127, 65}, 10);
    ASSERT_NE(workload, nullptr);
    auto* gemm = as_gemm(*workload);
    ASSERT_FALSE(gemm->sampled());
    EXPECT_TRUE(gemm->checked_positions().empty()) << "full check: every output";
    gemm->set_full_check_max_macs(0);
    ASSERT_TRUE(gemm->sampled());
    const std::vector<std::int64_t> checked = gemm->checked_positions();
    const std::set<std::int64_t> s(checked.begin(), checked.end());
    for (std::int64_t c = 0; c < 127; ++c)
      ASSERT_TRUE(s.count(c) && s.count(128 * 127 + c)) << "first and last row, column " << c;
    for (std::int64_t r = 0; r < 129; ++r)
      ASSERT_TRUE(s.count(r * 127) && s.count(r * 127 + 126)) << "first and last column, row " << r;
    EXPECT_GE(checked.size(), static_cast<std::size_t>(rl::gemm::kRandomSamples));
    rl::test::expect_passes_under_two_schedules(*workload);

    wrap_launch(*gemm, [](rl::gemm::Args<float>& a) { a.M -= 1; });
    const rl::Validation v = workload->validate(nullptr);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.detail.find("sampled exact check"), std::string::npos) << v.detail;
  }
}

TEST(GemmSamplePositions, AlwaysIncludeFirstAndLastRowAndColumn) {
  for (const Dims& d : {Dims{129, 127, 65}, Dims{1, 1, 1}, Dims{3, 2000, 8}, Dims{1000, 1000, 8}}) {
    SCOPED_TRACE(to_string(d));
    const std::vector<std::int64_t> p = rl::gemm::sample_positions(d, 42);
    const std::set<std::int64_t> s(p.begin(), p.end());
    EXPECT_EQ(s.size(), p.size()) << "no position twice";
    EXPECT_TRUE(std::is_sorted(p.begin(), p.end()));
    for (std::int64_t c = 0; c < d.N; ++c) {
      EXPECT_TRUE(s.count(c)) << "first row, column " << c;
      EXPECT_TRUE(s.count((d.M - 1) * d.N + c)) << "last row, column " << c;
    }
    for (std::int64_t r = 0; r < d.M; ++r) {
      EXPECT_TRUE(s.count(r * d.N)) << "first column, row " << r;
      EXPECT_TRUE(s.count(r * d.N + d.N - 1)) << "last column, row " << r;
    }
    EXPECT_GE(static_cast<std::int64_t>(p.size()),
              std::min<std::int64_t>(d.M * d.N, rl::gemm::kRandomSamples));
    EXPECT_LT(p.back(), d.M * d.N);
    EXPECT_GE(p.front(), 0);
  }
}

TEST(GemmSamplePositions, LargeShapesGetThousandsOfSamplesAtLinearCost) {
  const Dims d{8192, 8192, 8192};
  const std::vector<std::int64_t> p = rl::gemm::sample_positions(d, 1);
  // 4 edges (4 x 8192 - 4 corners) plus at least 4096 more.
  EXPECT_GE(p.size(), static_cast<std::size_t>(4 * 8192 - 4 + rl::gemm::kRandomSamples));
  EXPECT_LT(p.size(), static_cast<std::size_t>(4 * 8192 + 2 * rl::gemm::kRandomSamples));
}

// ------------------------------------------------------------ error bound

// A value exactly on the bound passes, the next float beyond it fails; NaN
// and infinities never pass.
TEST(GemmErrorBound, ValueJustBeyondTheBoundFailsAndOnItPasses) {
  const std::vector<double> ref = {1.0, -2.0, 0.0};
  const std::vector<double> bound = {0x1p-20, 0x1p-18, 0x1p-30};
  const std::vector<float> on = {1.0f + 0x1p-20f, -2.0f - 0x1p-18f, 0x1p-30f};
  EXPECT_TRUE(rl::compare_with_bounds(on, ref, bound).passed);
  for (std::size_t i = 0; i < on.size(); ++i) {
    std::vector<float> beyond = on;
    beyond[i] = std::nextafter(on[i], on[i] > ref[i] ? INFINITY : -INFINITY);
    const rl::Validation v = rl::compare_with_bounds(beyond, ref, bound);
    EXPECT_FALSE(v.passed) << "element " << i;
    EXPECT_NE(v.detail.find("element " + std::to_string(i)), std::string::npos) << v.detail;
  }
  for (const float bad : {NAN, INFINITY, -INFINITY}) {
    std::vector<float> got = on;
    got[1] = bad;
    const rl::Validation v = rl::compare_with_bounds(got, ref, bound);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.detail.find("non-finite output at 1"), std::string::npos) << v.detail;
  }
  const std::vector<float> short_output = {1.0f, -2.0f};
  EXPECT_FALSE(rl::compare_with_bounds(short_output, ref, bound).passed);
}

TEST(GemmErrorBound, GrowsWithKAndWithInputRounding) {
  const rl::gemm::ErrorModel fp32{};
  for (const std::int64_t K : {1, 65, 4096, 8192}) {
    const double ku = static_cast<double>(K) * 0x1p-24;
    EXPECT_NEAR(rl::gemm::error_bound_factor(K, fp32), ku / (1 - ku), 1e-9 * ku);
  }
  EXPECT_LT(rl::gemm::error_bound_factor(64, fp32), rl::gemm::error_bound_factor(65, fp32));
  // TF32 tensor cores: fp32 inputs rounded to 10 mantissa bits (u = 2^-11).
  const rl::gemm::ErrorModel tf32{.unit_roundoff_inputs = 0x1p-11};
  EXPECT_NEAR(rl::gemm::error_bound_factor(1, tf32), 2 * 0x1p-11, 1e-6);
}

// The float64 reference and bound of one output, by hand: 1*3 + (-2)*5.
TEST(GemmReference, FullAndSampledAgreeWithAHandComputedDotProduct) {
  const std::vector<float> a = {1.0f, -2.0f};  // 1 x 2
  const std::vector<float> b = {3.0f, 5.0f};   // 2 x 1
  for (const bool sampled : {false, true}) {
    const rl::gemm::Reference ref =
        rl::gemm::reference<float>(a, b, {1, 1, 2}, rl::gemm::ErrorModel{}, sampled, 1);
    ASSERT_EQ(ref.value.size(), 1u);
    EXPECT_EQ(ref.value[0], -7.0);
    EXPECT_DOUBLE_EQ(ref.bound[0], 13.0 * rl::gemm::error_bound_factor(2, {}));
  }
}

// ------------------------------------------------------------ workload

TEST(GemmWorkload, InputsAreSeededNeverZeroAndNotAllEqual) {
  auto w1 = make_workload("gemm_f32_naive", {31, 17, 23}, 11);
  auto w2 = make_workload("gemm_f32_naive", {31, 17, 23}, 11);
  ASSERT_NE(w1, nullptr);
  const auto* g1 = as_gemm(*w1);
  EXPECT_EQ(g1->host_a(), as_gemm(*w2)->host_a()) << "same seed, same inputs";
  for (const auto* m : {&g1->host_a(), &g1->host_b()}) {
    EXPECT_EQ(std::count(m->begin(), m->end(), 0.0f), 0);
    EXPECT_GT(std::set<float>(m->begin(), m->end()).size(), m->size() / 2);
  }
}

TEST(GemmWorkload, RefusesAMatrixOf2To31Elements) {
  const rl::KernelRecord* record = rl::find_kernel("gemm_f32_naive");
  ASSERT_NE(record, nullptr);
  EXPECT_THROW(record->make_workload(rl::gemm::make_shape(65536, 1, 32768), 1),
               std::invalid_argument);
}

// ------------------------------------------------------------ cost model

TEST(GemmCostModel, CountsTwoMNKFlopsAndCompulsoryBytes) {
  const rl::Shape shape = rl::gemm::make_shape(127, 129, 65);
  for (const std::string& name : kFp32Ladder) {
    SCOPED_TRACE(name);
    const rl::roofline::Cost c = rl::find_kernel(name)->cost(shape);
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 127 * 129 * 65);
    EXPECT_DOUBLE_EQ(c.bytes_min, 4.0 * (127 * 65 + 65 * 129 + 127 * 129));
    EXPECT_GE(c.bytes_model, c.bytes_min);
    EXPECT_EQ(c.unit, rl::roofline::ComputeUnit::fp32);
  }
}

// A read ceil(N / TileN) times, B ceil(M / TileM) times, C written once; a
// partial tile at the edge counts whole.
TEST(GemmCostModel, BytesModelCountsPanelRereadsPerReuseTile) {
  const Dims d{1024, 1024, 512};
  const auto bytes = [&](int tile) {
    return rl::gemm::cost(d, {tile, tile}, 4, rl::roofline::ComputeUnit::fp32).bytes_model;
  };
  const double a = 1024.0 * 512 * 4, b = 512.0 * 1024 * 4, c = 1024.0 * 1024 * 4;
  EXPECT_DOUBLE_EQ(bytes(128), a * 8 + b * 8 + c);
  EXPECT_DOUBLE_EQ(bytes(64), a * 16 + b * 16 + c);
  EXPECT_GT(bytes(32), bytes(64));
  EXPECT_GT(bytes(64), bytes(128));
  const rl::roofline::Cost tail =
      rl::gemm::cost({129, 1, 1}, {128, 128}, 4, rl::roofline::ComputeUnit::fp32);
  EXPECT_DOUBLE_EQ(tail.bytes_model, 4.0 * (129 * 1 + 1 * 2 + 129));
}

// Up the ladder the intensity never falls, and rises at each rung that grows
// the reuse tile (smem_tiled, blocktile_1d, blocktile_2d).
TEST(GemmCostModel, IntensityClimbsTheLadderAsTilesGrow) {
  const rl::Shape shape = rl::gemm::make_shape(4096, 4096, 4096);
  double previous = 0;
  for (const std::string& name : kFp32Ladder) {
    SCOPED_TRACE(name);
    const rl::roofline::Cost c = rl::find_kernel(name)->cost(shape);
    const double intensity = c.flops / c.bytes_model;
    EXPECT_GE(intensity, previous);
    if (name == "gemm_f32_smem_tiled" || name == "gemm_f32_blocktile_1d" ||
        name == "gemm_f32_blocktile_2d") {
      EXPECT_GT(intensity, 1.5 * previous);
    }
    previous = intensity;
  }
}

// ------------------------------------------------------------ registry, shapes

TEST(GemmRegistry, RegistersExactlyTheFp32Ladder) {
  std::vector<std::string> registered;
  for (const auto& record : rl::kernel_registry())
    if (record.family == "gemm" && record.precision == rl::roofline::Precision::fp32)
      registered.push_back(record.name);
  std::vector<std::string> expected = kFp32Ladder;
  std::sort(registered.begin(), registered.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(registered, expected);
}

// Following baseline from the top rung walks the ladder down to naive, whose
// baseline is empty: the chart's arrows climb rung by rung.
TEST(GemmRegistry, BaselinesChainFromWarptiledDownToNaive) {
  std::vector<std::string> chain;
  for (const rl::KernelRecord* r = rl::find_kernel(kFp32Ladder.back()); r != nullptr;
       r = r->baseline.empty() ? nullptr : rl::find_kernel(r->baseline)) {
    chain.insert(chain.begin(), r->name);
    ASSERT_LE(chain.size(), kFp32Ladder.size()) << "baseline cycle";
    EXPECT_EQ(r->family, "gemm");
    EXPECT_EQ(r->precision, rl::roofline::Precision::fp32);
    EXPECT_EQ(r->unit, rl::roofline::ComputeUnit::fp32);
    EXPECT_FALSE(r->gpu_only);
  }
  EXPECT_EQ(chain, kFp32Ladder);
}

TEST(GemmShapes, SmallIsEmulatorSizedWithOddDimensions) {
  for (const std::string& name : kFp32Ladder) {
    SCOPED_TRACE(name);
    bool odd = false;
    for (const rl::Shape& s : rl::find_kernel(name)->shapes(rl::SizePreset::small)) {
      const Dims d = rl::gemm::dims(s);
      EXPECT_LE(std::max({d.M, d.N, d.K}), 256);
      odd = odd || d.M % 2 == 1 || d.N % 2 == 1 || d.K % 2 == 1;
    }
    EXPECT_TRUE(odd);
  }
}

TEST(GemmShapes, LargeHasSquareAndTransformerShapesAndNaiveRefusesTheLargest) {
  const auto names = [](const std::string& kernel) {
    std::vector<std::string> out;
    for (const rl::Shape& s : rl::find_kernel(kernel)->shapes(rl::SizePreset::large))
      out.push_back(s.to_string());
    return out;
  };
  const std::vector<std::string> all = names("gemm_f32_warptiled");
  for (const char* expected :
       {"M=1024,N=1024,K=1024", "M=2048,N=2048,K=2048", "M=4096,N=4096,K=4096",
        "M=8192,N=8192,K=8192", "M=8192,N=3072,K=768", "M=4096,N=11008,K=4096",
        "M=16,N=4096,K=4096"})
    EXPECT_NE(std::find(all.begin(), all.end(), expected), all.end()) << expected;
  // Every rung lists every shape; naive refuses those beyond 2^37 FLOPs,
  // saying so (the ladder table shows the refusal).
  EXPECT_EQ(names("gemm_f32_naive"), all);
  const rl::KernelRecord* naive = rl::find_kernel("gemm_f32_naive");
  ASSERT_TRUE(naive->refuse_shape);
  const std::optional<std::string> why =
      naive->refuse_shape(rl::gemm::make_shape(8192, 8192, 8192));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("refused: 2MNK = 1.1e+12 FLOPs"), std::string::npos) << *why;
  EXPECT_FALSE(naive->refuse_shape(rl::gemm::make_shape(4096, 4096, 4096)).has_value());
  EXPECT_FALSE(rl::find_kernel("gemm_f32_warptiled")
                   ->refuse_shape(rl::gemm::make_shape(8192, 8192, 8192))
                   .has_value());
}

}  // namespace
