// mma.sync emulation against float64 references built from the PTX fragment
// tables (ptx-emulation-reference.md sections 1-3).  The packing helpers here
// apply the tables forward ((lane, register, element) -> (row, col)); the
// emulator inverts them, so a transcription slip on either side shows up.
// Element positions are checked with one-hot operands: a GEMM-level test
// cannot see a k permutation applied to both A and B.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <random>

#include "rl/emu/fp16.hpp"
#include "rl/emu/ptx_warp.hpp"

namespace {

using rl::emu::ptx::MmaA;
using rl::emu::ptx::MmaB;
using rl::emu::ptx::MmaCF32;
using rl::emu::ptx::MmaCS32;
using rl::emu::ptx::MmaInput;

struct RowCol {
  int row;
  int col;
};

// Forward fragment tables.  e is the element index "low to high": for 16-bit
// types e = 2*reg + half, for 8-bit e = 4*reg + byte, for tf32 e = reg.
RowCol f16_a(int lane, int e) {
  const int g = lane >> 2, t = lane % 4;
  return {g + 8 * ((e >> 1) & 1), 2 * t + (e & 1) + 8 * (e >> 2)};
}
RowCol f16_b(int lane, int e) {
  const int g = lane >> 2, t = lane % 4;
  return {2 * t + (e & 1) + 8 * (e >> 1), g};
}
RowCol tf32_a(int lane, int e) {
  const int g = lane >> 2, t = lane % 4;
  return {g + 8 * (e & 1), t + 4 * (e >> 1)};
}
RowCol tf32_b(int lane, int e) {
  const int g = lane >> 2, t = lane % 4;
  return {t + 4 * e, g};
}
RowCol i8_a(int lane, int e) {
  const int g = lane >> 2, t = lane % 4;
  return {g + 8 * ((e >> 2) & 1), 4 * t + (e & 3) + 16 * (e >> 3)};
}
RowCol i8_b(int lane, int e) {
  const int g = lane >> 2, t = lane % 4;
  return {4 * t + (e & 3) + 16 * (e >> 2), g};
}
RowCol acc(int lane, int i) {
  const int g = lane >> 2, t = lane % 4;
  return {g + 8 * (i >> 1), 2 * t + (i & 1)};
}

struct Shape {
  MmaInput input;
  int k;
  int bits;  // element width in the registers
  RowCol (*a_map)(int, int);
  RowCol (*b_map)(int, int);
  std::uint32_t (*encode)(double);  // value -> element bits (exact for the values used)
};

std::uint32_t encode_f16(double v) {
  return __half_as_ushort(__double2half(v));
}
std::uint32_t encode_bf16(double v) {
  return __bfloat16_as_ushort(__double2bfloat16(v));
}
std::uint32_t encode_tf32(double v) {
  return std::bit_cast<std::uint32_t>(static_cast<float>(v));
}
std::uint32_t encode_e4m3(double v) {
  return __nv_fp8_e4m3(v).__x;
}
std::uint32_t encode_e5m2(double v) {
  return __nv_fp8_e5m2(v).__x;
}

const Shape kF16{MmaInput::f16, 16, 16, f16_a, f16_b, encode_f16};
const Shape kBf16{MmaInput::bf16, 16, 16, f16_a, f16_b, encode_bf16};
const Shape kTf32{MmaInput::tf32, 8, 32, tf32_a, tf32_b, encode_tf32};
const Shape kE4m3{MmaInput::e4m3, 32, 8, i8_a, i8_b, encode_e4m3};
const Shape kE5m2{MmaInput::e5m2, 32, 8, i8_a, i8_b, encode_e5m2};

// Packs a row-major matrix (value(row, col)) into per-lane registers.
template <int Regs>
void pack(const Shape& s, RowCol (*map)(int, int), const std::function<double(int, int)>& value,
          std::uint32_t (&regs)[32][Regs]) {
  const int per_reg = 32 / s.bits;
  for (int lane = 0; lane < 32; ++lane) {
    for (int r = 0; r < Regs; ++r) {
      std::uint32_t word = 0;
      for (int sub = 0; sub < per_reg; ++sub) {
        const RowCol rc = map(lane, r * per_reg + sub);
        const std::uint32_t bits = s.encode(value(rc.row, rc.col));
        word |= (s.bits == 32 ? bits : bits & ((1U << s.bits) - 1U)) << (sub * s.bits);
      }
      regs[lane][r] = word;
    }
  }
}

// Runs the emulated mma on matrices given as functions and returns D as a
// dense 16x8 array read through the accumulator table.
std::array<std::array<double, 8>, 16> run_mma(const Shape& s,
                                              const std::function<double(int, int)>& a,
                                              const std::function<double(int, int)>& b,
                                              const std::function<double(int, int)>& c) {
  MmaA ra{};
  MmaB rb{};
  MmaCF32 rc{};
  MmaCF32 rd{};
  pack<4>(s, s.a_map, a, ra);
  pack<2>(s, s.b_map, b, rb);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      rc[lane][i] = static_cast<float>(c(acc(lane, i).row, acc(lane, i).col));
    }
  }
  rl::emu::ptx::mma_f32_warp(s.input, ra, rb, rc, rd);
  std::array<std::array<double, 8>, 16> d{};
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      d[acc(lane, i).row][acc(lane, i).col] = rd[lane][i];
    }
  }
  return d;
}

