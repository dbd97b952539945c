// The reference GEMM behind every emulated cuBLAS and cuBLASLt call.
//
// Precision: the operands are widened exactly to double, the K products are
// summed in double, alpha, beta*C, the bias and the activation are applied in
// double, and the result is rounded once (to nearest even) to D's type.  cuBLAS
// promises at least the compute type's precision (fp16 for
// CUBLAS_COMPUTE_16F, fp32 for _32F, fp64 for _64F), and leaves the order of
// the sum open, so a GPU's result may differ in the last bits: compare with
// tolerances, or with integer-valued inputs, which make every step exact here
// and on a GPU.  The fast compute types (CUBLAS_COMPUTE_32F_FAST_TF32 and
// _FAST_16F/_16BF, CUBLAS_TF32_TENSOR_OP_MATH) allow cuBLAS to round the
// inputs to tf32/fp16/bf16 first; they do not require it, and the reference
// does not: it keeps the inputs exact, which is within what those modes
// promise (a GPU's tf32 result may differ from it by tf32's rounding).
//
// Device memory is host memory under the emulator (cuda_memory.cpp), and
// streams run their work before the call returns, so the GEMM simply runs
// here, on the calling thread.
//
// Block scales (cuBLASLt's VEC32_UE8M0, MXFP8, and VEC16_UE4M3, NVFP4): each
// e4m3 or e2m1 element is multiplied by its block's scale as it is widened,
// exactly (a product of two narrow formats fits in a double), so the sum is
// the one above over the scaled operands.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

#include "cublas_internal.hpp"
#include "rl/emu/fp8.hpp"
#include "rl/emu/narrow_float.hpp"

namespace rl::emu::cublas {
namespace {

std::size_t element_bytes(cudaDataType_t type) {
  switch (type) {
    case CUDA_R_64F:
      return 8;
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_8F_E4M3:
      return 1;
    default:
      return 4;
  }
}

// One rounding from double: the __half and __nv_bfloat16 constructors from
// double round correctly (round-to-odd to float first, fp16_rounding.hpp).
void store(void* base, cudaDataType_t type, std::int64_t index, double value) {
  auto* bytes =
      static_cast<unsigned char*>(base) + index * static_cast<std::int64_t>(element_bytes(type));
  switch (type) {
    case CUDA_R_64F:
      std::memcpy(bytes, &value, sizeof value);
      return;
    case CUDA_R_16F: {
      const __half h(value);
      std::memcpy(bytes, &h, sizeof h);
      return;
    }
    case CUDA_R_16BF: {
      const __nv_bfloat16 b(value);
      std::memcpy(bytes, &b, sizeof b);
      return;
    }
    default: {
      const auto f = static_cast<float>(value);
      std::memcpy(bytes, &f, sizeof f);
      return;
    }
  }
}

// cuBLASLt's block scale tensors (the cuBLAS documentation, "1D Block Scaling
// Factors Layout"): the scales of `outer` rows (op(A)'s rows, op(B)'s
// columns) by ceil(depth / B) k-blocks (B = 32: ue8m0, B = 16: ue4m3),
// padded to tiles of 128 rows x 4 blocks, 512 bytes each, tiles row-major
// (all of a row of tiles' k-blocks first); inside a tile, row r's block j at
// (r % 32) * 16 + (r % 128) / 32 * 4 + j % 4.  The value of the scale of
// element (r, p); ue8m0's 0xFF and ue4m3's 0x7F are NaN, ue4m3's bit 7 is
// padding.
double block_scale(const std::uint8_t* scales, int scale_block, std::int64_t r, std::int64_t p,
                   std::int64_t depth) {
  const std::int64_t block = p / scale_block,
                     tiles_k = (depth + 4 * scale_block - 1) / (4 * scale_block);
  const std::int64_t offset =
      (r / 128 * tiles_k + block / 4) * 512 + r % 32 * 16 + r % 128 / 32 * 4 + block % 4;
  const std::uint8_t byte = scales[offset];
  return scale_block == 32 ? narrow::to_double(narrow::Format::ue8m0, byte)
                           : narrow::to_double(narrow::Format::ue4m3, byte & 0x7FU);
}

// op(X) of one batch as `rows` contiguous vectors of length `depth`:
// packed[r * depth + p] = op(X)(r, p) when the reduction runs along op(X)'s
// columns (A), or op(X)(p, r) when it runs along its rows (B).
std::vector<double> pack(const Operand& x, std::int64_t batch, std::int64_t rows,
                         std::int64_t depth, bool reduce_along_columns) {
  std::vector<double> packed(static_cast<std::size_t>(rows * depth));
  const std::int64_t offset = batch * x.batch_stride;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t p = 0; p < depth; ++p) {
      // (row, col) of op(X), then of X as stored.
      std::int64_t row = reduce_along_columns ? r : p;
      std::int64_t col = reduce_along_columns ? p : r;
      if (x.transposed) std::swap(row, col);
      double value = load_element(x.data, x.type, offset + row + col * x.ld);
      if (x.block_scales != nullptr)
        value *= block_scale(x.block_scales, x.scale_block, r, p, depth);
      packed[static_cast<std::size_t>(r * depth + p)] = value;
    }
  }
  return packed;
}

