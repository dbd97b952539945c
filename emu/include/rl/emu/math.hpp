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

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "rl/emu/hopper.hpp"
#include "rl/emu/types.hpp"

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

// Cache-operator loads and stores (ld.global.{cs,cg,ca,lu,cv}, st.global.
// {cs,cg,wb,wt}).  PTX defines cache operators as performance hints that do
// not change memory consistency, so each is a plain access here.  They exist
// for the types CUDA overloads them for (sm_32_intrinsics.h, cuda_fp16.h,
// cuda_bf16.h); the 16-bit float types join through rl/emu/fp16.hpp's
// rl_emu_cache_op_type specialisations, so a kernel that compiles here
// compiles with nvcc.
namespace rl::emu::detail {
template <typename T>
struct cache_op_type : std::false_type {};
}  // namespace rl::emu::detail
#define RL_EMU_CACHE_OP_TYPE(T) \
  template <>                   \
  struct rl::emu::detail::cache_op_type<T> : std::true_type {};
RL_EMU_CACHE_OP_TYPE(char)
RL_EMU_CACHE_OP_TYPE(signed char)
RL_EMU_CACHE_OP_TYPE(unsigned char)
RL_EMU_CACHE_OP_TYPE(short)
RL_EMU_CACHE_OP_TYPE(unsigned short)
RL_EMU_CACHE_OP_TYPE(int)
RL_EMU_CACHE_OP_TYPE(unsigned int)
RL_EMU_CACHE_OP_TYPE(long)
RL_EMU_CACHE_OP_TYPE(unsigned long)
RL_EMU_CACHE_OP_TYPE(long long)
RL_EMU_CACHE_OP_TYPE(unsigned long long)
RL_EMU_CACHE_OP_TYPE(float)
RL_EMU_CACHE_OP_TYPE(double)
RL_EMU_CACHE_OP_TYPE(char2)
RL_EMU_CACHE_OP_TYPE(char4)
RL_EMU_CACHE_OP_TYPE(uchar2)
RL_EMU_CACHE_OP_TYPE(uchar4)
RL_EMU_CACHE_OP_TYPE(short2)
RL_EMU_CACHE_OP_TYPE(short4)
RL_EMU_CACHE_OP_TYPE(ushort2)
RL_EMU_CACHE_OP_TYPE(ushort4)
RL_EMU_CACHE_OP_TYPE(int2)
RL_EMU_CACHE_OP_TYPE(int4)
RL_EMU_CACHE_OP_TYPE(uint2)
RL_EMU_CACHE_OP_TYPE(uint4)
RL_EMU_CACHE_OP_TYPE(longlong2)
RL_EMU_CACHE_OP_TYPE(ulonglong2)
RL_EMU_CACHE_OP_TYPE(float2)
RL_EMU_CACHE_OP_TYPE(float4)
RL_EMU_CACHE_OP_TYPE(double2)

#define RL_EMU_CACHE_LOAD(name)                                                       \
  template <typename T>                                                               \
  requires rl::emu::detail::cache_op_type<T>::value inline T name(const T* address) { \
    return *address;                                                                  \
  }
#define RL_EMU_CACHE_STORE(name)                                                            \
  template <typename T>                                                                     \
  requires rl::emu::detail::cache_op_type<T>::value inline void name(T* address, T value) { \
    *address = value;                                                                       \
  }
RL_EMU_CACHE_LOAD(__ldcs)
RL_EMU_CACHE_LOAD(__ldcg)
RL_EMU_CACHE_LOAD(__ldca)
RL_EMU_CACHE_LOAD(__ldlu)
RL_EMU_CACHE_LOAD(__ldcv)
RL_EMU_CACHE_STORE(__stcs)
RL_EMU_CACHE_STORE(__stcg)
RL_EMU_CACHE_STORE(__stwb)
RL_EMU_CACHE_STORE(__stwt)
#undef RL_EMU_CACHE_LOAD
#undef RL_EMU_CACHE_STORE

inline int __float_as_int(float x) {
  return std::bit_cast<int>(x);
}
inline unsigned int __float_as_uint(float x) {
  return std::bit_cast<unsigned int>(x);
}
inline float __int_as_float(int x) {
  return std::bit_cast<float>(x);
}
inline float __uint_as_float(unsigned int x) {
  return std::bit_cast<float>(x);
}
inline long long __double_as_longlong(double x) {
  return std::bit_cast<long long>(x);
}
inline double __longlong_as_double(long long x) {
  return std::bit_cast<double>(x);
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

// Address-space conversions.  A shared address is the emulator's 32-bit
// shared-window address (rl/emu/hopper.hpp: dynamic shared memory at 0, each
// static __shared__ object in a slot after it), the same value
// rl::ptx::shared_address gives, so code that keeps it in a 32-bit register
// (as CUDA code does) loses nothing, and __cvta_shared_to_generic maps it
// back.  Global addresses are the generic (host) ones.
inline std::size_t __cvta_generic_to_shared(const void* address) {
  return rl::emu::hopper::shared_address(address);
}
inline void* __cvta_shared_to_generic(std::size_t address) {
  return rl::emu::hopper::shared_pointer(static_cast<std::uint32_t>(address));
}
inline std::size_t __cvta_generic_to_global(const void* address) {
  return reinterpret_cast<std::uintptr_t>(address);
}
inline void* __cvta_global_to_generic(std::size_t address) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
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
// CUDA's mixed overloads (math_functions.h): a signed and an unsigned
// argument compare as the unsigned type, float with double as double.
inline long min(long a, long b) {
  return b < a ? b : a;
}
inline long max(long a, long b) {
  return a < b ? b : a;
}
inline unsigned long min(unsigned long a, unsigned long b) {
  return b < a ? b : a;
}
inline unsigned long max(unsigned long a, unsigned long b) {
  return a < b ? b : a;
}
#define RL_EMU_MIXED_MINMAX(S, U)     \
  inline U min(S a, U b) {            \
    return min(static_cast<U>(a), b); \
  }                                   \
  inline U min(U a, S b) {            \
    return min(a, static_cast<U>(b)); \
  }                                   \
  inline U max(S a, U b) {            \
    return max(static_cast<U>(a), b); \
  }                                   \
  inline U max(U a, S b) {            \
    return max(a, static_cast<U>(b)); \
  }
RL_EMU_MIXED_MINMAX(int, unsigned int)
RL_EMU_MIXED_MINMAX(long, unsigned long)
RL_EMU_MIXED_MINMAX(long long, unsigned long long)
RL_EMU_MIXED_MINMAX(float, double)
#undef RL_EMU_MIXED_MINMAX
inline unsigned int umin(unsigned int a, unsigned int b) {
  return min(a, b);
}
inline unsigned int umax(unsigned int a, unsigned int b) {
  return max(a, b);
}
inline long long llmin(long long a, long long b) {
  return min(a, b);
}
inline long long llmax(long long a, long long b) {
  return max(a, b);
}
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) {
  return min(a, b);
}
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) {
  return max(a, b);
}

// Device code calls the classification functions unqualified, as C names
// (CUDA declares them for float and double in the global namespace).
using std::isfinite;
using std::isinf;
using std::isnan;
