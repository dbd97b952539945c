// The 16-bit float types of cuda_fp16.h and cuda_bf16.h for the emulator:
// __half / __half2 and __nv_bfloat16 / __nv_bfloat162, their raw structs and
// the implicit conversions the CUDA headers define (float, double, integers).
// The free functions live beside them: conversions in fp16_conversions.hpp,
// arithmetic in fp16_arithmetic.hpp, math in fp16_math.hpp.
#pragma once

#include "rl/emu/fp16_rounding.hpp"

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
