// CUDA's 16- and 8-bit floating-point types for the CPU emulator:
// __half / __half2 (cuda_fp16.h), __nv_bfloat16 / __nv_bfloat162 (cuda_bf16.h)
// and a minimal __nv_fp8_e4m3 / __nv_fp8_e5m2 (cuda_fp8.h).
//
// Plain C++ with no dependency on the emulator runtime, so host tests and the
// PTX emulation can use it on its own.  Conversions are bit-exact with the
// CUDA headers: round-to-nearest-even, overflow to Inf (fp16) or to the
// largest finite value (fp8 satfinite), subnormals kept, and NaN results
// canonical (0x7FFF for fp16 and bf16, 0x7FFFFFFF for float), which is what
// both the hardware cvt instructions and the headers' host paths produce.
// tests/emu_ptx/ptx_fp16_matches_cuda_headers.cpp checks this against the
// CUDA headers' own host code when a CUDA toolkit is installed.
//
// Arithmetic rounds the exact fp32 result once more to 16 bits.  That equals
// the hardware's single correctly rounded operation: fp32 carries at least
// 2p+2 bits for p = 11 (fp16) and p = 8 (bf16), so the double rounding is
// innocuous for + - * / (Figueroa), and the products inside fma are exact.
//
// The operator set mirrors the CUDA headers, including their ambiguities
// (`h + 1.0f` does not compile with nvcc either), so code that compiles here
// compiles there.
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

// ---------------------------------------------------------------------------
// __half
// ---------------------------------------------------------------------------

// Under racecheck (-fsanitize=thread) the 16- and 8-bit float types start as
// zero.  A `__shared__` array (a function-local `static thread_local` here) of
// a type whose default constructor leaves it uninitialised gets a first-use
// guard variable, which every CUDA thread of a block reads and writes: TSan
// reports that as a race the kernel does not have.  Zero (constant)
// initialisation needs no guard.  Elsewhere the types stay trivially
// default-constructible, as CUDA's are.
#if defined(__SANITIZE_THREAD__)
#define RL_EMU_FP_STORAGE_INIT = {}
#else
#define RL_EMU_FP_STORAGE_INIT
#endif

struct __half_raw {
  unsigned short x;
};

struct __nv_bfloat16_raw {
  unsigned short x;
};

struct __half;
struct __nv_bfloat16;
inline __half __float2half(float f);
inline float __half2float(__half h);
inline __nv_bfloat16 __float2bfloat16(float f);
inline float __bfloat162float(__nv_bfloat16 b);

#define RL_EMU_FP16_INT_CONVERSIONS(Type)                                    \
  Type(short v) : Type(static_cast<double>(v)) {}                            \
  Type(unsigned short v) : Type(static_cast<double>(v)) {}                   \
  Type(int v) : Type(static_cast<double>(v)) {}                              \
  Type(unsigned int v) : Type(static_cast<double>(v)) {}                     \
  Type(long v) : Type(static_cast<double>(v)) {}                             \
  Type(unsigned long v) : Type(static_cast<double>(v)) {}                    \
  Type(long long v) : Type(static_cast<double>(v)) {}                        \
  Type(unsigned long long v) : Type(static_cast<double>(v)) {}               \
  operator signed char() const {                                             \
    return rl::emu::fp16_detail::float_to_int_rz<signed char>(*this);        \
  }                                                                          \
  operator unsigned char() const {                                           \
    return rl::emu::fp16_detail::float_to_int_rz<unsigned char>(*this);      \
  }                                                                          \
  operator char() const {                                                    \
    return rl::emu::fp16_detail::float_to_int_rz<char>(*this);               \
  }                                                                          \
  operator short() const {                                                   \
    return rl::emu::fp16_detail::float_to_int_rz<short>(*this);              \
  }                                                                          \
  operator unsigned short() const {                                          \
    return rl::emu::fp16_detail::float_to_int_rz<unsigned short>(*this);     \
  }                                                                          \
  operator int() const {                                                     \
    return rl::emu::fp16_detail::float_to_int_rz<int>(*this);                \
  }                                                                          \
  operator unsigned int() const {                                            \
    return rl::emu::fp16_detail::float_to_int_rz<unsigned int>(*this);       \
  }                                                                          \
  operator long() const {                                                    \
    return rl::emu::fp16_detail::float_to_int_rz<long>(*this);               \
  }                                                                          \
  operator unsigned long() const {                                           \
    return rl::emu::fp16_detail::float_to_int_rz<unsigned long>(*this);      \
  }                                                                          \
  operator long long() const {                                               \
    return rl::emu::fp16_detail::float_to_int_rz<long long>(*this);          \
  }                                                                          \
  operator unsigned long long() const {                                      \
    return rl::emu::fp16_detail::float_to_int_rz<unsigned long long>(*this); \
  }

