// What the emulator keeps in cuBLASLt's opaque descriptors: a matmul
// descriptor's and a matrix layout's attributes, stored in the descriptor's
// own bytes (so a descriptor is exactly the toolkit's size) and read and
// written with memcpy.  Fields have the attributes' storage types (cublasLt.h).
#pragma once

#include <cstdint>
#include <cstring>

#include "cublas_internal.hpp"

namespace rl::emu::cublas {

struct MatmulDescState {
  std::int32_t compute_type = CUBLAS_COMPUTE_32F;
  std::int32_t scale_type = CUDA_R_32F;
  std::int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  std::int32_t transa = CUBLAS_OP_N;
  std::int32_t transb = CUBLAS_OP_N;
  std::int32_t transc = CUBLAS_OP_N;
  std::int32_t fill_mode = CUBLAS_FILL_MODE_FULL;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  std::int64_t bias_batch_stride = 0;
  void* aux = nullptr;
  std::int64_t aux_ld = 0;
  std::int64_t aux_batch_stride = 0;
  std::int32_t aux_type = -1;   // -1: D's type
  std::int32_t bias_type = -1;  // -1: D's type
  std::int8_t fast_accum = 0;
  const void* a_scale = nullptr;  // CUBLASLT_MATMUL_DESC_A_SCALE_POINTER
  const void* b_scale = nullptr;
  std::int32_t a_scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  std::int32_t b_scale_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
};
static_assert(sizeof(MatmulDescState) <= sizeof(cublasLtMatmulDescOpaque_t));

struct LayoutState {
  std::uint32_t type = CUDA_R_32F;
  std::int32_t order = CUBLASLT_ORDER_COL;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::int64_t ld = 0;
  std::int32_t batch_count = 1;
  std::int64_t batch_stride = 0;
  std::int64_t plane_offset = 0;
  std::int32_t batch_mode = CUBLASLT_BATCH_MODE_STRIDED;
};
static_assert(sizeof(LayoutState) <= sizeof(cublasLtMatrixLayoutOpaque_t));

template <typename State, typename Opaque>
State load_state(const Opaque* opaque) {
  State state;
  std::memcpy(&state, opaque->data, sizeof state);
  return state;
}

template <typename State, typename Opaque>
void store_state(Opaque* opaque, const State& state) {
  std::memcpy(opaque->data, &state, sizeof state);
}

}  // namespace rl::emu::cublas