void PrintTo(const Shape& s, std::ostream* os) {
  *os << "k" << s.k << " with " << s.bits << "-bit elements";
}

class MmaLayout : public ::testing::TestWithParam<Shape> {};

// A value that differs for every k in 0..31 and is exact in the input type:
// k + 1 for the 16/19-bit types, consecutive fp8 codes from 0x30 for fp8.
double distinct_along_k(const Shape& s, int k) {
  if (s.input == MmaInput::e4m3) {
    __nv_fp8_e4m3 v;
    v.__x = static_cast<unsigned char>(0x30 + k);
    return static_cast<float>(v);
  }
  if (s.input == MmaInput::e5m2) {
    __nv_fp8_e5m2 v;
    v.__x = static_cast<unsigned char>(0x30 + k);
    return static_cast<float>(v);
  }
  return k + 1.0;
}

// A one-hot at (m0, k0), B's entries distinct along k: D must hold B's row k0
// in row m0 and zeros elsewhere, which pins down every A position (row and k)
// independently of B's k mapping.
TEST_P(MmaLayout, every_a_position_lands_in_the_right_row_and_k) {
  const Shape s = GetParam();
  const bool fp8 = s.bits == 8;
  const auto b = [&](int k, int n) { return distinct_along_k(s, k) * (fp8 ? 1.0 : n + 1.0); };
  for (int m0 = 0; m0 < 16; ++m0) {
    for (int k0 = 0; k0 < s.k; ++k0) {
      const auto d = run_mma(
          s, [&](int m, int k) { return m == m0 && k == k0 ? 1.0 : 0.0; }, b,
          [](int, int) { return 0.0; });
      for (int m = 0; m < 16; ++m) {
        for (int n = 0; n < 8; ++n) {
          ASSERT_EQ(d[m][n], m == m0 ? b(k0, n) : 0.0)
              << "A(" << m0 << "," << k0 << ") D(" << m << "," << n << ")";
        }
      }
    }
  }
}

// B one-hot at (k0, n0), A's entries distinct along k: D(m, n0) = A(m, k0)
// and zero elsewhere, pinning down every B position.
TEST_P(MmaLayout, every_b_position_lands_in_the_right_k_and_column) {
  const Shape s = GetParam();
  const auto a = [&](int m, int k) { return distinct_along_k(s, k) * (m % 2 == 0 ? 1.0 : -1.0); };
  for (int k0 = 0; k0 < s.k; ++k0) {
    for (int n0 = 0; n0 < 8; ++n0) {
      const auto d = run_mma(
          s, a, [&](int k, int n) { return k == k0 && n == n0 ? 1.0 : 0.0; },
          [](int, int) { return 0.0; });
      for (int m = 0; m < 16; ++m) {
        for (int n = 0; n < 8; ++n) {
          ASSERT_EQ(d[m][n], n == n0 ? a(m, k0) : 0.0)
              << "B(" << k0 << "," << n0 << ") D(" << m << "," << n << ")";
        }
      }
    }
  }
}