struct alignas(2) __half {
  unsigned short __x RL_EMU_FP_STORAGE_INIT;

  __half() = default;
  constexpr __half(const __half_raw& raw) : __x(raw.x) {}
  __half(float f) : __x(rl::emu::fp16_detail::float_to_half_bits(f)) {}
  __half(double d)
      : __x(rl::emu::fp16_detail::float_to_half_bits(
            rl::emu::fp16_detail::double_to_float_round_odd(d))) {}
  explicit __half(const __nv_bfloat16& b);
  operator __half_raw() const { return __half_raw{__x}; }
  __half& operator=(const __half_raw& raw) {
    __x = raw.x;
    return *this;
  }
  operator float() const { return rl::emu::fp16_detail::half_bits_to_float(__x); }
  explicit operator bool() const { return (__x & 0x7FFFU) != 0U; }
  RL_EMU_FP16_INT_CONVERSIONS(__half)
};

struct alignas(4) __half2 {
  __half x;
  __half y;

  __half2() = default;
  constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
};

// ---------------------------------------------------------------------------
// __nv_bfloat16
// ---------------------------------------------------------------------------

struct alignas(2) __nv_bfloat16 {
  unsigned short __x RL_EMU_FP_STORAGE_INIT;

  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw& raw) : __x(raw.x) {}
  __nv_bfloat16(float f) : __x(rl::emu::fp16_detail::float_to_bfloat16_bits(f)) {}
  __nv_bfloat16(double d)
      : __x(rl::emu::fp16_detail::float_to_bfloat16_bits(
            rl::emu::fp16_detail::double_to_float_round_odd(d))) {}
  explicit __nv_bfloat16(const __half& h)
      : __x(rl::emu::fp16_detail::float_to_bfloat16_bits(static_cast<float>(h))) {}
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
  __nv_bfloat16& operator=(const __nv_bfloat16_raw& raw) {
    __x = raw.x;
    return *this;
  }
  operator float() const { return rl::emu::fp16_detail::bfloat16_bits_to_float(__x); }
  explicit operator bool() const { return (__x & 0x7FFFU) != 0U; }
  RL_EMU_FP16_INT_CONVERSIONS(__nv_bfloat16)
};

#undef RL_EMU_FP16_INT_CONVERSIONS

inline __half::__half(const __nv_bfloat16& b)
    : __x(rl::emu::fp16_detail::float_to_half_bits(static_cast<float>(b))) {}

struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x;
  __nv_bfloat16 y;

  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
};

using half = __half;
using half2 = __half2;
using nv_bfloat16 = __nv_bfloat16;
using nv_bfloat162 = __nv_bfloat162;

static_assert(sizeof(__half) == 2 && alignof(__half) == 2);
static_assert(sizeof(__half2) == 4 && alignof(__half2) == 4);
static_assert(sizeof(__nv_bfloat16) == 2 && alignof(__nv_bfloat16) == 2);
static_assert(sizeof(__nv_bfloat162) == 4 && alignof(__nv_bfloat162) == 4);

// --- conversions and bit casts ---------------------------------------------

