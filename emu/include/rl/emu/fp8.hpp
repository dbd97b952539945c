// cuda_fp8.h's __nv_fp8_e4m3 and __nv_fp8_e5m2 for the emulator, minimal:
// construction from float with satfinite round-to-nearest-even, conversion to
// float, raw storage in __x.  The bit-level codecs (fp16_detail::Fp8Format)
// are what the emulated fp8 mma and wgmma decode their operands with; both
// directions are rl/emu/narrow_float.hpp's e4m3 and e5m2.
#pragma once

#include <bit>
#include <cmath>

#include "rl/emu/float16_types.hpp"
#include "rl/emu/narrow_float.hpp"

using __nv_fp8_storage_t = unsigned char;

namespace rl::emu::fp16_detail {

// Which fp8 format a byte holds; the codecs are rl/emu/narrow_float.hpp's.
struct Fp8Format {
  rl::emu::narrow::Format format;
};

inline constexpr Fp8Format kE4M3{rl::emu::narrow::Format::e4m3};
inline constexpr Fp8Format kE5M2{rl::emu::narrow::Format::e5m2};

// The exact value; NaN as the canonical float NaN 0x7FFFFFFF.
inline float fp8_bits_to_float(unsigned char bits, const Fp8Format& format) {
  const double value = rl::emu::narrow::to_double(format.format, bits);
  return std::isnan(value) ? std::bit_cast<float>(kCanonicalNan32) : static_cast<float>(value);
}

// cvt.rn.satfinite: finite overflow and Inf become the largest finite value;
// NaN becomes 0x7F (cuda_fp8.hpp first makes every NaN the positive canonical
// one).
inline unsigned char float_to_fp8_bits_satfinite(float f, const Fp8Format& format) {
  return static_cast<unsigned char>(rl::emu::narrow::from_float_satfinite(format.format, f));
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
