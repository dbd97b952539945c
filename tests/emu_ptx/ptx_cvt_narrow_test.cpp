// The emulated rl::ptx narrow-float cvt wrappers (rl/ptx_cvt_narrow.hpp) on an
// emulated Blackwell (RL_EMU_CC=100): each packs a's code above b's exactly as
// PTX's cvt does, with rl/emu/narrow_float.hpp's conversion of each value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/emu/narrow_float.hpp"
#include "rl/ptx_cvt_narrow.hpp"

namespace {

using rl::emu::narrow::Format;
using rl::emu::narrow::Rounding;

// Values that reach every branch: each format's codes' values and their
// midpoints, beyond the largest, subnormal and tiny, signed zeros, Inf, NaN.
std::vector<float> probe_values() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1e-30f,
                               -1e-30f,
                               0.3f,
                               -2.75f,
                               5.0f,
                               448.0f,
                               500.0f,
                               -1e5f,
                               3e38f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  for (int k = -20; k <= 20; ++k) {
    for (const double m : {1.0, 1.0625, 1.125, 1.25, 1.375, 1.5, 1.75, 1.875}) {
      values.push_back(static_cast<float>(std::ldexp(m, k)));
      values.push_back(static_cast<float>(-std::ldexp(m, k)));
    }
  }
  return values;
}

std::uint32_t code(Format f, float x, Rounding r = Rounding::rn) {
  return rl::emu::narrow::from_float_satfinite(f, x, r);
}

TEST(PtxCvtNarrow, the_emulated_device_is_a_blackwell) {
  ASSERT_EQ(rl::emu::compute_capability(), 100) << "this test runs with RL_EMU_CC=100";
}

TEST(PtxCvtNarrow, each_wrapper_packs_a_above_b) {
  const std::vector<float> values = probe_values();
  for (const float a : values) {
    for (const float b : {values[4], values[5], values[13], a}) {
      EXPECT_EQ(rl::ptx::cvt_rn_e4m3x2_f32(a, b),
                (code(Format::e4m3, a) << 8U) | code(Format::e4m3, b));
      EXPECT_EQ(rl::ptx::cvt_rn_e5m2x2_f32(a, b),
                (code(Format::e5m2, a) << 8U) | code(Format::e5m2, b));
      EXPECT_EQ(rl::ptx::cvt_rn_e2m3x2_f32(a, b),
                (code(Format::e2m3, a) << 8U) | code(Format::e2m3, b));
      EXPECT_EQ(rl::ptx::cvt_rn_e3m2x2_f32(a, b),
                (code(Format::e3m2, a) << 8U) | code(Format::e3m2, b));
      EXPECT_EQ(rl::ptx::cvt_rn_e2m1x2_f32(a, b),
                (code(Format::e2m1, a) << 4U) | code(Format::e2m1, b));
      EXPECT_EQ(rl::ptx::cvt_rz_ue8m0x2_f32(a, b), (code(Format::ue8m0, a, Rounding::rz) << 8U) |
                                                       code(Format::ue8m0, b, Rounding::rz));
      EXPECT_EQ(rl::ptx::cvt_rp_ue8m0x2_f32(a, b), (code(Format::ue8m0, a, Rounding::rp) << 8U) |
                                                       code(Format::ue8m0, b, Rounding::rp));
    }
  }
}

// Hand-checked packings (PTX ISA §9.7.9.21's Semantics: d[15:8] = cvt(a)).
TEST(PtxCvtNarrow, known_pairs) {
  EXPECT_EQ(rl::ptx::cvt_rn_e4m3x2_f32(1.0f, -2.0f), 0x38C0U);
  EXPECT_EQ(rl::ptx::cvt_rn_e2m1x2_f32(6.0f, -0.5f), 0x79U);
  EXPECT_EQ(rl::ptx::cvt_rn_e2m3x2_f32(7.5f, 1e9f), 0x1F1FU) << "6-bit codes, 2 high bits 0";
  EXPECT_EQ(rl::ptx::cvt_rn_e3m2x2_f32(-28.0f, std::nanf("")), 0x3F1FU) << "NaN: +MAX_NORM";
  EXPECT_EQ(rl::ptx::cvt_rz_ue8m0x2_f32(3.0f, 0.25f), 0x807DU);
  EXPECT_EQ(rl::ptx::cvt_rp_ue8m0x2_f32(3.0f, std::nanf("")), 0x81FFU);
}

}  // namespace
