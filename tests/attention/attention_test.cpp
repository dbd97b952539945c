// Attention, naive and fused: both against the float64 reference at ragged
// sequence lengths, with and without the causal mask, under two emulator
// schedules; the mask really hides the keys it masks; the error bound
// rejects a wrong scale and unwritten rows; the cost model shows the fusion;
// the memory footprint; the shapes and the row sampling of large instances.
// Built twice: label emu (emulator) and label gpu (CUDA device, Variants/* only).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention_common.hpp"
#include "emu_kernel_test.hpp"

namespace {

using rl::attention::AttentionWorkload;
using rl::attention::shape_of;

const std::vector<std::string> kVariants = {"attention_f32_naive", "attention_f32_fused"};

AttentionWorkload* as_attention(rl::InspectableWorkload& workload) {
  return dynamic_cast<AttentionWorkload*>(&workload);
}

struct Case {
  std::int64_t N, d;
  bool causal;
};

std::string describe(const Case& c) {
  return "N = " + std::to_string(c.N) + ", d = " + std::to_string(c.d) +
         (c.causal ? ", causal" : "");
}

class AttentionVariant : public ::testing::TestWithParam<std::string> {};

// N = 1 (a single key), 17 (less than a tile), 64 (exactly a tile) and 129
// (one past two tiles: a ragged last tile of 1 key and 1 query row).
TEST_P(AttentionVariant, MatchesFloat64ReferenceAtRaggedLengthsUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  std::vector<Case> cases;
  for (const std::int64_t N : {1, 17, 64, 129})
    for (const bool causal : {false, true}) cases.push_back({N, 64, causal});
  cases.push_back({70, 128, true});
  for (const Case& c : cases) {
    SCOPED_TRACE(describe(c));
    auto workload = rl::test::make_inspectable_workload(
        GetParam(), shape_of(2, 3, c.N, c.d, c.causal),
        static_cast<std::uint64_t>(100 * c.N + c.d + (c.causal ? 1 : 0)));
    ASSERT_NE(workload, nullptr) << GetParam() << " is not registered as an inspectable workload";
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// Under the causal mask, query i sees keys 0..i only.  Redrawing K and V of
// keys 40..128 (40 is inside the first 64-key tile, so the fused kernel's
// per-element mask of the diagonal tile is what hides them) must leave rows
// 0..39 of every head bit-identical, and must change the rows that see them.
// Without the mask the same change reaches row 0: the check can fail.
TEST_P(AttentionVariant, CausalRowsIgnoreTheKeysAfterThem) {
  RL_KERNEL_TEST_SETUP();
  constexpr std::int64_t kN = 129, kD = 64, kFirstChanged = 40;
  for (const bool causal : {true, false}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    auto workload =
        rl::test::make_inspectable_workload(GetParam(), shape_of(2, 3, kN, kD, causal), 21);
    ASSERT_NE(workload, nullptr);
    AttentionWorkload* attention = as_attention(*workload);
    ASSERT_NE(attention, nullptr);
    ASSERT_TRUE(workload->validate(nullptr).passed);
    const std::vector<float> before = workload->download_outputs();
    attention->redraw_keys_from(kFirstChanged, rl::InputSpec{.mean = 1.0, .stddev = 3.0}, 22);
    const rl::Validation after_validation = workload->validate(nullptr);
    EXPECT_TRUE(after_validation.passed) << after_validation.detail;
    const std::vector<float> after = workload->download_outputs();
    ASSERT_EQ(before.size(), after.size());
    for (std::int64_t head = 0; head < 6; ++head) {
      const auto row_bits_equal = [&](std::int64_t i) {
        const auto begin = static_cast<std::size_t>((head * kN + i) * kD);
        return std::memcmp(&before[begin], &after[begin], kD * sizeof(float)) == 0;
      };
      if (causal) {
        for (std::int64_t i = 0; i < kFirstChanged; ++i)
          ASSERT_TRUE(row_bits_equal(i))
              << "head " << head << ", row " << i << " changed with keys it cannot see";
        for (std::int64_t i = kFirstChanged; i < kN; ++i)
          ASSERT_FALSE(row_bits_equal(i))
              << "head " << head << ", row " << i << " ignores keys it sees";
      } else {
        EXPECT_FALSE(row_bits_equal(0)) << "head " << head;
      }
    }
  }
}

// Wraps the workload's launch so the kernels get `scale * factor`.
void scale_the_scale(rl::InspectableWorkload& workload, float factor) {
  AttentionWorkload* attention = as_attention(workload);
  ASSERT_NE(attention, nullptr);
  attention->launch = [inner = attention->launch, factor](const rl::attention::Args& a,
                                                          cudaStream_t stream) {
    rl::attention::Args wrong = a;
    wrong.scale *= factor;
    inner(wrong, stream);
  };
}

// The error bound is tight enough to see a 0.1% error in the softmax scale
// (and of course 1/d instead of 1/√d), at the largest N the tests run.
TEST_P(AttentionVariant, WrongSoftmaxScaleFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  for (const float factor : {1.001f, 0.125f}) {
    for (const bool causal : {false, true}) {
      SCOPED_TRACE("scale x " + std::to_string(factor) + (causal ? ", causal" : ""));
      auto workload =
          rl::test::make_inspectable_workload(GetParam(), shape_of(2, 3, 129, 64, causal), 31);
      ASSERT_NE(workload, nullptr);
      scale_the_scale(*workload, factor);
      const rl::Validation v = workload->validate(nullptr);
      EXPECT_FALSE(v.passed) << "max rel err " << v.max_rel_err;
    }
  }
}

TEST_P(AttentionVariant, UnwrittenLastBatchFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(2, 3, 17, 64, true), 41);
  ASSERT_NE(workload, nullptr);
  AttentionWorkload* attention = as_attention(*workload);
  ASSERT_NE(attention, nullptr);
  attention->launch = [inner = attention->launch](const rl::attention::Args& a,
                                                  cudaStream_t stream) {
    rl::attention::Args fewer = a;
    fewer.B -= 1;  // batch 1 stays poisoned (NaN)
    inner(fewer, stream);
  };
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("O row (b=1, h=0, i=0), non-finite output at 0"), std::string::npos)
      << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Variants, AttentionVariant, ::testing::ValuesIn(kVariants),
                         [](const auto& p) { return p.param; });

TEST(AttentionRegistry, RegistersNaiveAndFusedWithTheArrowBetweenThem) {
  std::vector<std::string> registered;
  for (const auto& record : rl::kernel_registry())
    if (record.family == "attention") registered.push_back(record.name);
  EXPECT_EQ(registered.size(), kVariants.size());
  for (const std::string& name : kVariants) {
    SCOPED_TRACE(name);
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr);
    EXPECT_EQ(record->family, "attention");
    EXPECT_EQ(record->precision, "fp32");
    EXPECT_EQ(record->unit, rl::roofline::ComputeUnit::fp32);
    EXPECT_FALSE(record->gpu_only);
  }
  EXPECT_EQ(rl::find_kernel("attention_f32_naive")->baseline, "");
  EXPECT_EQ(rl::find_kernel("attention_f32_fused")->baseline, "attention_f32_naive");
}

