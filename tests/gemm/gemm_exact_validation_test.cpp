// GEMM validation exact by construction (gemm/gemm_exact_check.hpp): the
// integer inputs; the exact check, full and sampled, failing one wrong output
// anywhere (Freivalds' identities reach the outputs sampling does not); every
// rung validating exactly at a shape of 64 k-tiles; the two pipeline faults of
// gemm/gemm_pipeline_fault.hpp failing there; the bound on the timed inputs
// still failing a kernel that rounds C, which integers cannot see; padded
// leading dimensions.  Built twice: label emu (emulator) and label gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "emu_kernel_test.hpp"
#include "gemm/gemm_exact_check.hpp"
#include "gemm/gemm_pipeline_fault.hpp"
#include "gemm/gemm_workload.hpp"
#include "gemm_pipeline_fault_check.hpp"
#include "gemm_test_support.hpp"

namespace {

using rl::gemm::Dims;

// The exact product of integer inputs, in double.
std::vector<float> exact_product(const std::vector<std::int8_t>& a,
                                 const std::vector<std::int8_t>& b, const Dims& d) {
  std::vector<float> c(static_cast<std::size_t>(d.M * d.N), 0.0f);
  for (std::int64_t i = 0; i < d.M; ++i)
    for (std::int64_t j = 0; j < d.N; ++j) {
      std::int64_t sum = 0;
      for (std::int64_t k = 0; k < d.K; ++k) sum += a[i * d.K + k] * b[k * d.N + j];
      c[i * d.N + j] = static_cast<float>(sum);
    }
  return c;
}

struct ExactCase {
  Dims d;
  std::vector<std::int8_t> a, b;
  std::vector<float> c;
};

ExactCase exact_case(const Dims& d, std::uint64_t seed) {
  ExactCase e{d,
              rl::gemm::exact_inputs(static_cast<std::size_t>(d.M * d.K), seed),
              rl::gemm::exact_inputs(static_cast<std::size_t>(d.K * d.N), seed + 1),
              {}};
  e.c = exact_product(e.a, e.b, d);
  return e;
}

TEST(GemmExactInputs, AreMinusTwoToTwoWithoutZeroSeededAndUseAllFourValues) {
  const std::vector<std::int8_t> v = rl::gemm::exact_inputs(4096, 3);
  EXPECT_EQ(v, rl::gemm::exact_inputs(4096, 3)) << "same seed, same inputs";
  EXPECT_NE(v, rl::gemm::exact_inputs(4096, 4));
  EXPECT_EQ(std::set<std::int8_t>(v.begin(), v.end()), (std::set<std::int8_t>{-2, -1, 1, 2}));
}

// Every storage type holds them exactly.
TEST(GemmExactInputs, AreExactInEveryStorageType) {
  for (const float x : {-2.0f, -1.0f, 1.0f, 2.0f}) {
    EXPECT_EQ(rl::gemm::input_to_f32(rl::gemm::input_from_f32<__half>(x)), x);
    EXPECT_EQ(rl::gemm::input_to_f32(rl::gemm::input_from_f32<__nv_bfloat16>(x)), x);
    EXPECT_EQ(rl::gemm::input_to_f32(rl::gemm::input_from_f32<__nv_fp8_e4m3>(x)), x);
  }
}

TEST(GemmExactCheck, FullCheckPassesTheProductAndNamesOneOutputOffByOne) {
  const ExactCase e = exact_case({7, 5, 9}, 1);
  EXPECT_TRUE(rl::gemm::exact_check(e.c, e.a, e.b, e.d, false, 1).passed);
  std::vector<float> wrong = e.c;
  wrong[17] += 1.0f;
  const rl::Validation v = rl::gemm::exact_check(wrong, e.a, e.b, e.d, false, 1);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("element 17"), std::string::npos) << v.detail;
  wrong = e.c;
  wrong[3] = NAN;
  EXPECT_FALSE(rl::gemm::exact_check(wrong, e.a, e.b, e.d, false, 1).passed);
}

