// The emulated cuBLASLt's block-scaled matmuls: MXFP8 (e4m3 A and B,
// CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 on both), called as
// gemm_cublaslt_mxfp8 (kernels/gemm/cuda_only/gemm_cublas.cpp) calls it:
// "TN", fp32 or bf16 D; and NVFP4 (e2m1 A and B two a byte, VEC16_UE4M3).
// Checked exactly against a float64 reference that reads the scales through
// the layout the cuBLAS documentation gives ("1D Block Scaling Factors
// Layout"), with every scale byte outside the matrix a NaN, so a scale read
// from the wrong place shows; and the refusals around it.
#include <cmath>
#include <cstdint>
#include <vector>

#include "cublas_test_support.hpp"
#include "rl/emu/narrow_float.hpp"

namespace {

using namespace rl::test::cublas;

// The documented layout: tiles of 128 rows x 4 k-blocks (of `block`
// elements), 512 bytes, row-major over (row / 128, k-block / 4); inside,
// (row % 32) * 16 + (row % 128) / 32 * 4 + k-block % 4.
std::size_t scale_index(std::int64_t row, std::int64_t j, std::int64_t k, std::int64_t block) {
  const std::int64_t tiles_k = (k / block + 3) / 4;
  return static_cast<std::size_t>((row / 128 * tiles_k + j / 4) * 512 + row % 32 * 16 +
                                  row % 128 / 32 * 4 + j % 4);
}

// rows x k/block exponents placed in the layout as ue8m0 (block 32) or ue4m3
// (block 16) powers of two, every other byte the format's NaN.
std::vector<std::uint8_t> scale_tensor(const std::vector<int>& exponents, std::int64_t rows,
                                       std::int64_t k, std::int64_t block = 32) {
  namespace nf = rl::emu::narrow;
  const nf::Format format = block == 32 ? nf::Format::ue8m0 : nf::Format::ue4m3;
  const std::int64_t tiles = (rows + 127) / 128 * ((k / block + 3) / 4);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(tiles * 512), block == 32 ? 0xFF : 0x7F);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < k / block; ++j) {
      const int e = exponents[static_cast<std::size_t>(r * (k / block) + j)];
      out[scale_index(r, j, k, block)] = static_cast<std::uint8_t>(
          block == 32 ? 127 + e : nf::from_float_satfinite(format, std::ldexp(1.0f, e)));
    }
  return out;
}

std::vector<int> exponents(std::size_t count, std::uint64_t seed) {
  rl::SeededRng rng(seed);
  std::vector<int> out(count);
  for (int& e : out) e = static_cast<int>(rng.next_u64() % 5) - 2;
  return out;
}

// D (m x n, column-major) = Aᵀ B with A stored k x m and B k x n, both
// k-contiguous ("TN"), M past one 128-row tile, K past one 4-block tile.
struct Mxfp8Case {
  std::int64_t m = 130, n = 70, k = 160;
  std::vector<double> a = integer_values(static_cast<std::size_t>(k * m), 60);
  std::vector<double> b = integer_values(static_cast<std::size_t>(k * n), 61);
  std::vector<int> a_exp = exponents(static_cast<std::size_t>(m * (k / 32)), 62);
  std::vector<int> b_exp = exponents(static_cast<std::size_t>(n * (k / 32)), 63);

  double expected(std::int64_t i, std::int64_t j) const {
    double sum = 0.0;
    for (std::int64_t p = 0; p < k; ++p)
      sum += std::ldexp(a[static_cast<std::size_t>(p + i * k)],
                        a_exp[static_cast<std::size_t>(i * (k / 32) + p / 32)]) *
             std::ldexp(b[static_cast<std::size_t>(p + j * k)],
                        b_exp[static_cast<std::size_t>(j * (k / 32) + p / 32)]);
    return sum;
  }
  // Every element of D, column-major, each passed through `round`.
  template <typename Round>
  std::vector<double> expected_d(Round round) const {
    std::vector<double> out(static_cast<std::size_t>(m * n));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        out[static_cast<std::size_t>(i + j * m)] = round(expected(i, j));
    return out;
  }
};