TEST(AttentionFused, RefusesHeadDimsItWasNotCompiledFor) {
  const rl::KernelRecord* fused = rl::find_kernel("attention_f32_fused");
  ASSERT_NE(fused, nullptr);
  try {
    fused->make_workload(shape_of(1, 1, 8, 96, false), 1);
    FAIL() << "d = 96 was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("d=96 is not compiled (supported: 64, 128)"),
              std::string::npos)
        << error.what();
  }
  // The naive kernels take any head dim.
  EXPECT_NE(rl::find_kernel("attention_f32_naive")->make_workload(shape_of(1, 1, 8, 96, false), 1),
            nullptr);
}

TEST(AttentionShapes, RejectsNonsenseDimensions) {
  EXPECT_THROW(rl::attention::dims(shape_of(1, 1, 0, 64, false)), std::invalid_argument);
  EXPECT_THROW(
      rl::attention::dims(rl::Shape{{{"B", 1}, {"H", 1}, {"N", 4}, {"d", 64}, {"causal", 2}}}),
      std::invalid_argument);
}

TEST(AttentionCostModel, CausalHalvesFlopsAndFusionCutsTraffic) {
  const rl::KernelRecord* naive = rl::find_kernel("attention_f32_naive");
  const rl::KernelRecord* fused = rl::find_kernel("attention_f32_fused");
  ASSERT_NE(naive, nullptr);
  ASSERT_NE(fused, nullptr);
  // B = 2, H = 4, N = 1024, d = 64: one tensor is 2·4·1024·64·4 B = 2 MiB.
  const double tensor = 2.0 * 4 * 1024 * 64 * 4;
  const double scores = 2.0 * 4 * 1024 * 1024 * 4;
  const rl::roofline::Cost n = naive->cost(shape_of(2, 4, 1024, 64, false));
  const rl::roofline::Cost nc = naive->cost(shape_of(2, 4, 1024, 64, true));
  const rl::roofline::Cost f = fused->cost(shape_of(2, 4, 1024, 64, false));
  const rl::roofline::Cost fc = fused->cost(shape_of(2, 4, 1024, 64, true));
  EXPECT_DOUBLE_EQ(n.flops, 4.0 * 2 * 4 * 1024.0 * 1024 * 64);
  EXPECT_DOUBLE_EQ(nc.flops, n.flops / 2);
  EXPECT_DOUBLE_EQ(f.flops, n.flops);
  EXPECT_DOUBLE_EQ(fc.flops, nc.flops);
  for (const auto* c : {&n, &nc, &f, &fc}) EXPECT_DOUBLE_EQ(c->bytes_min, 4 * tensor);
  // Naive: Q, K read 64 times, S written, read twice, P written, read 4 times
  // (d/16), V read 64 times, O written; the mask changes nothing.
  EXPECT_DOUBLE_EQ(n.bytes_model, (64 + 64 + 64 + 1) * tensor + (1 + 2 + 1 + 4) * scores);
  EXPECT_DOUBLE_EQ(nc.bytes_model, n.bytes_model);
  // Fused (64-row query tiles): Q, O once; K, V once per query tile (16 tiles);
  // causal: query tile t reads key tiles 0..t, 136 of 256.
  EXPECT_DOUBLE_EQ(f.bytes_model, 2 * tensor + 2 * 16 * tensor);
  EXPECT_DOUBLE_EQ(fc.bytes_model, 2 * tensor + 2 * (136.0 / 16) * tensor);
  EXPECT_GT(n.bytes_model, 5 * f.bytes_model);
  EXPECT_LT(fc.bytes_model, f.bytes_model);
  EXPECT_GT(f.flops / f.bytes_model, 30.0);  // about BlockM / 2 FLOP/B
  EXPECT_LT(n.flops / n.bytes_model, 5.0);
}

