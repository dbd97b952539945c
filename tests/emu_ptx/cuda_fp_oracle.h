// C interface to CUDA's own host-side conversion and arithmetic code
// (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h, cuda_fp6.h, cuda_fp4.h), the oracle the emulated types are
// compared with bit for bit.  Raw bits in and out, so no CUDA type crosses it.
#pragma once

#include <cstdint>

#define RL_ORACLE_API extern "C" __attribute__((visibility("default")))

RL_ORACLE_API std::uint16_t rl_oracle_float2half(float f);
RL_ORACLE_API std::uint16_t rl_oracle_double2half(double d);
RL_ORACLE_API float rl_oracle_half2float(std::uint16_t h);
RL_ORACLE_API std::uint16_t rl_oracle_float2bfloat16(float f);
RL_ORACLE_API std::uint16_t rl_oracle_double2bfloat16(double d);
RL_ORACLE_API float rl_oracle_bfloat162float(std::uint16_t b);
RL_ORACLE_API int rl_oracle_half2int_rz(std::uint16_t h);

// op: 0 add, 1 sub, 2 mul, 3 div, 4 max, 5 min.  (__hfma has no host code.)
RL_ORACLE_API std::uint16_t rl_oracle_half_binary(int op, std::uint16_t a, std::uint16_t b);
RL_ORACLE_API std::uint16_t rl_oracle_bfloat16_binary(int op, std::uint16_t a, std::uint16_t b);

RL_ORACLE_API std::uint8_t rl_oracle_float2e4m3(float f);
RL_ORACLE_API std::uint8_t rl_oracle_float2e5m2(float f);
RL_ORACLE_API float rl_oracle_e4m32float(std::uint8_t x);
RL_ORACLE_API float rl_oracle_e5m22float(std::uint8_t x);

// The narrow formats of rl/emu/narrow_float.hpp, in rl::emu::narrow::Format's
// order; ue8m0 once per rounding mode PTX has for it.
enum RlOracleNarrow {
  rl_oracle_e4m3,
  rl_oracle_e5m2,
  rl_oracle_e3m2,
  rl_oracle_e2m3,
  rl_oracle_e2m1,
  rl_oracle_ue8m0_rz,
  rl_oracle_ue8m0_rp,
};
// float -> code with satfinite and the format's rounding (.rn; ue8m0 .rz/.rp):
// __nv_cvt_float_to_fp8 / _fp6 / _fp4 / _e8m0.
RL_ORACLE_API std::uint8_t rl_oracle_float2narrow(int format, float f);
// code -> value through __nv_cvt_fp8/fp6/fp4_to_halfraw (ue8m0:
// __nv_cvt_e8m0_to_bf16raw), widened to float by the same headers.
RL_ORACLE_API float rl_oracle_narrow2float(int format, std::uint8_t code);