struct Mxfp8Call {
  LtHandle lt;
  Desc desc;
  rl::DeviceBuffer<__nv_fp8_e4m3> a, b;
  rl::DeviceBuffer<std::uint8_t> a_scale, b_scale;
  explicit Mxfp8Call(const Mxfp8Case& c)
      : a(to_device(narrow<__nv_fp8_e4m3>(c.a))),
        b(to_device(narrow<__nv_fp8_e4m3>(c.b))),
        a_scale(to_device(scale_tensor(c.a_exp, c.m, c.k))),
        b_scale(to_device(scale_tensor(c.b_exp, c.n, c.k))) {
    desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
    desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
    const std::int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
    desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
    desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(a_scale.get()));
    desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(b_scale.get()));
  }
  cublasStatus_t run(const Mxfp8Case& c, cudaDataType_t d_type, void* d) {
    Layout la(CUDA_R_8F_E4M3, c.k, c.m, c.k), lb(CUDA_R_8F_E4M3, c.k, c.n, c.k),
        ld(d_type, c.m, c.n, c.m);
    const float alpha = 1.0F, beta = 0.0F;
    return cublasLtMatmul(lt.handle, desc.desc, &alpha, a.get(), la.layout, b.get(), lb.layout,
                          &beta, d, ld.layout, d, ld.layout, nullptr, nullptr, 0, nullptr);
  }
};

TEST(EmuCublasLtBlockScaled, mxfp8_tn_applies_each_32_block_scale_from_the_documented_layout) {
  const Mxfp8Case c;
  Mxfp8Call call(c);
  rl::DeviceBuffer<float> d(static_cast<std::size_t>(c.m * c.n));
  ASSERT_EQ(call.run(c, CUDA_R_32F, d.get()), CUBLAS_STATUS_SUCCESS);
  std::vector<double> want = c.expected_d([](double x) { return x; });
  EXPECT_EQ(mismatches(widen(d.download()), want), 0U);

  // The negative case: the same reference with one block's scale one
  // exponent off (A's row 129, the second row tile, k-block 4, the second
  // k tile) differs from what was computed.
  Mxfp8Case off = c;
  off.a_exp[129 * (c.k / 32) + 4] += 1;
  for (std::int64_t j = 0; j < c.n; ++j)
    want[static_cast<std::size_t>(129 + j * c.m)] = off.expected(129, j);
  EXPECT_GT(mismatches(widen(d.download()), want), 0U);
}

TEST(EmuCublasLtBlockScaled, mxfp8_bf16_output_is_rounded_once) {
  const Mxfp8Case c;
  Mxfp8Call call(c);
  rl::DeviceBuffer<__nv_bfloat16> d(static_cast<std::size_t>(c.m * c.n));
  ASSERT_EQ(call.run(c, CUDA_R_16BF, d.get()), CUBLAS_STATUS_SUCCESS);
  const std::vector<double> want = c.expected_d(
      [](double x) { return static_cast<double>(static_cast<float>(__nv_bfloat16(x))); });
  EXPECT_EQ(mismatches(widen(d.download()), want), 0U);
}

TEST(EmuCublasLtBlockScaled, refuses_what_it_does_not_emulate_and_needs_both_scale_pointers) {
  Mxfp8Case c;
  rl::DeviceBuffer<float> d(static_cast<std::size_t>(c.m * c.n));
  {  // VEC16_UE4M3 (NVFP4's mode) on e4m3: not emulated
    Mxfp8Call call(c);
    call.desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                  std::int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3});
    EXPECT_EQ(call.run(c, CUDA_R_32F, d.get()), CUBLAS_STATUS_NOT_SUPPORTED);
  }
  {  // "NN": not emulated
    Mxfp8Call call(c);
    call.desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
    Layout la(CUDA_R_8F_E4M3, c.m, c.k, c.m), lb(CUDA_R_8F_E4M3, c.k, c.n, c.k),
        ld(CUDA_R_32F, c.m, c.n, c.m);
    const float alpha = 1.0F, beta = 0.0F;
    EXPECT_EQ(cublasLtMatmul(call.lt.handle, call.desc.desc, &alpha, call.a.get(), la.layout,
                             call.b.get(), lb.layout, &beta, d.get(), ld.layout, d.get(), ld.layout,
                             nullptr, nullptr, 0, nullptr),
              CUBLAS_STATUS_NOT_SUPPORTED);
  }
  {  // a missing scale pointer: an invalid value
    Mxfp8Call call(c);
    call.desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(nullptr));
    EXPECT_EQ(call.run(c, CUDA_R_32F, d.get()), CUBLAS_STATUS_INVALID_VALUE);
  }
  {  // e4m3 without block scales: still not emulated (plain fp8)
    Mxfp8Call call(c);
    const std::int32_t scalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    call.desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, scalar);
    call.desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, scalar);
    call.desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(nullptr));
    call.desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(nullptr));
    EXPECT_EQ(call.run(c, CUDA_R_32F, d.get()), CUBLAS_STATUS_NOT_SUPPORTED);
  }
  {  // K not whole 32-element blocks: not emulated
    c.k = 40;
    c.a.resize(static_cast<std::size_t>(c.k * c.m), 1.0);
    c.b.resize(static_cast<std::size_t>(c.k * c.n), 1.0);
    Mxfp8Call call(c);
    EXPECT_EQ(call.run(c, CUDA_R_32F, d.get()), CUBLAS_STATUS_NOT_SUPPORTED);
  }
}

