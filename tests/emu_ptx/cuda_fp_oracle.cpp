// Built against the CUDA toolkit's headers as host C++ (no nvcc): the host
// branches of these functions are CUDA's reference behaviour for conversions.
#include "cuda_fp_oracle.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#if __has_include(<cuda_fp4.h>)
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#define RL_ORACLE_HAS_FP6_FP4 1
#endif

namespace {

template <typename T>
T apply(int op, T a, T b) {
  switch (op) {
    case 0:
      return __hadd(a, b);
    case 1:
      return __hsub(a, b);
    case 2:
      return __hmul(a, b);
    case 3:
      return __hdiv(a, b);
    case 4:
      return __hmax(a, b);
    default:
      return __hmin(a, b);
  }
}

}  // namespace

std::uint16_t rl_oracle_float2half(float f) {
  return __half_as_ushort(__float2half(f));
}
std::uint16_t rl_oracle_double2half(double d) {
  return __half_as_ushort(__double2half(d));
}
float rl_oracle_half2float(std::uint16_t h) {
  return __half2float(__ushort_as_half(h));
}
std::uint16_t rl_oracle_float2bfloat16(float f) {
  return __bfloat16_as_ushort(__float2bfloat16(f));
}
std::uint16_t rl_oracle_double2bfloat16(double d) {
  return __bfloat16_as_ushort(__double2bfloat16(d));
}
float rl_oracle_bfloat162float(std::uint16_t b) {
  return __bfloat162float(__ushort_as_bfloat16(b));
}
int rl_oracle_half2int_rz(std::uint16_t h) {
  return __half2int_rz(__ushort_as_half(h));
}

std::uint16_t rl_oracle_half_binary(int op, std::uint16_t a, std::uint16_t b) {
  return __half_as_ushort(apply(op, __ushort_as_half(a), __ushort_as_half(b)));
}
std::uint16_t rl_oracle_bfloat16_binary(int op, std::uint16_t a, std::uint16_t b) {
  return __bfloat16_as_ushort(apply(op, __ushort_as_bfloat16(a), __ushort_as_bfloat16(b)));
}
std::uint8_t rl_oracle_float2e4m3(float f) {
  return __nv_fp8_e4m3(f).__x;
}
std::uint8_t rl_oracle_float2e5m2(float f) {
  return __nv_fp8_e5m2(f).__x;
}
float rl_oracle_e4m32float(std::uint8_t x) {
  __nv_fp8_e4m3 v;
  v.__x = x;
  return static_cast<float>(v);
}
float rl_oracle_e5m22float(std::uint8_t x) {
  __nv_fp8_e5m2 v;
  v.__x = x;
  return static_cast<float>(v);
}

#if defined(RL_ORACLE_HAS_FP6_FP4)
std::uint8_t rl_oracle_float2narrow(int format, float f) {
  switch (format) {
    case rl_oracle_e4m3:
      return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
    case rl_oracle_e5m2:
      return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2);
    case rl_oracle_e3m2:
      return __nv_cvt_float_to_fp6(f, __NV_E3M2, cudaRoundNearest);
    case rl_oracle_e2m3:
      return __nv_cvt_float_to_fp6(f, __NV_E2M3, cudaRoundNearest);
    case rl_oracle_e2m1:
      return __nv_cvt_float_to_fp4(f, __NV_E2M1, cudaRoundNearest);
    case rl_oracle_ue8m0_rz:
      return __nv_cvt_float_to_e8m0(f, __NV_SATFINITE, cudaRoundZero);
    default:
      return __nv_cvt_float_to_e8m0(f, __NV_SATFINITE, cudaRoundPosInf);
  }
}

float rl_oracle_narrow2float(int format, std::uint8_t code) {
  switch (format) {
    case rl_oracle_e4m3:
      return __half2float(__nv_cvt_fp8_to_halfraw(code, __NV_E4M3));
    case rl_oracle_e5m2:
      return __half2float(__nv_cvt_fp8_to_halfraw(code, __NV_E5M2));
    case rl_oracle_e3m2:
      return __half2float(__nv_cvt_fp6_to_halfraw(code, __NV_E3M2));
    case rl_oracle_e2m3:
      return __half2float(__nv_cvt_fp6_to_halfraw(code, __NV_E2M3));
    case rl_oracle_e2m1:
      return __half2float(__nv_cvt_fp4_to_halfraw(code, __NV_E2M1));
    default:
      return __bfloat162float(__nv_cvt_e8m0_to_bf16raw(code));
  }
}
#endif  // RL_ORACLE_HAS_FP6_FP4