inline __half __float2half(float f) {
  return __half_raw{rl::emu::fp16_detail::float_to_half_bits(f)};
}
inline __half __float2half_rn(float f) {
  return __float2half(f);
}
inline __half __double2half(double d) {
  return __half(d);
}
inline float __half2float(__half h) {
  return rl::emu::fp16_detail::half_bits_to_float(h.__x);
}
inline __half2 __float2half2_rn(float f) {
  return {__float2half(f), __float2half(f)};
}
inline __half2 __floats2half2_rn(float lo, float hi) {
  return {__float2half(lo), __float2half(hi)};
}
inline __half2 __halves2half2(__half lo, __half hi) {
  return {lo, hi};
}
inline __half2 __half2half2(__half h) {
  return {h, h};
}
inline __half2 make_half2(__half lo, __half hi) {
  return {lo, hi};
}
inline __half __low2half(__half2 h) {
  return h.x;
}
inline __half __high2half(__half2 h) {
  return h.y;
}
inline float __low2float(__half2 h) {
  return __half2float(h.x);
}
inline float __high2float(__half2 h) {
  return __half2float(h.y);
}
inline unsigned short __half_as_ushort(__half h) {
  return h.__x;
}
inline short __half_as_short(__half h) {
  return static_cast<short>(h.__x);
}
inline __half __ushort_as_half(unsigned short u) {
  return __half_raw{u};
}
inline __half __short_as_half(short s) {
  return __half_raw{static_cast<unsigned short>(s)};
}
// float2 comes from the runtime's vector types; any {x, y} pair of floats works.
template <typename Float2>
__half2 __float22half2_rn(const Float2& f) {
  return {__float2half(f.x), __float2half(f.y)};
}

inline __nv_bfloat16 __float2bfloat16(float f) {
  return __nv_bfloat16_raw{rl::emu::fp16_detail::float_to_bfloat16_bits(f)};
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  return __float2bfloat16(f);
}
inline __nv_bfloat16 __double2bfloat16(double d) {
  return __nv_bfloat16(d);
}
inline float __bfloat162float(__nv_bfloat16 b) {
  return rl::emu::fp16_detail::bfloat16_bits_to_float(b.__x);
}
inline __nv_bfloat162 __float2bfloat162_rn(float f) {
  return {__float2bfloat16(f), __float2bfloat16(f)};
}
inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi) {
  return {__float2bfloat16(lo), __float2bfloat16(hi)};
}
template <typename Float2>
__nv_bfloat162 __float22bfloat162_rn(const Float2& f) {
  return {__float2bfloat16(f.x), __float2bfloat16(f.y)};
}
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return {lo, hi};
}
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 b) {
  return {b, b};
}
inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return {lo, hi};
}
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 b) {
  return b.x;
}
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 b) {
  return b.y;
}
inline float __low2float(__nv_bfloat162 b) {
  return __bfloat162float(b.x);
}
inline float __high2float(__nv_bfloat162 b) {
  return __bfloat162float(b.y);
}
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) {
  return b.__x;
}
inline short __bfloat16_as_short(__nv_bfloat16 b) {
  return static_cast<short>(b.__x);
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) {
  return __nv_bfloat16_raw{u};
}
inline __nv_bfloat16 __short_as_bfloat16(short s) {
  return __nv_bfloat16_raw{static_cast<unsigned short>(s)};
}
inline __half __bfloat162half(__nv_bfloat16 b) {
  return __half(b);
}
inline __nv_bfloat16 __half2bfloat16(__half h) {
  return __nv_bfloat16(h);
}

// float2 results need the runtime's vector types, present under the emulator.
#if defined(RL_EMULATE) && __has_include("rl/emu/types.hpp")
#include "rl/emu/types.hpp"
inline float2 __half22float2(__half2 h) {
  return float2{__half2float(h.x), __half2float(h.y)};
}
inline float2 __bfloat1622float2(__nv_bfloat162 b) {
  return float2{__bfloat162float(b.x), __bfloat162float(b.y)};
}
#endif

// --- arithmetic, comparisons and min/max, identical for both 16-bit types ----