TEST(EmuCublasLtBlockScaled, scale_modes_and_pointers_read_back_as_set) {
  Desc desc;
  const std::int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
  desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
  std::int32_t got = -1;
  std::size_t written = 0;
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &got,
                                           sizeof got, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, mode);
  EXPECT_EQ(written, sizeof(std::int32_t));
  EXPECT_EQ(cublasLtMatmulDescGetAttribute(desc.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, nullptr,
                                           0, &written),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(written, sizeof(void*));
}

// NVFP4: e2m1 A and B, two a byte (element 2i in the low nibble), one ue4m3
// scale per 16 elements; K = 96 is 6 blocks, two tiles along K.  Every
// integer in -4..4 is an e2m1 value.  (The nibble order cannot show here: A
// and B packed alike, swapping the two elements of every byte permutes both
// within a block and leaves each dot product as it was.)
TEST(EmuCublasLtBlockScaled, nvfp4_tn_applies_each_16_block_ue4m3_scale) {
  namespace nf = rl::emu::narrow;
  const std::int64_t m = 130, n = 40, k = 96, blocks = k / 16;
  const std::vector<double> a = integer_values(static_cast<std::size_t>(k * m), 70);
  const std::vector<double> b = integer_values(static_cast<std::size_t>(k * n), 71);
  const std::vector<int> a_exp = exponents(static_cast<std::size_t>(m * blocks), 72);
  const std::vector<int> b_exp = exponents(static_cast<std::size_t>(n * blocks), 73);
  auto packed = [](const std::vector<double>& v) {
    std::vector<std::uint8_t> out((v.size() + 1) / 2, 0);
    for (std::size_t i = 0; i < v.size(); ++i)
      out[i / 2] |= static_cast<std::uint8_t>(
          nf::from_float_satfinite(nf::Format::e2m1, static_cast<float>(v[i])) << (4 * (i % 2)));
    return out;
  };
  auto d_a = to_device(packed(a));
  auto d_b = to_device(packed(b));
  auto a_scale = to_device(scale_tensor(a_exp, m, k, 16));
  auto b_scale = to_device(scale_tensor(b_exp, n, k, 16));
  rl::DeviceBuffer<float> d(static_cast<std::size_t>(m * n));
  LtHandle lt;
  Desc desc;
  desc.set(CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  desc.set(CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  const std::int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
  desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
  desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(a_scale.get()));
  desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(b_scale.get()));
  Layout la(CUDA_R_4F_E2M1, k, m, k), lb(CUDA_R_4F_E2M1, k, n, k), ld(CUDA_R_32F, m, n, m);
  const float alpha = 1.0F, beta = 0.0F;
  ASSERT_EQ(
      cublasLtMatmul(lt.handle, desc.desc, &alpha, d_a.get(), la.layout, d_b.get(), lb.layout,
                     &beta, d.get(), ld.layout, d.get(), ld.layout, nullptr, nullptr, 0, nullptr),
      CUBLAS_STATUS_SUCCESS);
  std::vector<double> want(static_cast<std::size_t>(m * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double sum = 0.0;
      for (std::int64_t p = 0; p < k; ++p)
        sum += std::ldexp(a[static_cast<std::size_t>(p + i * k)],
                          a_exp[static_cast<std::size_t>(i * blocks + p / 16)]) *
               std::ldexp(b[static_cast<std::size_t>(p + j * k)],
                          b_exp[static_cast<std::size_t>(j * blocks + p / 16)]);
      want[static_cast<std::size_t>(i + j * m)] = sum;
    }
  EXPECT_EQ(mismatches(widen(d.download()), want), 0U);
  // NVFP4's mode on e4m3 operands (or MXFP8's on e2m1) is refused.
  desc.set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
           std::int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0});
  desc.set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
           std::int32_t{CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0});
  EXPECT_EQ(
      cublasLtMatmul(lt.handle, desc.desc, &alpha, d_a.get(), la.layout, d_b.get(), lb.layout,
                     &beta, d.get(), ld.layout, d.get(), ld.layout, nullptr, nullptr, 0, nullptr),
      CUBLAS_STATUS_NOT_SUPPORTED);
}

}  // namespace