TEST(AttentionCostModel, FusedCausalReadsOnlyTheKeyTilesUpToTheDiagonal) {
  // N = 129: query tiles 0..63, 64..127, 128 read 64, 128 and 129 key rows.
  const rl::attention::Dims p = rl::attention::dims(shape_of(1, 1, 129, 64, true));
  EXPECT_DOUBLE_EQ(rl::attention::fused_key_rows_read(p, 64, 64), 64.0 + 128 + 129);
  const rl::attention::Dims q = rl::attention::dims(shape_of(1, 1, 129, 64, false));
  EXPECT_DOUBLE_EQ(rl::attention::fused_key_rows_read(q, 64, 64), 3.0 * 129);
}

TEST(AttentionFootprint, NaiveNeedsTheTwoScoreTensorsFusedOnlyQKVO) {
  const rl::Shape small = shape_of(2, 3, 5, 8, false);
  EXPECT_EQ(rl::attention::device_bytes_needed_naive(small),
            (4 * 2 * 3 * 5 * 8 + 2 * 2 * 3 * 5 * 5) * 4u);
  EXPECT_EQ(rl::attention::device_bytes_needed_fused(small), 4 * 2 * 3 * 5 * 8 * 4u);
  // The large preset's longest sequence: 69 GB of S and P for d = 64.
  const rl::Shape longest = shape_of(1, 32, 16384, 64, true);
  const std::size_t qkvo = 4ull * 32 * 16384 * 64 * 4;
  EXPECT_EQ(rl::attention::device_bytes_needed_fused(longest), qkvo);
  EXPECT_EQ(rl::attention::device_bytes_needed_naive(longest),
            qkvo + 2ull * 32 * 16384 * 16384 * 4);
  EXPECT_GT(rl::attention::device_bytes_needed_naive(longest), 68'000'000'000ull);
}

TEST(AttentionShapes, LargePresetFollowsTheFlashAttentionConvention) {
  const rl::KernelRecord* record = rl::find_kernel("attention_f32_fused");
  ASSERT_NE(record, nullptr);
  const std::vector<rl::Shape> large = record->shapes(rl::SizePreset::large);
  EXPECT_EQ(large.size(), 2u * 6 * 2);
  for (const rl::Shape& s : large) {
    SCOPED_TRACE(s.to_string());
    EXPECT_EQ(s.at("B") * s.at("N"), 16384);
    EXPECT_EQ(s.at("H") * s.at("d"), 2048);
    EXPECT_TRUE(s.at("d") == 64 || s.at("d") == 128);
    EXPECT_GE(s.at("N"), 512);
    EXPECT_LE(s.at("N"), 16384);
  }
  for (const rl::Shape& s : record->shapes(rl::SizePreset::small)) {
    SCOPED_TRACE(s.to_string());
    EXPECT_LE(s.at("B") * s.at("H") * s.at("N"), 300) << "small is the emulator's preset";
    EXPECT_NO_THROW(rl::attention::dims(s));
  }
}

TEST(AttentionValidation, LargeInstancesCheckAtLeast64RowsPerHeadWithFirstAndLast) {
  EXPECT_EQ(rl::attention::checked_rows(129).size(), 129u);  // full below the threshold
  for (const std::int64_t N : {257, 512, 16384}) {
    SCOPED_TRACE("N = " + std::to_string(N));
    const std::vector<std::int64_t> rows = rl::attention::checked_rows(N);
    EXPECT_EQ(rows.size(), 64u);
    EXPECT_EQ(rows.front(), 0);
    EXPECT_EQ(rows.back(), N - 1);
    for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_LT(rows[i - 1], rows[i]);
  }
}

// The error bound must be able to fail the bug the fused kernel is most
// likely to have: forgetting to rescale the running sum and accumulator when
// the running max grows.  The online softmax in fp32 on the CPU, over 64-key
// tiles as the kernel walks them, with and without the rescale: the bound
// accepts the first and rejects the second.
std::vector<float> online_softmax_fp32(const rl::attention::Dims& p, float scale,
                                       const std::vector<float>& q, const std::vector<float>& k,
                                       const std::vector<float>& v, bool rescale) {
  const auto N = static_cast<std::size_t>(p.N), d = static_cast<std::size_t>(p.d);
  constexpr std::size_t kTile = 64;
  std::vector<float> out(q.size());
  for (std::size_t head = 0; head < static_cast<std::size_t>(p.heads()); ++head) {
    for (std::size_t i = 0; i < N; ++i) {
      const std::size_t base = head * N * d;
      std::vector<float> acc(d, 0.0f);
      float row_max = -INFINITY, sum = 0.0f;
      const std::size_t visible = p.causal ? i + 1 : N;
      for (std::size_t j0 = 0; j0 < visible; j0 += kTile) {
        const std::size_t j1 = std::min(visible, j0 + kTile);
        std::vector<float> s(j1 - j0);
        float tile_max = -INFINITY;
        for (std::size_t j = j0; j < j1; ++j) {
          float dot = 0.0f;
          for (std::size_t c = 0; c < d; ++c) dot += q[base + i * d + c] * k[base + j * d + c];
          s[j - j0] = dot * scale;
          tile_max = std::max(tile_max, s[j - j0]);
        }
        const float new_max = std::max(row_max, tile_max);
        const float correction = rescale ? std::exp(row_max - new_max) : 1.0f;
        sum *= correction;
        for (float& a : acc) a *= correction;
        for (std::size_t j = j0; j < j1; ++j) {
          const float w = std::exp(s[j - j0] - new_max);
          sum += w;
          for (std::size_t c = 0; c < d; ++c) acc[c] += w * v[base + j * d + c];
        }
        row_max = new_max;
      }
      for (std::size_t c = 0; c < d; ++c) out[base + i * d + c] = acc[c] / sum;
    }
  }
  return out;
}

TEST(AttentionValidation, ErrorBoundAcceptsOnlineSoftmaxAndRejectsItWithoutTheRescale) {
  const rl::attention::Dims p = rl::attention::dims(shape_of(1, 2, 200, 64, false));
  const float scale = 0.125f;
  rl::SeededRng rng(61);
  std::vector<float> q(static_cast<std::size_t>(p.tensor_elements())), k(q.size()), v(q.size());
  for (auto* x : {&q, &k, &v})
    for (float& e : *x) e = static_cast<float>(rng.normal(0.0, 1.0));
  const rl::attention::Reference ref =
      rl::attention::reference(p, scale, q, k, v, rl::attention::checked_rows(p.N));
  const rl::Tolerance tol = rl::attention::tolerance(p, ref);
  for (const bool rescale : {true, false}) {
    SCOPED_TRACE(rescale ? "with the rescale" : "without the rescale");
    const std::vector<float> out = online_softmax_fp32(p, scale, q, k, v, rescale);
    const rl::Validation result = rl::compare_to_reference(out, ref.O, tol);
    EXPECT_EQ(result.passed, rescale)
        << result.detail << " (max abs err " << result.max_abs_err << ", atol " << tol.atol << ")";
  }
}

// The sampling threshold is injectable: a workload that samples 64 of its
// 129 rows still passes, and checks exactly those rows.
TEST(AttentionValidation, SampledWorkloadChecksTheSampledRows) {
  const rl::attention::Dims p = rl::attention::dims(shape_of(1, 2, 129, 64, true));
  for (const std::string& name : kVariants) {
    SCOPED_TRACE(name);
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr);
    // The launchers are what the records wrap; reach them through a workload.
    auto registered = rl::test::make_inspectable_workload(name, shape_of(1, 2, 129, 64, true), 51);
    ASSERT_NE(registered, nullptr);
    AttentionWorkload sampled([](const rl::attention::Args&, cudaStream_t) {}, p,
                              name.ends_with("naive"), 51,
                              /*full_check_max_n=*/16);
    sampled.launch = as_attention(*registered)->launch;
    EXPECT_EQ(sampled.reference_rows().rows, rl::attention::checked_rows(129, 16));
    EXPECT_EQ(sampled.reference_rows().rows.size(), 64u);
    const rl::Validation v = sampled.validate(nullptr);
    EXPECT_TRUE(v.passed) << v.detail;
  }
}

}  // namespace
