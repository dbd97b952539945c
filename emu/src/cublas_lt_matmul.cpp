// cublasLtMatmul and its heuristic under the emulator: one "algorithm", the
// reference GEMM (cublas_reference_gemm.cpp), for
// D = epilogue(alpha op(A) op(B) + beta C).
//
// What is checked, and how it answers:
// - CUBLAS_STATUS_INVALID_VALUE (as cuBLASLt): a null descriptor, alpha or
//   beta; shapes that do not chain (op(A) m x k, op(B) k x n, C and D m x n);
//   a leading dimension below the rows; unequal batch counts; a bias or aux
//   epilogue without its pointer; in place (C == D) with a C layout other
//   than D's.
// - CUBLAS_STATUS_NOT_SUPPORTED with one line: a type combination outside
//   cuBLAS's table or not computed here (fp8, int8), a scale type other than
//   the compute type's, an order other than CUBLASLT_ORDER_COL, pointer-array
//   batches, TRANSC, vector pointer modes, and the epilogues other than
//   DEFAULT, RELU, BIAS, RELU_BIAS, GELU, GELU_BIAS, GELU_AUX, GELU_AUX_BIAS
//   (the backward ones: DRELU, DGELU, BGRADA/B; RELU_AUX's bit mask).
// - Block scales: MXFP8 and NVFP4 only (check_block_scaled), computed
//   exactly by the reference (each element times its block's scale).
#include <algorithm>

#include "cublas_lt_state.hpp"

