// Shared by the emulated cuBLAS/cuBLASLt tests: integer-valued inputs, the
// float64 reference GEMM (column-major, as cuBLAS), device copies, handles.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "rl/device_buffer.hpp"

namespace rl::test::cublas {

// Integers in [-4, 4]: every product and partial sum the tests form is exact
// in double, in fp32 and, at these sizes, in fp16 and bf16 (|x| <= 256), so
// results compare exactly, whatever order a sum is taken in.
inline std::vector<double> integer_values(std::size_t count, std::uint64_t seed) {
  rl::SeededRng rng(seed);
  std::vector<double> values(count);
  for (auto& v : values) v = std::floor(rng.uniform(-4.0, 5.0));
  return values;
}

template <typename T>
std::vector<T> narrow(const std::vector<double>& values) {
  std::vector<T> out;
  out.reserve(values.size());
  for (const double v : values) out.push_back(static_cast<T>(v));
  return out;
}

template <typename T>
std::vector<double> widen(const std::vector<T>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (const T& v : values) out.push_back(static_cast<double>(static_cast<float>(v)));
  return out;
}

// op(X)(i, j) of a column-major X with leading dimension ld.
inline double op_at(const std::vector<double>& x, std::int64_t ld, bool transposed, std::int64_t i,
                    std::int64_t j) {
  const auto index = transposed ? j + i * ld : i + j * ld;
  return x[static_cast<std::size_t>(index)];
}

struct GemmShape {
  std::int64_t m, n, k;
  bool transa, transb;
  std::int64_t lda, ldb, ldc;
};

// C = alpha op(A) op(B) + beta C in double, rows past m left as they were; C
// is not read when beta == 0 (cuBLAS's rule).
inline std::vector<double> reference_gemm(const GemmShape& s, double alpha,
                                          const std::vector<double>& a,
                                          const std::vector<double>& b, double beta,
                                          std::vector<double> c) {
  for (std::int64_t j = 0; j < s.n; ++j) {
    for (std::int64_t i = 0; i < s.m; ++i) {
      double sum = 0.0;
      for (std::int64_t p = 0; p < s.k; ++p) {
        sum += op_at(a, s.lda, s.transa, i, p) * op_at(b, s.ldb, s.transb, p, j);
      }
      double& out = c[static_cast<std::size_t>(i + j * s.ldc)];
      out = beta == 0.0 ? alpha * sum : alpha * sum + beta * out;
    }
  }
  return c;
}

// Elements that differ (a NaN differs from everything).
inline std::size_t mismatches(const std::vector<double>& got, const std::vector<double>& want) {
  std::size_t count = got.size() == want.size() ? 0 : 1;
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (!(got[i] == want[i])) ++count;
  }
  return count;
}

template <typename T>
rl::DeviceBuffer<T> to_device(const std::vector<T>& host) {
  rl::DeviceBuffer<T> buffer(host.size());
  buffer.upload(host);
  return buffer;
}

struct Handle {
  cublasHandle_t handle = nullptr;
  Handle() { EXPECT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS); }
  ~Handle() { cublasDestroy(handle); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

struct LtHandle {
  cublasLtHandle_t handle = nullptr;
  LtHandle() { EXPECT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS); }
  ~LtHandle() { cublasLtDestroy(handle); }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
};

// A cuBLASLt matrix layout and matmul descriptor, destroyed with the test.
struct Layout {
  cublasLtMatrixLayout_t layout = nullptr;
  Layout(cudaDataType_t type, std::uint64_t rows, std::uint64_t cols, std::int64_t ld) {
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld), CUBLAS_STATUS_SUCCESS);
  }
  ~Layout() { cublasLtMatrixLayoutDestroy(layout); }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
  template <typename T>
  void set(cublasLtMatrixLayoutAttribute_t attr, const T& value) {
    EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(layout, attr, &value, sizeof value),
              CUBLAS_STATUS_SUCCESS);
  }
};

struct Desc {
  cublasLtMatmulDesc_t desc = nullptr;
  explicit Desc(cublasComputeType_t compute = CUBLAS_COMPUTE_32F) {
    EXPECT_EQ(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  }
  ~Desc() { cublasLtMatmulDescDestroy(desc); }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& value) {
    EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value),
              CUBLAS_STATUS_SUCCESS);
  }
};

}  // namespace rl::test::cublas