// The sampled path at a size where sampling leaves most outputs unchecked:
// one output off by one, or by half, anywhere, fails the row identity.
TEST(GemmExactCheck, SampledCheckFailsOneWrongOutputThatNoSampleCovers) {
  const Dims d{300, 301, 16};
  const ExactCase e = exact_case(d, 2);
  EXPECT_TRUE(rl::gemm::exact_check(e.c, e.a, e.b, d, true, 5).passed);
  const std::vector<std::int64_t> sampled = rl::gemm::sample_positions(d, 5);
  const std::set<std::int64_t> s(sampled.begin(), sampled.end());
  ASSERT_LT(s.size(), static_cast<std::size_t>(d.M * d.N) / 2);
  std::int64_t unsampled = 150 * d.N + 150;
  while (s.count(unsampled)) ++unsampled;
  for (const float error : {1.0f, 0.5f, -4.0f}) {
    std::vector<float> wrong = e.c;
    wrong[static_cast<std::size_t>(unsampled)] += error;
    const rl::Validation v = rl::gemm::exact_check(wrong, e.a, e.b, d, true, 5);
    EXPECT_FALSE(v.passed) << "error " << error;
    EXPECT_NE(v.detail.find("Freivalds check of every output (exact, integer inputs), row " +
                            std::to_string(unsampled / d.N)),
              std::string::npos)
        << v.detail;
  }
}

// Two errors in one row that cancel in its weighted sum (the row identity's
// weights are x = exact_inputs(N, seed + 1)): the column identity fails them.
TEST(GemmExactCheck, ErrorsCancellingInARowSumFailTheColumnIdentity) {
  const Dims d{300, 301, 16};
  const ExactCase e = exact_case(d, 3);
  const std::vector<std::int8_t> x = rl::gemm::exact_inputs(static_cast<std::size_t>(d.N), 6);
  const std::vector<std::int64_t> sampled = rl::gemm::sample_positions(d, 5);
  const std::set<std::int64_t> s(sampled.begin(), sampled.end());
  const std::int64_t row = 150;
  std::int64_t j1 = 100, j2 = 200;
  while (s.count(row * d.N + j1)) ++j1;
  while (s.count(row * d.N + j2)) ++j2;
  std::vector<float> wrong = e.c;
  wrong[row * d.N + j1] += x[j2];  // x_j1 x_j2 - x_j2 x_j1 = 0 in row 150's sum
  wrong[row * d.N + j2] -= x[j1];
  const rl::Validation v = rl::gemm::exact_check(wrong, e.a, e.b, d, true, 5);
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.detail.find("column " + std::to_string(j1)), std::string::npos) << v.detail;
}

// ------------------------------------------------------------ every rung

// Up the ladder: the FP32 SIMT rungs and the tensor-core rungs that run on
// every backend (the wgmma rungs: tests/emu_hopper, RL_EMU_CC=90).
const std::vector<std::string> kRungs = {
    "gemm_f32_naive",
    "gemm_f32_coalesced",
    "gemm_f32_smem_tiled",
    "gemm_f32_blocktile_1d",
    "gemm_f32_blocktile_2d",
    "gemm_f32_vec128",
    "gemm_f32_warptiled",
    "gemm_wmma_tf32",
    "gemm_wmma_fp16",
    "gemm_wmma_bf16",
    "gemm_mma_sync_multistage_tf32",
    "gemm_mma_sync_multistage_fp16",
    "gemm_mma_sync_multistage_bf16",
    "gemm_mma_sync_multistage_fp8",
};

// 64 k-tiles of the deepest BlockK (64 bytes of fp8 = 64 elements), 128 of
// 32-element ones; rows 16-byte aligned for every type (the cp.async paths).
constexpr Dims kManyKTiles{33, 72, 4096};

class GemmEveryRung : public ::testing::TestWithParam<std::string> {};

TEST_P(GemmEveryRung, ValidatesExactlyAtSixtyFourKTiles) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  RL_SKIP_IF_CANNOT_RUN(GetParam());
  auto workload = rl::test::make_inspectable_workload(
      GetParam(), rl::gemm::make_shape(kManyKTiles.M, kManyKTiles.N, kManyKTiles.K), 21);
  ASSERT_NE(workload, nullptr);
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_TRUE(v.passed) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Ladder, GemmEveryRung, ::testing::ValuesIn(kRungs),
                         [](const auto& p) { return p.param; });

// The mma.sync rung's steady-state loop (no bounds checks) runs only on
// k-tiles wholly inside K with rows 16-byte aligned; its peeled tail takes
// the partial last tile.  Aligned shapes with M and N edges, a partial last
// k-tile after full ones (336 = 5 x 64 + 16 fp8 elements, 10 x 32 + 16
// 16-bit or tf32 ones) under two schedules, then 64 full k-tiles of 64 fp8
// (128 of 32) and a partial one, for every precision.
class MmaSyncSteadyLoop : public ::testing::TestWithParam<std::string> {};

TEST_P(MmaSyncSteadyLoop, ValidatesExactlyThroughTheSteadyLoopAndThePeeledTail) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_IF_CANNOT_RUN(GetParam());
  auto edges =
      rl::test::make_inspectable_workload(GetParam(), rl::gemm::make_shape(136, 80, 336), 61);
  ASSERT_NE(edges, nullptr);
  rl::test::expect_passes_under_two_schedules(*edges);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return;  // the long K runs the same loop more times: the default build runs it
