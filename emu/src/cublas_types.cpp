// Which cuBLAS type combinations the reference computes, what type alpha and
// beta have, and the names refusals print (cublas_internal.hpp).
//
// The combinations are cuBLAS's own table for cublasGemmEx (the cuBLAS
// documentation, "cublasGemmEx", and cuBLASLt's for cublasLtMatmul) minus the
// integer, complex and 8-bit float rows: a combination cuBLAS refuses is
// refused here too, so code that runs here does not fail on a GPU for its types.
#include "cublas_internal.hpp"

namespace rl::emu::cublas {

bool is_emulated_element_type(cudaDataType_t type) {
  return type == CUDA_R_32F || type == CUDA_R_64F || type == CUDA_R_16F || type == CUDA_R_16BF;
}

std::optional<cudaDataType_t> scale_type_of(cublasComputeType_t compute) {
  switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return CUDA_R_16F;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      return CUDA_R_32F;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
      return CUDA_R_64F;
    default:
      return std::nullopt;  // CUBLAS_COMPUTE_32I (int8 inputs): not emulated
  }
}

bool types_emulated(cublasComputeType_t compute, cudaDataType_t ab, cudaDataType_t cd) {
  const auto scale = scale_type_of(compute);
  if (!scale) return false;
  switch (*scale) {
    case CUDA_R_16F:
      return ab == CUDA_R_16F && cd == CUDA_R_16F;
    case CUDA_R_64F:
      return ab == CUDA_R_64F && cd == CUDA_R_64F;
    default:
      break;
  }
  // The fast and emulated 32F modes take fp32 operands only (they may lower
  // them internally); plain 32F also takes 16-bit operands with a 16-bit
  // output of the same type or an fp32 output.
  if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_PEDANTIC) {
    return ab == CUDA_R_32F && cd == CUDA_R_32F;
  }
  if (ab == CUDA_R_32F) return cd == CUDA_R_32F;
  if (ab == CUDA_R_16F || ab == CUDA_R_16BF) return cd == ab || cd == CUDA_R_32F;
  return false;
}

std::string data_type_name(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_32F:
      return "CUDA_R_32F";
    case CUDA_R_64F:
      return "CUDA_R_64F";
    case CUDA_R_16F:
      return "CUDA_R_16F";
    case CUDA_R_16BF:
      return "CUDA_R_16BF";
    case CUDA_R_8I:
      return "CUDA_R_8I";
    case CUDA_R_32I:
      return "CUDA_R_32I";
    case CUDA_R_8F_E4M3:
      return "CUDA_R_8F_E4M3";
    case CUDA_R_8F_E5M2:
      return "CUDA_R_8F_E5M2";
    default:
      return "cudaDataType " + std::to_string(static_cast<int>(type));
  }
}

std::string compute_type_name(cublasComputeType_t compute) {
  switch (compute) {
    case CUBLAS_COMPUTE_16F:
      return "CUBLAS_COMPUTE_16F";
    case CUBLAS_COMPUTE_32F:
      return "CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return "CUBLAS_COMPUTE_32F_FAST_16F";
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return "CUBLAS_COMPUTE_32F_FAST_16BF";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      return "CUBLAS_COMPUTE_32F_FAST_TF32";
    case CUBLAS_COMPUTE_64F:
      return "CUBLAS_COMPUTE_64F";
    case CUBLAS_COMPUTE_32I:
      return "CUBLAS_COMPUTE_32I";
    default:
      return "cublasComputeType " + std::to_string(static_cast<int>(compute));
  }
}

}  // namespace rl::emu::cublas
