// cuBLASLt's descriptors under the emulator: matmul descriptors, matrix
// layouts and matmul preferences (cublasLt.h).  Set and get check the value's
// size against the attribute's storage type, as cuBLASLt does
// (CUBLAS_STATUS_INVALID_VALUE otherwise); values are checked when a matmul
// uses them (cublas_lt_matmul.cpp).  A matmul attribute the reference does
// not apply (the C and D scale pointers, amax, SM count, alpha vectors, ...)
// is refused when set, with one line, rather than ignored.  A's and B's scale
// pointers and modes are kept; the matmul applies the block scales
// (VEC32_UE8M0) and refuses every other use of them.
#include <new>

#include "cublas_lt_state.hpp"

namespace rl::emu::cublas {
namespace {

// Set: writes the field `with_field` picks for the attribute into the
// descriptor's bytes, when buf holds exactly that field's size.
template <typename State, typename Opaque, typename WithField>
cublasStatus_t set_attribute(Opaque* opaque, WithField with_field, const void* buf,
                             std::size_t size) {
  if (opaque == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto state = load_state<State>(opaque);
  const cublasStatus_t status = with_field([&](auto field) {
    if (buf == nullptr || size != sizeof(state.*field)) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(&(state.*field), buf, sizeof(state.*field));
    return CUBLAS_STATUS_SUCCESS;
  });
  if (status == CUBLAS_STATUS_SUCCESS) store_state(opaque, state);
  return status;
}

// Get, with cuBLASLt's query form: buf null and size 0 asks only for the size.
template <typename State, typename Opaque, typename WithField>
cublasStatus_t get_attribute(const Opaque* opaque, WithField with_field, void* buf,
                             std::size_t size, std::size_t* written) {
  if (opaque == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  const auto state = load_state<State>(opaque);
  return with_field([&](auto field) {
    if (written != nullptr) *written = sizeof(state.*field);
    if (buf == nullptr && size == 0 && written != nullptr) return CUBLAS_STATUS_SUCCESS;
    if (buf == nullptr || size < sizeof(state.*field)) return CUBLAS_STATUS_INVALID_VALUE;
    std::memcpy(buf, &(state.*field), sizeof(state.*field));
    return CUBLAS_STATUS_SUCCESS;
  });
}

// Applies `access` to the field that holds `attr`; NOT_SUPPORTED for others.
template <typename Access>
cublasStatus_t with_desc_field(cublasLtMatmulDescAttributes_t attr, const char* call,
                               Access access) {
  using S = MatmulDescState;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return access(&S::compute_type);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return access(&S::scale_type);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      return access(&S::pointer_mode);
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return access(&S::transa);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return access(&S::transb);
    case CUBLASLT_MATMUL_DESC_TRANSC:
      return access(&S::transc);
    case CUBLASLT_MATMUL_DESC_FILL_MODE:
      return access(&S::fill_mode);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return access(&S::epilogue);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return access(&S::bias);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      return access(&S::bias_batch_stride);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
      return access(&S::aux);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
      return access(&S::aux_ld);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE:
      return access(&S::aux_batch_stride);
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
      return access(&S::aux_type);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      return access(&S::bias_type);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM:  // a speed hint for fp8; the sum stays exact
      return access(&S::fast_accum);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
      return access(&S::a_scale);
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
      return access(&S::b_scale);
    case CUBLASLT_MATMUL_DESC_A_SCALE_MODE:
      return access(&S::a_scale_mode);
    case CUBLASLT_MATMUL_DESC_B_SCALE_MODE:
      return access(&S::b_scale_mode);
    default:
      return not_emulated(std::string(call) + " of attribute " +
                          std::to_string(static_cast<int>(attr)));
  }
}

template <typename Access>
cublasStatus_t with_layout_field(cublasLtMatrixLayoutAttribute_t attr, const char* call,
                                 Access access) {
  using S = LayoutState;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return access(&S::type);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      return access(&S::order);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return access(&S::rows);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return access(&S::cols);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return access(&S::ld);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return access(&S::batch_count);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return access(&S::batch_stride);
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET:
      return access(&S::plane_offset);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE:
      return access(&S::batch_mode);
  }
  return not_emulated(std::string(call) + " of attribute " +
                      std::to_string(static_cast<int>(attr)));
}

}  // namespace
}  // namespace rl::emu::cublas

using rl::emu::cublas::get_attribute;
using rl::emu::cublas::LayoutState;
using rl::emu::cublas::load_state;
using rl::emu::cublas::MatmulDescState;
using rl::emu::cublas::set_attribute;
using rl::emu::cublas::store_state;

extern "C" {

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc,
                                        cublasComputeType_t computeType, cudaDataType_t scaleType) {
  if (matmulDesc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *matmulDesc = new (std::nothrow) cublasLtMatmulDescOpaque_t{};
  if (*matmulDesc == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  MatmulDescState state;
  state.compute_type = computeType;
  state.scale_type = scaleType;
  store_state(*matmulDesc, state);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  delete matmulDesc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              std::size_t sizeInBytes) {
  const auto with_field = [&](auto access) {
    return rl::emu::cublas::with_desc_field(attr, "cublasLtMatmulDescSetAttribute", access);
  };
  return set_attribute<MatmulDescState>(matmulDesc, with_field, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              std::size_t sizeInBytes, std::size_t* sizeWritten) {
  const auto with_field = [&](auto access) {
    return rl::emu::cublas::with_desc_field(attr, "cublasLtMatmulDescGetAttribute", access);
  };
  return get_attribute<MatmulDescState>(matmulDesc, with_field, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout, cudaDataType type,
                                          std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
  if (matLayout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *matLayout = new (std::nothrow) cublasLtMatrixLayoutOpaque_t{};
  if (*matLayout == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  LayoutState state;
  state.type = static_cast<std::uint32_t>(type);
  state.rows = rows;
  state.cols = cols;
  state.ld = ld;
  store_state(*matLayout, state);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  delete matLayout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, std::size_t sizeInBytes) {
  const auto with_field = [&](auto access) {
    return rl::emu::cublas::with_layout_field(attr, "cublasLtMatrixLayoutSetAttribute", access);
  };
  return set_attribute<LayoutState>(matLayout, with_field, buf, sizeInBytes);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                std::size_t sizeInBytes, std::size_t* sizeWritten) {
  const auto with_field = [&](auto access) {
    return rl::emu::cublas::with_layout_field(attr, "cublasLtMatrixLayoutGetAttribute", access);
  };
  return get_attribute<LayoutState>(matLayout, with_field, buf, sizeInBytes, sizeWritten);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = new (std::nothrow) cublasLtMatmulPreferenceOpaque_t{};
  return *pref != nullptr ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, std::size_t sizeInBytes) {
  if (pref == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  std::size_t expected = sizeof(std::uint32_t);
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
    case CUBLASLT_MATMUL_PREF_IMPL_MASK:
      expected = sizeof(std::uint64_t);
      break;
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT:
      expected = sizeof(float);
      break;
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      break;
    default:
      return CUBLAS_STATUS_INVALID_VALUE;
  }
  return sizeInBytes == expected ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

}  // extern "C"
