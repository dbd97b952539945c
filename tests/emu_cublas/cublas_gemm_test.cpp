// The emulated cuBLAS GEMMs against a float64 reference, exactly: integer
// inputs make every step exact, so any index, transpose, stride, scaling or
// rounding slip shows as a mismatch (the wrong-reference test shows the
// comparison can fail).  Calls are written as llm.c's dev/cuda and
// SGEMM_CUDA's runner write them.
#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "cublas_test_support.hpp"

namespace {

using namespace rl::test::cublas;

constexpr std::array kOps = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};

const char* op_name(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? "N" : op == CUBLAS_OP_T ? "T" : "C";
}

// Leading dimensions above the rows stored, so padding is skipped correctly.
GemmShape padded_shape(std::int64_t m, std::int64_t n, std::int64_t k, cublasOperation_t ta,
                       cublasOperation_t tb) {
  const bool a_t = ta != CUBLAS_OP_N;
  const bool b_t = tb != CUBLAS_OP_N;
  return GemmShape{m, n, k, a_t, b_t, (a_t ? k : m) + 3, (b_t ? n : k) + 2, m + 1};
}

std::size_t a_count(const GemmShape& s) {
  return s.lda * (s.transa ? s.m : s.k);
}
std::size_t b_count(const GemmShape& s) {
  return s.ldb * (s.transb ? s.k : s.n);
}
std::size_t c_count(const GemmShape& s) {
  return s.ldc * s.n;
}

// cublasSgemm on device copies; returns C as double.
std::vector<double> run_sgemm(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                              const GemmShape& s, float alpha, const std::vector<double>& a,
                              const std::vector<double>& b, float beta,
                              const std::vector<double>& c) {
  auto da = to_device(narrow<float>(a));
  auto db = to_device(narrow<float>(b));
  auto dc = to_device(narrow<float>(c));
  EXPECT_EQ(cublasSgemm(handle, ta, tb, static_cast<int>(s.m), static_cast<int>(s.n),
                        static_cast<int>(s.k), &alpha, da.get(), static_cast<int>(s.lda), db.get(),
                        static_cast<int>(s.ldb), &beta, dc.get(), static_cast<int>(s.ldc)),
            CUBLAS_STATUS_SUCCESS);
  return widen(dc.download());
}

TEST(EmuCublasSgemm, every_op_combination_at_odd_sizes_with_padding_and_beta_matches_float64) {
  Handle h;
  for (const auto ta : kOps) {
    for (const auto tb : kOps) {
      const GemmShape s = padded_shape(7, 13, 5, ta, tb);
      const auto a = integer_values(a_count(s), 1);
      const auto b = integer_values(b_count(s), 2);
      const auto c = integer_values(c_count(s), 3);
      const auto got = run_sgemm(h.handle, ta, tb, s, 2.0F, a, b, -3.0F, c);
      // The padding row of C (row m) must come back untouched, too.
      EXPECT_EQ(mismatches(got, reference_gemm(s, 2.0, a, b, -3.0, c)), 0U)
          << "op(A) " << op_name(ta) << ", op(B) " << op_name(tb);
    }
  }
}

TEST(EmuCublasSgemm, a_reference_with_the_wrong_operand_transposed_rejects_the_result) {
  Handle h;
  GemmShape s = padded_shape(6, 6, 6, CUBLAS_OP_N, CUBLAS_OP_N);
  s.lda = s.ldb = s.ldc = 6;  // square and unpadded: both readings are in bounds
  const auto a = integer_values(36, 4);
  const auto b = integer_values(36, 5);
  const std::vector<double> c(36, 0.0);
  const auto got = run_sgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, s, 1.0F, a, b, 0.0F, c);
  EXPECT_EQ(mismatches(got, reference_gemm(s, 1.0, a, b, 0.0, c)), 0U);
  GemmShape wrong = s;
  wrong.transa = true;
  EXPECT_GT(mismatches(got, reference_gemm(wrong, 1.0, a, b, 0.0, c)), 0U);
}

TEST(EmuCublasSgemm, beta_zero_does_not_read_c) {
  Handle h;
  const GemmShape s = padded_shape(5, 4, 3, CUBLAS_OP_T, CUBLAS_OP_N);
  const auto a = integer_values(a_count(s), 6);
  const auto b = integer_values(b_count(s), 7);
  const std::vector<double> c(c_count(s), std::nan(""));
  const auto got = run_sgemm(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, s, 1.0F, a, b, 0.0F, c);
  const auto want = reference_gemm(s, 1.0, a, b, 0.0, c);
  for (std::int64_t j = 0; j < s.n; ++j) {
    for (std::int64_t i = 0; i < s.m; ++i) {
      const auto at = static_cast<std::size_t>(i + j * s.ldc);
      EXPECT_EQ(got[at], want[at]) << i << "," << j;
    }
  }
}

