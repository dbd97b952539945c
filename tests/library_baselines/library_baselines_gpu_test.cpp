// The library baselines on a device: every record validated (float64
// reference, the family's error bound) at small and odd shapes, its notes
// naming what the library did.  Skips with the reason without a GPU, or where
// the device is older than a record's min_cc.
#include <gtest/gtest.h>

#include "gpu.hpp"
#include "rl/check.hpp"
#include "rl/registry.hpp"

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace {

struct Case {
  const char* record;
  std::vector<rl::Shape> shapes;
  const char* notes_must_contain;
};

rl::Shape gemm(std::int64_t M, std::int64_t N, std::int64_t K) {
  return rl::Shape{{{"M", M}, {"N", N}, {"K", K}}};
}

rl::Shape attention(std::int64_t B, std::int64_t H, std::int64_t N, std::int64_t d, bool causal) {
  return rl::Shape{{{"B", B}, {"H", H}, {"N", N}, {"d", d}, {"causal", causal ? 1 : 0}}};
}

// Odd shapes: 1 x 1 x 1, no dimension a multiple of any tile, K smaller than
// any K tile, a skinny M; fp8 only on 16-aligned shapes (cuBLASLt's rule).
const std::vector<rl::Shape> kOddGemmShapes = {gemm(1, 1, 1), gemm(127, 129, 65), gemm(33, 17, 5),
                                               gemm(16, 300, 257), gemm(256, 256, 256)};
const std::vector<rl::Shape> kAlignedGemmShapes = {gemm(16, 16, 16), gemm(64, 48, 32),
                                                   gemm(128, 1040, 272), gemm(256, 256, 256)};
// Attention: N one past a tile and not a multiple of 8 (17, 129), both head
// dims, causal and not, B and H above 1 so a wrong head stride fails.  The
// naive path also at N = 1 (a softmax over one key); cuDNN SDPA is held to
// the same shapes from N = 17 on (its documented limits are on d, not N, but
// N = 1 is not a case a user of a flash kernel runs).
const std::vector<rl::Shape> kCudnnAttentionShapes = {
    attention(2, 3, 17, 64, false), attention(2, 3, 17, 64, true), attention(1, 2, 129, 64, true),
    attention(1, 1, 65, 128, false), attention(2, 2, 128, 128, true)};
const std::vector<rl::Shape> kNaiveAttentionShapes = [] {
  std::vector<rl::Shape> out = {attention(1, 1, 1, 64, false), attention(1, 1, 1, 64, true)};
  out.insert(out.end(), kCudnnAttentionShapes.begin(), kCudnnAttentionShapes.end());
  return out;
}();

std::vector<Case> cases() {
  std::vector<Case> out = {
      {"gemm_cublas_sgemm_fp32", kOddGemmShapes, "CUBLAS_DEFAULT_MATH"},
      {"gemm_cublas_tf32", kOddGemmShapes, "CUBLAS_TF32_TENSOR_OP_MATH"},
      {"gemm_cublaslt_fp16", kOddGemmShapes, "heuristic's first algorithm"},
      {"gemm_cublaslt_bf16", kOddGemmShapes, "heuristic's first algorithm"},
      {"gemm_cublaslt_fp8", kAlignedGemmShapes, "cuBLASLt TN"},
      // Never run on a GPU (compute capability 10.0+): this is its first check.
      {"gemm_cublaslt_mxfp8", kAlignedGemmShapes, "VEC32_UE8M0"},
  };
  for (const char* name : {"attention_naive_cublas_fp32", "attention_naive_cublas_bf16"})
    if (rl::find_kernel(name) != nullptr)
      out.push_back({name, kNaiveAttentionShapes, "cublasGemm"});
  // The FP8 record (e4m3 Q, K, V; compute capability 9.0) has never run on a
  // GPU: this is its first check there.
  for (const char* name :
       {"attention_cudnn_sdpa_bf16", "attention_cudnn_sdpa_fp16", "attention_cudnn_sdpa_fp8_e4m3"})
    if (rl::find_kernel(name) != nullptr) out.push_back({name, kCudnnAttentionShapes, "cuDNN"});
  return out;
}

// gtest names a failing parameter by this, not by its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.record;
}

int device_cc_x10() {
  int device = 0, major = 0, minor = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major * 10 + minor;
}

class LibraryBaseline : public ::testing::TestWithParam<Case> {};

TEST_P(LibraryBaseline, ValidatesAtSmallAndOddShapes) {
  RL_REQUIRE_GPU();
  const Case& c = GetParam();
  const rl::KernelRecord* r = rl::find_kernel(c.record);
  ASSERT_NE(r, nullptr) << c.record;
  if (r->min_cc > device_cc_x10())
    GTEST_SKIP() << c.record << " needs compute capability " << r->min_cc << ", device has "
                 << device_cc_x10();
  cudaStream_t stream = nullptr;
  RL_CUDA_CHECK(cudaStreamCreate(&stream));
  for (const rl::Shape& shape : c.shapes) {
    SCOPED_TRACE(shape.to_string());
    std::unique_ptr<rl::Workload> w = r->make_workload(shape, 42);
    const rl::Validation v = w->validate(stream);
    EXPECT_TRUE(v.passed) << v.detail << " (max rel err " << v.max_rel_err << ")";
    EXPECT_NE(w->notes().find(c.notes_must_contain), std::string::npos) << w->notes();
    // The timed region alone, twice, then validated again: run() leaves the
    // library in a state that still computes the right answer.
    w->run(stream);
    w->run(stream);
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_TRUE(w->validate(stream).passed);
  }
  RL_CUDA_CHECK(cudaStreamDestroy(stream));
}

INSTANTIATE_TEST_SUITE_P(Records, LibraryBaseline, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return std::string(param_info.param.record);
                         });

// Every record of the suite's presets that is a library baseline declares the
// device memory it needs, and it covers what the device lost while an
// instance was alive (measured with cudaMemGetInfo: a lower bound on what the
// instance allocated, as the library's handle also takes memory).
TEST(LibraryBaselineMemory, DeclaredDeviceBytesCoverTheInstance) {
  RL_REQUIRE_GPU();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.record);
    const rl::KernelRecord* r = rl::find_kernel(c.record);
    ASSERT_NE(r, nullptr);
    if (r->min_cc > device_cc_x10()) continue;
    const rl::Shape& shape = c.shapes.back();
    std::size_t free_before = 0, free_after = 0, total = 0;
    RL_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    {
      std::unique_ptr<rl::Workload> w = r->make_workload(shape, 1);
      RL_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
    }
    const std::size_t used = free_before > free_after ? free_before - free_after : 0;
    // Allocation granularity (2 MiB pages) and the handle's own buffers are
    // not declared; allow 64 MiB for them.
    EXPECT_LE(used, r->device_bytes(shape) + (std::size_t{64} << 20));
  }
}

}  // namespace
