// cuBLAS's GEMMs under the emulator: cublasSgemm, cublasDgemm, cublasHgemm,
// cublasGemmEx and the strided-batched forms, all one checked call into the
// reference (cublas_reference_gemm.cpp).
//
// Checks in cuBLAS's order and with its statuses: a null handle is
// CUBLAS_STATUS_NOT_INITIALIZED; a negative size or batch count, an operation
// other than N/T/C, a leading dimension below the rows stored (lda <
// max(1, m) for op N, max(1, k) otherwise; likewise ldb, ldc >= max(1, m)) or
// a null alpha/beta is CUBLAS_STATUS_INVALID_VALUE; a type combination outside
// cuBLAS's table, or one the reference does not compute, is
// CUBLAS_STATUS_NOT_SUPPORTED with one line.  C = alpha op(A) op(B) + beta C,
// column-major; CUBLAS_OP_C is CUBLAS_OP_T for real types.  alpha and beta are
// read the same way in both pointer modes: device memory is host memory here.
#include <algorithm>

#include "cublas_internal.hpp"

namespace rl::emu::cublas {
namespace {

struct GemmCall {
  const char* name;
  cublasOperation_t transa, transb;
  int m, n, k;
  const void* alpha;
  const void* a;
  cudaDataType_t a_type;
  int lda;
  long long stride_a;
  const void* b;
  cudaDataType_t b_type;
  int ldb;
  long long stride_b;
  const void* beta;
  void* c;
  cudaDataType_t c_type;
  int ldc;
  long long stride_c;
  int batch_count;
  cublasComputeType_t compute;
};

cublasStatus_t run(cublasHandle_t handle, const GemmCall& g) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const int a_rows = g.transa == CUBLAS_OP_N ? g.m : g.k;
  const int b_rows = g.transb == CUBLAS_OP_N ? g.k : g.n;
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch_count < 0 || !valid_operation(g.transa) ||
      !valid_operation(g.transb) || g.lda < std::max(1, a_rows) || g.ldb < std::max(1, b_rows) ||
      g.ldc < std::max(1, g.m) || g.alpha == nullptr || g.beta == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (g.a_type != g.b_type || !types_emulated(g.compute, g.a_type, g.c_type)) {
    return not_emulated(std::string(g.name) + " with A " + data_type_name(g.a_type) + ", B " +
                        data_type_name(g.b_type) + ", C " + data_type_name(g.c_type) + " and " +
                        compute_type_name(g.compute));
  }
  if (g.m == 0 || g.n == 0 || g.batch_count == 0) return CUBLAS_STATUS_SUCCESS;

  const cudaDataType_t scale = *scale_type_of(g.compute);
  GemmProblem p;
  p.m = g.m;
  p.n = g.n;
  p.k = g.k;
  p.batch_count = g.batch_count;
  p.alpha = read_scalar(g.alpha, scale);
  p.beta = read_scalar(g.beta, scale);
  p.a = Operand{g.a, g.a_type, g.lda, g.stride_a, g.transa != CUBLAS_OP_N};
  p.b = Operand{g.b, g.b_type, g.ldb, g.stride_b, g.transb != CUBLAS_OP_N};
  p.c = Operand{g.c, g.c_type, g.ldc, g.stride_c, false};
  p.d = Output{g.c, g.c_type, g.ldc, g.stride_c};
  reference_gemm(p);
  return CUBLAS_STATUS_SUCCESS;
}

// The typed GEMMs (S, D, H and their strided-batched forms): every matrix is
// of one type.
cublasStatus_t typed_gemm(cublasHandle_t handle, const char* name, cudaDataType_t type,
                          cublasComputeType_t compute, cublasOperation_t transa,
                          cublasOperation_t transb, int m, int n, int k, const void* alpha,
                          const void* a, int lda, long long stride_a, const void* b, int ldb,
                          long long stride_b, const void* beta, void* c, int ldc,
                          long long stride_c, int batch_count) {
  return run(handle, GemmCall{name, transa, transb,   m,        n,           k,      alpha,    a,
                              type, lda,    stride_a, b,        type,        ldb,    stride_b, beta,
                              c,    type,   ldc,      stride_c, batch_count, compute});
}

}  // namespace
}  // namespace rl::emu::cublas

using rl::emu::cublas::GemmCall;
using rl::emu::cublas::run;
using rl::emu::cublas::typed_gemm;

extern "C" {

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc) {
  return typed_gemm(handle, "cublasSgemm", CUDA_R_32F, CUBLAS_COMPUTE_32F, transa, transb, m, n, k,
                    alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const double* alpha,
                           const double* A, int lda, const double* B, int ldb, const double* beta,
                           double* C, int ldc) {
  return typed_gemm(handle, "cublasDgemm", CUDA_R_64F, CUBLAS_COMPUTE_64F, transa, transb, m, n, k,
                    alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const __half* alpha,
                           const __half* A, int lda, const __half* B, int ldb, const __half* beta,
                           __half* C, int ldc) {
  return typed_gemm(handle, "cublasHgemm", CUDA_R_16F, CUBLAS_COMPUTE_16F, transa, transb, m, n, k,
                    alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t /*algo: a performance hint*/) {
  return run(
      handle,
      GemmCall{"cublasGemmEx", transa, transb, m,    n, k,     alpha, A, Atype, lda,        0, B,
               Btype,          ldb,    0,      beta, C, Ctype, ldc,   0, 1,     computeType});
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C,
                                         int ldc, long long int strideC, int batchCount) {
  return typed_gemm(handle, "cublasSgemmStridedBatched", CUDA_R_32F, CUBLAS_COMPUTE_32F, transa,
                    transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                    batchCount);
}

cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const __half* alpha, const __half* A, int lda,
                                         long long int strideA, const __half* B, int ldb,
                                         long long int strideB, const __half* beta, __half* C,
                                         int ldc, long long int strideC, int batchCount) {
  return typed_gemm(handle, "cublasHgemmStridedBatched", CUDA_R_16F, CUBLAS_COMPUTE_16F, transa,
                    transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                    batchCount);
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t /*algo: a performance hint*/) {
  return run(handle, GemmCall{"cublasGemmStridedBatchedEx",
                              transa,
                              transb,
                              m,
                              n,
                              k,
                              alpha,
                              A,
                              Atype,
                              lda,
                              strideA,
                              B,
                              Btype,
                              ldb,
                              strideB,
                              beta,
                              C,
                              Ctype,
                              ldc,
                              strideC,
                              batchCount,
                              computeType});
}

}  // extern "C"