#endif
  auto deep =
      rl::test::make_inspectable_workload(GetParam(), rl::gemm::make_shape(70, 80, 4112), 62);
  ASSERT_NE(deep, nullptr);
  const rl::Validation v = deep->validate(nullptr);
  EXPECT_TRUE(v.passed) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Ladder, MmaSyncSteadyLoop,
                         ::testing::Values("gemm_mma_sync_multistage_tf32",
                                           "gemm_mma_sync_multistage_fp16",
                                           "gemm_mma_sync_multistage_bf16",
                                           "gemm_mma_sync_multistage_fp8"),
                         [](const auto& p) { return p.param; });

// ------------------------------------------------------------ pipeline faults

#if defined(RL_EMULATE)
// 64 k-tiles of 32 bf16, rows aligned: the cp.async pipeline, 3 stages.
TEST(GemmPipelineFault, MmaSyncMultistageFailsTheExactCheckWhenItSkipsOrReadsEarly) {
  RL_SKIP_UNDER_RACECHECK();
  rl::test::expect_only_the_faulty_builds_fail<__nv_bfloat16>(
      rl::gemm::faults::mma_sync_multistage_bf16, Dims{70, 72, 2048}, 31);
}
#endif

// ------------------------------------------------------------ timed inputs

// The launcher of gemm_f32_warptiled (the FP32 ladder's top), to wrap or to
// build a workload of other leading dimensions with.
rl::gemm::Launcher<float> warptiled_launcher() {
  auto workload =
      rl::test::make_inspectable_workload("gemm_f32_warptiled", rl::gemm::make_shape(1, 1, 1), 1);
  auto* gemm = dynamic_cast<rl::gemm::GemmWorkload<float>*>(workload.get());
  return gemm != nullptr ? gemm->launch : rl::gemm::Launcher<float>{};
}

// A kernel whose C is rounded to bf16 is exact on small integers (|C| <= 4K
// = 132 < 2^8) and wrong on real data: the bound on the timed inputs fails it.
TEST(GemmTimedInputBound, FailsAKernelThatRoundsCWhichTheIntegersCannotSee) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  const rl::gemm::Launcher<float> warptiled = warptiled_launcher();
  ASSERT_TRUE(warptiled);
  auto rounds_c = [inner = warptiled](const rl::gemm::Args<float>& a, cudaStream_t stream) {
    inner(a, stream);
    std::vector<float> c(static_cast<std::size_t>(a.M) * static_cast<std::size_t>(a.ldc));
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    RL_CUDA_CHECK(cudaMemcpy(c.data(), a.C, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float& v : c) v = rl::gemm::input_to_f32(rl::gemm::input_from_f32<__nv_bfloat16>(v));
    RL_CUDA_CHECK(cudaMemcpy(a.C, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  };
  rl::gemm::GemmWorkload<float> workload(rounds_c, rl::gemm::kFp32SimtError, {67, 45, 33}, 41);
  const rl::Validation v = workload.validate(nullptr);
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.detail.find("exact check"), std::string::npos) << "the integers pass: " << v.detail;
  EXPECT_NE(v.detail.find("(bound "), std::string::npos) << v.detail;
}

// ------------------------------------------------------------ a launcher's own B

// A launcher that multiplies its own copy of B (as cuBLASLt fp8 multiplies a
// transposed one) sees the exact check's integer B through b_uploaded; a copy
// refreshed only when the timed inputs are drawn fails the exact check (the
// fault an H100 found in gemm_cublaslt_fp8, session 13).
TEST(GemmOwnCopyOfB, TheExactCheckReachesALauncherThatKeepsItsOwnB) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  const rl::gemm::Launcher<float> warptiled = warptiled_launcher();
  ASSERT_TRUE(warptiled);
  const Dims d{37, 29, 45};
  for (const bool follows_every_upload : {true, false}) {
    SCOPED_TRACE(follows_every_upload ? "copy follows every upload" : "copy follows draws only");
    auto own_b = std::make_shared<rl::DeviceBuffer<float>>(static_cast<std::size_t>(d.K * d.N));
    auto on_own_b = [inner = warptiled, own_b](rl::gemm::Args<float> a, cudaStream_t stream) {
      a.B = own_b->get();
      inner(a, stream);
    };
    rl::gemm::GemmWorkload<float> workload(on_own_b, rl::gemm::kFp32SimtError, d, 43);
    own_b->upload(workload.host_b());
    if (follows_every_upload)
      workload.b_uploaded = [own_b](const std::vector<float>& b) { own_b->upload(b); };
    const rl::Validation v = workload.validate(nullptr);
    EXPECT_EQ(v.passed, follows_every_upload) << v.detail;
    if (!follows_every_upload) {
      EXPECT_NE(v.detail.find("exact check"), std::string::npos) << v.detail;
    }
  }
}

