// What the emulator's cuBLAS and cuBLASLt files share: the handles' state, the
// one reference GEMM every call reaches, the type tables, and the refusal line.
//
// Files (emu/README.md, "CUDA surface", row "cuBLAS / cuBLASLt"):
//   cublas_handle.cpp          handles, streams, modes, status strings
//   cublas_types.cpp           which type combinations are emulated; scalars; names
//   cublas_reference_gemm.cpp  the reference: double accumulation, one rounding
//   cublas_gemm.cpp            cublasSgemm, cublasGemmEx, the strided-batched forms
//   cublas_lt_descriptors.cpp  cuBLASLt's matmul, layout and preference descriptors
//   cublas_lt_matmul.cpp       cublasLtMatmulAlgoGetHeuristic, cublasLtMatmul
//   cublas_refused.cpp         the declared calls that are not emulated
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math_mode = CUBLAS_DEFAULT_MATH;
  cublasPointerMode_t pointer_mode = CUBLAS_POINTER_MODE_HOST;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// Nothing to hold: the reference needs no per-handle state (see cublasLt.h).
struct cublasLtContext {
  int unused = 0;
};

namespace rl::emu::cublas {

// Prints `rl::emu: <what> is not emulated (emu/README.md, "cuBLAS")` on stderr,
// once per distinct `what`, and returns CUBLAS_STATUS_NOT_SUPPORTED.
cublasStatus_t not_emulated(const std::string& what);

// One column-major matrix as stored: element (row, col) of batch b is at
// data[b * batch_stride + row + col * ld].  A transposed operand is read as
// its transpose: op(X)(i, j) = X(j, i).
struct Operand {
  const void* data = nullptr;
  cudaDataType_t type = CUDA_R_32F;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
  bool transposed = false;
  // cuBLASLt's block scales of op(X), or nullptr: one scale per
  // `scale_block` elements along k of each of op(X)'s rows (A) or columns
  // (B), in cuBLASLt's tiled layout (reference_gemm): ue8m0 per 32
  // (VEC32_UE8M0) or ue4m3 per 16 (VEC16_UE4M3).
  const std::uint8_t* block_scales = nullptr;
  int scale_block = 32;
};

struct Output {
  void* data = nullptr;
  cudaDataType_t type = CUDA_R_32F;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
};

enum class Activation { none, relu, gelu_tanh };

// cuBLASLt's epilogue: bias (one value per row of D) is added to
// alpha*op(A)op(B) + beta*C, the sum is stored to aux when there is one (the
// GELU input, for the backward pass), then the activation is applied.
struct Epilogue {
  Activation activation = Activation::none;
  const void* bias = nullptr;
  cudaDataType_t bias_type = CUDA_R_32F;
  std::int64_t bias_batch_stride = 0;
  Output aux{};  // aux.data == nullptr: none
};

// D = epilogue(alpha * op(A) op(B) + beta * C), m x n, for each of batch_count
// batches.  C is not read when beta == 0, A and B are not read when alpha == 0
// or k == 0, as cuBLAS promises.
struct GemmProblem {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch_count = 1;
  double alpha = 1.0;
  double beta = 0.0;
  Operand a{};
  Operand b{};
  Operand c{};
  Output d{};
  Epilogue epilogue{};
};

void reference_gemm(const GemmProblem& problem);

// The element types the reference reads and writes: CUDA_R_32F, _64F, _16F,
// _16BF (it also reads the CUDA_R_8F_E4M3 and CUDA_R_4F_E2M1 operands of
// block-scaled matmuls).
bool is_emulated_element_type(cudaDataType_t type);

// The type alpha and beta have for a compute type (cuBLAS's rule), if emulated.
std::optional<cudaDataType_t> scale_type_of(cublasComputeType_t compute);

// cuBLAS's table of type combinations (cublasGemmEx, cublasLtMatmul), A and B
// of type ab, C and D of type cd, restricted to the real floating-point rows.
bool types_emulated(cublasComputeType_t compute, cudaDataType_t ab, cudaDataType_t cd);

// CUBLAS_OP_N, _T or _C (which is _T for real types); others are invalid values.
inline bool valid_operation(int op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

// Element `index` of an array of `type` (an emulated element type), exactly
// (cublas_reference_gemm.cpp); alpha and beta are element 0 of the scale type.
double load_element(const void* base, cudaDataType_t type, std::int64_t index);
inline double read_scalar(const void* scalar, cudaDataType_t scale_type) {
  return load_element(scalar, scale_type, 0);
}

// "CUDA_R_16BF", "CUBLAS_COMPUTE_32F_FAST_TF32", or the number for others.
std::string data_type_name(cudaDataType_t type);
std::string compute_type_name(cublasComputeType_t compute);

}  // namespace rl::emu::cublas
