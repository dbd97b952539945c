// rl/emu/narrow_float.hpp, every encoding of every format: decoded against a
// float64 reference written here from sign, exponent and mantissa (pow, not
// the header's ldexp grid), encoded back, and every midpoint between
// neighbours rounded to the even code; saturation at both ends and NaN / Inf
// inputs as PTX's cvt .satfinite says (§9.7.9.21).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "rl/emu/narrow_float.hpp"

namespace {

using rl::emu::narrow::Format;
using rl::emu::narrow::from_float_satfinite;
using rl::emu::narrow::Rounding;
using rl::emu::narrow::to_double;

// Each format as the PTX ISA (§5.2.3) and the OCP MX spec describe it.
struct Spec {
  Format format;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_sign;
  double largest;          // the largest finite value, from the specs' tables
  std::uint32_t nan_code;  // what a NaN input converts to
};

const std::vector<Spec> kSpecs = {
    {Format::e4m3, 4, 3, 7, true, 448.0, 0x7F},   {Format::e5m2, 5, 2, 15, true, 57344.0, 0x7F},
    {Format::e3m2, 3, 2, 3, true, 28.0, 0x1F},    {Format::e2m3, 2, 3, 1, true, 7.5, 0x1F},
    {Format::e2m1, 2, 1, 1, true, 6.0, 0x7},      {Format::ue8m0, 8, 0, 127, false, 0x1p127, 0xFF},
    {Format::ue4m3, 4, 3, 7, false, 448.0, 0x7F},
};

std::uint32_t code_count(const Spec& s) {
  return 1U << rl::emu::narrow::bits_of(s.format);
}

// The reference value of a code: (-1)^s * 2^(e - bias) * (1 + m / 2^M) for a
// normal, 2^(1 - bias) * (m / 2^M) for exponent field 0; ue8m0 is 2^(e - 127)
// for every e; the specials of §5.2.3.
double reference_value(const Spec& s, std::uint32_t code) {
  if (s.format == Format::ue4m3) code &= 0x7FU;  // bit 7 is padding
  const int value_bits = s.exponent_bits + s.mantissa_bits;
  const std::uint32_t magnitude = code & ((1U << value_bits) - 1U);
  const bool negative = s.has_sign && (code >> value_bits) != 0U;
  const int e = static_cast<int>(magnitude >> s.mantissa_bits);
  const int m = static_cast<int>(magnitude & ((1U << s.mantissa_bits) - 1U));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (s.format == Format::ue8m0) return code == 0xFFU ? nan : std::pow(2.0, e - 127);
  if ((s.format == Format::e4m3 || s.format == Format::ue4m3) && magnitude == 0x7FU) return nan;
  if (s.format == Format::e5m2 && e == 31) {
    return m != 0 ? nan : (negative ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
  }
  const double fraction = static_cast<double>(m) / std::pow(2.0, s.mantissa_bits);
  const double v =
      e == 0 ? fraction * std::pow(2.0, 1 - s.bias) : (1.0 + fraction) * std::pow(2.0, e - s.bias);
  return negative ? -v : v;
}

bool is_finite_code(const Spec& s, std::uint32_t code) {
  return std::isfinite(reference_value(s, code));
}

std::uint32_t sign_bit(const Spec& s) {
  return s.has_sign ? 1U << (s.exponent_bits + s.mantissa_bits) : 0U;
}

// The non-negative finite codes in increasing value (ue4m3 without padding).
std::vector<std::uint32_t> ascending_magnitudes(const Spec& s) {
  std::vector<std::uint32_t> codes;
  for (std::uint32_t c = 0; c < code_count(s); ++c) {
    if ((c & sign_bit(s)) == 0U && (s.format != Format::ue4m3 || c < 0x80U) &&
        is_finite_code(s, c)) {
      codes.push_back(c);
    }
  }
  std::sort(codes.begin(), codes.end(), [&](std::uint32_t a, std::uint32_t b) {
    return reference_value(s, a) < reference_value(s, b);
  });
  return codes;
}

TEST(NarrowFloat, widths_are_the_packed_element_widths) {
  EXPECT_EQ(rl::emu::narrow::bits_of(Format::e4m3), 8U);
  EXPECT_EQ(rl::emu::narrow::bits_of(Format::e5m2), 8U);
  EXPECT_EQ(rl::emu::narrow::bits_of(Format::e3m2), 6U);
  EXPECT_EQ(rl::emu::narrow::bits_of(Format::e2m3), 6U);
  EXPECT_EQ(rl::emu::narrow::bits_of(Format::e2m1), 4U);
  EXPECT_EQ(rl::emu::narrow::bits_of(Format::ue8m0), 8U);
  EXPECT_EQ(rl::emu::narrow::bits_of(Format::ue4m3), 8U);
}

TEST(NarrowFloat, every_code_decodes_to_its_reference_value) {
  for (const Spec& s : kSpecs) {
    for (std::uint32_t c = 0; c < code_count(s); ++c) {
      const double expected = reference_value(s, c);
      const double got = to_double(s.format, c);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(got)) << rl::emu::narrow::name_of(s.format) << " code " << c;
      } else {
        EXPECT_EQ(got, expected) << rl::emu::narrow::name_of(s.format) << " code " << c;
        EXPECT_EQ(std::signbit(got), std::signbit(expected)) << "code " << c;
      }
    }
    const std::vector<std::uint32_t> magnitudes = ascending_magnitudes(s);
    EXPECT_EQ(to_double(s.format, magnitudes.back()), s.largest)
        << rl::emu::narrow::name_of(s.format);
  }
}

