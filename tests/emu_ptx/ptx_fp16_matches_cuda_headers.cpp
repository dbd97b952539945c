// The emulated __half / __nv_bfloat16 / fp8 types against CUDA's own host code
// (cuda_fp_oracle.cpp), bit for bit, over every 16- and 8-bit pattern and a
// float sweep that visits every exponent with every low-16-bit pattern (all
// the bits that decide rounding for fp16, bf16 and fp8).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "cuda_fp_oracle.h"
#include "rl/emu/fp16.hpp"

namespace {

// Calls check(f) for every sign and exponent combined with every low-16-bit
// mantissa pattern; the upper mantissa bits vary pseudo-randomly, with the
// all-zero and all-one cases that carry into the exponent included.
template <typename Check>
void for_float_sweep(Check check) {
  std::mt19937 rng(12345);
  for (std::uint32_t sign_exponent = 0; sign_exponent < 512; ++sign_exponent) {
    for (std::uint32_t low = 0; low < 65536; ++low) {
      std::uint32_t high = rng() & 0x7FU;
      if (low % 3 == 0) {
        high = 0x7FU;
      } else if (low % 3 == 1) {
        high = 0U;
      }
      check(std::bit_cast<float>((sign_exponent << 23U) | (high << 16U) | low));
    }
  }
}

std::uint32_t float_bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

// The correctly rounded 16-bit a*b + c, built from CUDA's float conversion
// (`round`) and exact arithmetic, independently of the emulator's
// round-to-odd.  The product is exact in double; TwoSum gives the exact error
// of the double sum, and the float nearest that sum differs from the exact
// value by `residual`, whose sign is exact.  Every 16-bit value and midpoint is
// a float, so rounding the float is right unless the float is itself a
// midpoint; then the residual's sign picks the side.
std::uint16_t correctly_rounded_fma(float a, float b, float c, std::uint16_t (*round)(float),
                                    float (*widen)(std::uint16_t)) {
  const double product = double{a} * double{b};
  const double sum = product + double{c};
  const auto nearest = static_cast<float>(sum);
  if (!std::isfinite(sum) || !std::isfinite(nearest)) {
    return round(nearest);
  }
  const double addend_part = sum - product;
  const double error = (product - (sum - addend_part)) + (double{c} - addend_part);
  const double residual = (sum - double{nearest}) != 0.0 ? sum - double{nearest} : error;
  const float above = std::nextafter(nearest, std::numeric_limits<float>::infinity());
  const float below = std::nextafter(nearest, -std::numeric_limits<float>::infinity());
  // Past the largest finite value, Inf stands for the next step of the grid
  // (the midpoint 65520 of fp16 lies between 65504 and "65536").
  auto value_of = [&](std::uint16_t code, std::uint16_t finite_neighbour) {
    const double v = widen(code);
    if (std::isfinite(v)) {
      return v;
    }
    const double last = widen(finite_neighbour);
    return last + (last - widen(static_cast<std::uint16_t>(finite_neighbour - 1U)));
  };
  const double lower = value_of(round(below), round(above));
  const double upper = value_of(round(above), round(below));
  const bool nearest_is_midpoint = lower != upper && lower + upper == 2.0 * double{nearest};
  if (residual == 0.0 || !nearest_is_midpoint) {
    return round(nearest);
  }
  return round(residual > 0.0 ? above : below);
}

TEST(Fp16MatchesCudaHeaders, float_to_half_every_rounding_pattern) {
  std::uint64_t mismatches = 0;
  for_float_sweep([&](float f) {
    if (__half_as_ushort(__float2half(f)) != rl_oracle_float2half(f)) {
      if (++mismatches < 5) {
        ADD_FAILURE() << std::hex << "float bits 0x" << float_bits(f) << ": emulated 0x"
                      << __half_as_ushort(__float2half(f)) << ", CUDA 0x"
                      << rl_oracle_float2half(f);
      }
    }
  });
  EXPECT_EQ(mismatches, 0U);
}

TEST(Fp16MatchesCudaHeaders, float_to_bfloat16_every_rounding_pattern) {
  std::uint64_t mismatches = 0;
  for_float_sweep([&](float f) {
    if (__bfloat16_as_ushort(__float2bfloat16(f)) != rl_oracle_float2bfloat16(f)) {
      if (++mismatches < 5) {
        ADD_FAILURE() << std::hex << "float bits 0x" << float_bits(f) << ": emulated 0x"
                      << __bfloat16_as_ushort(__float2bfloat16(f)) << ", CUDA 0x"
                      << rl_oracle_float2bfloat16(f);
      }
    }
  });
  EXPECT_EQ(mismatches, 0U);
}

TEST(Fp16MatchesCudaHeaders, sixteen_bit_to_float_all_patterns) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto u = static_cast<std::uint16_t>(bits);
    ASSERT_EQ(float_bits(__half2float(__ushort_as_half(u))), float_bits(rl_oracle_half2float(u)))
        << u;
    ASSERT_EQ(float_bits(__bfloat162float(__ushort_as_bfloat16(u))),
              float_bits(rl_oracle_bfloat162float(u)))
        << u;
    ASSERT_EQ(static_cast<int>(__ushort_as_half(u)), rl_oracle_half2int_rz(u)) << u;
  }
}