// llm.c dev/cuda/matmul_forward.cu, kernel 2: row-major out (B*T x OC) =
// inp (B*T x C) . weight (OC x C)^T through column-major cuBLAS.
TEST(EmuCublasSgemm, llmc_matmul_forward_row_major_call_computes_inp_times_weight_transposed) {
  Handle h;
  const int BT = 6, C = 5, OC = 7;
  const auto inp = integer_values(BT * C, 8);
  const auto weight = integer_values(OC * C, 9);
  auto d_inp = to_device(narrow<float>(inp));
  auto d_weight = to_device(narrow<float>(weight));
  rl::DeviceBuffer<float> d_out(BT * OC);
  const float alpha = 1.0F, beta = 0.0F;
  ASSERT_EQ(cublasSgemm(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, OC, BT, C, &alpha, d_weight.get(), C,
                        d_inp.get(), C, &beta, d_out.get(), OC),
            CUBLAS_STATUS_SUCCESS);
  const auto out = d_out.download();
  for (int r = 0; r < BT; ++r) {
    for (int o = 0; o < OC; ++o) {
      double want = 0.0;
      for (int i = 0; i < C; ++i) want += inp[r * C + i] * weight[o * C + i];
      EXPECT_EQ(out[r * OC + o], want) << r << "," << o;
    }
  }
}

TEST(EmuCublasSgemmStridedBatched, every_batch_matches_float64_with_gaps_between_batches) {
  Handle h;
  const GemmShape s = padded_shape(4, 3, 5, CUBLAS_OP_T, CUBLAS_OP_N);
  const int batches = 3;
  const auto stride_a = static_cast<long long>(a_count(s) + 7);
  const auto stride_b = static_cast<long long>(b_count(s) + 5);
  const auto stride_c = static_cast<long long>(c_count(s) + 3);
  const auto a = integer_values(stride_a * batches, 10);
  const auto b = integer_values(stride_b * batches, 11);
  const auto c = integer_values(stride_c * batches, 12);
  auto da = to_device(narrow<float>(a));
  auto db = to_device(narrow<float>(b));
  auto dc = to_device(narrow<float>(c));
  const float alpha = -1.0F, beta = 2.0F;
  ASSERT_EQ(cublasSgemmStridedBatched(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, 4, 3, 5, &alpha, da.get(),
                                      static_cast<int>(s.lda), stride_a, db.get(),
                                      static_cast<int>(s.ldb), stride_b, &beta, dc.get(),
                                      static_cast<int>(s.ldc), stride_c, batches),
            CUBLAS_STATUS_SUCCESS);
  const auto got = widen(dc.download());
  auto want = c;
  for (int batch = 0; batch < batches; ++batch) {
    auto slice = [&](const std::vector<double>& x, long long stride, std::size_t count) {
      return std::vector<double>(x.begin() + batch * stride, x.begin() + batch * stride + count);
    };
    const auto result =
        reference_gemm(s, -1.0, slice(a, stride_a, a_count(s)), slice(b, stride_b, b_count(s)), 2.0,
                       slice(c, stride_c, c_count(s)));
    std::copy(result.begin(), result.end(), want.begin() + batch * stride_c);
  }
  EXPECT_EQ(mismatches(got, want), 0U);  // the gaps between batches stay untouched
}

// SGEMM_CUDA's runner: runCublasFP32, runCublasTF32 and runCublasBF16 are one
// cublasGemmEx on fp32 data with three compute types.  The fast types allow
// cuBLAS to round inputs to tf32/bf16; integer inputs are exact in both.
TEST(EmuCublasGemmEx, sgemm_cuda_runner_fp32_tf32_and_bf16_compute_types_match_float64) {
  Handle h;
  const int M = 7, N = 9, K = 5;
  const auto A = integer_values(M * K, 13);  // row-major M x K
  const auto B = integer_values(K * N, 14);  // row-major K x N
  auto dA = to_device(narrow<float>(A));
  auto dB = to_device(narrow<float>(B));
  for (const auto compute :
       {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_16BF}) {
    rl::DeviceBuffer<float> dC(M * N);
    const float alpha = 1.0F, beta = 0.0F;
    ASSERT_EQ(cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, dB.get(),
                           CUDA_R_32F, N, dA.get(), CUDA_R_32F, K, &beta, dC.get(), CUDA_R_32F, N,
                           compute, CUBLAS_GEMM_DEFAULT_TENSOR_OP),
              CUBLAS_STATUS_SUCCESS);
    const auto got = dC.download();
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        double want = 0.0;
        for (int p = 0; p < K; ++p) want += A[i * K + p] * B[p * N + j];
        EXPECT_EQ(got[i * N + j], want) << "compute " << compute << " at " << i << "," << j;
      }
    }
  }
}