// Random representable operands and C: D against a float64 GEMM.
TEST_P(MmaLayout, random_gemm_matches_float64_reference) {
  const Shape s = GetParam();
  std::mt19937 rng(static_cast<unsigned>(s.k * 31 + s.bits));
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  // Round through the element type so the reference sees the same values.
  auto representable = [&](double v) {
    switch (s.input) {
      case MmaInput::f16:
        return double{__half2float(__double2half(v))};
      case MmaInput::bf16:
        return double{__bfloat162float(__double2bfloat16(v))};
      case MmaInput::tf32:
        return double{std::bit_cast<float>(std::bit_cast<std::uint32_t>(static_cast<float>(v)) &
                                           0xFFFFE000U)};
      case MmaInput::e4m3:
        return double{static_cast<float>(__nv_fp8_e4m3(v))};
      case MmaInput::e5m2:
        return double{static_cast<float>(__nv_fp8_e5m2(v))};
    }
    return 0.0;
  };
  double a[16][32], b[32][8], c[16][8];
  for (auto& row : a)
    for (double& v : row) v = representable(dist(rng));
  for (auto& row : b)
    for (double& v : row) v = representable(dist(rng));
  for (auto& row : c)
    for (double& v : row) v = static_cast<float>(dist(rng));
  const auto d = run_mma(
      s, [&](int m, int k) { return a[m][k]; }, [&](int k, int n) { return b[k][n]; },
      [&](int m, int n) { return c[m][n]; });
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      double ref = c[m][n];
      for (int k = 0; k < s.k; ++k) ref += a[m][k] * b[k][n];
      EXPECT_NEAR(d[m][n], ref, 1e-6 * (1.0 + std::fabs(ref))) << m << "," << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Inputs, MmaLayout, ::testing::Values(kF16, kBf16, kTf32, kE4m3, kE5m2),
                         [](const ::testing::TestParamInfo<Shape>& param_info) {
                           switch (param_info.param.input) {
                             case MmaInput::f16:
                               return std::string("f16_m16n8k16");
                             case MmaInput::bf16:
                               return std::string("bf16_m16n8k16");
                             case MmaInput::tf32:
                               return std::string("tf32_m16n8k8");
                             case MmaInput::e4m3:
                               return std::string("e4m3_m16n8k32");
                             case MmaInput::e5m2:
                               return std::string("e5m2_m16n8k32");
                           }
                           return std::string("unknown");
                         });

TEST(MmaTf32, operands_lose_their_low_13_bits) {
  // 1 + 2^-12 is not a tf32 value; the hardware reads 1.0 (truncation), so
  // A = that, B = 1 on one k gives exactly 1.0, not 1.000244.
  const float unrounded = 1.0f + 0x1p-12f;
  const auto d = run_mma(
      kTf32, [&](int m, int k) { return m == 0 && k == 0 ? unrounded : 0.0; },
      [](int k, int n) { return k == 0 && n == 0 ? 1.0 : 0.0; }, [](int, int) { return 0.0; });
  EXPECT_EQ(d[0][0], 1.0);
}

TEST(MmaF32, sums_in_double_and_rounds_once) {
  // 1 + 16 * 2^-25 is exact in double; fp32 accumulation step by step would
  // lose every 2^-25 term (half an ulp of 1, ties to even).
  const auto d = run_mma(
      kBf16, [](int, int) { return 0x1p-13; }, [](int, int) { return 0x1p-12; },
      [](int, int) { return 1.0; });
  EXPECT_EQ(d[3][5], 1.0 + 16 * 0x1p-25);
}