// GELU as the tanh approximation.  cublasLt.h does not name the form its
// GELU epilogues compute; this is the one llm.c's GELU kernels compute (its
// matmul_forward3 swaps them for the epilogue).  The erf form differs from it
// by at most 4.7e-4 (near x = -2.7), so a GPU using that form differs by as much.
double gelu_tanh(double x) {
  const double s = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

double activate(Activation activation, double x) {
  switch (activation) {
    case Activation::relu:
      return x > 0.0 ? x : 0.0;
    case Activation::gelu_tanh:
      return gelu_tanh(x);
    case Activation::none:
      break;
  }
  return x;
}

// Sum of a[p] * b[p]: four partial sums, so the loop is not one chain of
// dependent adds (the order is fixed, so the result is deterministic).
double dot(const double* a, const double* b, std::int64_t depth) {
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  std::int64_t p = 0;
  for (; p + 4 <= depth; p += 4) {
    s0 += a[p] * b[p];
    s1 += a[p + 1] * b[p + 1];
    s2 += a[p + 2] * b[p + 2];
    s3 += a[p + 3] * b[p + 3];
  }
  for (; p < depth; ++p) s0 += a[p] * b[p];
  return (s0 + s1) + (s2 + s3);
}

void one_batch(const GemmProblem& g, std::int64_t batch) {
  const bool products = g.alpha != 0.0 && g.k > 0;
  std::vector<double> a_rows, b_cols;
  if (products) {
    a_rows = pack(g.a, batch, g.m, g.k, true);
    b_cols = pack(g.b, batch, g.n, g.k, false);
  }
  const Epilogue& e = g.epilogue;
  for (std::int64_t j = 0; j < g.n; ++j) {
    for (std::int64_t i = 0; i < g.m; ++i) {
      double value = 0.0;
      if (products) {
        const auto* a = a_rows.data() + i * g.k;
        const auto* b = b_cols.data() + j * g.k;
        value = g.alpha * dot(a, b, g.k);
      }
      if (g.beta != 0.0) {
        value +=
            g.beta * load_element(g.c.data, g.c.type, batch * g.c.batch_stride + i + j * g.c.ld);
      }
      if (e.bias != nullptr)
        value += load_element(e.bias, e.bias_type, batch * e.bias_batch_stride + i);
      if (e.aux.data != nullptr) {
        store(e.aux.data, e.aux.type, batch * e.aux.batch_stride + i + j * e.aux.ld, value);
      }
      store(g.d.data, g.d.type, batch * g.d.batch_stride + i + j * g.d.ld,
            activate(e.activation, value));
    }
  }
}

}  // namespace

double load_element(const void* base, cudaDataType_t type, std::int64_t index) {
  if (type == CUDA_R_4F_E2M1) {  // two a byte, element 2i in the low nibble
    const auto byte = static_cast<const unsigned char*>(base)[index / 2];
    return narrow::to_double(narrow::Format::e2m1, index % 2 == 0 ? byte & 0xFU : byte >> 4);
  }
  const auto* bytes = static_cast<const unsigned char*>(base) +
                      index * static_cast<std::int64_t>(element_bytes(type));
  switch (type) {
    case CUDA_R_64F: {
      double d;
      std::memcpy(&d, bytes, sizeof d);
      return d;
    }
    case CUDA_R_16F: {
      __half h;
      std::memcpy(&h, bytes, sizeof h);
      return static_cast<double>(static_cast<float>(h));
    }
    case CUDA_R_16BF: {
      __nv_bfloat16 b;
      std::memcpy(&b, bytes, sizeof b);
      return static_cast<double>(static_cast<float>(b));
    }
    case CUDA_R_8F_E4M3: {
      __nv_fp8_e4m3 e;
      std::memcpy(&e, bytes, sizeof e);
      return static_cast<double>(static_cast<float>(e));
    }
    default: {
      float f;
      std::memcpy(&f, bytes, sizeof f);
      return static_cast<double>(f);
    }
  }
}

void reference_gemm(const GemmProblem& problem) {
  for (std::int64_t batch = 0; batch < problem.batch_count; ++batch) one_batch(problem, batch);
}

}  // namespace rl::emu::cublas