template <typename In, typename Out>
void expect_gemm_ex_matches(cudaDataType_t in_type, cudaDataType_t out_type) {
  Handle h;
  const GemmShape s = padded_shape(7, 13, 5, CUBLAS_OP_T, CUBLAS_OP_N);
  const auto a = integer_values(a_count(s), 15);
  const auto b = integer_values(b_count(s), 16);
  const auto c = integer_values(c_count(s), 17);
  auto da = to_device(narrow<In>(a));
  auto db = to_device(narrow<In>(b));
  auto dc = to_device(narrow<Out>(c));
  const float alpha = 3.0F, beta = -1.0F;
  ASSERT_EQ(cublasGemmEx(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, 7, 13, 5, &alpha, da.get(), in_type,
                         static_cast<int>(s.lda), db.get(), in_type, static_cast<int>(s.ldb), &beta,
                         dc.get(), out_type, static_cast<int>(s.ldc), CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mismatches(widen(dc.download()), reference_gemm(s, 3.0, a, b, -1.0, c)), 0U);
}

TEST(EmuCublasGemmEx, fp16_and_bf16_inputs_with_16_bit_and_fp32_outputs_match_float64) {
  expect_gemm_ex_matches<__half, __half>(CUDA_R_16F, CUDA_R_16F);
  expect_gemm_ex_matches<__nv_bfloat16, __nv_bfloat16>(CUDA_R_16BF, CUDA_R_16BF);
  expect_gemm_ex_matches<__half, float>(CUDA_R_16F, CUDA_R_32F);
  expect_gemm_ex_matches<__nv_bfloat16, float>(CUDA_R_16BF, CUDA_R_32F);
}

// One rounding from the exact sum: 2048 + 1 + 2^-20 lies just above the fp16
// tie 2049, so it rounds to 2050; rounding to fp32 first (2049) and then to
// fp16 would give 2048.  Plain ties round to even.
TEST(EmuCublasGemmEx, fp16_output_is_the_exact_sum_rounded_once_to_nearest_even) {
  Handle h;
  const std::vector<std::pair<std::array<double, 3>, double>> cases = {
      {{2048.0, 1.0, 0x1.0p-20}, 2050.0},
      {{2048.0, 1.0, 0.0}, 2048.0},
      {{2048.0, 3.0, 0.0}, 2052.0}};
  for (const auto& [row, want] : cases) {
    auto da = to_device(narrow<__half>({row[0], row[1], row[2]}));
    auto db = to_device(narrow<__half>({1.0, 1.0, 1.0}));
    rl::DeviceBuffer<__half> dc(1);
    const __half alpha(1.0F), beta(0.0F);
    ASSERT_EQ(cublasHgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 3, &alpha, da.get(), 1,
                          db.get(), 3, &beta, dc.get(), 1),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(static_cast<float>(dc.download()[0]), want) << row[0] << " + " << row[1];
  }
}

// llm.c dev/cuda/attention_forward.cu: preatt = K^T Q per (batch, head), in
// bf16 with fp32 compute, through cublasGemmStridedBatchedEx.
TEST(EmuCublasGemmStridedBatchedEx, llmc_attention_scores_in_bf16_match_float64) {
  Handle h;
  const int T = 5, HS = 3, heads = 2;
  const auto q = integer_values(heads * T * HS, 18);
  const auto k = integer_values(heads * T * HS, 19);
  auto dq = to_device(narrow<__nv_bfloat16>(q));
  auto dk = to_device(narrow<__nv_bfloat16>(k));
  rl::DeviceBuffer<__nv_bfloat16> dp(heads * T * T);
  const float alpha = 1.0F, beta = 0.0F;
  ASSERT_EQ(cublasGemmStridedBatchedEx(h.handle, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, &alpha,
                                       dk.get(), CUDA_R_16BF, HS, T * HS, dq.get(), CUDA_R_16BF, HS,
                                       T * HS, &beta, dp.get(), CUDA_R_16BF, T, T * T, heads,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  const auto got = widen(dp.download());
  for (int hd = 0; hd < heads; ++hd) {
    for (int tq = 0; tq < T; ++tq) {    // column of preatt: the query
      for (int tk = 0; tk < T; ++tk) {  // row: the key
        double want = 0.0;
        for (int d = 0; d < HS; ++d) {
          want += k[(hd * T + tk) * HS + d] * q[(hd * T + tq) * HS + d];
        }
        EXPECT_EQ(got[hd * T * T + tq * T + tk], want) << hd << "," << tq << "," << tk;
      }
    }
  }
}

TEST(EmuCublasDgemm, double_gemm_matches_float64_and_device_pointer_mode_reads_device_scalars) {
  Handle h;
  ASSERT_EQ(cublasSetPointerMode(h.handle, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
  const GemmShape s = padded_shape(3, 4, 6, CUBLAS_OP_N, CUBLAS_OP_T);
  const auto a = integer_values(a_count(s), 20);
  const auto b = integer_values(b_count(s), 21);
  const auto c = integer_values(c_count(s), 22);
  auto da = to_device(a);
  auto db = to_device(b);
  auto dc = to_device(c);
  auto d_alpha = to_device(std::vector<double>{0.5});
  auto d_beta = to_device(std::vector<double>{4.0});
  ASSERT_EQ(cublasDgemm(h.handle, CUBLAS_OP_N, CUBLAS_OP_T, 3, 4, 6, d_alpha.get(), da.get(),
                        static_cast<int>(s.lda), db.get(), static_cast<int>(s.ldb), d_beta.get(),
                        dc.get(), static_cast<int>(s.ldc)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mismatches(dc.download(), reference_gemm(s, 0.5, a, b, 4.0, c)), 0U);
}

}  // namespace