namespace rl::emu::fp16_detail {

// __hmax/__hmin: a NaN operand yields the other one, two NaNs the canonical
// NaN, and +0 is larger than -0 (cuda_fp16.h).
template <typename T>
T max_of(T a, T b, bool want_max) {
  const float fa = static_cast<float>(a);
  const float fb = static_cast<float>(b);
  if (std::isnan(fa) && std::isnan(fb)) {
    T nan;
    nan.__x = kCanonicalNan16;
    return nan;
  }
  if (std::isnan(fa)) {
    return b;
  }
  if (std::isnan(fb)) {
    return a;
  }
  if (fa == fb) {  // only +0 vs -0 differs in bits; the sign bit decides
    const bool a_negative = (a.__x & 0x8000U) != 0U;
    return (a_negative == want_max) ? b : a;
  }
  return ((fa > fb) == want_max) ? a : b;
}

}  // namespace rl::emu::fp16_detail

#define RL_EMU_FP16_SCALAR_OPS(T, T2, prefix)                                                  \
  inline T prefix##add(T a, T b) {                                                             \
    return T(static_cast<float>(a) + static_cast<float>(b));                                   \
  }                                                                                            \
  inline T prefix##sub(T a, T b) {                                                             \
    return T(static_cast<float>(a) - static_cast<float>(b));                                   \
  }                                                                                            \
  inline T prefix##mul(T a, T b) {                                                             \
    return T(static_cast<float>(a) * static_cast<float>(b));                                   \
  }                                                                                            \
  inline T prefix##div(T a, T b) {                                                             \
    return T(static_cast<float>(a) / static_cast<float>(b));                                   \
  }                                                                                            \
  inline T prefix##fma(T a, T b, T c) {                                                        \
    return T(rl::emu::fp16_detail::fma_round_odd(static_cast<float>(a), static_cast<float>(b), \
                                                 static_cast<float>(c)));                      \
  }                                                                                            \
  inline T prefix##neg(T a) {                                                                  \
    a.__x = static_cast<unsigned short>(a.__x ^ 0x8000U);                                      \
    return a;                                                                                  \
  }                                                                                            \
  inline T __habs(T a) {                                                                       \
    a.__x = static_cast<unsigned short>(a.__x & 0x7FFFU);                                      \
    return a;                                                                                  \
  }                                                                                            \
  inline T __hmax(T a, T b) {                                                                  \
    return rl::emu::fp16_detail::max_of(a, b, true);                                           \
  }                                                                                            \
  inline T __hmin(T a, T b) {                                                                  \
    return rl::emu::fp16_detail::max_of(a, b, false);                                          \
  }                                                                                            \
  inline bool __hisnan(T a) {                                                                  \
    return std::isnan(static_cast<float>(a));                                                  \
  }                                                                                            \
  inline int __hisinf(T a) {                                                                   \
    const float f = static_cast<float>(a);                                                     \
    return std::isinf(f) ? (f < 0.0f ? -1 : 1) : 0;                                            \
  }                                                                                            \
  inline bool __heq(T a, T b) {                                                                \
    return static_cast<float>(a) == static_cast<float>(b);                                     \
  }                                                                                            \
  inline bool __hne(T a, T b) {                                                                \
    return !__hisnan(a) && !__hisnan(b) && static_cast<float>(a) != static_cast<float>(b);     \
  }                                                                                            \
  inline bool __hneu(T a, T b) {                                                               \
    return !__heq(a, b);                                                                       \
  }                                                                                            \
  inline bool __hlt(T a, T b) {                                                                \
    return static_cast<float>(a) < static_cast<float>(b);                                      \
  }                                                                                            \
  inline bool __hle(T a, T b) {                                                                \
    return static_cast<float>(a) <= static_cast<float>(b);                                     \
  }                                                                                            \
  inline bool __hgt(T a, T b) {                                                                \
    return static_cast<float>(a) > static_cast<float>(b);                                      \
  }                                                                                            \
  inline bool __hge(T a, T b) {                                                                \
    return static_cast<float>(a) >= static_cast<float>(b);                                     \
  }                                                                                            \
  inline T operator+(const T& a, const T& b) {                                                 \
    return prefix##add(a, b);                                                                  \
  }                                                                                            \
  inline T operator-(const T& a, const T& b) {                                                 \
    return prefix##sub(a, b);                                                                  \
  }                                                                                            \
  inline T operator*(const T& a, const T& b) {                                                 \
    return prefix##mul(a, b);                                                                  \
  }                                                                                            \
  inline T operator/(const T& a, const T& b) {                                                 \
    return prefix##div(a, b);                                                                  \
  }                                                                                            \
  inline T& operator+=(T& a, const T& b) {                                                     \
    return a = prefix##add(a, b);                                                              \
  }                                                                                            \
  inline T& operator-=(T& a, const T& b) {                                                     \
    return a = prefix##sub(a, b);                                                              \
  }                                                                                            \
  inline T& operator*=(T& a, const T& b) {                                                     \
    return a = prefix##mul(a, b);                                                              \
  }                                                                                            \
  inline T& operator/=(T& a, const T& b) {                                                     \
    return a = prefix##div(a, b);                                                              \
  }                                                                                            \
  inline T& operator++(T& a) {                                                                 \
    return a = prefix##add(a, T(1.0f));                                                        \
  }                                                                                            \
  inline T& operator--(T& a) {                                                                 \
    return a = prefix##sub(a, T(1.0f));                                                        \
  }                                                                                            \
  inline T operator++(T& a, int) {                                                             \
    const T old = a;                                                                           \
    ++a;                                                                                       \
    return old;                                                                                \
  }                                                                                            \
  inline T operator--(T& a, int) {                                                             \
    const T old = a;                                                                           \
    --a;                                                                                       \
    return old;                                                                                \
  }                                                                                            \
  inline T operator+(const T& a) {                                                             \
    return a;                                                                                  \
  }                                                                                            \
  inline T operator-(const T& a) {                                                             \
    return prefix##neg(a);                                                                     \
  }                                                                                            \
  inline bool operator==(const T& a, const T& b) {                                             \
    return __heq(a, b);                                                                        \
  }                                                                                            \
  inline bool operator!=(const T& a, const T& b) {                                             \
    return __hneu(a, b);                                                                       \
  }                                                                                            \
  inline bool operator<(const T& a, const T& b) {                                              \
    return __hlt(a, b);                                                                        \
  }                                                                                            \
  inline bool operator<=(const T& a, const T& b) {                                             \
    return __hle(a, b);                                                                        \
  }                                                                                            \
  inline bool operator>(const T& a, const T& b) {                                              \
    return __hgt(a, b);                                                                        \
  }                                                                                            \
  inline bool operator>=(const T& a, const T& b) {                                             \
    return __hge(a, b);                                                                        \
  }                                                                                            \
  inline T2 prefix##add2(T2 a, T2 b) {                                                         \
    return {prefix##add(a.x, b.x), prefix##add(a.y, b.y)};                                     \
  }                                                                                            \
  inline T2 prefix##sub2(T2 a, T2 b) {                                                         \
    return {prefix##sub(a.x, b.x), prefix##sub(a.y, b.y)};                                     \
  }                                                                                            \
  inline T2 prefix##mul2(T2 a, T2 b) {                                                         \
    return {prefix##mul(a.x, b.x), prefix##mul(a.y, b.y)};                                     \
  }                                                                                            \
  inline T2 __h2div(T2 a, T2 b) {                                                              \
    return {prefix##div(a.x, b.x), prefix##div(a.y, b.y)};                                     \
  }                                                                                            \
  inline T2 prefix##fma2(T2 a, T2 b, T2 c) {                                                   \
    return {prefix##fma(a.x, b.x, c.x), prefix##fma(a.y, b.y, c.y)};                           \
  }                                                                                            \
  inline T2 prefix##neg2(T2 a) {                                                               \
    return {prefix##neg(a.x), prefix##neg(a.y)};                                               \
  }                                                                                            \
  inline T2 __habs2(T2 a) {                                                                    \
    return {__habs(a.x), __habs(a.y)};                                                         \
  }                                                                                            \
  inline T2 __hmax2(T2 a, T2 b) {                                                              \
    return {__hmax(a.x, b.x), __hmax(a.y, b.y)};                                               \
  }                                                                                            \
  inline T2 __hmin2(T2 a, T2 b) {                                                              \
    return {__hmin(a.x, b.x), __hmin(a.y, b.y)};                                               \
  }                                                                                            \
  inline T2 operator+(const T2& a, const T2& b) {                                              \
    return prefix##add2(a, b);                                                                 \
  }                                                                                            \
  inline T2 operator-(const T2& a, const T2& b) {                                              \
    return prefix##sub2(a, b);                                                                 \
  }                                                                                            \
  inline T2 operator*(const T2& a, const T2& b) {                                              \
    return prefix##mul2(a, b);                                                                 \
  }                                                                                            \
  inline T2 operator/(const T2& a, const T2& b) {                                              \
    return __h2div(a, b);                                                                      \
  }                                                                                            \
  inline T2& operator+=(T2& a, const T2& b) {                                                  \
    return a = prefix##add2(a, b);                                                             \
  }                                                                                            \
  inline T2& operator-=(T2& a, const T2& b) {                                                  \
    return a = prefix##sub2(a, b);                                                             \
  }                                                                                            \
  inline T2& operator*=(T2& a, const T2& b) {                                                  \
    return a = prefix##mul2(a, b);                                                             \
  }                                                                                            \
  inline T2& operator/=(T2& a, const T2& b) {                                                  \
    return a = __h2div(a, b);                                                                  \
  }                                                                                            \
  inline T2 operator+(const T2& a) {                                                           \
    return a;                                                                                  \
  }                                                                                            \
  inline T2 operator-(const T2& a) {                                                           \
    return prefix##neg2(a);                                                                    \
  }                                                                                            \
  inline bool operator==(const T2& a, const T2& b) {                                           \
    return a.x == b.x && a.y == b.y;                                                           \
  }                                                                                            \
  inline bool operator!=(const T2& a, const T2& b) {                                           \
    return a.x != b.x && a.y != b.y;                                                           \
  }

// cuda_fp16.h and cuda_bf16.h give both types the same function names
// (__hadd, __hmul2, ...), overloaded on the argument type.
RL_EMU_FP16_SCALAR_OPS(__half, __half2, __h)
RL_EMU_FP16_SCALAR_OPS(__nv_bfloat16, __nv_bfloat162, __h)

#undef RL_EMU_FP16_SCALAR_OPS

// --- NaN-propagating min/max and the math functions -------------------------

namespace rl::emu::fp16_detail {

// __hmax_nan/__hmin_nan: like __hmax/__hmin, but a NaN operand gives the
// canonical NaN.
template <typename T>
T max_of_nan(T a, T b, bool want_max) {
  if (std::isnan(static_cast<float>(a)) || std::isnan(static_cast<float>(b))) {
    T nan;
    nan.__x = kCanonicalNan16;
    return nan;
  }
  return max_of(a, b, want_max);
}

// A math function of a 16-bit value: evaluated in double (glibc, within 1
// ulp of double) and rounded once to the 16-bit type (round to nearest even,
// via round-to-odd float): the correctly rounded result unless the exact
// value lies within 2^-52 relative of a 16-bit halfway point.  cuda_fp16.hpp's
// device code uses ex2/lg2/sin/cos approximations, rounds to nearest and
// patches the inputs it knows to misround, so most inputs agree; that was not
// compared on a GPU (none was available), so compare with tolerances.
template <typename T, typename F>
T apply_rounded(T a, F f) {
  return T(f(static_cast<double>(static_cast<float>(a))));
}

}  // namespace rl::emu::fp16_detail

// h<name>(T) and h2<name>(T2), for __half and __nv_bfloat16 alike.
#define RL_EMU_FP16_MATH_FN(T, T2, name, expr)                                    \
  inline T h##name(T a) {                                                         \
    return rl::emu::fp16_detail::apply_rounded(a, [](double x) { return expr; }); \
  }                                                                               \
  inline T2 h2##name(T2 a) {                                                      \
    return {h##name(a.x), h##name(a.y)};                                          \
  }