// Spot values from the specs' own tables, so the reference above is checked too.
TEST(NarrowFloat, values_match_the_spec_tables) {
  const double e2m1[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  for (std::uint32_t c = 0; c < 8; ++c) {
    EXPECT_EQ(to_double(Format::e2m1, c), e2m1[c]);
    EXPECT_EQ(to_double(Format::e2m1, c | 8U), -e2m1[c]);
  }
  EXPECT_EQ(to_double(Format::e2m3, 0x01), 0.125);   // smallest subnormal 2^-3
  EXPECT_EQ(to_double(Format::e3m2, 0x01), 0.0625);  // 2^-4
  EXPECT_EQ(to_double(Format::e4m3, 0x01), 0x1p-9);
  EXPECT_EQ(to_double(Format::e4m3, 0x38), 1.0);
  EXPECT_EQ(to_double(Format::e5m2, 0x01), 0x1p-16);
  EXPECT_EQ(to_double(Format::e5m2, 0xFC), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(to_double(Format::ue8m0, 0x7F), 1.0);
  EXPECT_EQ(to_double(Format::ue8m0, 0x00), 0x1p-127);
  EXPECT_EQ(to_double(Format::ue4m3, 0xB8), 1.0);  // the padding bit is ignored
}

TEST(NarrowFloat, every_finite_code_encodes_back_to_itself) {
  for (const Spec& s : kSpecs) {
    for (std::uint32_t c = 0; c < code_count(s); ++c) {
      if (!is_finite_code(s, c)) continue;
      const auto value = static_cast<float>(reference_value(s, c));  // exact in float
      const std::uint32_t canonical = s.format == Format::ue4m3 ? (c & 0x7FU) : c;
      if (s.format == Format::ue8m0) {
        EXPECT_EQ(from_float_satfinite(s.format, value, Rounding::rz), c);
        EXPECT_EQ(from_float_satfinite(s.format, value, Rounding::rp), c);
      } else {
        EXPECT_EQ(from_float_satfinite(s.format, value), canonical)
            << rl::emu::narrow::name_of(s.format) << " code " << c;
      }
    }
  }
}

// Between two neighbours lo < hi: the midpoint goes to the code whose last
// bit is 0 (ties to even), anything nearer to one side to that side; the
// negative mirror keeps the sign.
TEST(NarrowFloat, midpoints_between_neighbours_round_to_even) {
  for (const Spec& s : kSpecs) {
    if (s.format == Format::ue8m0) continue;  // no .rn (next test)
    const std::vector<std::uint32_t> codes = ascending_magnitudes(s);
    for (std::size_t i = 0; i + 1 < codes.size(); ++i) {
      const double lo = reference_value(s, codes[i]);
      const double hi = reference_value(s, codes[i + 1]);
      const auto mid = static_cast<float>((lo + hi) / 2.0);  // exact: one more bit
      ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2.0);
      const std::uint32_t even = (codes[i] & 1U) == 0U ? codes[i] : codes[i + 1];
      const float above = std::nextafter(mid, std::numeric_limits<float>::infinity());
      const float below = std::nextafter(mid, 0.0f);
      EXPECT_EQ(from_float_satfinite(s.format, mid), even)
          << rl::emu::narrow::name_of(s.format) << " between " << lo << " and " << hi;
      EXPECT_EQ(from_float_satfinite(s.format, above), codes[i + 1]);
      EXPECT_EQ(from_float_satfinite(s.format, below), codes[i]);
      if (s.has_sign) {
        EXPECT_EQ(from_float_satfinite(s.format, -mid), sign_bit(s) | even);
        EXPECT_EQ(from_float_satfinite(s.format, -above), sign_bit(s) | codes[i + 1]);
      }
    }
  }
}

// ue8m0: .rz takes the power of two at or below |x|, .rp the one at or above,
// both clamped to [2^-127, 2^127].
TEST(NarrowFloat, ue8m0_rounds_toward_zero_or_up_to_a_power_of_two) {
  for (int k = -126; k <= 126; ++k) {
    const auto p = static_cast<float>(std::ldexp(1.0, k));
    const auto code = static_cast<std::uint32_t>(k + 127);
    for (const float x : {std::nextafter(p, std::numeric_limits<float>::infinity()),
                          static_cast<float>(1.5 * p), std::nextafter(2.0f * p, 0.0f)}) {
      EXPECT_EQ(from_float_satfinite(Format::ue8m0, x, Rounding::rz), code) << x;
      EXPECT_EQ(from_float_satfinite(Format::ue8m0, x, Rounding::rp), code + 1U) << x;
      EXPECT_EQ(from_float_satfinite(Format::ue8m0, -x, Rounding::rz), code) << "sign ignored";
    }
    EXPECT_EQ(from_float_satfinite(Format::ue8m0, p), code) << "two-argument form is .rz";
  }
  const float smallest = std::numeric_limits<float>::denorm_min();
  for (const Rounding r : {Rounding::rz, Rounding::rp}) {
    EXPECT_EQ(from_float_satfinite(Format::ue8m0, 0.0f, r), 0x00U);
    EXPECT_EQ(from_float_satfinite(Format::ue8m0, smallest, r), 0x00U);
    EXPECT_EQ(from_float_satfinite(Format::ue8m0, 0x1p-127f, r), 0x00U);
    EXPECT_EQ(from_float_satfinite(Format::ue8m0, std::numeric_limits<float>::max(), r), 0xFEU);
    EXPECT_EQ(from_float_satfinite(Format::ue8m0, std::numeric_limits<float>::infinity(), r),
              0xFEU);
  }
  EXPECT_EQ(from_float_satfinite(Format::ue8m0, std::nextafter(0x1p-127f, 1.0f), Rounding::rp),
            0x01U);
}

TEST(NarrowFloat, values_beyond_the_largest_saturate_with_their_sign) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const Spec& s : kSpecs) {
    if (s.format == Format::ue8m0) continue;
    const std::uint32_t max_code = ascending_magnitudes(s).back();
    for (const float x : {static_cast<float>(s.largest * 1.0625), static_cast<float>(s.largest * 2),
                          std::numeric_limits<float>::max(), inf}) {
      EXPECT_EQ(from_float_satfinite(s.format, x), max_code) << rl::emu::narrow::name_of(s.format);
      const std::uint32_t negative = from_float_satfinite(s.format, -x);
      EXPECT_EQ(negative, s.has_sign ? (sign_bit(s) | max_code) : 0U);
    }
  }
}

