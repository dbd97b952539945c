// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 (f16 accumulators)
// against float64 references: the fragment tables applied forward (PTX ISA,
// "Matrix Fragments for mma.m16n8k16 with floating point type"; reference
// section 1), and the accumulation rounding the emulator documents: exact
// products and C summed in double, one round-to-nearest-even to f16.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "rl/emu/fp16.hpp"
#include "rl/emu/ptx_warp.hpp"

namespace {

using rl::emu::ptx::MmaA;
using rl::emu::ptx::MmaB;
using rl::emu::ptx::MmaCF16;

using Matrix16x16 = std::array<std::array<double, 16>, 16>;
using Matrix16x8 = std::array<std::array<double, 8>, 16>;

std::uint32_t half_bits(double v) {
  return __half_as_ushort(__double2half(v));
}
double half_value(std::uint32_t bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits & 0xFFFFU)));
}

// Forward tables: element e = 2 * register + half of lane (g = lane / 4,
// t = lane % 4).  The registers start zeroed.
void pack(const Matrix16x16& a, const Matrix16x8& b, const Matrix16x8& c, MmaA& ra, MmaB& rb,
          MmaCF16& rc) {
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane >> 2, t = lane % 4;
    for (int e = 0; e < 8; ++e) {
      const double v = a[g + 8 * ((e >> 1) & 1)][2 * t + (e & 1) + 8 * (e >> 2)];
      ra[lane][e >> 1] |= half_bits(v) << (16 * (e & 1));
    }
    for (int e = 0; e < 4; ++e)
      rb[lane][e >> 1] |= half_bits(b[2 * t + (e & 1) + 8 * (e >> 1)][g]) << (16 * (e & 1));
    for (int i = 0; i < 4; ++i)
      rc[lane][i >> 1] |= half_bits(c[g + 8 * (i >> 1)][2 * t + (i & 1)]) << (16 * (i & 1));
  }
}

// D as bits at (row, col), read through the accumulator table.
std::array<std::array<std::uint32_t, 8>, 16> unpack(const MmaCF16& rd) {
  std::array<std::array<std::uint32_t, 8>, 16> d{};
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 4; ++i)
      d[g + 8 * (i >> 1)][2 * t + (i & 1)] = (rd[lane][i >> 1] >> (16 * (i & 1))) & 0xFFFFU;
  }
  return d;
}

std::array<std::array<std::uint32_t, 8>, 16> run(const Matrix16x16& a, const Matrix16x8& b,
                                                 const Matrix16x8& c) {
  MmaA ra{};
  MmaB rb{};
  MmaCF16 rc{};
  MmaCF16 rd{};
  pack(a, b, c, ra, rb, rc);
  rl::emu::ptx::mma_m16n8k16_f16_f16_warp(ra, rb, rc, rd);
  return unpack(rd);
}

}  // namespace

// Values on a 1/8 grid in [-4, 4]: every product and partial sum is exact in
// double, so the reference is the exact result rounded once to f16.
TEST(MmaF16Accumulator, random_gemm_is_the_exact_sum_rounded_once_to_f16) {
  std::mt19937 rng(20261124);
  std::uniform_int_distribution<int> grid(-32, 32);
  Matrix16x16 a{};
  Matrix16x8 b{}, c{};
  for (auto& row : a)
    for (double& v : row) v = grid(rng) / 8.0;
  for (auto& row : b)
    for (double& v : row) v = grid(rng) / 8.0;
  for (auto& row : c)
    for (double& v : row) v = grid(rng) / 8.0 + 1000.0;  // large C: the rounding to f16 matters
  const auto d = run(a, b, c);
  int rounded = 0;
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      double exact = half_value(half_bits(c[m][n]));
      for (int k = 0; k < 16; ++k) exact += a[m][k] * b[k][n];
      EXPECT_EQ(d[m][n], half_bits(exact)) << "D(" << m << ", " << n << ")";
      rounded += half_value(half_bits(exact)) != exact ? 1 : 0;
    }
  }
  EXPECT_GT(rounded, 32) << "the case must exercise rounding, not only exact sums";
}

// Hand-computed: C = 2048 (f16 spacing 2 there) plus sixteen products 0.5 *
// 0.5 = 4 gives 2052 exactly.  An accumulator rounding to f16 after each add
// would stay at 2048 (2048.25 rounds back down every time); the sum is kept
// at least in single precision (PTX), so 2052.
TEST(MmaF16Accumulator, sums_before_rounding_not_after_each_product) {
  Matrix16x16 a{};
  Matrix16x8 b{}, c{};
  for (auto& row : a) row.fill(0.5);
  for (auto& row : b) row.fill(0.5);
  for (auto& row : c) row.fill(2048.0);
  const auto d = run(a, b, c);
  EXPECT_EQ(half_value(d[0][0]), 2052.0);
  EXPECT_EQ(half_value(d[15][7]), 2052.0);
}

// Ties round to even: 2048 + 1 lies halfway between 2048 and 2050 (-> 2048,
// even mantissa); 2048 + 3 between 2050 and 2052 (-> 2052).  65504 + 16 is
// halfway to the next binade, 65536, which is beyond f16: Inf.
TEST(MmaF16Accumulator, ties_round_to_even_and_overflow_gives_inf) {
  Matrix16x16 a{};
  Matrix16x8 b{}, c{};
  a[0][0] = 1.0;
  b[0][0] = 1.0;
  c[0][0] = 2048.0;
  a[1][0] = 3.0;
  b[0][0] = 1.0;
  c[1][0] = 2048.0;
  a[2][0] = 16.0;
  c[2][0] = 65504.0;
  a[3][0] = 8.0;
  c[3][0] = 65504.0;  // + 8: below the halfway point, stays finite
  const auto d = run(a, b, c);
  EXPECT_EQ(half_value(d[0][0]), 2048.0);
  EXPECT_EQ(half_value(d[1][0]), 2052.0);
  EXPECT_EQ(d[2][0], 0x7C00U);  // +Inf
  EXPECT_EQ(half_value(d[3][0]), 65504.0);
}

// D may alias C (the wrapper's usual d == c accumulation).
TEST(MmaF16Accumulator, d_may_alias_c) {
  Matrix16x16 a{};
  Matrix16x8 b{}, c{};
  for (int i = 0; i < 16; ++i) a[i][i] = 1.0;
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) b[k][n] = k * 8 + n;
  for (auto& row : c) row.fill(0.5);
  MmaA ra{};
  MmaB rb{};
  MmaCF16 rc{};
  pack(a, b, c, ra, rb, rc);
  rl::emu::ptx::mma_m16n8k16_f16_f16_warp(ra, rb, rc, rc);
  const auto d = unpack(rc);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) EXPECT_EQ(half_value(d[m][n]), m * 8 + n + 0.5);
}