#define RL_EMU_FP16_MATH(T, T2)                           \
  RL_EMU_FP16_MATH_FN(T, T2, exp, std::exp(x))            \
  RL_EMU_FP16_MATH_FN(T, T2, exp2, std::exp2(x))          \
  RL_EMU_FP16_MATH_FN(T, T2, exp10, std::pow(10.0, x))    \
  RL_EMU_FP16_MATH_FN(T, T2, log, std::log(x))            \
  RL_EMU_FP16_MATH_FN(T, T2, log2, std::log2(x))          \
  RL_EMU_FP16_MATH_FN(T, T2, log10, std::log10(x))        \
  RL_EMU_FP16_MATH_FN(T, T2, sqrt, std::sqrt(x))          \
  RL_EMU_FP16_MATH_FN(T, T2, rsqrt, 1.0 / std::sqrt(x))   \
  RL_EMU_FP16_MATH_FN(T, T2, rcp, 1.0 / x)                \
  RL_EMU_FP16_MATH_FN(T, T2, sin, std::sin(x))            \
  RL_EMU_FP16_MATH_FN(T, T2, cos, std::cos(x))            \
  RL_EMU_FP16_MATH_FN(T, T2, tanh, std::tanh(x))          \
  RL_EMU_FP16_MATH_FN(T, T2, ceil, std::ceil(x))          \
  RL_EMU_FP16_MATH_FN(T, T2, floor, std::floor(x))        \
  RL_EMU_FP16_MATH_FN(T, T2, trunc, std::trunc(x))        \
  RL_EMU_FP16_MATH_FN(T, T2, rint, std::nearbyint(x))     \
  inline T __hmax_nan(T a, T b) {                         \
    return rl::emu::fp16_detail::max_of_nan(a, b, true);  \
  }                                                       \
  inline T __hmin_nan(T a, T b) {                         \
    return rl::emu::fp16_detail::max_of_nan(a, b, false); \
  }                                                       \
  inline T2 __hmax2_nan(T2 a, T2 b) {                     \
    return {__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)};  \
  }                                                       \
  inline T2 __hmin2_nan(T2 a, T2 b) {                     \
    return {__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)};  \
  }

