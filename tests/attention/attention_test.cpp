// Attention, naive, fused SIMT (fp32) and flash on tensor cores (bf16,
// fp16): every variant against the float64 reference at ragged sequence
// lengths, with and without the causal mask, under two emulator schedules;
// the mask really hides the keys it masks; the error bound rejects a wrong
// scale and unwritten rows, and (on a CPU model of the online softmax in each
// precision) a missing rescale and one masked key too many; the flash
// kernel's swizzle is conflict-free for ldmatrix; the cost model shows the
// fusion; the memory footprint; the shapes and the row sampling of large
// instances; the naive softmax in every storage type.
// Built twice: label emu (emulator) and label gpu (CUDA device: Variants/* and
// AttentionSoftmax.*).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/attention_cost.hpp"
#include "attention/attention_error_model.hpp"
#include "attention/attention_launch.hpp"
#include "attention/attention_problem.hpp"
#include "attention/attention_reference.hpp"
#include "attention/attention_swizzle.hpp"
#include "attention/attention_workload.hpp"
#include "emu_kernel_test.hpp"

namespace {

using rl::attention::AttentionWorkload;
using rl::attention::shape_of;

const std::vector<std::string> kVariants = {"attention_f32_naive", "attention_f32_fused",
                                            "attention_flash_mma_sync_bf16",
                                            "attention_flash_mma_sync_fp16"};

bool is_fp32(const std::string& name) {
  return rl::find_kernel(name) != nullptr &&
         rl::find_kernel(name)->precision == rl::roofline::Precision::fp32;
}

// Calls f(typed) with the workload as the AttentionWorkload<T> it is (T =
// float, __nv_bfloat16 or __half); false if it is none of them.
template <typename F>
bool with_attention(rl::InspectableWorkload& workload, F&& f) {
  if (auto* w = dynamic_cast<AttentionWorkload<float>*>(&workload)) {
    f(*w);
  } else if (auto* b = dynamic_cast<AttentionWorkload<__nv_bfloat16>*>(&workload)) {
    f(*b);
  } else if (auto* h = dynamic_cast<AttentionWorkload<__half>*>(&workload)) {
    f(*h);
  } else {
    return false;
  }
  return true;
}

// Wraps the workload's launch: the kernels get the Args that `change` makes.
template <typename Change>
bool wrap_launch(rl::InspectableWorkload& workload, Change change) {
  return with_attention(workload, [&](auto& attention) {
    attention.launch = [inner = attention.launch, change](const auto& a, cudaStream_t stream) {
      auto changed = a;
      change(changed);
      inner(changed, stream);
    };
  });
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
// (one past two tiles: a ragged last tile of 1 key and 1 query row).  Two
// heads (B = 1, H = 2): every kernel flattens B·H into one grid dimension, so
// the second head's offset is all that more heads would check, at a third of
// the threads of B = 2, H = 3 (the naive rung took 72 s there under racecheck).
TEST_P(AttentionVariant, MatchesFloat64ReferenceAtRaggedLengthsUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  std::vector<Case> cases;
  for (const std::int64_t N : {1, 17, 64, 129})
    for (const bool causal : {false, true}) cases.push_back({N, 64, causal});
  cases.push_back({70, 128, true});
  for (const Case& c : cases) {
    SCOPED_TRACE(describe(c));
    auto workload = rl::test::make_inspectable_workload(
        GetParam(), shape_of(1, 2, c.N, c.d, c.causal),
        static_cast<std::uint64_t>(100 * c.N + c.d + (c.causal ? 1 : 0)));
    ASSERT_NE(workload, nullptr) << GetParam() << " is not registered as an inspectable workload";
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// --dump-tensors: Q, K, V as inputs and O as the output, [B, H, N, d], O
// exactly what validation compared.
TEST_P(AttentionVariant, DumpsQKVAndTheOutputItValidated) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(2, 3, 17, 64, true), 5);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(workload->validate(nullptr).passed);
  const std::vector<rl::TensorDump> tensors = workload->tensors();
  ASSERT_EQ(tensors.size(), 4u);
  const std::vector<std::int64_t> bhnd{2, 3, 17, 64};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(tensors[i].name, std::string(1, "QKVO"[i]));
    EXPECT_EQ(tensors[i].role, i < 3 ? "input" : "output");
    EXPECT_EQ(tensors[i].dims, bhnd);
    EXPECT_EQ(tensors[i].values.size(), 2u * 3 * 17 * 64);
  }
  EXPECT_EQ(tensors[3].values, workload->download_outputs());
}

// Under the causal mask, query i sees keys 0..i only.  Redrawing K and V of
// keys 40..64 (40 is inside the first 64-key tile, so the fused kernels'
// per-element mask of the diagonal tile is what hides them) must leave rows
// 0..39 of every head bit-identical, and must change the rows that see them.
// Without the mask the same change reaches row 0: the check can fail.  N = 65:
// one past a 64-row tile, so query tile 0 skips key tile 1 whole, masks its
// diagonal tile per element, and the ragged query tile 1 (row 64) sees a full
// off-diagonal tile and its own diagonal: every case 129 has, at a quarter of
// the naive rung's N² threads (36 s at N = 129 under racecheck).  Two heads
// (B = 1, H = 2): the second one's rows start at N, so a mask computed from
// the flat row instead of its position in the head shows there; more heads
// would repeat the same two.
TEST_P(AttentionVariant, CausalRowsIgnoreTheKeysAfterThem) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();  // the masked paths run in the ragged-lengths test's causal cases
  constexpr std::int64_t kN = 65, kD = 64, kFirstChanged = 40, kHeads = 2;
  for (const bool causal : {true, false}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    auto workload =
        rl::test::make_inspectable_workload(GetParam(), shape_of(1, kHeads, kN, kD, causal), 21);
    ASSERT_NE(workload, nullptr);
    ASSERT_TRUE(workload->validate(nullptr).passed);
    const std::vector<float> before = workload->download_outputs();
    ASSERT_TRUE(with_attention(*workload, [](auto& attention) {
      attention.redraw_keys_from(kFirstChanged, rl::InputSpec{.mean = 1.0, .stddev = 3.0}, 22);
    }));
    const rl::Validation after_validation = workload->validate(nullptr);
    EXPECT_TRUE(after_validation.passed) << after_validation.detail;
    const std::vector<float> after = workload->download_outputs();
    ASSERT_EQ(before.size(), after.size());
    for (std::int64_t head = 0; head < kHeads; ++head) {
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

// The error bound is tight enough to see a 0.1% error in the softmax scale
// in fp32, 2% in bf16 and fp16 (where rounding P to T is allowed 2^-8 or
// 2^-11 of every weight), and of course 1/d instead of 1/√d, at the largest
// N the tests run.  Two heads: a wrong scale skews every row alike, so six
// heads (three times the threads) would show nothing two do not.
TEST_P(AttentionVariant, WrongSoftmaxScaleFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  for (const float factor : {is_fp32(GetParam()) ? 1.001f : 1.02f, 0.125f}) {
    for (const bool causal : {false, true}) {
      SCOPED_TRACE("scale x " + std::to_string(factor) + (causal ? ", causal" : ""));
      auto workload =
          rl::test::make_inspectable_workload(GetParam(), shape_of(1, 2, 129, 64, causal), 31);
      ASSERT_NE(workload, nullptr);
      ASSERT_TRUE(wrap_launch(*workload, [factor](auto& a) { a.scale *= factor; }));
      const rl::Validation v = workload->validate(nullptr);
      EXPECT_FALSE(v.passed) << "max rel err " << v.max_rel_err;
    }
  }
}

TEST_P(AttentionVariant, UnwrittenLastBatchFailsValidation) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(2, 3, 17, 64, true), 41);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(wrap_launch(*workload, [](auto& a) { a.B -= 1; }));  // batch 1 stays poisoned (NaN)
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("O row (b=1, h=0, i=0), non-finite output at 0"), std::string::npos)
      << v.detail;
}

