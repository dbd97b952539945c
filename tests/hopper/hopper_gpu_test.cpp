// The sm_90a kernels on a device (label gpu): every wgmma GEMM rung in bf16
// and fp16, the wgmma attention kernels and the wgmma ceilings (every
// precision), validated (the GEMMs exactly on integers, then) against the
// float64 reference.  Every test skips, with the reason, without a GPU or
// on a GPU whose compute capability is not 9.0 (sm_90a code runs nowhere else).
//
// These tests are what proves the rung: it has been compiled and its SASS
// checked, never run.  The shapes are chosen to reach every path: M, N and K
// below one tile, partial tiles in all three (TMA's zero fill), K long enough
// that the 4-stage ring wraps several times (mbarrier parity), a grid of many
// blocks.  A negative test shows the check can fail: dropping the last 8
// columns of K must fail validation.
#include "gemm/gemm_workload.hpp"
#include "gpu.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace {

// Skips the calling test unless device 0 has compute capability 9.0.
#define RL_REQUIRE_SM90()                                                                          \
  do {                                                                                             \
    RL_REQUIRE_GPU();                                                                              \
    int rl_major_ = 0, rl_minor_ = 0;                                                              \
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&rl_major_, cudaDevAttrComputeCapabilityMajor, 0));       \
    RL_CUDA_CHECK(cudaDeviceGetAttribute(&rl_minor_, cudaDevAttrComputeCapabilityMinor, 0));       \
    if (rl_major_ * 10 + rl_minor_ != 90)                                                          \
      GTEST_SKIP() << "sm_90a code needs compute capability 9.0; device 0 is " << rl_major_ << "." \
                   << rl_minor_;                                                                   \
  } while (0)

struct GemmCase {
  const char* record;
  std::int64_t M, N, K;
};

void PrintTo(const GemmCase& c, std::ostream* os) {
  *os << c.record << " M=" << c.M << " N=" << c.N << " K=" << c.K;
}

std::string case_name(const testing::TestParamInfo<GemmCase>& info) {
  return std::string(info.param.record) + "_" + std::to_string(info.param.M) + "x" +
         std::to_string(info.param.N) + "x" + std::to_string(info.param.K);
}

class WgmmaTmaGemm : public testing::TestWithParam<GemmCase> {};

TEST_P(WgmmaTmaGemm, matches_the_float64_reference_within_the_error_bound) {
  RL_REQUIRE_SM90();
  const GemmCase& c = GetParam();
  const rl::KernelRecord* record = rl::find_kernel(c.record);
  ASSERT_NE(record, nullptr);
  auto workload = record->make_workload(rl::gemm::make_shape(c.M, c.N, c.K), 42);
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_TRUE(v.passed) << v.detail;
}

constexpr std::int64_t kShapes[][3] = {
    {1, 8, 8},          // one output row, one k16 step's worth padded by TMA
    {127, 136, 72},     // partial tiles in M, N and K
    {129, 264, 200},    // a second tile row with one row in it; N spans 3 tiles
    {300, 136, 1032},   // 17 K tiles: the 4-stage ring wraps 4 times
    {256, 256, 256},    // whole tiles only
    {1023, 1032, 520},  // many blocks, partial tiles at both far edges
    {130, 263, 71},     // K and N not multiples of 8 (padded rows); N not of 4 (no C map)
    {2049, 4100, 264},  // 17 x 17 = 289 tiles of 128 x 256: persistent CTAs walk 2-3 each
};

// Up the ladder: each rung adds one idea to the one before it.
const char* const kRungs[] = {
    "gemm_wgmma_tma_bf16",        "gemm_wgmma_tma_fp16",        "gemm_wgmma_128x256_bf16",
    "gemm_wgmma_128x256_fp16",    "gemm_wgmma_inflight_bf16",   "gemm_wgmma_inflight_fp16",
    "gemm_wgmma_persistent_bf16", "gemm_wgmma_persistent_fp16", "gemm_wgmma_tma_store_bf16",
    "gemm_wgmma_tma_store_fp16",  "gemm_wgmma_inflight_fp8",    "gemm_wgmma_cluster_bf16",
    "gemm_wgmma_cluster_fp16"};

std::vector<GemmCase> cases() {
  std::vector<GemmCase> out;
  for (const char* record : kRungs)
    for (const auto& s : kShapes) out.push_back({record, s[0], s[1], s[2]});
  return out;
}

INSTANTIATE_TEST_SUITE_P(OddShapes, WgmmaTmaGemm, testing::ValuesIn(cases()), case_name);

TEST(WgmmaTmaGemmCheck, dropping_the_last_8_columns_of_k_fails_validation) {
  RL_REQUIRE_SM90();
  const rl::KernelRecord* record = rl::find_kernel("gemm_wgmma_tma_bf16");
  ASSERT_NE(record, nullptr);
  auto workload = record->make_workload(rl::gemm::make_shape(127, 136, 72), 42);
  auto* gemm = dynamic_cast<rl::gemm::GemmWorkload<__nv_bfloat16>*>(workload.get());
  ASSERT_NE(gemm, nullptr);
  gemm->launch = [inner = gemm->launch](rl::gemm::Args<__nv_bfloat16> args, cudaStream_t stream) {
    args.K -= 8;  // lda stays K: rows are read right, the last 8 terms are missing
    inner(args, stream);
  };
  EXPECT_FALSE(workload->validate(nullptr).passed);
}

TEST(WgmmaCeiling, every_precision_validates) {
  RL_REQUIRE_SM90();
  for (const char* name :
       {"wgmma_loop_bf16_m64n256k16", "wgmma_loop_fp16_m64n256k16", "wgmma_loop_tf32_m64n256k8",
        "wgmma_loop_fp8_e4m3_m64n256k32", "wgmma_loop_int8_m64n256k32"}) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    // An odd block count and iteration count (the loop's wait_group<1> tail).
    auto workload =
        record->make_workload(rl::Shape{{{"blocks", 3}, {"threads", 128}, {"iters", 7}}}, 1);
    const rl::Validation v = workload->validate(nullptr);
    EXPECT_TRUE(v.passed) << name << ": " << v.detail;
  }
}

// The wgmma attention kernels (attention_wgmma_*_sm90a.cu) in bf16 and fp16,
// and the FP8 one (e4m3, never run on a GPU before this test), at odd lengths (one key; less than a
// tile; one past a tile; two key tiles with the second consumer's rows partly past N; many query
// tiles and a ragged last one), d = 64 and 128, causal and not, three heads (a tile of a head's
// last rows reads the next head's first ones, which the mask hides).
TEST(WgmmaAttention, matches_the_float64_reference_at_odd_lengths) {
  RL_REQUIRE_SM90();
  for (const char* name :
       {"attention_wgmma_tma_bf16", "attention_wgmma_tma_fp16", "attention_wgmma_overlap_bf16",
        "attention_wgmma_overlap_fp16", "attention_wgmma_pingpong_bf16",
        "attention_wgmma_pingpong_fp16", "attention_wgmma_fp8_e4m3"}) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    for (const std::int64_t d : {64, 128})
      for (const std::int64_t N : {1, 17, 129, 200, 1000})
        for (const std::int64_t causal : {0, 1}) {
          const rl::Shape shape{{{"B", 1}, {"H", 3}, {"N", N}, {"d", d}, {"causal", causal}}};
          auto workload = record->make_workload(shape, 7);
          const rl::Validation v = workload->validate(nullptr);
          EXPECT_TRUE(v.passed) << name << " " << shape.to_string() << ": " << v.detail;
        }
  }
}

}  // namespace
