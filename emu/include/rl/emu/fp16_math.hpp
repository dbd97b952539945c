// The math functions of cuda_fp16.h / cuda_bf16.h for both 16-bit types
// (hexp, hsqrt, h2sin, ...) and the NaN-propagating min/max.
#pragma once

#include <cmath>

#include "rl/emu/fp16_arithmetic.hpp"

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
