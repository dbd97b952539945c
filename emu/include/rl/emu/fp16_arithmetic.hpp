// Arithmetic, comparisons and min/max of __half and __nv_bfloat16 and their
// pairs: the h-prefixed functions of cuda_fp16.h / cuda_bf16.h and the
// operators.  Each operation rounds the exact fp32 result once to 16 bits
// (rl/emu/fp16.hpp says why that equals the hardware's single rounding).
#pragma once

#include <cmath>

#include "rl/emu/float16_types.hpp"

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
