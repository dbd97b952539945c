// Host-only checks of the library baselines (no device needed): the
// row-major -> column-major mapping every cuBLAS call relies on, checked by
// running a column-major GEMM on the host exactly as cuBLAS would read the
// buffers; the notes format; the records as registered (gpu_only, min_cc,
// cost model, device_bytes, the shapes a library refuses); and whether the
// cuDNN frontend was found.
#include <gtest/gtest.h>

#include "rl/cublaslt.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using rl::cublaslt::as_column_major;
using rl::cublaslt::ColumnMajorGemm;
using rl::cublaslt::RowMajorGemm;

// Column-major D (m x n, ldd) = op(first) · op(second), the way cuBLAS reads
// its operands: element (r, c) of a column-major matrix with leading
// dimension ld is at r + c * ld.
void column_major_gemm(const ColumnMajorGemm& g, const std::vector<double>& first,
                       const std::vector<double>& second, std::vector<double>& d) {
  const auto at = [](const std::vector<double>& x, cublasOperation_t t, std::int64_t r,
                     std::int64_t c, std::int64_t ld) {
    return t == CUBLAS_OP_N ? x[static_cast<std::size_t>(r + c * ld)]
                            : x[static_cast<std::size_t>(c + r * ld)];
  };
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < g.k; ++k)
        sum += at(first, g.trans_first, i, k, g.ld_first) *
               at(second, g.trans_second, k, j, g.ld_second);
      d[static_cast<std::size_t>(i + j * g.ldd)] = sum;
    }
}

// Row-major C = A·B with A stored M x K and B stored K x N or, transposed,
// N x K; leading dimensions padded past the widths, so a mapping that mixes
// up a width and a leading dimension fails.
void expect_mapping_computes_row_major_product(bool b_transposed) {
  const std::int64_t M = 5, N = 7, K = 3, pad = 2;
  const RowMajorGemm row{.M = M,
                         .N = N,
                         .K = K,
                         .a_transposed = false,
                         .b_transposed = b_transposed,
                         .lda = K + pad,
                         .ldb = (b_transposed ? K : N) + pad,
                         .ldc = N + pad};
  rl::SeededRng rng(7);
  std::vector<double> a(static_cast<std::size_t>(M * row.lda));
  std::vector<double> b(static_cast<std::size_t>((b_transposed ? N : K) * row.ldb));
  for (double& x : a) x = rng.normal(0, 1);
  for (double& x : b) x = rng.normal(0, 1);
  const auto b_at = [&](std::int64_t k, std::int64_t n) {
    return b_transposed ? b[static_cast<std::size_t>(n * row.ldb + k)]
                        : b[static_cast<std::size_t>(k * row.ldb + n)];
  };

  const ColumnMajorGemm g = as_column_major(row);
  std::vector<double> c(static_cast<std::size_t>(M * row.ldc), 0.0);
  column_major_gemm(g, b, a, c);  // first = B, second = A

  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      double want = 0;
      for (std::int64_t k = 0; k < K; ++k)
        want += a[static_cast<std::size_t>(i * row.lda + k)] * b_at(k, j);
      EXPECT_NEAR(c[static_cast<std::size_t>(i * row.ldc + j)], want, 1e-12)
          << "C(" << i << ", " << j << ")";
    }
}

TEST(ColumnMajorMapping, PlainRowMajorIsNnWithOperandsSwapped) {
  const ColumnMajorGemm g = as_column_major({.M = 5,
                                             .N = 7,
                                             .K = 3,
                                             .a_transposed = false,
                                             .b_transposed = false,
                                             .lda = 3,
                                             .ldb = 7,
                                             .ldc = 7});
  EXPECT_EQ(rl::cublaslt::layout_name(g), "NN");
  EXPECT_EQ(g.m, 7);  // D = Cᵀ is N x M
  EXPECT_EQ(g.n, 5);
  EXPECT_EQ(g.k, 3);
  EXPECT_EQ(g.ld_first, 7);  // first operand = B
  EXPECT_EQ(g.ld_second, 3);
  EXPECT_EQ(g.ldd, 7);
}

TEST(ColumnMajorMapping, TransposedBIsCublasLtFp8Tn) {
  const ColumnMajorGemm g = as_column_major({.M = 16,
                                             .N = 32,
                                             .K = 48,
                                             .a_transposed = false,
                                             .b_transposed = true,
                                             .lda = 48,
                                             .ldb = 48,
                                             .ldc = 32});
  EXPECT_EQ(rl::cublaslt::layout_name(g), "TN");
}

TEST(ColumnMajorMapping, NnComputesTheRowMajorProduct) {
  expect_mapping_computes_row_major_product(false);
}

TEST(ColumnMajorMapping, TnComputesTheRowMajorProduct) {
  expect_mapping_computes_row_major_product(true);
}

TEST(CublasLtNotes, DescribeNamesEveryField) {
  const std::string s = rl::cublaslt::describe(
      {.id = 21, .tile = 18, .stages = 9, .workspace_bytes = 4096, .waves = 1.5f});
  EXPECT_EQ(s, "algo id 21, tile id 18, stages id 9, workspace 4096 B, waves 1.50");
}