TEST(MmaF32, inf_times_zero_gives_the_canonical_nan) {
  const auto d = run_mma(
      kF16,
      [](int m, int k) { return m == 2 && k == 3 ? std::numeric_limits<double>::infinity() : 0.0; },
      [](int, int) { return 0.0; }, [](int, int) { return 0.0; });
  EXPECT_EQ(std::bit_cast<std::uint64_t>(d[2][0]),
            std::bit_cast<std::uint64_t>(double{std::bit_cast<float>(0x7FFFFFFFU)}));
  EXPECT_EQ(d[3][0], 0.0);
}

TEST(MmaF32, d_may_alias_c) {
  MmaA a{};
  MmaB b{};
  MmaCF32 accumulators{};
  pack<4>(
      kF16, f16_a, [](int m, int k) { return m == k ? 1.0 : 0.0; }, a);  // identity
  pack<2>(
      kF16, f16_b, [](int k, int n) { return k + n; }, b);
  for (auto& lane : accumulators)
    for (float& v : lane) v = 1.0f;
  rl::emu::ptx::mma_m16n8k16_f16_f32_warp(a, b, accumulators, accumulators);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const RowCol rc = acc(lane, i);
      const double expected = 1.0 + (rc.row + rc.col);
      ASSERT_EQ(accumulators[lane][i], expected) << lane << " " << i;
    }
  }
}

TEST(MmaS8, int8_products_accumulate_exactly_and_wrap) {
  MmaA a{};
  MmaB b{};
  const Shape s8{
      MmaInput::e4m3, 32, 8, i8_a, i8_b, [](double v) {
        return static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(v)));
      }};
  pack<4>(
      s8, i8_a, [](int m, int k) { return double((m * 7 + k * 3) % 256 - 128); }, a);
  pack<2>(
      s8, i8_b, [](int k, int n) { return double((k * 5 + n * 11) % 256 - 128); }, b);
  MmaCS32 c{};
  MmaCS32 d{};
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i)
      c[lane][i] = lane == 0 && i == 0 ? std::numeric_limits<std::int32_t>::max() : lane - i;
  }
  rl::emu::ptx::mma_m16n8k32_s8_s32_warp(a, b, c, d);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const RowCol rc = acc(lane, i);
      std::int64_t ref = c[lane][i];
      for (int k = 0; k < 32; ++k)
        ref += std::int64_t{(rc.row * 7 + k * 3) % 256 - 128} * ((k * 5 + rc.col * 11) % 256 - 128);
      ASSERT_EQ(d[lane][i], static_cast<std::int32_t>(static_cast<std::uint32_t>(ref)))
          << lane << " " << i;
    }
  }
}

// The runtime executes mma.sync once per warp (mma_*_warp, fragments decoded
// once); the per-lane form (mma_*_lane) is the reference it replaced.  Both
// must give the same bits on any registers: random bit patterns (NaN, Inf,
// subnormals, overflowing sums) and values with tame exponents, every input
// type, 200 register files each.
std::uint32_t tame_bits(std::mt19937& rng, MmaInput input) {
  auto bits = static_cast<std::uint32_t>(rng());
  switch (input) {
    case MmaInput::f16:  // exponent field 01xxx: |x| in [2^-14, 2)
      return (bits & 0x83FF83FFU) | 0x38003800U;
    case MmaInput::bf16:
      return (bits & 0x807F807FU) | 0x3F003F00U;
    case MmaInput::tf32:
      return (bits & 0x807FFFFFU) | 0x3F000000U;
    default:
      return bits & 0xBFBFBFBFU;  // fp8 / s8: clear the top exponent bit
  }
}

