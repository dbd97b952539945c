// Math and bit intrinsics: exact ones bit for bit against hand-computed
// values, approximate ones within the tolerance documented in rl/emu/math.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "rl/cuda.hpp"

TEST(EmuMath, BitIntrinsicsMatchHandComputedValues) {
  EXPECT_EQ(__popc(0xF0F0000Fu), 12);
  EXPECT_EQ(__popcll(0xFFFFFFFFFFFFFFFFull), 64);
  EXPECT_EQ(__clz(0), 32);
  EXPECT_EQ(__clz(1), 31);
  EXPECT_EQ(__clz(-1), 0);
  EXPECT_EQ(__clzll(1), 63);
  EXPECT_EQ(__ffs(0), 0);
  EXPECT_EQ(__ffs(0x50), 5);
  EXPECT_EQ(__ffsll(1ll << 40), 41);
  EXPECT_EQ(__brev(0x00000001u), 0x80000000u);
  EXPECT_EQ(__brev(0x12345678u), 0x1E6A2C48u);
  EXPECT_EQ(__byte_perm(0x33221100u, 0x77665544u, 0x5410u), 0x55441100u);
  EXPECT_EQ(__byte_perm(0x33221100u, 0x77665544u, 0x0123u), 0x00112233u);
  EXPECT_EQ(__funnelshift_l(0x80000000u, 0x00000001u, 1), 0x00000003u);
  EXPECT_EQ(__funnelshift_r(0x00000001u, 0x00000003u, 1), 0x80000000u);
  EXPECT_EQ(__funnelshift_l(0u, 1u, 33), 2u);  // shift taken mod 32
  EXPECT_EQ(__umulhi(0xFFFFFFFFu, 0xFFFFFFFFu), 0xFFFFFFFEu);
  EXPECT_EQ(__mulhi(-2, 0x40000000), -1);
  EXPECT_EQ(__umul64hi(0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull), 0xFFFFFFFFFFFFFFFEull);
  EXPECT_EQ(__umul64hi(1ull << 40, 1ull << 40), 1ull << 16);
  EXPECT_EQ(__float_as_uint(1.0f), 0x3F800000u);
  EXPECT_EQ(__int_as_float(0x40490FDB), 3.14159274f);
  EXPECT_EQ(__double_as_longlong(-2.0), static_cast<long long>(0xC000000000000000ull));
}

TEST(EmuMath, CorrectlyRoundedIntrinsicsAreExact) {
  const float a = 1.0f + 0x1p-23f, b = 1.0f - 0x1p-24f;
  EXPECT_EQ(__fmaf_rn(a, b, -1.0f), std::fma(a, b, -1.0f));
  EXPECT_NE(__fmaf_rn(a, b, -1.0f), __fadd_rn(__fmul_rn(a, b), -1.0f));  // one rounding, not two
  EXPECT_EQ(__frcp_rn(3.0f), 1.0f / 3.0f);
  EXPECT_EQ(__fdiv_rn(1.0f, 3.0f), 1.0f / 3.0f);
  EXPECT_EQ(__fsqrt_rn(2.0f), std::sqrt(2.0f));
  EXPECT_EQ(__saturatef(-0.5f), 0.0f);
  EXPECT_EQ(__saturatef(1.5f), 1.0f);
  EXPECT_EQ(__saturatef(0.25f), 0.25f);
  EXPECT_EQ(__saturatef(std::numeric_limits<float>::quiet_NaN()), 0.0f);
  EXPECT_EQ(__float2int_rn(2.5f), 2);  // ties to even
  EXPECT_EQ(__float2int_rn(-3.5f), -4);
  EXPECT_EQ(__float2int_rz(-3.7f), -3);
  EXPECT_EQ(min(3, -4), -4);
  EXPECT_EQ(max(3u, 4u), 4u);
  EXPECT_EQ(max(1.5f, std::numeric_limits<float>::quiet_NaN()), 1.5f);  // fmaxf semantics
}

TEST(EmuMath, FastIntrinsicsStayWithinCudasDocumentedError) {
  for (float x = -10.0f; x <= 10.0f; x += 0.37f) {
    const double e = std::exp(static_cast<double>(x));
    EXPECT_NEAR(__expf(x), e, e * (2.0 + std::floor(std::fabs(1.173 * x))) * 0x1p-23) << x;
    EXPECT_NEAR(__sinf(x), std::sin(static_cast<double>(x)), 0x1p-21);
    EXPECT_NEAR(__cosf(x), std::cos(static_cast<double>(x)), 0x1p-21);
    EXPECT_NEAR(tanhf(x), std::tanh(static_cast<double>(x)), 2 * 0x1p-24);
    EXPECT_NEAR(erff(x), std::erf(static_cast<double>(x)), 2 * 0x1p-24);
    if (x > 0) {
      EXPECT_NEAR(__logf(x), std::log(static_cast<double>(x)),
                  0x1p-21 + 3 * 0x1p-23 * std::fabs(std::log(x)));
      EXPECT_NEAR(rsqrtf(x), 1.0 / std::sqrt(static_cast<double>(x)), 2 * 0x1p-23 / std::sqrt(x));
    }
    EXPECT_NEAR(__fdividef(x, 3.0f), x / 3.0, 2 * 0x1p-23 * std::fabs(x / 3.0));
  }
  float s = 0, c = 0;
  __sincosf(0.5f, &s, &c);
  EXPECT_NEAR(s, std::sin(0.5), 0x1p-21);
  EXPECT_NEAR(c, std::cos(0.5), 0x1p-21);
}