TEST(NarrowFloat, nan_inputs_give_nan_or_positive_max_as_ptx_says) {
  const float nans[] = {std::numeric_limits<float>::quiet_NaN(),
                        -std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::signaling_NaN()};
  for (const Spec& s : kSpecs) {
    for (const float nan : nans) {
      const Rounding r = s.format == Format::ue8m0 ? Rounding::rp : Rounding::rn;
      EXPECT_EQ(from_float_satfinite(s.format, nan, r), s.nan_code)
          << rl::emu::narrow::name_of(s.format);
    }
  }
  // The formats without NaN: positive MAX_NORM, a finite value.
  EXPECT_EQ(to_double(Format::e2m1, from_float_satfinite(Format::e2m1, nans[1])), 6.0);
}

TEST(NarrowFloat, underflow_keeps_the_sign_of_zero) {
  for (const Spec& s : kSpecs) {
    if (!s.has_sign) continue;
    const float tiny = static_cast<float>(reference_value(s, 1U) / 4.0);
    EXPECT_EQ(from_float_satfinite(s.format, tiny), 0U);
    EXPECT_EQ(from_float_satfinite(s.format, -tiny), sign_bit(s));
    EXPECT_EQ(from_float_satfinite(s.format, -0.0f), sign_bit(s));
  }
  EXPECT_EQ(from_float_satfinite(Format::ue4m3, -1.0f), 0U) << "unsigned: the nearest is 0";
}

TEST(NarrowFloat, bad_codes_and_rounding_modes_ptx_lacks_are_refused) {
  EXPECT_THROW((void)to_double(Format::e2m1, 0x10), std::invalid_argument);
  EXPECT_THROW((void)to_double(Format::e3m2, 0x40), std::invalid_argument);
  EXPECT_THROW((void)to_double(Format::e4m3, 0x100), std::invalid_argument);
  EXPECT_THROW((void)from_float_satfinite(Format::e2m1, 1.0f, Rounding::rz), std::invalid_argument);
  EXPECT_THROW((void)from_float_satfinite(Format::ue8m0, 1.0f, Rounding::rn),
               std::invalid_argument);
}

}  // namespace
