// cuda_fp16.h's and cuda_bf16.h's conversion and bit-cast functions
// (__float2half, __half_as_ushort, __floats2bfloat162_rn, ...), bit-exact with
// the CUDA headers through fp16_rounding.hpp.
#pragma once

#include "rl/emu/float16_types.hpp"

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