// The tensor-core kernel's own paths at its tiles (BlockM 128; BlockN 64,
// 32 at d = 128), which the shared cases above reach only in part: N = 200
// runs 3 (d = 128: 6) unmasked key tiles, then a ragged masked one; causal,
// its second query tile (rows 128..199) runs 2 (4) unmasked tiles, then the
// masked ones the diagonal spans; N = 129 leaves a query tile of one row.
TEST(AttentionFlash, MatchesFloat64ReferenceThroughItsUnmaskedAndMaskedLoops) {
  RL_KERNEL_TEST_SETUP();
  for (const std::string name :
       {"attention_flash_mma_sync_bf16", "attention_flash_mma_sync_fp16"}) {
#if defined(__SANITIZE_THREAD__)
    // The fp16 twin is the same template with another mma type: the same
    // addresses, barriers and orders racecheck looks at (11 s there).
    if (name.ends_with("_fp16")) continue;
#endif
    for (const std::int64_t N : {129, 200})
      for (const std::int64_t d : {64, 128})
        for (const bool causal : {false, true}) {
          const Case c{N, d, causal};
          SCOPED_TRACE(name + ", " + describe(c));
          auto workload = rl::test::make_inspectable_workload(
              name, shape_of(1, 2, c.N, c.d, c.causal),
              static_cast<std::uint64_t>(100 * c.N + c.d + (c.causal ? 1 : 0)));
          ASSERT_NE(workload, nullptr);
          rl::test::expect_passes_under_two_schedules(*workload);
        }
  }
}

