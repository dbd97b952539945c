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
//
// One idea per header; this one includes them all, so code includes only it:
//   fp16_rounding.hpp     float <-> fp16/bf16 bits, round-to-odd, float -> int
//   float16_types.hpp     __half, __half2, __nv_bfloat16, __nv_bfloat162
//   fp16_conversions.hpp  __float2half, __half_as_ushort, ... (both types)
//   fp16_arithmetic.hpp   + - * / fma, comparisons, min/max, operators
//   fp16_math.hpp         hexp, hsqrt, ..., the NaN-propagating min/max
//   fp16_atomics.hpp      atomicAdd and cache-operator accesses (emulated device code)
//   fp8.hpp               __nv_fp8_e4m3, __nv_fp8_e5m2
#pragma once

#include "rl/emu/float16_types.hpp"
#include "rl/emu/fp16_arithmetic.hpp"
#include "rl/emu/fp16_atomics.hpp"
#include "rl/emu/fp16_conversions.hpp"
#include "rl/emu/fp16_math.hpp"
#include "rl/emu/fp16_rounding.hpp"
#include "rl/emu/fp8.hpp"
