// The narrow floating-point formats of the Blackwell tensor cores and their
// block scales, exact: every encoding's value, and the conversion from float
// that PTX's cvt performs (emu/docs/narrow-formats.md).
//
//   format  bits  sign exp man bias  largest finite      Inf / NaN
//   e4m3     8    1    4   3    7   448 (0x7E)          NaN only S.1111.111
//   e5m2     8    1    5   2   15   57344 (0x7B)        IEEE-like Inf and NaN
//   e3m2     6    1    3   2    3   28 (0x1F)           none
//   e2m3     6    1    2   3    1   7.5 (0x1F)          none
//   e2m1     4    1    2   1    1   6 (0x7)             none
//   ue8m0    8    0    8   0  127   2^127 (0xFE)        NaN 0xFF; 0x00 is 2^-127
//   ue4m3    8    0    4   3    7   448 (0x7E)          NaN 0x7F; bit 7 is padding
//
// Sources: PTX ISA 9.1 §5.2.3 "Alternate Floating-Point Data Formats" (the
// encodings and their specials) and §9.7.9.21 "cvt", Floating Point Notes,
// ".satfinite" (the conversions); the OCP Microscaling Formats (MX) v1.0
// spec §5 (e2m1, e2m3, e3m2 and e8m0 element and scale values).  Values decode
// with subnormals (exponent field 0) for every format but ue8m0, whose every
// code is a power of two.
//
// Plain C++ (no emulator runtime): the PTX emulation, the rl::ptx cvt
// wrappers (rl/ptx_cvt_narrow.hpp) and host-side tests all use it.  Bad
// arguments (a code wider than the format, a rounding mode PTX lacks for the
// format) throw std::invalid_argument naming both.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace rl::emu::narrow {

enum class Format { e4m3, e5m2, e3m2, e2m3, e2m1, ue8m0, ue4m3 };

// The rounding modes PTX's cvt has for these formats: .rn for e4m3, e5m2,
// e3m2, e2m3 and e2m1 (ue4m3 follows e4m3); only .rz and .rp for ue8m0.
enum class Rounding { rn, rz, rp };

namespace detail {

struct Layout {
  const char* name;
  unsigned storage_bits;  // the element's width in a packed operand
  unsigned exponent_bits;
  unsigned mantissa_bits;
  int bias;
  bool is_signed;
  std::uint32_t max_finite;  // magnitude code of the largest finite value
  std::uint32_t nan_result;  // what cvt.satfinite makes of a NaN input
};

inline constexpr Layout layout(Format f) {
  switch (f) {
    // NaN -> NaN in the destination: e4m3's one NaN magnitude, e5m2's
    // all-ones code (cuda_fp8.h's host code makes every NaN positive 0x7F).
    case Format::e4m3:
      return {"e4m3", 8, 4, 3, 7, true, 0x7E, 0x7F};
    case Format::e5m2:
      return {"e5m2", 8, 5, 2, 15, true, 0x7B, 0x7F};
    // No NaN in the format: PTX makes a NaN input positive MAX_NORM.
    case Format::e3m2:
      return {"e3m2", 6, 3, 2, 3, true, 0x1F, 0x1F};
    case Format::e2m3:
      return {"e2m3", 6, 2, 3, 1, true, 0x1F, 0x1F};
    case Format::e2m1:
      return {"e2m1", 4, 2, 1, 1, true, 0x7, 0x7};
    case Format::ue8m0:
      return {"ue8m0", 8, 8, 0, 127, false, 0xFE, 0xFF};
    case Format::ue4m3:
      return {"ue4m3", 8, 4, 3, 7, false, 0x7E, 0x7F};
  }
  return {"?", 0, 0, 0, 0, false, 0, 0};
}

[[noreturn]] inline void reject(const std::string& what) {
  throw std::invalid_argument("rl::emu::narrow: " + what);
}

inline void check_code(Format f, std::uint32_t bits) {
  const Layout l = layout(f);
  if (bits >> l.storage_bits != 0U) {
    reject("code " + std::to_string(bits) + " is not a " + l.name + " encoding (" +
           std::to_string(l.storage_bits) + " bits)");
  }
}

// ue8m0 (cvt.rz/.rp.satfinite.ue8m0x2.f32): the magnitude's power of two,
// rounded down (.rz) or up (.rp), clamped to [2^-127, 2^127]; NaN stays NaN.
// PTX gives overflow positive MAX_NORM; the sign of a finite input is ignored
// (cuda_fp8.h's host code rounds |x|).
inline std::uint32_t ue8m0_from_float(float x, Rounding r) {
  if (std::isnan(x)) return 0xFFU;
  const double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a)) return 0xFEU;
  if (a == 0.0) return 0x00U;  // below 2^-127 either way: clipped to 2^-127
  int exponent = 0;
  const double fraction =
      std::frexp(a, &exponent);  // a = fraction * 2^exponent, fraction in [0.5, 1)
  int power = exponent - 1;      // floor(log2 a)
  if (r == Rounding::rp && fraction != 0.5) ++power;  // not a power of two: round up
  if (power < -127) power = -127;
  if (power > 127) power = 127;
  return static_cast<std::uint32_t>(power + 127);
}