// The naive path's softmax kernel in each storage type (the library
// baselines in cuda_only/ reuse it): P against the float64 softmax of the
// scores as stored, masked entries exactly 0.  P is stored as T, so the
// tolerance is T's rounding on top of a few fp32 ulps.
template <typename T>
void expect_softmax_matches_float64(bool causal) {
  SCOPED_TRACE(std::string(rl::precision_name<T>()) + (causal ? ", causal" : ""));
  constexpr int kN = 37;
  constexpr std::int64_t kRows = 3 * kN;  // three heads
  rl::SeededRng rng(71);
  std::vector<T> s(static_cast<std::size_t>(kRows * kN));
  for (T& x : s) x = rl::from_f32<T>(static_cast<float>(rng.normal(0.0, 2.0)));
  rl::DeviceBuffer<T> scores(s.size()), probabilities(s.size());
  scores.upload(s);
  probabilities.poison();
  rl::attention::launch_attention_softmax<T>(probabilities.get(), scores.get(), kRows, kN, causal,
                                             nullptr);
  RL_CUDA_CHECK(cudaGetLastError());
  RL_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = rl::download_as_float(probabilities);
  std::vector<double> want(s.size(), 0.0);
  for (std::int64_t row = 0; row < kRows; ++row) {
    const std::int64_t visible = causal ? row % kN + 1 : kN;
    double max = -INFINITY, sum = 0;
    for (std::int64_t j = 0; j < visible; ++j)
      max = std::max(max, double{rl::to_f32(s[static_cast<std::size_t>(row * kN + j)])});
    for (std::int64_t j = 0; j < visible; ++j)
      sum += std::exp(rl::to_f32(s[static_cast<std::size_t>(row * kN + j)]) - max);
    for (std::int64_t j = 0; j < visible; ++j)
      want[static_cast<std::size_t>(row * kN + j)] =
          std::exp(rl::to_f32(s[static_cast<std::size_t>(row * kN + j)]) - max) / sum;
  }
  const rl::Tolerance tol{rl::attention::storage_rounding<T>().relative + 1e-5, 1e-7};
  const rl::Validation v = rl::compare_to_reference(got, want, tol);
  EXPECT_TRUE(v.passed) << v.detail;
  if (!causal) return;
  for (std::int64_t row = 0; row < kRows; ++row)
    for (std::int64_t j = row % kN + 1; j < kN; ++j)
      ASSERT_EQ(got[static_cast<std::size_t>(row * kN + j)], 0.0f) << row << ", " << j;
}

