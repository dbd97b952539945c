// The one cuBLAS / cuBLASLt GEMM launcher of the CUDA backend: the library
// ceilings (kernels/ceilings/cuda_only/) and the GEMM and attention library
// baselines (kernels/gemm/cuda_only/, kernels/attention/cuda_only/) all call
// cuBLAS through this header.
//
// Two pieces:
//  - as_column_major(): cuBLAS and cuBLASLt are column-major; the project's
//    matrices are row-major.  A row-major r x c matrix with leading dimension
//    ld is, byte for byte, the column-major c x r matrix (its transpose) with
//    the same ld, so row-major C = op(A)·op(B) is computed as the column-major
//    Cᵀ = op(B)ᵀ·op(A)ᵀ: the operands swap places, nothing is copied.
//  - Matmul: one cuBLASLt GEMM of fixed types and shape (matmul descriptor,
//    layouts, the heuristic's first algorithm for a workspace, optional fp8 A/B
//    scale factors), built once outside the timed region; run() is the
//    cublasLtMatmul call alone.  notes() names the algorithm the heuristic
//    chose, for Workload::notes().
//  - CublasHandle: a cuBLAS handle in one math mode with its workspace, for
//    the cublasSgemm / cublasGemmStridedBatchedEx baselines.
//
// CUDA backend only (rl/check_libs.hpp refuses the emulator).
#pragma once

#include "rl/check_libs.hpp"
#include "rl/device_buffer.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace rl::cublaslt {

// ---------------------------------------------------------------- row-major mapping

// Row-major C (M x N, leading dimension ldc) = op(A) · op(B), op(A) M x K and
// op(B) K x N.  A is stored M x K (lda >= K) or, with a_transposed, K x M
// (lda >= M); B is stored K x N (ldb >= N) or, with b_transposed, N x K
// (ldb >= K).
struct RowMajorGemm {
  std::int64_t M, N, K;
  bool a_transposed, b_transposed;
  std::int64_t lda, ldb, ldc;
};

// The same product in cuBLAS's terms: column-major D (m x n, ldd) =
// op(first) · op(second), with first = the row-major B (leading dimension
// ld_first) and second = the row-major A (ld_second).
struct ColumnMajorGemm {
  cublasOperation_t trans_first, trans_second;
  std::int64_t m, n, k;
  std::int64_t ld_first, ld_second, ldd;
};

// Cᵀ = op(B)ᵀ · op(A)ᵀ.  A row-major B stored K x N is the column-major N x K
// matrix op(B)ᵀ, taken as it is (N); stored N x K it is column-major K x N =
// op(B), so it is transposed (T).  Likewise for A.  So "NN" for plain
// row-major A and B, and cuBLASLt's fp8 "TN" (first operand transposed,
// second not) is B stored N x K with A stored M x K.
constexpr ColumnMajorGemm as_column_major(const RowMajorGemm& g) {
  return {.trans_first = g.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
          .trans_second = g.a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
          .m = g.N,
          .n = g.M,
          .k = g.K,
          .ld_first = g.ldb,
          .ld_second = g.lda,
          .ldd = g.ldc};
}

// "NN", "TN", ...: the operations of the first and second operand, the way
// cuBLAS's documentation names a layout.
std::string layout_name(const ColumnMajorGemm& g);

// ---------------------------------------------------------------- Matmul

// Types of one cuBLASLt GEMM: A and B (first and second operand), D (= C),
// accumulation and alpha/beta.
struct MatmulTypes {
  cudaDataType_t first, second, d;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

// The workspace offered to the heuristic unless a caller asks otherwise
// (cuBLASLt's documentation recommends 32 MiB on Hopper and later).
inline constexpr std::size_t kDefaultWorkspaceBytes = std::size_t{32} << 20;

// What a cuBLAS (not cuBLASLt) handle takes on the device beyond the
// workspace we hand it with cublasSetWorkspace: cuBLAS's own default
// workspace, 32 MiB on Hopper and later.  Measured on an H200 with cuBLAS
// 13.0 (first GPU visit, 2026-11-26): the records behind a cublasCreate handle
// lost up to 67 MiB more than they declared, those behind cublasLtCreate
// under 64 MiB; device_bytes of a cuBLAS record adds this.
inline constexpr std::size_t kCublasHandleOwnBytes = std::size_t{32} << 20;

// What cublasLtMatmulAlgoGetHeuristic chose, as plain numbers (formatted by
// describe(), so the format is testable without a device).
struct AlgorithmInfo {
  int id = 0, tile = 0, stages = 0;
  std::size_t workspace_bytes = 0;
  float waves = 0;
};
std::string describe(const AlgorithmInfo& info);

class Matmul {
 public:
  // Builds the descriptors and asks the heuristic for its first algorithm
  // within `max_workspace_bytes`; throws std::runtime_error when it has none
  // for these types, shape and device.  fp8: device pointers to the A (first)
  // and B (second) scale factors, read at every run (nullptr: none).
  Matmul(const ColumnMajorGemm& gemm, const MatmulTypes& types,
         std::size_t max_workspace_bytes = kDefaultWorkspaceBytes,
         const float* first_scale = nullptr, const float* second_scale = nullptr);
  Matmul(const Matmul&) = delete;
  Matmul& operator=(const Matmul&) = delete;
  ~Matmul();

  // D = alpha · op(first) · op(second) (fp8: times the two scales), alpha = 1,
  // beta = 0; asynchronous on `stream`.
  void run(const void* first, const void* second, void* d, cudaStream_t stream) const;

  // "cuBLASLt NN, heuristic's first algorithm: algo id ..., tile id ..., ..."
  std::string notes() const;
  const AlgorithmInfo& algorithm() const { return info_; }
  // The device memory this instance allocates: the workspace it offers.
  std::size_t workspace_bytes() const { return workspace_.bytes(); }

 private:
  ColumnMajorGemm gemm_;
  MatmulTypes types_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t first_layout_ = nullptr, second_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  AlgorithmInfo info_;
  DeviceBuffer<unsigned char> workspace_;
};

// ---------------------------------------------------------------- cuBLAS handle

// A cuBLAS (not Lt) handle in one math mode, handed the workspace it uses
// (cublasSetWorkspace) so the device memory of an instance is known before it
// allocates: workspace_bytes, plus the handle's own small state.
class CublasHandle {
 public:
  CublasHandle(cublasMath_t math, std::size_t workspace_bytes = kDefaultWorkspaceBytes);
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle();

  // The handle, its calls queued on `stream` from now on.
  cublasHandle_t on(cudaStream_t stream) const;

 private:
  DeviceBuffer<unsigned char> workspace_;  // declared first: outlives handle_, which uses it
  cublasHandle_t handle_ = nullptr;
};

}  // namespace rl::cublaslt