// Every other format: round to nearest, ties to even, on the magnitude's grid
// (quantum 2^(e - mantissa_bits) for its exponent e, clamped below at the
// smallest normal exponent so subnormals share the lowest binade's quantum);
// |x| above the largest finite value saturates to it with x's sign.  The code
// of a magnitude with exponent e and n quanta is ((e - e_min) << m) + n: a
// round-up that carries out of the mantissa moves into the next binade.
inline std::uint32_t grid_from_float(const Layout& l, float x) {
  if (std::isnan(x)) return l.nan_result;
  const bool negative = std::signbit(x);
  if (negative && !l.is_signed) return 0x00U;  // ue4m3: the nearest value in [0, max] is 0
  const std::uint32_t sign = negative ? 1U << (l.exponent_bits + l.mantissa_bits) : 0U;
  const double a = std::fabs(static_cast<double>(x));
  const int e_min = 1 - l.bias;
  const double largest =
      std::ldexp(static_cast<double>((l.max_finite & ((1U << l.mantissa_bits) - 1U)) |
                                     (1U << l.mantissa_bits)),
                 static_cast<int>(l.max_finite >> l.mantissa_bits) - l.bias -
                     static_cast<int>(l.mantissa_bits));
  if (a > largest) return sign | l.max_finite;  // includes Inf
  if (a == 0.0) return sign;
  int exponent = 0;
  (void)std::frexp(a, &exponent);
  const int e = std::max(exponent - 1, e_min);
  const double quanta = std::ldexp(a, static_cast<int>(l.mantissa_bits) - e);  // exact in double
  double n = std::floor(quanta);
  const double rest = quanta - n;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(n, 2.0) != 0.0)) n += 1.0;
  std::uint32_t code =
      (static_cast<std::uint32_t>(e - e_min) << l.mantissa_bits) + static_cast<std::uint32_t>(n);
  if (code > l.max_finite) code = l.max_finite;
  return sign | code;
}

}  // namespace detail

// 8, 8, 6, 6, 4, 8, 8: the element's width in a packed operand (the 6-bit
// formats sit in a byte whose 2 high bits are zero; ue4m3's 7 bits in a byte).
inline unsigned bits_of(Format f) {
  return detail::layout(f).storage_bits;
}

inline const char* name_of(Format f) {
  return detail::layout(f).name;
}

// The exact value of an encoding; NaN encodings give a quiet NaN, e5m2's
// infinities +-Inf.  A code wider than bits_of(f) throws; ue4m3 ignores its
// padding bit 7.
inline double to_double(Format f, std::uint32_t bits) {
  detail::check_code(f, bits);
  const detail::Layout l = detail::layout(f);
  if (f == Format::ue8m0) {
    return bits == 0xFFU ? std::numeric_limits<double>::quiet_NaN()
                         : std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  const unsigned value_bits = l.exponent_bits + l.mantissa_bits;
  const std::uint32_t magnitude = bits & ((1U << value_bits) - 1U);
  const bool negative = l.is_signed && ((bits >> value_bits) & 1U) != 0U;
  const std::uint32_t exponent = magnitude >> l.mantissa_bits;
  const std::uint32_t mantissa = magnitude & ((1U << l.mantissa_bits) - 1U);
  double value = 0.0;
  if ((f == Format::e4m3 || f == Format::ue4m3) && magnitude == 0x7FU) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (f == Format::e5m2 && exponent == 0x1FU) {
    value = mantissa == 0U ? std::numeric_limits<double>::infinity()
                           : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0U) {
    value =
        std::ldexp(static_cast<double>(mantissa), 1 - l.bias - static_cast<int>(l.mantissa_bits));
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1U << l.mantissa_bits)),
                       static_cast<int>(exponent) - l.bias - static_cast<int>(l.mantissa_bits));
  }
  return negative ? -value : value;
}

// cvt.<r>.satfinite.<format>x2.f32 for one element: the rounding `r` PTX has
// for the format (.rn, or .rz / .rp for ue8m0; anything else throws), |x| above
// the largest finite value saturating to it (Inf too), NaN as PTX says
// (§9.7.9.21 .satfinite: NaN in e4m3, e5m2 and ue8m0; positive MAX_NORM in the
// formats without NaN: e3m2, e2m3, e2m1).  ue4m3, which PTX converts only as
// the magnitude of an e4m3, takes e4m3's rule on [0, 448]: a negative input
// gives 0.
inline std::uint32_t from_float_satfinite(Format f, float x, Rounding r) {
  const detail::Layout l = detail::layout(f);
  const bool allowed = f == Format::ue8m0 ? r != Rounding::rn : r == Rounding::rn;
  if (!allowed) {
    const char* mode = r == Rounding::rn ? ".rn" : (r == Rounding::rz ? ".rz" : ".rp");
    detail::reject(std::string("PTX has no cvt") + mode + " to " + l.name +
                   (f == Format::ue8m0 ? " (it has .rz and .rp)" : " (it has .rn)"));
  }
  return f == Format::ue8m0 ? detail::ue8m0_from_float(x, r) : detail::grid_from_float(l, x);
}

// cvt.rn.satfinite semantics (above).  ue8m0 has no .rn: its two-argument form
// rounds toward zero, the OCP MX rule for a scale (2^floor(log2 x)); pass
// Rounding::rp for cvt.rp.
inline std::uint32_t from_float_satfinite(Format f, float x) {
  return from_float_satfinite(f, x, f == Format::ue8m0 ? Rounding::rz : Rounding::rn);
}

}  // namespace rl::emu::narrow
