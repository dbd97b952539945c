// The emulated cuBLAS's handles and statuses: streams, modes and strings;
// CUBLAS_STATUS_INVALID_VALUE and _NOT_INITIALIZED where cuBLAS answers them;
// CUBLAS_STATUS_NOT_SUPPORTED with exactly one line for what is not emulated.
#include <string>

#include "cublas_test_support.hpp"

namespace {

using namespace rl::test::cublas;

TEST(EmuCublasHandle, streams_math_modes_workspace_version_and_status_strings) {
  Handle h;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_EQ(cublasSetStream(h.handle, stream), CUBLAS_STATUS_SUCCESS);
  cudaStream_t got = nullptr;
  EXPECT_EQ(cublasGetStream(h.handle, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, stream);

  cublasMath_t mode = CUBLAS_PEDANTIC_MATH;
  EXPECT_EQ(cublasGetMathMode(h.handle, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mode, CUBLAS_DEFAULT_MATH);
  EXPECT_EQ(cublasSetMathMode(h.handle, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasGetMathMode(h.handle, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mode, CUBLAS_TF32_TENSOR_OP_MATH);
  EXPECT_EQ(cublasSetMathMode(h.handle, static_cast<cublasMath_t>(5)), CUBLAS_STATUS_INVALID_VALUE);

  rl::DeviceBuffer<char> workspace(1024);
  EXPECT_EQ(cublasSetWorkspace(h.handle, workspace.get(), workspace.size()), CUBLAS_STATUS_SUCCESS);
  int version = 0;
  EXPECT_EQ(cublasGetVersion(h.handle, &version), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(version, CUBLAS_VERSION);
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_NE(std::string(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE)), "");
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(EmuCublasStatus, a_null_handle_is_not_initialized) {
  const float one = 1.0F;
  float x = 0.0F;
  EXPECT_EQ(
      cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, &x, 1, &x, 1, &one, &x, 1),
      CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSetStream(nullptr, nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasDestroy(nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasLtMatmul(nullptr, nullptr, &one, &x, nullptr, &x, nullptr, &one, &x, nullptr, &x,
                           nullptr, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_INITIALIZED);
}

// Each bad argument on its own, from a call that succeeds: m = 3, n = 4, k = 5.
TEST(EmuCublasStatus, bad_sizes_leading_dimensions_operations_and_scalars_are_invalid_values) {
  Handle h;
  std::vector<float> host(64, 1.0F);
  auto buffer = to_device(host);
  float* p = buffer.get();
  const float one = 1.0F;
  struct Args {
    cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
    int m = 3, n = 4, k = 5, lda = 3, ldb = 5, ldc = 3;
    const float* alpha = nullptr;
    int batch = 1;
  };
  auto sgemm = [&](Args a) {
    return cublasSgemmStridedBatched(h.handle, a.ta, a.tb, a.m, a.n, a.k, a.alpha, p, a.lda, 0, p,
                                     a.ldb, 0, &one, p, a.ldc, 0, a.batch);
  };
  Args ok;
  ok.alpha = &one;
  ASSERT_EQ(sgemm(ok), CUBLAS_STATUS_SUCCESS);
  const auto invalid = [&](const char* what, auto change) {
    Args a = ok;
    change(a);
    EXPECT_EQ(sgemm(a), CUBLAS_STATUS_INVALID_VALUE) << what;
  };
  invalid("m < 0", [](Args& a) { a.m = -1; });
  invalid("n < 0", [](Args& a) { a.n = -1; });
  invalid("k < 0", [](Args& a) { a.k = -1; });
  invalid("batchCount < 0", [](Args& a) { a.batch = -1; });
  invalid("lda < m for op N", [](Args& a) { a.lda = 2; });
  invalid("lda < k for op T", [](Args& a) {
    a.ta = CUBLAS_OP_T;
    a.lda = 4;
  });
  invalid("ldb < k for op N", [](Args& a) { a.ldb = 4; });
  invalid("ldb < n for op T", [](Args& a) {
    a.tb = CUBLAS_OP_T;
    a.ldb = 3;
  });
  invalid("ldc < m", [](Args& a) { a.ldc = 2; });
  invalid("null alpha", [](Args& a) { a.alpha = nullptr; });
  invalid("CUBLAS_OP_CONJG", [](Args& a) { a.ta = CUBLAS_OP_CONJG; });
  invalid("CUBLAS_OP_CONJG for B", [](Args& a) { a.tb = CUBLAS_OP_CONJG; });

  Args empty = ok;
  empty.m = 0;  // nothing to compute, and ldc = 1 is then enough
  empty.ldc = 1;
  EXPECT_EQ(sgemm(empty), CUBLAS_STATUS_SUCCESS);
}

TEST(EmuCublasStatus, a_call_that_is_not_emulated_returns_not_supported_with_one_line) {
  Handle h;
  const float one = 1.0F;
  float x = 0.0F;
  testing::internal::CaptureStderr();
  EXPECT_EQ(cublasSgemv(h.handle, CUBLAS_OP_N, 1, 1, &one, &x, 1, &x, 1, &one, &x, 1),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasSgemv(h.handle, CUBLAS_OP_N, 1, 1, &one, &x, 1, &x, 1, &one, &x, 1),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "rl::emu: cublasSgemv is not emulated (emu/README.md, \"cuBLAS\")\n");
}

TEST(EmuCublasStatus, type_combinations_outside_the_emulated_table_are_not_supported) {
  Handle h;
  rl::DeviceBuffer<float> buffer(16);
  const float one = 1.0F;
  const auto gemm_ex = [&](cudaDataType_t ab, cudaDataType_t c, cublasComputeType_t compute) {
    return cublasGemmEx(h.handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, buffer.get(), ab, 2,
                        buffer.get(), ab, 2, &one, buffer.get(), c, 2, compute,
                        CUBLAS_GEMM_DEFAULT);
  };
  testing::internal::CaptureStderr();
  EXPECT_EQ(gemm_ex(CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I), CUBLAS_STATUS_NOT_SUPPORTED);
  // fp32 inputs with an fp16 output: not in cuBLAS's table either.
  EXPECT_EQ(gemm_ex(CUDA_R_32F, CUDA_R_16F, CUBLAS_COMPUTE_32F), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "rl::emu: cublasGemmEx with A CUDA_R_8I, B CUDA_R_8I, C CUDA_R_32I and "
            "CUBLAS_COMPUTE_32I is not emulated (emu/README.md, \"cuBLAS\")\n"
            "rl::emu: cublasGemmEx with A CUDA_R_32F, B CUDA_R_32F, C CUDA_R_16F and "
            "CUBLAS_COMPUTE_32F is not emulated (emu/README.md, \"cuBLAS\")\n");
}

}  // namespace
