// GEMM tensor-core rungs (wmma; mma.sync fed by ldmatrix from a swizzled
// multistage cp.async pipeline) in tf32, fp16, bf16 and fp8: the storage
// types, the per-precision error model and record plumbing of the family
// header.  Built twice: label emu (emulator) and label gpu (CUDA device).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu_kernel_test.hpp"
#include "gemm/gemm_common.hpp"

namespace {

using rl::gemm::Dims;

// ------------------------------------------------------------ storage types

// Each storage type rounds to nearest even and reads back exactly what it
// stored; e4m3 saturates at 448.
TEST(GemmStorageTypes, RoundToNearestAndReadBackExactly) {
  using rl::gemm::input_from_f32;
  using rl::gemm::input_to_f32;
  EXPECT_EQ(input_to_f32(input_from_f32<float>(1.1f)), 1.1f);
  EXPECT_EQ(input_to_f32(input_from_f32<__half>(1.0f + 0x1p-11f)), 1.0f);  // tie to even
  EXPECT_EQ(input_to_f32(input_from_f32<__half>(1.0f + 0x1p-10f)), 1.0f + 0x1p-10f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_bfloat16>(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_bfloat16>(1.0f + 0x1p-7f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(1.0f + 0x1p-4f)), 1.0f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(1.0f + 0x1p-3f)), 1.0f + 0x1p-3f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(1000.0f)), 448.0f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(-0.3f)), -0.3125f);
}

// The reference of stored fp8 inputs is the exact dot product of the stored
// values: 1.125 * 3 + (-0.3125) * 5 (both operands exact in e4m3).
TEST(GemmStorageTypes, ReferenceReadsTheStoredValues) {
  const std::vector<__nv_fp8_e4m3> a = {__nv_fp8_e4m3(1.125f), __nv_fp8_e4m3(-0.3f)};
  const std::vector<__nv_fp8_e4m3> b = {__nv_fp8_e4m3(3.0f), __nv_fp8_e4m3(5.0f)};
  const rl::gemm::Reference ref =
      rl::gemm::reference<__nv_fp8_e4m3>(a, b, {1, 1, 2}, rl::gemm::kTensorCoreError, false, 1);
  ASSERT_EQ(ref.value.size(), 1u);
  EXPECT_EQ(ref.value[0], 1.125 * 3 - 0.3125 * 5);
  EXPECT_DOUBLE_EQ(ref.bound[0], (1.125 * 3 + 0.3125 * 5) *
                                     rl::gemm::error_bound_factor(2, rl::gemm::kTensorCoreError));
}

// ------------------------------------------------------------ error model

TEST(GemmTensorCoreErrorModel, CountsKTruncatingRoundingsAndTf32InputRounding) {
  for (const std::int64_t K : {1, 64, 4096, 8192}) {
    const double ku = static_cast<double>(K) * 0x1p-22;
    EXPECT_NEAR(rl::gemm::error_bound_factor(K, rl::gemm::kTensorCoreError), ku / (1 - ku),
                1e-9 * ku);
    EXPECT_GT(rl::gemm::error_bound_factor(K, rl::gemm::kTensorCoreError),
              2 * rl::gemm::error_bound_factor(K, rl::gemm::kFp32SimtError) * (1 - 1e-6));
  }
  const double tf32 = rl::gemm::error_bound_factor(1, rl::gemm::kTensorCoreTf32Error);
  EXPECT_NEAR(tf32, (1 + 0x1p-11) * (1 + 0x1p-11) * (1 + 0x1p-22 / (1 - 0x1p-22)) - 1, 1e-15);
  // Beyond K u = 1 nothing is guaranteed.
  EXPECT_TRUE(
      std::isinf(rl::gemm::error_bound_factor(std::int64_t{1} << 22, rl::gemm::kTensorCoreError)));
}

TEST(GemmCostModel, DeviceBytesCountInputsAtStorageSize) {
  const Dims d{100, 200, 300};
  EXPECT_EQ(rl::gemm::device_bytes(d, 2), (100u * 300 + 300 * 200) * 2 + 100u * 200 * 4);
  EXPECT_EQ(rl::gemm::device_bytes(d, 1), (100u * 300 + 300 * 200) * 1 + 100u * 200 * 4);
}

}  // namespace