namespace rl::emu::cublas {
namespace {

struct Layouts {
  LayoutState a, b, c, d;
};

std::optional<Activation> activation_of(std::uint32_t epilogue) {
  switch (epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
    case CUBLASLT_EPILOGUE_BIAS:
      return Activation::none;
    case CUBLASLT_EPILOGUE_RELU:
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return Activation::relu;
    case CUBLASLT_EPILOGUE_GELU:
    case CUBLASLT_EPILOGUE_GELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU_AUX:
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
      return Activation::gelu_tanh;
    default:
      return std::nullopt;
  }
}

cublasStatus_t check_layouts(const std::string& call, const Layouts& l) {
  for (const LayoutState* x : {&l.a, &l.b, &l.c, &l.d}) {
    if (x->order != CUBLASLT_ORDER_COL) {
      return not_emulated(call + " with layout order " + std::to_string(x->order));
    }
    if (x->batch_mode != CUBLASLT_BATCH_MODE_STRIDED || x->plane_offset != 0) {
      return not_emulated(call + " with pointer-array or planar batches");
    }
    const auto rows = static_cast<std::int64_t>(x->rows);
    if (x->ld < std::max<std::int64_t>(1, rows) || x->batch_count < 1) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (x->batch_count != l.d.batch_count) return CUBLAS_STATUS_INVALID_VALUE;
  }
  return CUBLAS_STATUS_SUCCESS;
}

Operand operand(const LayoutState& x, const void* data, bool transposed) {
  return Operand{data, static_cast<cudaDataType_t>(x.type), x.ld, x.batch_stride, transposed};
}

// The block size of cuBLASLt's block-scaled matmul (Blackwell) in `mode` on
// both operands, for the operand type it scales, or 0: MXFP8 (e4m3 A and B,
// VEC32_UE8M0) or NVFP4 (e2m1 A and B, two a byte, VEC16_UE4M3).
int scale_block_of(std::int32_t mode, std::uint32_t operand_type) {
  if (mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 && operand_type == CUDA_R_8F_E4M3) return 32;
  if (mode == CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 && operand_type == CUDA_R_4F_E2M1) return 16;
  return 0;
}

// Block scales: the same mode on A and B and their type (scale_block_of),
// fp32 compute and alpha/beta, D fp32 or bf16 (C the same), "TN" (op(A) =
// Aᵀ, op(B) = B: both operands k-contiguous, the layout cuBLASLt's narrow
// kernels take), K whole 32-element blocks, one batch, no epilogue.  The
// scale pointers are required (INVALID_VALUE without them); everything else
// outside this is refused as not emulated.
cublasStatus_t check_block_scaled(const std::string& call, const MatmulDescState& s,
                                  const Layouts& l) {
  if (s.a_scale_mode != s.b_scale_mode || l.a.type != l.b.type ||
      scale_block_of(s.a_scale_mode, l.a.type) == 0) {
    return not_emulated(call + " with scale modes A " + std::to_string(s.a_scale_mode) + ", B " +
                        std::to_string(s.b_scale_mode) + " on A " +
                        data_type_name(static_cast<cudaDataType_t>(l.a.type)) + ", B " +
                        data_type_name(static_cast<cudaDataType_t>(l.b.type)) +
                        " (emulated: VEC32_UE8M0 on e4m3, VEC16_UE4M3 on e2m1, on both)");
  }
  if (l.c.type != l.d.type || (l.d.type != CUDA_R_32F && l.d.type != CUDA_R_16BF) ||
      s.compute_type != CUBLAS_COMPUTE_32F || s.scale_type != CUDA_R_32F) {
    return not_emulated(call + " with block scales and D " +
                        data_type_name(static_cast<cudaDataType_t>(l.d.type)) +
                        " (emulated: fp32 compute, fp32 or bf16 C and D)");
  }
  if (s.transa != CUBLAS_OP_T || s.transb != CUBLAS_OP_N) {
    return not_emulated(call + " with block scales other than \"TN\"");
  }
  if (l.a.rows % 32 != 0) {
    return not_emulated(call + " with block scales and K = " + std::to_string(l.a.rows) +
                        ", not a multiple of 32");
  }
  if (l.d.batch_count != 1) return not_emulated(call + " with block scales and batches");
  if (s.a_scale == nullptr || s.b_scale == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (s.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    return not_emulated(call + " with block scales and an epilogue");
  }
  return CUBLAS_STATUS_SUCCESS;
}

// Everything of the problem but the data pointers and scalars, or the status
// cublasLtMatmul answers.
cublasStatus_t describe(const std::string& call, cublasLtMatmulDesc_t desc,
                        cublasLtMatrixLayout_t a_desc, cublasLtMatrixLayout_t b_desc,
                        cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
                        GemmProblem& p, MatmulDescState& s, Layouts& l) {
  if (desc == nullptr || a_desc == nullptr || b_desc == nullptr || c_desc == nullptr ||
      d_desc == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  s = load_state<MatmulDescState>(desc);
  l = Layouts{load_state<LayoutState>(a_desc), load_state<LayoutState>(b_desc),
              load_state<LayoutState>(c_desc), load_state<LayoutState>(d_desc)};
  if (!valid_operation(s.transa) || !valid_operation(s.transb)) return CUBLAS_STATUS_INVALID_VALUE;
  if (const cublasStatus_t status = check_layouts(call, l); status != CUBLAS_STATUS_SUCCESS) {
    return status;
  }
  const auto compute = static_cast<cublasComputeType_t>(s.compute_type);
  const auto ab = static_cast<cudaDataType_t>(l.a.type);
  const auto cd = static_cast<cudaDataType_t>(l.d.type);
  const bool block_scaled = s.a_scale_mode != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F ||
                            s.b_scale_mode != CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  if (block_scaled) {
    if (const cublasStatus_t status = check_block_scaled(call, s, l);
        status != CUBLAS_STATUS_SUCCESS)
      return status;
  } else if (s.a_scale != nullptr || s.b_scale != nullptr) {
    return not_emulated(call + " with SCALAR_32F A/B scale pointers");
  } else if (l.b.type != l.a.type || l.c.type != l.d.type || !types_emulated(compute, ab, cd)) {
    return not_emulated(call + " with A " + data_type_name(ab) + ", B " +
                        data_type_name(static_cast<cudaDataType_t>(l.b.type)) + ", C " +
                        data_type_name(static_cast<cudaDataType_t>(l.c.type)) + ", D " +
                        data_type_name(cd) + " and " + compute_type_name(compute));
  }
  if (s.scale_type != *scale_type_of(compute)) {
    return not_emulated(call + " with scale type " +
                        data_type_name(static_cast<cudaDataType_t>(s.scale_type)) + " and " +
                        compute_type_name(compute));
  }
  if (s.transc != CUBLAS_OP_N) return not_emulated(call + " with TRANSC");
  if (s.pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
      s.pointer_mode != CUBLASLT_POINTER_MODE_DEVICE) {
    return not_emulated(call + " with pointer mode " + std::to_string(s.pointer_mode));
  }

  const bool ta = s.transa != CUBLAS_OP_N;
  const bool tb = s.transb != CUBLAS_OP_N;
  p.m = static_cast<std::int64_t>(l.d.rows);
  p.n = static_cast<std::int64_t>(l.d.cols);
  p.k = static_cast<std::int64_t>(ta ? l.a.rows : l.a.cols);
  const auto a_m = static_cast<std::int64_t>(ta ? l.a.cols : l.a.rows);
  const auto b_k = static_cast<std::int64_t>(tb ? l.b.cols : l.b.rows);
  const auto b_n = static_cast<std::int64_t>(tb ? l.b.rows : l.b.cols);
  if (a_m != p.m || b_k != p.k || b_n != p.n || l.c.rows != l.d.rows || l.c.cols != l.d.cols) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  p.batch_count = l.d.batch_count;

  const auto activation = activation_of(s.epilogue);
  if (!activation) return not_emulated(call + " with epilogue " + std::to_string(s.epilogue));
  Epilogue& e = p.epilogue;
  e.activation = *activation;
  if ((s.epilogue & CUBLASLT_EPILOGUE_BIAS) != 0) {
    e.bias_type = s.bias_type == -1 ? cd : static_cast<cudaDataType_t>(s.bias_type);
    if (s.bias == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (!is_emulated_element_type(e.bias_type)) {
      return not_emulated(call + " with bias type " + data_type_name(e.bias_type));
    }
    e.bias = s.bias;
    e.bias_batch_stride = s.bias_batch_stride;
  }
  if ((s.epilogue & 128U) != 0) {  // the _AUX epilogues (only GELU_AUX gets here)
    const auto aux_type = s.aux_type == -1 ? cd : static_cast<cudaDataType_t>(s.aux_type);
    if (s.aux == nullptr || s.aux_ld < std::max<std::int64_t>(1, p.m)) {
      return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (!is_emulated_element_type(aux_type)) {
      return not_emulated(call + " with aux type " + data_type_name(aux_type));
    }
    e.aux = Output{s.aux, aux_type, s.aux_ld, s.aux_batch_stride};
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace
}  // namespace rl::emu::cublas

extern "C" {

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount) {
  namespace cb = rl::emu::cublas;
  if (lightHandle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (preference == nullptr || requestedAlgoCount < 1 || heuristicResultsArray == nullptr ||
      returnAlgoCount == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  *returnAlgoCount = 0;
  cb::GemmProblem problem;
  cb::MatmulDescState state;
  cb::Layouts layouts;
  const cublasStatus_t status = cb::describe("cublasLtMatmulAlgoGetHeuristic", operationDesc, Adesc,
                                             Bdesc, Cdesc, Ddesc, problem, state, layouts);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  heuristicResultsArray[0] = cublasLtMatmulHeuristicResult_t{};
  heuristicResultsArray[0].state = CUBLAS_STATUS_SUCCESS;
  heuristicResultsArray[0].wavesCount = 1.0F;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                              const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                              const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                              cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t* /*algo: there is one*/,
                              void* /*workspace*/, std::size_t /*workspaceSizeInBytes*/,
                              cudaStream_t /*stream: runs before the call returns*/) {
  namespace cb = rl::emu::cublas;
  if (lightHandle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  cb::GemmProblem p;
  cb::MatmulDescState s;
  cb::Layouts l;
  const cublasStatus_t status =
      cb::describe("cublasLtMatmul", computeDesc, Adesc, Bdesc, Cdesc, Ddesc, p, s, l);
  if (status != CUBLAS_STATUS_SUCCESS) return status;
  if (C == D && (l.c.ld != l.d.ld || l.c.batch_stride != l.d.batch_stride)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (p.m == 0 || p.n == 0) return CUBLAS_STATUS_SUCCESS;
  const auto scale = static_cast<cudaDataType_t>(s.scale_type);
  p.alpha = cb::read_scalar(alpha, scale);
  p.beta = cb::read_scalar(beta, scale);
  p.a = cb::operand(l.a, A, s.transa != CUBLAS_OP_N);
  p.b = cb::operand(l.b, B, s.transb != CUBLAS_OP_N);
  if (const int block = cb::scale_block_of(s.a_scale_mode, l.a.type); block != 0) {  // checked
    p.a.block_scales = static_cast<const std::uint8_t*>(s.a_scale);
    p.b.block_scales = static_cast<const std::uint8_t*>(s.b_scale);
    p.a.scale_block = p.b.scale_block = block;
  }
  p.c = cb::operand(l.c, C, false);
  p.d = cb::Output{D, static_cast<cudaDataType_t>(l.d.type), l.d.ld, l.d.batch_stride};
  cb::reference_gemm(p);
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