TEST(Fp16MatchesCudaHeaders, double_to_sixteen_bit_rounds_once) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    // Doubles near the 16-bit grids, where double -> float -> 16 bits would
    // round twice: random exponents in range, random 53-bit significands.
    const std::uint64_t bits =
        (rng() & 0x800FFFFFFFFFFFFFULL) | ((1023ULL - 30 + rng() % 60) << 52U);
    const double d = std::bit_cast<double>(bits);
    ASSERT_EQ(__half_as_ushort(__double2half(d)), rl_oracle_double2half(d)) << d;
    ASSERT_EQ(__bfloat16_as_ushort(__double2bfloat16(d)), rl_oracle_double2bfloat16(d)) << d;
  }
}

TEST(Fp16MatchesCudaHeaders, arithmetic_and_min_max_on_random_operands) {
  std::mt19937 rng(99);
  for (int i = 0; i < 300000; ++i) {
    const auto a = static_cast<std::uint16_t>(rng());
    const auto b = static_cast<std::uint16_t>(rng());
    const auto c = static_cast<std::uint16_t>(rng());
    const __half ha = __ushort_as_half(a), hb = __ushort_as_half(b), hc = __ushort_as_half(c);
    const __nv_bfloat16 ba = __ushort_as_bfloat16(a), bb = __ushort_as_bfloat16(b),
                        bc = __ushort_as_bfloat16(c);
    const __half half_results[] = {__hadd(ha, hb), __hsub(ha, hb), __hmul(ha, hb),
                                   __hdiv(ha, hb), __hmax(ha, hb), __hmin(ha, hb)};
    const __nv_bfloat16 bf_results[] = {__hadd(ba, bb), __hsub(ba, bb), __hmul(ba, bb),
                                        __hdiv(ba, bb), __hmax(ba, bb), __hmin(ba, bb)};
    for (int op = 0; op < 6; ++op) {
      ASSERT_EQ(__half_as_ushort(half_results[op]), rl_oracle_half_binary(op, a, b))
          << "op " << op << std::hex << " a 0x" << a << " b 0x" << b;
      ASSERT_EQ(__bfloat16_as_ushort(bf_results[op]), rl_oracle_bfloat16_binary(op, a, b))
          << "op " << op << std::hex << " a 0x" << a << " b 0x" << b;
    }
    // __hfma has no host code in CUDA: see correctly_rounded_fma.
    ASSERT_EQ(__half_as_ushort(__hfma(ha, hb, hc)),
              correctly_rounded_fma(__half2float(ha), __half2float(hb), __half2float(hc),
                                    rl_oracle_float2half, rl_oracle_half2float))
        << std::hex << a << " " << b << " " << c;
    ASSERT_EQ(
        __bfloat16_as_ushort(__hfma(ba, bb, bc)),
        correctly_rounded_fma(__bfloat162float(ba), __bfloat162float(bb), __bfloat162float(bc),
                              rl_oracle_float2bfloat16, rl_oracle_bfloat162float))
        << std::hex << a << " " << b << " " << c;
  }
}

TEST(Fp16MatchesCudaHeaders, fp8_conversions_both_ways) {
  for (std::uint32_t bits = 0; bits < 256; ++bits) {
    const auto u = static_cast<std::uint8_t>(bits);
    __nv_fp8_e4m3 e4;
    e4.__x = u;
    __nv_fp8_e5m2 e5;
    e5.__x = u;
    ASSERT_EQ(float_bits(static_cast<float>(e4)), float_bits(rl_oracle_e4m32float(u))) << bits;
    ASSERT_EQ(float_bits(static_cast<float>(e5)), float_bits(rl_oracle_e5m22float(u))) << bits;
  }
  std::uint64_t mismatches = 0;
  std::uint32_t visited = 0;
  for_float_sweep([&](float f) {
    // fp8 rounding is decided by the upper mantissa bits: subsample the sweep.
    if ((++visited & 63U) != 0U) {
      return;
    }
    if (__nv_fp8_e4m3(f).__x != rl_oracle_float2e4m3(f) ||
        __nv_fp8_e5m2(f).__x != rl_oracle_float2e5m2(f)) {
      if (++mismatches < 5) {
        ADD_FAILURE() << std::hex << "float bits 0x" << float_bits(f) << ": e4m3 0x"
                      << int{__nv_fp8_e4m3(f).__x} << " vs 0x" << int{rl_oracle_float2e4m3(f)}
                      << ", e5m2 0x" << int{__nv_fp8_e5m2(f).__x} << " vs 0x"
                      << int{rl_oracle_float2e5m2(f)};
      }
    }
  });
  EXPECT_EQ(mismatches, 0U);
}

}  // namespace