// ------------------------------------------------------------ B stored transposed

// BStorage::n_by_k hands the kernel Bᵀ (N x K, ldb = K padded): a launcher
// that reads B as N x K validates (exactly, then within the bound); the same
// launcher reading the buffer as K x N, as a kernel unaware of the storage
// would, fails the exact check.  The host side stays K x N.
TEST(GemmTransposedB, AWorkloadStoringBNByKHandsTheKernelBTransposed) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  const rl::gemm::Launcher<float> warptiled = warptiled_launcher();
  ASSERT_TRUE(warptiled);
  const Dims d{37, 45, 33};
  const auto ldb = static_cast<std::size_t>(rl::gemm::padded_ld(d.K, 8));  // 40
  for (const bool reads_n_by_k : {true, false}) {
    SCOPED_TRACE(reads_n_by_k ? "kernel reads B as N x K" : "kernel reads B as K x N");
    auto own_b = std::make_shared<rl::DeviceBuffer<float>>(static_cast<std::size_t>(d.K * d.N));
    auto on_b = [inner = warptiled, own_b, reads_n_by_k, ldb](rl::gemm::Args<float> a,
                                                              cudaStream_t stream) {
      EXPECT_EQ(static_cast<std::size_t>(a.ldb), ldb);
      if (reads_n_by_k) {  // Bᵀ back into K x N for a kernel that reads K x N
        std::vector<float> stored(static_cast<std::size_t>(a.N) * ldb), b(stored.size());
        RL_CUDA_CHECK(cudaStreamSynchronize(stream));
        RL_CUDA_CHECK(
            cudaMemcpy(stored.data(), a.B, stored.size() * sizeof(float), cudaMemcpyDeviceToHost));
        b.resize(static_cast<std::size_t>(a.K) * static_cast<std::size_t>(a.N));
        for (int k = 0; k < a.K; ++k)
          for (int n = 0; n < a.N; ++n) b[k * a.N + n] = stored[n * ldb + k];
        own_b->upload(b);
        a.B = own_b->get();
      }
      a.ldb = a.N;
      inner(a, stream);
    };
    rl::gemm::GemmWorkload<float> workload(on_b, rl::gemm::kFp32SimtError, d, 47, 8,
                                           rl::gemm::BStorage::n_by_k);
    EXPECT_EQ(workload.ldb(), 40);
    EXPECT_EQ(workload.host_b().size(), static_cast<std::size_t>(d.K * d.N));
    EXPECT_EQ(workload.tensors()[1].dims, (std::vector<std::int64_t>{d.K, d.N}));
    const rl::Validation v = workload.validate(nullptr);
    EXPECT_EQ(v.passed, reads_n_by_k) << v.detail;
    if (!reads_n_by_k) {
      EXPECT_NE(v.detail.find("exact check"), std::string::npos) << v.detail;
    }
  }
  // N rows of padded K: (37 x 40 + 45 x 40) x 4 + C.
  EXPECT_EQ(rl::gemm::device_bytes(d, 4, 8, rl::gemm::BStorage::n_by_k),
            (37u * 40 + 45u * 40) * 4 + 37u * 45 * 4);
}

// ------------------------------------------------------------ padded rows

// lda and ldb rounded up to 8 elements at a shape where neither is: the
// kernel reads the padded layout and validates (exactly, then within the
// bound) under two schedules; the pad is counted in device_bytes.
TEST(GemmPaddedRows, ValidateAtAnOddShapeUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  const Dims d{67, 45, 33};
  const rl::gemm::Launcher<float> warptiled = warptiled_launcher();
  ASSERT_TRUE(warptiled);
  EXPECT_EQ(rl::gemm::GemmWorkload<float>(warptiled, rl::gemm::kFp32SimtError, d, 51).lda(), 33);
  rl::gemm::GemmWorkload<float> padded(warptiled, rl::gemm::kFp32SimtError, d, 51, 8);
  EXPECT_EQ(padded.lda(), 40);
  EXPECT_EQ(padded.ldb(), 48);
  rl::test::expect_passes_under_two_schedules(padded);
  EXPECT_EQ(rl::gemm::device_bytes(d, 4, 8), (67u * 40 + 33u * 48 + 67u * 45) * 4);
}

}  // namespace
