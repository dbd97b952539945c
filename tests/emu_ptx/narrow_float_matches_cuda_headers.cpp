// rl/emu/narrow_float.hpp against CUDA's own host conversion code
// (cuda_fp8.h, cuda_fp6.h, cuda_fp4.h through cuda_fp_oracle.cpp), bit for
// bit: every code decoded, and a float sweep that visits every sign and
// exponent with every pattern of the 8 mantissa bits below the leading one
// (all the bits a 3-bit mantissa keeps, its guard bit and more), each with the
// sticky bits clear, set at the bottom, and all set.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "cuda_fp_oracle.h"
#include "rl/emu/narrow_float.hpp"

namespace {

using rl::emu::narrow::Format;
using rl::emu::narrow::Rounding;

struct Case {
  RlOracleNarrow oracle;
  Format format;
  Rounding rounding;
};

const Case kCases[] = {
    {rl_oracle_e4m3, Format::e4m3, Rounding::rn},
    {rl_oracle_e5m2, Format::e5m2, Rounding::rn},
    {rl_oracle_e3m2, Format::e3m2, Rounding::rn},
    {rl_oracle_e2m3, Format::e2m3, Rounding::rn},
    {rl_oracle_e2m1, Format::e2m1, Rounding::rn},
    {rl_oracle_ue8m0_rz, Format::ue8m0, Rounding::rz},
    {rl_oracle_ue8m0_rp, Format::ue8m0, Rounding::rp},
};

template <typename Check>
void for_float_sweep(Check check) {
  for (std::uint32_t sign_exponent = 0; sign_exponent < 512; ++sign_exponent) {
    for (std::uint32_t top = 0; top < 256; ++top) {
      for (const std::uint32_t sticky : {0U, 1U, 0x4000U, 0x7FFFU}) {
        check(std::bit_cast<float>((sign_exponent << 23U) | (top << 15U) | sticky));
      }
    }
  }
}

TEST(NarrowFloatMatchesCudaHeaders, every_code_decodes_as_cuda_does) {
  for (const Case& c : kCases) {
    for (std::uint32_t code = 0; code < (1U << rl::emu::narrow::bits_of(c.format)); ++code) {
      const double ours = rl::emu::narrow::to_double(c.format, code);
      const auto cuda =
          static_cast<double>(rl_oracle_narrow2float(c.oracle, static_cast<std::uint8_t>(code)));
      if (std::isnan(ours)) {
        EXPECT_TRUE(std::isnan(cuda)) << rl::emu::narrow::name_of(c.format) << " code " << code;
      } else {
        EXPECT_EQ(ours, cuda) << rl::emu::narrow::name_of(c.format) << " code " << code;
        EXPECT_EQ(std::signbit(ours), std::signbit(cuda)) << "code " << code;
      }
    }
  }
}

TEST(NarrowFloatMatchesCudaHeaders, float_conversions_match_bit_for_bit) {
  for (const Case& c : kCases) {
    int mismatches = 0;
    for_float_sweep([&](float f) {
      const std::uint32_t ours = rl::emu::narrow::from_float_satfinite(c.format, f, c.rounding);
      const std::uint32_t cuda = rl_oracle_float2narrow(c.oracle, f);
      if (ours != cuda && ++mismatches <= 5) {
        ADD_FAILURE() << rl::emu::narrow::name_of(c.format) << " of " << f << " (0x" << std::hex
                      << std::bit_cast<std::uint32_t>(f) << "): ours 0x" << ours << ", CUDA 0x"
                      << cuda;
      }
    });
    EXPECT_EQ(mismatches, 0) << rl::emu::narrow::name_of(c.format);
  }
}

TEST(NarrowFloatMatchesCudaHeaders, infinities_and_nans_match) {
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            0.0f,
                            -0.0f};
  for (const Case& c : kCases) {
    for (const float f : specials) {
      EXPECT_EQ(rl::emu::narrow::from_float_satfinite(c.format, f, c.rounding),
                rl_oracle_float2narrow(c.oracle, f))
          << rl::emu::narrow::name_of(c.format) << " of " << f;
    }
  }
}

}  // namespace