TEST(MmaWarp, once_per_warp_result_is_bit_identical_to_the_per_lane_reference) {
  std::mt19937 rng(14);
  for (MmaInput input :
       {MmaInput::f16, MmaInput::bf16, MmaInput::tf32, MmaInput::e4m3, MmaInput::e5m2}) {
    for (int trial = 0; trial < 200; ++trial) {
      const bool tame = trial % 2 == 0;
      MmaA a{};
      MmaB b{};
      MmaCF32 c{};
      for (auto& lane : a)
        for (auto& r : lane) r = tame ? tame_bits(rng, input) : static_cast<std::uint32_t>(rng());
      for (auto& lane : b)
        for (auto& r : lane) r = tame ? tame_bits(rng, input) : static_cast<std::uint32_t>(rng());
      for (auto& lane : c)
        for (float& v : lane)
          v = tame ? std::ldexp(static_cast<float>(rng() % 2001) - 1000.0f, -8)
                   : std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
      MmaCF32 warp{};
      rl::emu::ptx::mma_f32_warp(input, a, b, c, warp);
      for (unsigned lane = 0; lane < 32; ++lane) {
        float reference[4];
        rl::emu::ptx::mma_f32_lane(input, lane, a, b, c[lane], reference);
        for (int i = 0; i < 4; ++i)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(warp[lane][i]),
                    std::bit_cast<std::uint32_t>(reference[i]))
              << "input " << static_cast<int>(input) << " trial " << trial << " lane " << lane
              << " register " << i;
      }
    }
  }
}

TEST(MmaWarp, once_per_warp_s8_result_is_identical_to_the_per_lane_reference) {
  std::mt19937 rng(15);
  for (int trial = 0; trial < 200; ++trial) {
    MmaA a{};
    MmaB b{};
    MmaCS32 c{};
    for (auto& lane : a)
      for (auto& r : lane) r = static_cast<std::uint32_t>(rng());
    for (auto& lane : b)
      for (auto& r : lane) r = static_cast<std::uint32_t>(rng());
    for (auto& lane : c)
      for (auto& v : lane) v = static_cast<std::int32_t>(rng());
    MmaCS32 warp{};
    rl::emu::ptx::mma_m16n8k32_s8_s32_warp(a, b, c, warp);
    for (unsigned lane = 0; lane < 32; ++lane) {
      std::int32_t reference[4];
      rl::emu::ptx::mma_m16n8k32_s8_s32_lane(lane, a, b, c[lane], reference);
      for (int i = 0; i < 4; ++i) ASSERT_EQ(warp[lane][i], reference[i]) << lane << " " << i;
    }
  }
}

TEST(F32ToTf32, rounds_to_nearest_ties_away_and_keeps_specials) {
  using rl::emu::ptx::f32_to_tf32_bits;
  EXPECT_EQ(f32_to_tf32_bits(0x3F801000U), 0x3F802000U);  // tie: away from zero
  EXPECT_EQ(f32_to_tf32_bits(0xBF801000U), 0xBF802000U);  // negative tie: away too
  EXPECT_EQ(f32_to_tf32_bits(0x3F800FFFU), 0x3F800000U);  // below the tie
  EXPECT_EQ(f32_to_tf32_bits(0x3F803000U), 0x3F804000U);  // tie from an odd value
  EXPECT_EQ(f32_to_tf32_bits(0x3FFFF000U), 0x40000000U);  // carry into the exponent
  EXPECT_EQ(f32_to_tf32_bits(0x7F7FF000U), 0x7F800000U);  // finite rounds up to Inf
  EXPECT_EQ(f32_to_tf32_bits(0x7F800000U), 0x7F800000U);  // +Inf stays
  EXPECT_EQ(f32_to_tf32_bits(0xFF800000U), 0xFF800000U);  // -Inf stays
  EXPECT_EQ(f32_to_tf32_bits(0x7F800001U), 0x7FFFFFFFU);  // NaN payload in the low bits
  EXPECT_EQ(f32_to_tf32_bits(0xFFC00000U), 0x7FFFFFFFU);
  EXPECT_EQ(f32_to_tf32_bits(0x00001000U), 0x00002000U);  // subnormal tie
}

}  // namespace
