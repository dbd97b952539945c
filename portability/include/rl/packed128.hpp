// 128-bit packed vectors for memory-bound kernels (llm.c's Packed128).
//
// One 16-byte access moves 4 floats or 8 bf16: the widest load or store a
// thread can issue (LDG.E.128 / STG.E.128 in SASS).  A warp then moves 512 B
// per instruction, a quarter of the load instructions of scalar code, which is
// what lets a streaming kernel keep enough bytes in flight to reach the HBM
// roof.  The bits go through int4 so the compiler sees a single 128-bit access
// whatever the element type; memcpy is the aliasing-safe way to reinterpret.
//
// Also here: the fp32 <-> storage-type conversions every mixed-precision
// kernel uses (fp32 math on bf16 I/O), callable from host code so workloads
// round their inputs exactly as the device stores them.
#pragma once

#include "rl/cuda.hpp"

#include <cstring>
#include <type_traits>

#if defined(RL_EMULATE)
#include "rl/emu/counters.hpp"
#endif

namespace rl {

template <typename T>
struct alignas(16) Packed128 {
  static constexpr int size = static_cast<int>(16 / sizeof(T));
  T v[size];

  __host__ __device__ T& operator[](int i) { return v[i]; }
  __host__ __device__ const T& operator[](int i) const { return v[i]; }
};

// `address` must be 16-byte aligned; it may be global or shared memory.  The
// emulator counts the 16 bytes where it is global (rl/emu/counters.hpp): the
// cost models' bytes_l2_load / _store are checked against it.
template <typename T>
__device__ __forceinline__ Packed128<T> load128(const T* address) {
#if defined(RL_EMULATE)
  rl::emu::count_generic_load(address, 16);
#endif
  const int4 bits = *reinterpret_cast<const int4*>(address);
  Packed128<T> out;
  memcpy(&out, &bits, sizeof(bits));
  return out;
}

template <typename T>
__device__ __forceinline__ void store128(T* address, const Packed128<T>& value) {
#if defined(RL_EMULATE)
  rl::emu::count_generic_store(address, 16);
#endif
  int4 bits;
  memcpy(&bits, &value, sizeof(bits));
  *reinterpret_cast<int4*>(address) = bits;
}

__host__ __device__ __forceinline__ float to_f32(float x) {
  return x;
}
__host__ __device__ __forceinline__ float to_f32(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
__host__ __device__ __forceinline__ float to_f32(__half x) {
  return __half2float(x);
}

// Round-to-nearest-even from fp32 to the storage type.
template <typename T>
__host__ __device__ __forceinline__ T from_f32(float x);
template <>
__host__ __device__ __forceinline__ float from_f32<float>(float x) {
  return x;
}
template <>
__host__ __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}
template <>
__host__ __device__ __forceinline__ __half from_f32<__half>(float x) {
  return __float2half_rn(x);
}

// "fp32" / "bf16" / "fp16": the registry's precision label of a storage type.
template <typename T>
constexpr const char* precision_name() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16> ||
                std::is_same_v<T, __half>);
  if constexpr (std::is_same_v<T, float>)
    return "fp32";
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return "bf16";
  else
    return "fp16";
}

}  // namespace rl
