// Bit-level rounding between float (and double) and the 16-bit formats, the
// part of the emulator's CUDA float types that works on raw bits: float <->
// fp16 and float <-> bf16 with round-to-nearest-even, the round-to-odd steps
// that make a double (or an fma) round once to 16 bits, and CUDA's saturating
// float -> integer conversion.  Plain C++ (rl/emu/fp16.hpp says what the whole
// family guarantees); the PTX emulation calls these directly.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace rl::emu::fp16_detail {

inline constexpr std::uint16_t kCanonicalNan16 = 0x7FFF;
inline constexpr std::uint32_t kCanonicalNan32 = 0x7FFFFFFF;

// Rounds to nearest even given the kept bits and the dropped bits scaled so
// that half an ulp of the kept value is 0x80000000 (CUDA's own formulation).
inline constexpr std::uint32_t round_nearest_even(std::uint32_t kept, std::uint32_t dropped) {
  const bool up = dropped > 0x80000000U || (dropped == 0x80000000U && (kept & 1U) != 0U);
  return up ? kept + 1U : kept;
}

inline std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t magnitude = x & 0x7FFFFFFFU;
  const std::uint32_t sign = (x >> 16U) & 0x8000U;
  if (magnitude >= 0x7F800000U) {
    return magnitude == 0x7F800000U ? static_cast<std::uint16_t>(sign | 0x7C00U) : kCanonicalNan16;
  }
  std::uint32_t kept = 0;
  std::uint32_t dropped = 0;
  if (magnitude > 0x477FEFFFU) {  // rounds to Inf: 0x7BFF plus a guaranteed round-up
    kept = 0x7BFFU;
    dropped = 0xFFFFFFFFU;
  } else if (magnitude >= 0x38800000U) {  // normal half
    kept = (magnitude - 0x38000000U) >> 13U;
    dropped = magnitude << 19U;
  } else if (magnitude > 0x33000000U) {  // subnormal half (2^-25 itself ties to 0)
    const std::uint32_t shift = 0x7EU - (magnitude >> 23U);
    const std::uint32_t mantissa = (magnitude & 0x7FFFFFU) | 0x800000U;
    kept = mantissa >> shift;
    dropped = mantissa << (32U - shift);
  } else {
    dropped = magnitude != 0U ? 1U : 0U;  // at most half the smallest subnormal: ties to 0
  }
  return static_cast<std::uint16_t>(sign | round_nearest_even(kept, dropped));
}

inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000U) << 16U;
  const std::uint32_t exponent = (h >> 10U) & 0x1FU;
  std::uint32_t mantissa = h & 0x3FFU;
  if (exponent == 0x1FU) {
    return std::bit_cast<float>(mantissa != 0U ? kCanonicalNan32 : (sign | 0x7F800000U));
  }
  if (exponent == 0U) {
    if (mantissa == 0U) {
      return std::bit_cast<float>(sign);
    }
    // Subnormal half: normalise into a float, which has the range for it.
    std::uint32_t float_exponent = 127U - 14U;
    while ((mantissa & 0x400U) == 0U) {
      mantissa <<= 1U;
      --float_exponent;
    }
    mantissa &= 0x3FFU;
    return std::bit_cast<float>(sign | (float_exponent << 23U) | (mantissa << 13U));
  }
  return std::bit_cast<float>(sign | ((exponent + 127U - 15U) << 23U) | (mantissa << 13U));
}

inline std::uint16_t float_to_bfloat16_bits(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFU) > 0x7F800000U) {
    return kCanonicalNan16;
  }
  return static_cast<std::uint16_t>(round_nearest_even(x >> 16U, x << 16U));
}

inline float bfloat16_bits_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16U);
}

// Rounds a double to float with round-to-odd: a later round-to-nearest-even
// to 16 or fewer bits then gives the correctly rounded result of the double
// (24 >= p + 2), which a plain double -> float -> half chain would not.
inline float double_to_float_round_odd(double d) {
  const float nearest = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(d) || static_cast<double>(nearest) == d) {
    return nearest;
  }
  std::uint32_t bits = std::bit_cast<std::uint32_t>(nearest);
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(d)) {
    --bits;  // step the magnitude back below |d| (also turns Inf into FLT_MAX)
  }
  return std::bit_cast<float>(bits | 1U);
}

// a*b + c rounded once, to float with round-to-odd, so that the following
// round-to-nearest-even to 16 bits is the single rounding of fma.rn.{f16,bf16}.
// (Rounding a*b + c to nearest float first could land on a 16-bit tie.)
inline float fma_round_odd(float a, float b, float c) {
  const double product = static_cast<double>(a) * static_cast<double>(b);  // exact
  const double addend = static_cast<double>(c);
  const double sum = product + addend;
  if (!std::isfinite(sum)) {
    return static_cast<float>(sum);
  }
  // Knuth's TwoSum: the exact rounding error of the double addition.
  const double addend_part = sum - product;
  const double error = (product - (sum - addend_part)) + (addend - addend_part);
  double odd = sum;
  if (error != 0.0) {
    std::uint64_t bits = std::bit_cast<std::uint64_t>(sum);
    if ((error > 0.0) != (sum > 0.0)) {
      --bits;  // |sum| overshoots the exact value: step back toward zero
    }
    odd = std::bit_cast<double>(bits | 1U);
  }
  return double_to_float_round_odd(odd);
}

// C++ float -> integer conversion is undefined out of range; CUDA saturates
// and maps NaN to 0 (cvt.rzi).
template <typename Int>
Int float_to_int_rz(float f) {
  if (std::isnan(f)) {
    return 0;
  }
  constexpr auto lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hi_exclusive = static_cast<double>(std::numeric_limits<Int>::max()) + 1.0;
  const auto d = static_cast<double>(f);
  if (d >= hi_exclusive) {
    return std::numeric_limits<Int>::max();
  }
  if (d <= lo) {
    return std::numeric_limits<Int>::min();
  }
  return static_cast<Int>(d);
}

}  // namespace rl::emu::fp16_detail
