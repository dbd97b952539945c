// Hand-computed expectations for the emulated 16- and 8-bit float types: the
// cases where a conversion is easy to get wrong (ties, carries, overflow,
// subnormals, NaN).  Independent of the CUDA toolkit; the exhaustive
// comparison with CUDA's own code is ptx_fp16_matches_cuda_headers.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "rl/emu/fp16.hpp"

namespace {

std::uint16_t half_bits(float f) {
  return __half_as_ushort(__float2half(f));
}
std::uint16_t bf16_bits(float f) {
  return __bfloat16_as_ushort(__float2bfloat16(f));
}
float from_bits(std::uint32_t u) {
  return std::bit_cast<float>(u);
}
std::uint32_t float_bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

TEST(Fp16Types, have_cuda_sizes_and_alignment) {
  EXPECT_EQ(sizeof(__half), 2U);
  EXPECT_EQ(alignof(__half2), 4U);
  EXPECT_EQ(sizeof(__nv_bfloat162), 4U);
  EXPECT_EQ(alignof(__nv_bfloat16), 2U);
  EXPECT_TRUE(std::is_trivially_copyable_v<__half2>);
#if defined(__SANITIZE_THREAD__)
  // Under racecheck the storage starts as zero (fp16.hpp says why: a static
  // __shared__ array would otherwise get a first-use guard every thread races
  // on); copying stays trivial.
  EXPECT_FALSE(std::is_trivially_default_constructible_v<__nv_bfloat16>);
  EXPECT_EQ(__half2float(__half{}), 0.0f);
#else
  EXPECT_TRUE(std::is_trivially_default_constructible_v<__nv_bfloat16>);
#endif
}

TEST(Fp16Conversion, float_to_half_ties_round_to_even) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even (1.0) wins.
  EXPECT_EQ(half_bits(1.0f + 0x1p-11f), 0x3C00);
  // 1 + 3*2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: rounds up.
  EXPECT_EQ(half_bits(1.0f + 3 * 0x1p-11f), 0x3C02);
  // Just above the tie goes up.
  EXPECT_EQ(half_bits(std::nextafter(1.0f + 0x1p-11f, 2.0f)), 0x3C01);
}

TEST(Fp16Conversion, float_to_half_overflows_to_infinity_at_the_rounding_boundary) {
  EXPECT_EQ(half_bits(65504.0f), 0x7BFF);    // largest finite
  EXPECT_EQ(half_bits(65519.996f), 0x7BFF);  // below the tie
  EXPECT_EQ(half_bits(65520.0f), 0x7C00);    // tie with odd 0x7BFF
  EXPECT_EQ(half_bits(-1e10f), 0xFC00);
  EXPECT_EQ(half_bits(std::numeric_limits<float>::infinity()), 0x7C00);
}

TEST(Fp16Conversion, float_to_half_keeps_subnormals_and_flushes_below_half_ulp) {
  EXPECT_EQ(half_bits(0x1p-24f), 0x0001);    // smallest subnormal
  EXPECT_EQ(half_bits(0x1p-25f), 0x0000);    // tie with 0: even
  EXPECT_EQ(half_bits(0x1.8p-24f), 0x0002);  // tie 1.5 ulp: to even 2
  EXPECT_EQ(half_bits(0x1.0p-25f * 1.01f), 0x0001);
  EXPECT_EQ(half_bits(-0x1p-15f), 0x8200);     // subnormal with sign
  EXPECT_EQ(half_bits(0x1.ff8p-15f), 0x03FF);  // largest subnormal
  EXPECT_EQ(half_bits(0x1.ffcp-15f), 0x0400);  // tie with odd 0x3FF: up into the normals
  EXPECT_EQ(half_bits(-0.0f), 0x8000);
}

TEST(Fp16Conversion, nan_becomes_canonical_in_both_directions) {
  EXPECT_EQ(half_bits(from_bits(0xFFC00001U)), 0x7FFF);
  EXPECT_EQ(bf16_bits(from_bits(0x7F800001U)), 0x7FFF);
  EXPECT_EQ(float_bits(__half2float(__ushort_as_half(0xFE01))), 0x7FFFFFFFU);
  // bf16 -> float is a plain shift, payload and sign kept (cuda_bf16.h).
  EXPECT_EQ(float_bits(__bfloat162float(__ushort_as_bfloat16(0xFFC1))), 0xFFC10000U);
}