TEST(AttentionSoftmax, MatchesFloat64InEveryStorageType) {
  RL_KERNEL_TEST_SETUP();
  for (const bool causal : {false, true}) {
    expect_softmax_matches_float64<float>(causal);
    expect_softmax_matches_float64<__nv_bfloat16>(causal);
    expect_softmax_matches_float64<__half>(causal);
  }
}

// The flash kernel's shared-memory swizzle: every ldmatrix phase it issues
// reads 8 consecutive rows (starting at a multiple of 8) at one 16-byte
// column chunk, for Q and K (plain) and V (.trans) alike.  Swizzled, the 8
// addresses fall in 8 different 16-byte bank quads (no conflict); in the
// plain row-major layout all 8 fall in the same quad (8-way conflict), which
// is what the swizzle is for.
template <int D>
void expect_swizzle_spreads_ldmatrix_rows_over_the_bank_quads() {
  SCOPED_TRACE("D = " + std::to_string(D));
  constexpr int kElementBytes = 2, kQuadBytes = 16, kQuads = 8;  // 32 banks × 4 B = 8 quads
  const auto quad = [](int element) { return element * kElementBytes / kQuadBytes % kQuads; };
  for (int row0 = 0; row0 < 64; row0 += 8) {
    for (int chunk = 0; chunk < D / 8; ++chunk) {
      std::vector<int> swizzled, plain;
      for (int r = row0; r < row0 + 8; ++r) {
        swizzled.push_back(quad(rl::attention::swizzled_index<D>(r, chunk * 8)));
        plain.push_back(quad(r * D + chunk * 8));
      }
      std::sort(swizzled.begin(), swizzled.end());
      EXPECT_EQ(std::unique(swizzled.begin(), swizzled.end()) - swizzled.begin(), 8)
          << "rows " << row0 << "..+7, chunk " << chunk;
      EXPECT_EQ(std::count(plain.begin(), plain.end(), plain[0]), 8);
      // Within a row the swizzle permutes the chunks: every element keeps a place.
      for (int r = row0; r < row0 + 8; ++r) {
        const int index = rl::attention::swizzled_index<D>(r, chunk * 8 + 5);
        EXPECT_EQ(index / D, r);
        EXPECT_EQ(index % 8, 5);
      }
    }
  }
  std::vector<int> all;
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < D; ++c) all.push_back(rl::attention::swizzled_index<D>(r, c));
  std::sort(all.begin(), all.end());
  for (int i = 0; i < static_cast<int>(all.size()); ++i)
    ASSERT_EQ(all[static_cast<std::size_t>(i)], i);
}

TEST(AttentionFlashLayout, SwizzleMakesLdmatrixRowsConflictFree) {
  expect_swizzle_spreads_ldmatrix_rows_over_the_bank_quads<64>();
  expect_swizzle_spreads_ldmatrix_rows_over_the_bank_quads<128>();
}

// What the kernel's ldmatrix addressing relies on: a 16-column step along a
// row of a swizzled tile is an XOR of the offset of the row's first 16
// columns (swizzled_advance), in every row, for both head dims.
template <int D>
void expect_advancing_along_a_row_is_an_xor() {
  SCOPED_TRACE(D);
  for (int row = 0; row < 128; ++row)
    for (int col = 0; col < 16; ++col)
      for (int k = 0; 16 * k < D; ++k)
        ASSERT_EQ(rl::attention::swizzled_advance(rl::attention::swizzled_index<D>(row, col), k),
                  rl::attention::swizzled_index<D>(row, col + 16 * k))
            << row << ", " << col << ", " << k;
}