// ---------------------------------------------------------------- GEMM records

struct GemmBaseline {
  const char* name;
  const char* precision;
  const char* unit;
  int min_cc;
  std::size_t input_bytes;
  std::size_t extra_per_nk;  // bytes per N·K element beyond A, B, C (fp8's B copy)
  bool cublas_handle;        // behind cublasCreate: the handle's own workspace too
};

constexpr GemmBaseline kGemmBaselines[] = {
    {"gemm_cublas_sgemm_fp32", "fp32", "fp32.fma", 0, 4, 0, true},
    {"gemm_cublas_tf32", "tf32", "tc.tf32", 80, 4, 0, true},
    {"gemm_cublaslt_fp16", "fp16", "tc.fp16", 80, 2, 0, false},
    {"gemm_cublaslt_bf16", "bf16", "tc.bf16", 80, 2, 0, false},
    {"gemm_cublaslt_fp8", "fp8", "tc.fp8", 89, 1, 1, false},
};

rl::Shape gemm_shape(std::int64_t M, std::int64_t N, std::int64_t K) {
  return rl::Shape{{{"M", M}, {"N", N}, {"K", K}}};
}

TEST(GemmBaselineRecords, RegisteredAsGpuOnlyLibraryBaselines) {
  for (const GemmBaseline& b : kGemmBaselines) {
    SCOPED_TRACE(b.name);
    const rl::KernelRecord* r = rl::find_kernel(b.name);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->family, "gemm");
    EXPECT_EQ(to_string(r->precision), b.precision);
    EXPECT_EQ(rl::roofline::compute_ceiling_name(r->unit), b.unit);
    EXPECT_TRUE(r->gpu_only);
    EXPECT_EQ(r->min_cc, b.min_cc);
    EXPECT_EQ(r->baseline, "");
    ASSERT_TRUE(r->device_bytes);
    for (const rl::SizePreset p :
         {rl::SizePreset::small, rl::SizePreset::medium, rl::SizePreset::large})
      EXPECT_FALSE(r->shapes(p).empty());
  }
}

TEST(GemmBaselineRecords, BytesModelIsBytesMinAndDeviceBytesCountWorkspace) {
  const std::int64_t M = 256, N = 512, K = 128;
  for (const GemmBaseline& b : kGemmBaselines) {
    SCOPED_TRACE(b.name);
    const rl::KernelRecord* r = rl::find_kernel(b.name);
    ASSERT_NE(r, nullptr);
    const rl::roofline::Cost c = r->cost(gemm_shape(M, N, K));
    const double min = static_cast<double>((M * K + K * N) * b.input_bytes) + M * N * 4.0;
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * M * N * K);
    EXPECT_DOUBLE_EQ(c.bytes_min, min);
    EXPECT_DOUBLE_EQ(c.bytes_model, c.bytes_min);
    // The H200 showed a cublasCreate handle takes its own 32 MiB beside ours.
    const std::size_t want = static_cast<std::size_t>(min) + rl::cublaslt::kDefaultWorkspaceBytes +
                             (b.cublas_handle ? rl::cublaslt::kCublasHandleOwnBytes : 0) +
                             static_cast<std::size_t>(N * K) * b.extra_per_nk;
    EXPECT_EQ(r->device_bytes(gemm_shape(M, N, K)), want);
  }
}

// cuBLASLt runs fp8 on 16-aligned dimensions only: the record lists every
// shape of the ladder and refuses the others with the reason (the ladder
// table shows them refused), and its workload refuses one by name, before
// touching a device.
TEST(GemmBaselineRecords, Fp8RefusesDimensionsThatAreNotMultiplesOf16) {
  const rl::KernelRecord* r = rl::find_kernel("gemm_cublaslt_fp8");
  ASSERT_NE(r, nullptr);
  ASSERT_TRUE(r->refuse_shape);
  for (const rl::SizePreset p :
       {rl::SizePreset::small, rl::SizePreset::medium, rl::SizePreset::large})
    for (const rl::Shape& s : r->shapes(p)) {
      const bool aligned = s.at("M") % 16 == 0 && s.at("N") % 16 == 0 && s.at("K") % 16 == 0;
      const std::optional<std::string> why = r->refuse_shape(s);
      EXPECT_EQ(why.has_value(), !aligned) << s.to_string();
      if (why) {
        EXPECT_NE(why->find("multiples of 16"), std::string::npos) << *why;
      }
    }
  EXPECT_EQ(r->shapes(rl::SizePreset::small).size(),
            rl::find_kernel("gemm_f32_warptiled")->shapes(rl::SizePreset::small).size());
  EXPECT_THROW(r->make_workload(gemm_shape(127, 129, 65), 1), std::invalid_argument);
  EXPECT_THROW(r->make_workload(gemm_shape(64, 64, 65), 1), std::invalid_argument);
}