RL_EMU_FP16_MATH(__half, __half2)
RL_EMU_FP16_MATH(__nv_bfloat16, __nv_bfloat162)

#undef RL_EMU_FP16_MATH
#undef RL_EMU_FP16_MATH_FN

// --- atomics and cache-operator accesses (device code under the emulator) ---

#if defined(RL_EMULATE) && __has_include("rl/emu/block.hpp")
#include "rl/emu/block.hpp"
#include "rl/emu/math.hpp"

// atomicAdd on 16-bit floats: a compare-and-swap loop whose update is the
// 16-bit add (one rounding, as the hardware's).  The pair forms update the
// whole 32-bit word at once, which is at least as strong as CUDA's guarantee
// (each half atomic on its own).
#define RL_EMU_FP16_ATOMICS(T, T2)                                                           \
  inline T atomicAdd(T* address, T value) {                                                  \
    return rl::emu::detail::atomic_update(address, [value](T old) { return old + value; });  \
  }                                                                                          \
  inline T2 atomicAdd(T2* address, T2 value) {                                               \
    return rl::emu::detail::atomic_update(address, [value](T2 old) { return old + value; }); \
  }                                                                                          \
  template <>                                                                                \
  struct rl::emu::detail::cache_op_type<T> : std::true_type {};                              \
  template <>                                                                                \
  struct rl::emu::detail::cache_op_type<T2> : std::true_type {};
RL_EMU_FP16_ATOMICS(__half, __half2)
RL_EMU_FP16_ATOMICS(__nv_bfloat16, __nv_bfloat162)
#undef RL_EMU_FP16_ATOMICS
#endif

// ---------------------------------------------------------------------------
// fp8 (cuda_fp8.h), minimal: construction from float with satfinite
// round-to-nearest-even, conversion to float, raw storage in __x.
// ---------------------------------------------------------------------------

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