TEST(AttentionFlashLayout, AdvancingAlongARowIsAnXor) {
  expect_advancing_along_a_row_is_an_xor<64>();
  expect_advancing_along_a_row_is_an_xor<128>();
}

INSTANTIATE_TEST_SUITE_P(Variants, AttentionVariant, ::testing::ValuesIn(kVariants),
                         [](const auto& p) { return p.param; });

TEST(AttentionRegistry, RegistersTheLadderWithTheArrowsBetweenIt) {
  std::vector<std::string> registered;
  // The sm_90a rungs run as a Hopper only: tests/emu_hopper tests them.
  for (const auto& record : rl::kernel_registry())
    if (record.family == "attention" && record.max_cc != 90) registered.push_back(record.name);
  EXPECT_EQ(registered.size(), kVariants.size());
  const struct {
    const char* name;
    const char* precision;
    rl::roofline::ComputeUnit unit;
    const char* baseline;
    int min_cc;
  } expected[] = {
      {"attention_f32_naive", "fp32", rl::roofline::ComputeUnit::fp32, "", 0},
      {"attention_f32_fused", "fp32", rl::roofline::ComputeUnit::fp32, "attention_f32_naive", 0},
      {"attention_flash_mma_sync_bf16", "bf16", rl::roofline::ComputeUnit::tc_bf16,
       "attention_f32_fused", 80},
      {"attention_flash_mma_sync_fp16", "fp16", rl::roofline::ComputeUnit::tc_fp16,
       "attention_f32_fused", 80},
  };
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const rl::KernelRecord* record = rl::find_kernel(e.name);
    ASSERT_NE(record, nullptr);
    EXPECT_EQ(record->family, "attention");
    EXPECT_EQ(to_string(record->precision), e.precision);
    EXPECT_EQ(record->unit, e.unit);
    EXPECT_EQ(record->baseline, e.baseline);
    EXPECT_EQ(record->min_cc, e.min_cc);
    EXPECT_FALSE(record->gpu_only);
  }
}

TEST(AttentionFused, RefusesHeadDimsItWasNotCompiledFor) {
  for (const char* name :
       {"attention_f32_fused", "attention_flash_mma_sync_bf16", "attention_flash_mma_sync_fp16"}) {
    SCOPED_TRACE(name);
    const rl::KernelRecord* fused = rl::find_kernel(name);
    ASSERT_NE(fused, nullptr);
    try {
      fused->make_workload(shape_of(1, 1, 8, 96, false), 1);
      FAIL() << "d = 96 was accepted";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("d=96 is not compiled (supported: 64, 128)"),
                std::string::npos)
          << error.what();
    }
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

// The flash kernels move the fused kernel's traffic (same 64×64 tiles) at
// 2 bytes per element, and are charged to the tensor cores.
TEST(AttentionCostModel, FlashCountsTheFusedTrafficAtTheStorageSize) {
  const rl::KernelRecord* fused = rl::find_kernel("attention_f32_fused");
  ASSERT_NE(fused, nullptr);
  for (const char* name : {"attention_flash_mma_sync_bf16", "attention_flash_mma_sync_fp16"}) {
    SCOPED_TRACE(name);
    const rl::KernelRecord* flash = rl::find_kernel(name);
    ASSERT_NE(flash, nullptr);
    for (const bool causal : {false, true}) {
      const rl::Shape shape = shape_of(2, 4, 1024, 128, causal);
      const rl::roofline::Cost f = fused->cost(shape), t = flash->cost(shape);
      EXPECT_DOUBLE_EQ(t.flops, f.flops);
      EXPECT_DOUBLE_EQ(t.bytes_min, f.bytes_min / 2);
      // Its own tiles (BlockM 128, BlockN 32 at d = 128) at 2 bytes: twice
      // the fused SIMT kernel's query rows, so K and V are re-read half as
      // often.
      EXPECT_DOUBLE_EQ(t.bytes_model,
                       rl::attention::fused_bytes_model(rl::attention::dims(shape), 128, 32, 2));
      EXPECT_LT(t.bytes_model, f.bytes_model / 2);
      EXPECT_EQ(t.unit, flash->unit);
      EXPECT_GT(t.flops / t.bytes_model, 90.0);  // BlockM FLOP/B, less the Q and O traffic
    }
  }
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
  // In a 16-bit storage type, half of each.
  EXPECT_EQ(rl::attention::device_bytes_needed_naive<__nv_bfloat16>(longest),
            rl::attention::device_bytes_needed_naive(longest) / 2);
  EXPECT_EQ(rl::attention::device_bytes_needed_fused<__half>(longest), qkvo / 2);
  // Every attention record declares its footprint, so the harness can skip
  // what does not fit: the naive path's S and P, the fused paths' Q, K, V, O.
  // (The fp8 records, 1-byte inputs and a bf16 O: hopper_attention_fp8_test.cpp.)
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "attention" || record.precision == rl::roofline::Precision::fp8) continue;
    SCOPED_TRACE(record.name);
    ASSERT_TRUE(record.device_bytes) << "no device_bytes";
    const std::size_t element = record.precision == rl::roofline::Precision::fp32 ? 4 : 2;
    const bool naive = record.variant.find("naive") != std::string::npos;
    EXPECT_EQ(record.device_bytes(longest),
              (qkvo + (naive ? 2ull * 32 * 16384 * 16384 * 4 : 0)) / 4 * element);
  }
}