// cuBLASLt's MXFP8 matmul: a GPU-only library baseline of compute capability
// 10.0+, refused below with the reason; FLOPs 2 M N K, bytes A, B, their
// scales and C once (the scale tensors at their padded atoms in the model),
// the workspace on top; M and N multiples of 16, K any (padded to 32).
TEST(GemmBaselineRecords, Mxfp8IsTheBlockScaledLibraryBaseline) {
  const rl::KernelRecord* r = rl::find_kernel("gemm_cublaslt_mxfp8");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->gpu_only);
  EXPECT_EQ(r->min_cc, 100);
  EXPECT_EQ(to_string(r->precision), std::string("mxfp8"));
  EXPECT_EQ(rl::roofline::compute_ceiling_name(r->unit), "tc.mxfp8");
  ASSERT_TRUE(r->refuse_on);
  EXPECT_FALSE(r->refuse_on(100).has_value());
  ASSERT_TRUE(r->refuse_on(90).has_value());
  EXPECT_NE(r->refuse_on(90)->find("10.0"), std::string::npos) << *r->refuse_on(90);
  const std::int64_t M = 256, N = 512, K = 130;  // 5 k-blocks: two 4-block atoms along K
  const rl::roofline::Cost c = r->cost(gemm_shape(M, N, K));
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * M * N * K);
  EXPECT_DOUBLE_EQ(c.bytes_min, (M + N) * K + (M + N) * 5.0 + M * N * 4.0);
  EXPECT_DOUBLE_EQ(c.bytes_model, (M + N) * K + (M + N) / 128 * 2 * 512.0 + M * N * 4.0);
  // Rows padded to 160 (K to 32), the scale atoms, C, the workspace.
  EXPECT_EQ(r->device_bytes(gemm_shape(M, N, K)),
            static_cast<std::size_t>((M + N) * 160 + (M + N) / 128 * 2 * 512 + M * N * 4) +
                rl::cublaslt::kDefaultWorkspaceBytes);
  ASSERT_TRUE(r->refuse_shape);
  EXPECT_FALSE(r->refuse_shape(gemm_shape(64, 48, 33)).has_value());
  EXPECT_TRUE(r->refuse_shape(gemm_shape(127, 129, 65)).has_value());
  EXPECT_THROW(r->make_workload(gemm_shape(127, 129, 65), 1), std::invalid_argument);
}

// ---------------------------------------------------------------- attention records

TEST(AttentionBaselineRecords, NaiveCublasCountsSAndPAndTheWorkspace) {
  for (const auto& [name, bytes] :
       {std::pair{"attention_naive_cublas_fp32", 4}, std::pair{"attention_naive_cublas_bf16", 2}}) {
    SCOPED_TRACE(name);
    const rl::KernelRecord* r = rl::find_kernel(name);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->family, "attention");
    EXPECT_TRUE(r->gpu_only);
    EXPECT_EQ(r->baseline, "");
    const std::int64_t B = 2, H = 3, N = 100, d = 64;
    const rl::Shape s{{{"B", B}, {"H", H}, {"N", N}, {"d", d}, {"causal", 0}}};
    const auto tensors = static_cast<std::size_t>(4 * B * H * N * d + 2 * B * H * N * N);
    ASSERT_TRUE(r->device_bytes);
    EXPECT_EQ(r->device_bytes(s), tensors * static_cast<std::size_t>(bytes) +
                                      rl::cublaslt::kDefaultWorkspaceBytes +
                                      rl::cublaslt::kCublasHandleOwnBytes);
    // S and P are written and read back: the model moves more than Q, K, V, O.
    const rl::roofline::Cost c = r->cost(s);
    EXPECT_GT(c.bytes_model, c.bytes_min + 4.0 * B * H * N * N * bytes);
  }
}

TEST(CudnnFrontend, SdpaRecordsExistExactlyWhenCmakeFoundTheFrontend) {
#if defined(RL_HAVE_CUDNN_FRONTEND)
  EXPECT_NE(rl::find_kernel("attention_cudnn_sdpa_bf16"), nullptr);
  EXPECT_NE(rl::find_kernel("attention_cudnn_sdpa_fp16"), nullptr);
  const rl::KernelRecord* bf16 = rl::find_kernel("attention_cudnn_sdpa_bf16");
  ASSERT_NE(bf16, nullptr);
  EXPECT_TRUE(bf16->gpu_only);
  EXPECT_EQ(bf16->baseline, "attention_naive_cublas_bf16");
  EXPECT_NE(rl::find_kernel(bf16->baseline), nullptr);
  const rl::Shape s{{{"B", 1}, {"H", 2}, {"N", 256}, {"d", 128}, {"causal", 1}}};
  const rl::roofline::Cost c = bf16->cost(s);
  EXPECT_DOUBLE_EQ(c.bytes_model, c.bytes_min);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 2 * 256 * 256 * 128 * 0.5);
#else
  EXPECT_EQ(rl::find_kernel("attention_cudnn_sdpa_bf16"), nullptr);
  EXPECT_EQ(rl::find_kernel("attention_cudnn_sdpa_fp16"), nullptr);
#endif
}

}  // namespace
