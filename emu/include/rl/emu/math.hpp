// CUDA math and bit intrinsics on the host.
//
// Exactness: the `_rn` arithmetic intrinsics, fmaf, sqrtf and the bit
// intrinsics are correctly rounded / exact in CUDA and bit-exact here (the
// project compiles with -ffp-contract=off semantics of ISO C++, so a + b is
// one rounding).  CUDA defines the fast intrinsics and the libm-style
// functions only to within an error bound; here they are computed with
// glibc's float functions (within 1 ulp), which lies inside CUDA's bound, so
// results can differ from a GPU by up to CUDA's documented maximum error
// (CUDA Programming Guide, "Mathematical Functions", tables of ulp errors):
//   __expf: 2 + floor(|1.173 x|) ulp; __logf: 2^-21.41 absolute on [0.5, 2],
//   else 3 ulp; __sinf/__cosf: 2^-21.41 absolute on [-pi, pi]; __tanf derived;
//   __powf via exp2/log2; __fdividef: 2 ulp for |y| in [2^-126, 2^126]
//   (the GPU returns 0 for 2^126 < |y| < 2^128, the emulator the quotient);
//   rsqrtf: 2 ulp; expf, logf, tanhf, erff: 2 ulp (1 ulp here).
// Tests of kernels therefore compare with tolerances (rl/validate.hpp), never
// bit-for-bit against a GPU.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

// Names glibc's <math.h> already declares with C linkage (as internal
// aliases that libm does not export): defined here with the same linkage.
extern "C" {
inline float __expf(float x) noexcept {
  return std::exp(x);
}
inline float __exp10f(float x) noexcept {
  return ::exp10f(x);
}
inline float __logf(float x) noexcept {
  return std::log(x);
}
inline float __log2f(float x) noexcept {
  return std::log2(x);
}
inline float __log10f(float x) noexcept {
  return std::log10(x);
}
inline float __sinf(float x) noexcept {
  return std::sin(x);
}
inline float __cosf(float x) noexcept {
  return std::cos(x);
}
inline float __tanf(float x) noexcept {
  return std::tan(x);
}
inline float __powf(float x, float y) noexcept {
  return std::pow(x, y);
}
inline void __sincosf(float x, float* s, float* c) noexcept {
  *s = std::sin(x);
  *c = std::cos(x);
}
}

inline float __fdividef(float x, float y) {
  return x / y;
}
inline float __frcp_rn(float x) {
  return 1.0f / x;
}
inline float __fsqrt_rn(float x) {
  return std::sqrt(x);
}
inline float __frsqrt_rn(float x) {
  return 1.0f / std::sqrt(x);
}
inline float rsqrtf(float x) {
  return 1.0f / std::sqrt(x);
}
inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
inline float __fmaf_rn(float a, float b, float c) {
  return std::fma(a, b, c);
}
inline float __fadd_rn(float a, float b) {
  return a + b;
}
inline float __fsub_rn(float a, float b) {
  return a - b;
}
inline float __fmul_rn(float a, float b) {
  return a * b;
}
inline float __fdiv_rn(float a, float b) {
  return a / b;
}
inline double __fma_rn(double a, double b, double c) {
  return std::fma(a, b, c);
}
inline double __dadd_rn(double a, double b) {
  return a + b;
}
inline double __dmul_rn(double a, double b) {
  return a * b;
}
// Clamps to [0, 1]; NaN gives 0 (as on the GPU).
inline float __saturatef(float x) {
  return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
}

template <typename T>
inline T __ldg(const T* address) {
  return *address;
}

inline int __float_as_int(float x) {
  int r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline unsigned int __float_as_uint(float x) {
  unsigned int r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline float __int_as_float(int x) {
  float r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline float __uint_as_float(unsigned int x) {
  float r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline long long __double_as_longlong(double x) {
  long long r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline double __longlong_as_double(long long x) {
  double r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}
inline int __float2int_rn(float x) {
  return static_cast<int>(std::nearbyint(x));
}
inline int __float2int_rz(float x) {
  return static_cast<int>(x);
}
inline float __int2float_rn(int x) {
  return static_cast<float>(x);
}

inline int __popc(unsigned int x) {
  return __builtin_popcount(x);
}
inline int __popcll(unsigned long long x) {
  return __builtin_popcountll(x);
}
inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) {
  return __builtin_ffs(x);
}
inline int __ffsll(long long x) {
  return __builtin_ffsll(x);
}
inline unsigned int __brev(unsigned int x) {
  unsigned int r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline int __mulhi(int a, int b) {
  return static_cast<int>((static_cast<long long>(a) * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  const unsigned long long a_lo = a & 0xffffffffull, a_hi = a >> 32;
  const unsigned long long b_lo = b & 0xffffffffull, b_hi = b >> 32;
  const unsigned long long mid = (a_lo * b_lo >> 32) + (a_hi * b_lo & 0xffffffffull) + a_lo * b_hi;
  return a_hi * b_hi + (a_hi * b_lo >> 32) + (mid >> 32);
}
// PRMT: byte i of the result is byte (s >> 4i) & 7 of the 8-byte value {y, x}.
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned int r = 0;
  for (unsigned i = 0; i < 4; ++i)
    r |= static_cast<unsigned>((v >> (8 * ((s >> (4 * i)) & 7u))) & 0xffu) << (8 * i);
  return r;
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>((v << (shift & 31u)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned int>(v >> (shift & 31u));
}

// CUDA's global min/max overloads (std::min/std::max stay available).
inline int min(int a, int b) {
  return b < a ? b : a;
}
inline int max(int a, int b) {
  return a < b ? b : a;
}
inline unsigned int min(unsigned int a, unsigned int b) {
  return b < a ? b : a;
}
inline unsigned int max(unsigned int a, unsigned int b) {
  return a < b ? b : a;
}
inline long long min(long long a, long long b) {
  return b < a ? b : a;
}
inline long long max(long long a, long long b) {
  return a < b ? b : a;
}
inline unsigned long long min(unsigned long long a, unsigned long long b) {
  return b < a ? b : a;
}
inline unsigned long long max(unsigned long long a, unsigned long long b) {
  return a < b ? b : a;
}
inline float min(float a, float b) {
  return std::fmin(a, b);
}
inline float max(float a, float b) {
  return std::fmax(a, b);
}
inline double min(double a, double b) {
  return std::fmin(a, b);
}
inline double max(double a, double b) {
  return std::fmax(a, b);
}