// The GPU's default preset is FlashAttention's benchmark set for every
// attention record this build registers (the SIMT and mma.sync rungs, the
// wgmma rungs and the fp8 rung; the library baselines share make_record):
// 16k tokens per batch, N from 512 to 16k with B = 16k / N, H·d = 2048,
// d = 64 and 128, causal and not; each costed, none refused.
TEST(AttentionShapes, LargePresetIsTheFlashAttentionBenchmarkSetForEveryRecord) {
  std::vector<std::string> expected;
  for (const std::int64_t d : {64, 128})
    for (const std::int64_t N : {512, 1024, 2048, 4096, 8192, 16384})
      for (const bool causal : {false, true})
        expected.push_back(shape_of(16384 / N, 2048 / d, N, d, causal).to_string());
  std::sort(expected.begin(), expected.end());
  int records = 0;
  for (const auto& record : rl::kernel_registry()) {
    if (record.family != "attention") continue;
    SCOPED_TRACE(record.name);
    ++records;
    std::vector<std::string> large;
    for (const rl::Shape& s : record.shapes(rl::SizePreset::large)) {
      large.push_back(s.to_string());
      EXPECT_NO_THROW(record.cost(s)) << s.to_string();
      EXPECT_FALSE(record.refuse_shape && record.refuse_shape(s)) << s.to_string();
    }
    std::sort(large.begin(), large.end());
    EXPECT_EQ(large, expected);
    for (const rl::Shape& s : record.shapes(rl::SizePreset::small)) {
      SCOPED_TRACE(s.to_string());
      EXPECT_LE(s.at("B") * s.at("H") * s.at("N"), 300) << "small is the emulator's preset";
      EXPECT_NO_THROW(rl::attention::dims(s));
    }
  }
  EXPECT_GE(records, 4) << "naive, fused and the two flash records at least";
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

// The error bound must accept what a correct kernel computes in each
// precision and reject the bugs a fused kernel is likely to have.  A CPU
// model of the online softmax with the fused kernels' numerics: fp32 logits
// and accumulators, 64-key tiles as the kernels walk them, P rounded to T
// before P·V and O stored as T (for T = float both are no-ops, the fp32
// SIMT kernel), the row sum kept from the unrounded weights as the flash
// kernel keeps it.  The bugs:
//   missing_rescale      the running sum and accumulator are not multiplied
//                        by exp(m_old - m_new) when the row max grows;
//   one_key_too_many     the causal mask lets key i + 1 through to query i.
enum class Bug { none, missing_rescale, one_key_too_many };

template <typename T>
std::vector<float> online_softmax_model(const rl::attention::Dims& p, float scale,
                                        const std::vector<T>& q, const std::vector<T>& k,
                                        const std::vector<T>& v, Bug bug) {
  const auto N = static_cast<std::size_t>(p.N), d = static_cast<std::size_t>(p.d);
  constexpr std::size_t kTile = 64;
  const auto in = [](T x) { return rl::to_f32(x); };
  const auto round_to_t = [](float x) { return rl::to_f32(rl::from_f32<T>(x)); };
  std::vector<float> out(q.size());
  for (std::size_t head = 0; head < static_cast<std::size_t>(p.heads()); ++head) {
    for (std::size_t i = 0; i < N; ++i) {
      const std::size_t base = head * N * d;
      std::vector<float> acc(d, 0.0f);
      float row_max = -INFINITY, sum = 0.0f;
      const std::size_t visible =
          p.causal ? std::min(N, i + (bug == Bug::one_key_too_many ? 2 : 1)) : N;
      for (std::size_t j0 = 0; j0 < visible; j0 += kTile) {
        const std::size_t j1 = std::min(visible, j0 + kTile);
        std::vector<float> s(j1 - j0);
        float tile_max = -INFINITY;
        for (std::size_t j = j0; j < j1; ++j) {
          float dot = 0.0f;
          for (std::size_t c = 0; c < d; ++c)
            dot += in(q[base + i * d + c]) * in(k[base + j * d + c]);
          s[j - j0] = dot * scale;
          tile_max = std::max(tile_max, s[j - j0]);
        }
        const float new_max = std::max(row_max, tile_max);
        const float correction = bug == Bug::missing_rescale ? 1.0f : std::exp(row_max - new_max);
        sum *= correction;
        for (float& a : acc) a *= correction;
        for (std::size_t j = j0; j < j1; ++j) {
          const float w = std::exp(s[j - j0] - new_max);
          sum += w;
          const float w_t = round_to_t(w);
          for (std::size_t c = 0; c < d; ++c) acc[c] += w_t * in(v[base + j * d + c]);
        }
        row_max = new_max;
      }
      for (std::size_t c = 0; c < d; ++c) out[base + i * d + c] = round_to_t(acc[c] / sum);
    }
  }
  return out;
}

template <typename T>
void expect_error_bound_accepts_only_the_correct_model(const rl::attention::ErrorModel& error) {
  for (const bool causal : {false, true}) {
    const rl::attention::Dims p = rl::attention::dims(shape_of(1, 2, 200, 64, causal));
    const float scale = 0.125f;
    rl::SeededRng rng(61);
    std::vector<T> q(static_cast<std::size_t>(p.tensor_elements())), k(q.size()), v(q.size());
    for (auto* x : {&q, &k, &v})
      for (T& e : *x) e = rl::from_f32<T>(static_cast<float>(rng.normal(0.0, 1.0)));
    const rl::attention::Reference ref =
        rl::attention::reference<T>(p, scale, q, k, v, rl::attention::checked_rows(p.N));
    const rl::Tolerance tol = rl::attention::tolerance<T>(p, ref, error);
    for (const Bug bug : {Bug::none, Bug::missing_rescale, Bug::one_key_too_many}) {
      if (bug == Bug::one_key_too_many && !causal) continue;
      SCOPED_TRACE(std::string(rl::precision_name<T>()) + (causal ? ", causal" : "") +
                   (bug == Bug::none              ? ", correct"
                    : bug == Bug::missing_rescale ? ", without the rescale"
                                                  : ", one masked key let through"));
      const std::vector<float> out = online_softmax_model<T>(p, scale, q, k, v, bug);
      const rl::Validation result = rl::compare_to_reference(out, ref.O, tol);
      EXPECT_EQ(result.passed, bug == Bug::none)
          << result.detail << " (max abs err " << result.max_abs_err << ", atol " << tol.atol
          << ", rtol " << tol.rtol << ")";
    }
  }
}

TEST(AttentionValidation, Fp32ErrorBoundAcceptsOnlineSoftmaxAndRejectsItsBugs) {
  expect_error_bound_accepts_only_the_correct_model<float>(rl::attention::kErrorSimtFp32);
}

TEST(AttentionValidation, Bf16ErrorBoundAcceptsFlashNumericsAndRejectsItsBugs) {
  expect_error_bound_accepts_only_the_correct_model<__nv_bfloat16>(
      rl::attention::kErrorFlashTensorCore);
}

TEST(AttentionValidation, Fp16ErrorBoundAcceptsFlashNumericsAndRejectsItsBugs) {
  expect_error_bound_accepts_only_the_correct_model<__half>(rl::attention::kErrorFlashTensorCore);
}

// The tolerance follows the error model: rounding S or P to T, and the
// tensor cores' worst-case sums, each widen it; fp32 storage adds nothing.
TEST(AttentionValidation, ToleranceGrowsWithWhatIsRoundedToTheStorageType) {
  const rl::attention::Dims p = rl::attention::dims(shape_of(1, 1, 4096, 128, false));
  rl::attention::Reference ref;
  ref.max_abs_logit_terms = 8.0;
  ref.max_weighted_abs_v = 1.0;
  ref.max_abs_v = 4.0;
  using rl::attention::kErrorFlashTensorCore;
  using rl::attention::kErrorSimtFp32;
  using rl::attention::kErrorUnfusedTensorCore;
  using rl::attention::tolerance;
  const double fp32 = tolerance<float>(p, ref, kErrorSimtFp32).atol;
  const double fp32_tc = tolerance<float>(p, ref, kErrorFlashTensorCore).atol;
  const double flash = tolerance<__nv_bfloat16>(p, ref, kErrorFlashTensorCore).atol;
  const double unfused = tolerance<__nv_bfloat16>(p, ref, kErrorUnfusedTensorCore).atol;
  EXPECT_LT(fp32, fp32_tc);   // worst-case sums
  EXPECT_LT(fp32_tc, flash);  // fp32 storage rounds nothing
  EXPECT_GT(flash, 0x1p-8);   // P rounded to bf16
  EXPECT_GT(unfused, flash);  // and S, too
  EXPECT_EQ(tolerance<__nv_bfloat16>(p, ref, kErrorFlashTensorCore).rtol, 0x1p-8);
  EXPECT_EQ(tolerance<__half>(p, ref, kErrorFlashTensorCore).rtol, 0x1p-11);
  // fp16's subnormal weights: N·2^-25·max|V| on top.
  EXPECT_GT(tolerance<__half>(p, ref, kErrorFlashTensorCore).atol, 4096 * 0x1p-25 * 4.0 + 0x1p-11);
}

// The sampling threshold is injectable: a workload that samples 64 of its
// 129 rows still passes, and checks exactly those rows.
TEST(AttentionValidation, SampledWorkloadChecksTheSampledRows) {
  RL_SKIP_UNDER_RACECHECK();
  for (const std::string& name : kVariants) {
    SCOPED_TRACE(name);
    auto workload = rl::test::make_inspectable_workload(name, shape_of(1, 2, 129, 64, true), 51);
    ASSERT_NE(workload, nullptr);
    ASSERT_TRUE(with_attention(*workload, [](auto& attention) {
      attention.set_full_check_max_n(16);
      EXPECT_EQ(attention.reference_rows().rows, rl::attention::checked_rows(129, 16));
      EXPECT_EQ(attention.reference_rows().rows.size(), 64u);
    }));
    const rl::Validation v = workload->validate(nullptr);
    EXPECT_TRUE(v.passed) << v.detail;
  }
}

}  // namespace
