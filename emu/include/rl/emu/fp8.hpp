// cuda_fp8.h's __nv_fp8_e4m3 and __nv_fp8_e5m2 for the emulator, minimal:
// construction from float with satfinite round-to-nearest-even, conversion to
// float, raw storage in __x.  The bit-level codecs (fp16_detail::Fp8Format)
// are what the emulated fp8 mma and wgmma decode their operands with.
#pragma once

#include <bit>
#include <cmath>
#include <limits>

#include "rl/emu/float16_types.hpp"

using __nv_fp8_storage_t = unsigned char;

namespace rl::emu::fp16_detail {

struct Fp8Format {
  unsigned exponent_bias;
  unsigned mantissa_bits;
  unsigned char max_finite;  // bits of the largest finite magnitude
  bool has_infinity;         // e5m2 is IEEE-like; e4m3 has only NaN 0x7F
};

inline constexpr Fp8Format kE4M3{7, 3, 0x7E, false};
inline constexpr Fp8Format kE5M2{15, 2, 0x7B, true};

inline float fp8_bits_to_float(unsigned char bits, const Fp8Format& format) {
  const bool negative = (bits & 0x80U) != 0U;
  const unsigned magnitude = bits & 0x7FU;
  const unsigned exponent = magnitude >> format.mantissa_bits;
  const unsigned mantissa = magnitude & ((1U << format.mantissa_bits) - 1U);
  const unsigned all_ones = (1U << (7U - format.mantissa_bits)) - 1U;
  if (format.has_infinity ? exponent == all_ones : magnitude == 0x7FU) {
    if (format.has_infinity && mantissa == 0U) {
      return negative ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity();
    }
    return std::bit_cast<float>(kCanonicalNan32);
  }
  const int scale = exponent == 0U
                        ? 1 - static_cast<int>(format.exponent_bias)
                        : static_cast<int>(exponent) - static_cast<int>(format.exponent_bias);
  const unsigned significand = exponent == 0U ? mantissa : mantissa | (1U << format.mantissa_bits);
  const float value =
      std::ldexp(static_cast<float>(significand), scale - static_cast<int>(format.mantissa_bits));
  return negative ? -value : value;
}

// satfinite: finite overflow and Inf become the largest finite value; NaN
// stays NaN.  The candidates are enumerated: with 127 magnitudes this is
// simpler to trust than bit surgery, and the emulator never converts fp8 in a
// hot loop.
inline unsigned char float_to_fp8_bits_satfinite(float f, const Fp8Format& format) {
  if (std::isnan(f)) {
    return 0x7FU;  // cuda_fp8.hpp first makes every NaN the positive canonical one
  }
  const unsigned char sign = std::signbit(f) ? 0x80U : 0x00U;
  const double magnitude = std::fabs(static_cast<double>(f));
  const double max_finite = fp8_bits_to_float(format.max_finite, format);
  if (magnitude >= max_finite) {
    return static_cast<unsigned char>(sign | format.max_finite);
  }
  // Largest code whose value is <= magnitude, then round to nearest even.
  unsigned lower = 0;
  while (lower + 1U <= format.max_finite &&
         static_cast<double>(fp8_bits_to_float(static_cast<unsigned char>(lower + 1U), format)) <=
             magnitude) {
    ++lower;
  }
  const double below = fp8_bits_to_float(static_cast<unsigned char>(lower), format);
  const double above = fp8_bits_to_float(static_cast<unsigned char>(lower + 1U), format);
  unsigned result = lower;
  if (magnitude - below > above - magnitude ||
      (magnitude - below == above - magnitude && (lower & 1U) != 0U)) {
    result = lower + 1U;
  }
  return static_cast<unsigned char>(sign | result);
}

}  // namespace rl::emu::fp16_detail

struct __nv_fp8_e4m3 {
  __nv_fp8_storage_t __x RL_EMU_FP_STORAGE_INIT;

  __nv_fp8_e4m3() = default;
  explicit __nv_fp8_e4m3(float f)
      : __x(rl::emu::fp16_detail::float_to_fp8_bits_satfinite(f, rl::emu::fp16_detail::kE4M3)) {}
  explicit __nv_fp8_e4m3(double d)
      : __nv_fp8_e4m3(rl::emu::fp16_detail::double_to_float_round_odd(d)) {}
  explicit __nv_fp8_e4m3(__half h) : __nv_fp8_e4m3(static_cast<float>(h)) {}
  explicit __nv_fp8_e4m3(__nv_bfloat16 b) : __nv_fp8_e4m3(static_cast<float>(b)) {}
  explicit operator float() const {
    return rl::emu::fp16_detail::fp8_bits_to_float(__x, rl::emu::fp16_detail::kE4M3);
  }
};

struct __nv_fp8_e5m2 {
  __nv_fp8_storage_t __x RL_EMU_FP_STORAGE_INIT;

  __nv_fp8_e5m2() = default;
  explicit __nv_fp8_e5m2(float f)
      : __x(rl::emu::fp16_detail::float_to_fp8_bits_satfinite(f, rl::emu::fp16_detail::kE5M2)) {}
  explicit __nv_fp8_e5m2(double d)
      : __nv_fp8_e5m2(rl::emu::fp16_detail::double_to_float_round_odd(d)) {}
  explicit __nv_fp8_e5m2(__half h) : __nv_fp8_e5m2(static_cast<float>(h)) {}
  explicit __nv_fp8_e5m2(__nv_bfloat16 b) : __nv_fp8_e5m2(static_cast<float>(b)) {}
  explicit operator float() const {
    return rl::emu::fp16_detail::fp8_bits_to_float(__x, rl::emu::fp16_detail::kE5M2);
  }
};

static_assert(sizeof(__nv_fp8_e4m3) == 1 && sizeof(__nv_fp8_e5m2) == 1);