TEST(Fp16Conversion, half_to_float_is_exact_for_subnormals_and_infinity) {
  EXPECT_EQ(__half2float(__ushort_as_half(0x0001)), 0x1p-24f);
  EXPECT_EQ(__half2float(__ushort_as_half(0x83FF)), -0x1.ff8p-15f);
  EXPECT_EQ(__half2float(__ushort_as_half(0x7BFF)), 65504.0f);
  EXPECT_EQ(__half2float(__ushort_as_half(0xFC00)), -std::numeric_limits<float>::infinity());
}

TEST(Fp16Conversion, float_to_bfloat16_ties_even_and_carries_into_exponent) {
  EXPECT_EQ(bf16_bits(from_bits(0x3F808000U)), 0x3F80);  // tie, even stays
  EXPECT_EQ(bf16_bits(from_bits(0x3F818000U)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(bf16_bits(from_bits(0x3F808001U)), 0x3F81);  // above tie
  EXPECT_EQ(bf16_bits(from_bits(0x3FFFFFFFU)), 0x4000);  // carry into the exponent
  EXPECT_EQ(bf16_bits(from_bits(0x7F7FFFFFU)), 0x7F80);  // FLT_MAX rounds to Inf
  EXPECT_EQ(bf16_bits(from_bits(0x00018000U)), 0x0002);  // subnormal tie, odd rounds up
  EXPECT_EQ(__float2bfloat16_rn(-1.0f).__x, 0xBF80);
}

TEST(Fp16Conversion, double_converts_with_a_single_rounding) {
  // 1 + 2^-11 + 2^-40 is just above a half tie: double -> float rounds it to
  // the tie (1 + 2^-11), from which float -> half would round down to 1.0.
  EXPECT_EQ(__half_as_ushort(__double2half(1.0 + 0x1p-11 + 0x1p-40)), 0x3C01);
  EXPECT_EQ(__bfloat16_as_ushort(__double2bfloat16(1.0 + 0x1p-8 + 0x1p-40)), 0x3F81);
  EXPECT_EQ(__half_as_ushort(__half(1e300)), 0x7C00);
}

TEST(Fp16Vectors, pairs_keep_low_and_high_halves_in_order) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(1.5f, -2.0f);
  EXPECT_EQ(__low2float(pair), 1.5f);
  EXPECT_EQ(__high2float(pair), -2.0f);
  std::uint32_t raw = 0;
  std::memcpy(&raw, &pair, sizeof raw);
  EXPECT_EQ(raw, 0xC0003FC0U);  // low element in bits 15:0, as PTX packs it
  struct {
    float x, y;
  } f2{0.25f, 3.0f};
  const __nv_bfloat162 converted = __float22bfloat162_rn(f2);
  EXPECT_EQ(__low2float(converted), 0.25f);
  EXPECT_EQ(__high2float(converted), 3.0f);
  const __half2 h = __halves2half2(__float2half(1.0f), __float2half(-1.0f));
  EXPECT_EQ(__low2float(__hmul2(h, h)), 1.0f);
  EXPECT_EQ(__high2float(__hadd2(h, h)), -2.0f);
}

TEST(Fp16Arithmetic, operators_round_to_sixteen_bits) {
  const __half one = 1.0f;
  const __half tiny = 0x1p-11f;                     // half an ulp of 1.0
  EXPECT_EQ(__half_as_ushort(one + tiny), 0x3C00);  // tie: even
  EXPECT_EQ(__half_as_ushort(__hfma(__half(3.0f), __half(0.5f), __half(0.25f))), half_bits(1.75f));
  __nv_bfloat16 acc = 1.0f;
  acc += __nv_bfloat16(0x1p-9f);  // below half an ulp (2^-8): lost
  EXPECT_EQ(__bfloat16_as_ushort(acc), 0x3F80);
  EXPECT_TRUE(__half(2.0f) > __half(1.0f));
  EXPECT_FALSE(__half(from_bits(0x7FC00000U)) == __half(from_bits(0x7FC00000U)));
  EXPECT_TRUE(__half(from_bits(0x7FC00000U)) != __half(1.0f));
  EXPECT_EQ(static_cast<float>(-__nv_bfloat16(2.0f)), -2.0f);
  // fma rounds once: 3 * 87 = 261 is a bf16 tie (9 significant bits) and the
  // tiny addend, lost if the sum were first rounded to float, must break it.
  EXPECT_EQ(__bfloat16_as_ushort(
                __hfma(__nv_bfloat16(3.0f), __nv_bfloat16(87.0f), __nv_bfloat16(0x1p-20f))),
            0x4383);  // 262
  EXPECT_EQ(
      __bfloat16_as_ushort(__hfma(__nv_bfloat16(3.0f), __nv_bfloat16(87.0f), __nv_bfloat16(0.0f))),
      0x4382);  // 260: the tie itself goes to even
}

TEST(Fp16Arithmetic, max_and_min_prefer_numbers_and_positive_zero) {
  const __half nan = __ushort_as_half(0x7E00);
  EXPECT_EQ(static_cast<float>(__hmax(nan, __half(3.0f))), 3.0f);
  EXPECT_EQ(static_cast<float>(__hmin(__half(-3.0f), nan)), -3.0f);
  EXPECT_EQ(__half_as_ushort(__hmax(nan, nan)), 0x7FFF);
  EXPECT_EQ(__half_as_ushort(__hmax(__half(-0.0f), __half(0.0f))), 0x0000);
  EXPECT_EQ(__half_as_ushort(__hmin(__half(0.0f), __half(-0.0f))), 0x8000);
  EXPECT_EQ(__bfloat16_as_ushort(__hmax(__nv_bfloat16(1.0f), __nv_bfloat16(2.0f))), 0x4000);
}

TEST(Fp8Conversion, e4m3_saturates_to_448_and_has_no_infinity) {
  EXPECT_EQ(__nv_fp8_e4m3(448.0f).__x, 0x7E);
  EXPECT_EQ(__nv_fp8_e4m3(1e6f).__x, 0x7E);
  EXPECT_EQ(__nv_fp8_e4m3(-std::numeric_limits<float>::infinity()).__x, 0xFE);
  EXPECT_EQ(__nv_fp8_e4m3(std::numeric_limits<float>::quiet_NaN()).__x, 0x7F);
  EXPECT_EQ(static_cast<float>(__nv_fp8_e4m3(1.0f)), 1.0f);
  EXPECT_EQ(__nv_fp8_e4m3(1.0f).__x, 0x38);
  EXPECT_EQ(__nv_fp8_e4m3(1.0625f).__x, 0x38);   // tie between 1 and 1.125: even
  EXPECT_EQ(__nv_fp8_e4m3(1.1875f).__x, 0x3A);   // tie between 1.125 and 1.25: even
  EXPECT_EQ(__nv_fp8_e4m3(0x1p-9f).__x, 0x01);   // smallest subnormal
  EXPECT_EQ(__nv_fp8_e4m3(0x1p-10f).__x, 0x00);  // half of it ties to zero
  __nv_fp8_e4m3 nan;
  nan.__x = 0xFF;
  EXPECT_TRUE(std::isnan(static_cast<float>(nan)));
  nan.__x = 0x7E;
  EXPECT_EQ(static_cast<float>(nan), 448.0f);
}

TEST(Fp8Conversion, e5m2_saturates_to_57344_and_decodes_infinity) {
  EXPECT_EQ(__nv_fp8_e5m2(57344.0f).__x, 0x7B);
  EXPECT_EQ(__nv_fp8_e5m2(std::numeric_limits<float>::infinity()).__x, 0x7B);
  EXPECT_EQ(__nv_fp8_e5m2(-0x1p-16f).__x, 0x81);
  __nv_fp8_e5m2 inf;
  inf.__x = 0x7C;
  EXPECT_EQ(static_cast<float>(inf), std::numeric_limits<float>::infinity());
  EXPECT_EQ(static_cast<float>(__nv_fp8_e5m2(1.5f)), 1.5f);
}

}  // namespace
