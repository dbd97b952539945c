// CUDA's qualifiers, dim3, the vector types and the built-in index variables,
// for device code compiled by the host compiler (RL_EMULATE).
//
// threadIdx, blockIdx, blockDim and gridDim are host-thread-local variables:
// a CUDA block runs on one host thread, one fiber at a time, and the scheduler
// stores the running fiber's indices before every switch into it.  Reading
// them is therefore as cheap as reading a thread_local, and they stay ordinary
// names (no macros), so host code may still shadow them.
#pragma once

#include <cstddef>
#include <cstdint>

#ifndef __global__
#define __global__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
// __noinline__ is deliberately not defined: libstdc++ spells
// __attribute__((__noinline__)) and a macro would break it.
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif
#ifndef __align__
// A GNU attribute, not alignas: CUDA code writes `__shared__ __align__(16) T x[N]`,
// where a standard attribute may not stand between decl-specifiers.
#define __align__(n) __attribute__((aligned(n)))
#endif
#ifndef __constant__
#define __constant__
#endif
#ifndef __managed__
#define __managed__
#endif
// Static shared memory: one instance per block.  A host worker runs one block
// at a time and blocks running concurrently are on different host threads, so
// a thread_local is exactly "one per block".  A block sees whatever the
// previous block on its worker left there, which CUDA allows (shared memory
// starts undefined).  `extern __shared__` is not supported: dynamic shared
// memory is declared with RL_DYNAMIC_SHARED.
//
// Aligned to 16 bytes at least, as nvcc places every __shared__ array:
// kernels store 16-byte vectors into arrays of narrower types
// (`*reinterpret_cast<int4*>(&tile[r][0])` on a `__half tile[16][16]`), which
// g++ compiles to aligned SSE moves, so a 2-byte-aligned array would fault.
// On a variable the GNU attribute only raises alignment: a larger
// `__align__(n)` or `alignas(n)` beside it wins.
#ifndef __shared__
#define __shared__ static thread_local __attribute__((aligned(16)))
#endif

struct uint3 {
  unsigned int x, y, z;
};

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}  // NOLINT: implicit as in CUDA
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// Vector types with CUDA's sizes and alignments (vector_types.h).
#define RL_EMU_VECTOR2(name, T, align)          \
  struct alignas(align) name {                  \
    T x, y;                                     \
  };                                            \
  inline constexpr name make_##name(T x, T y) { \
    return name{x, y};                          \
  }
#define RL_EMU_VECTOR3(name, T)                      \
  inline constexpr name make_##name(T x, T y, T z) { \
    return name{x, y, z};                            \
  }
#define RL_EMU_VECTOR4(name, T, align)                    \
  struct alignas(align) name {                            \
    T x, y, z, w;                                         \
  };                                                      \
  inline constexpr name make_##name(T x, T y, T z, T w) { \
    return name{x, y, z, w};                              \
  }

RL_EMU_VECTOR2(char2, signed char, 2)
RL_EMU_VECTOR2(uchar2, unsigned char, 2)
RL_EMU_VECTOR4(char4, signed char, 4)
RL_EMU_VECTOR4(uchar4, unsigned char, 4)
RL_EMU_VECTOR2(short2, short, 4)
RL_EMU_VECTOR2(ushort2, unsigned short, 4)
RL_EMU_VECTOR4(short4, short, 8)
RL_EMU_VECTOR4(ushort4, unsigned short, 8)
RL_EMU_VECTOR2(int2, int, 8)
RL_EMU_VECTOR2(uint2, unsigned int, 8)
RL_EMU_VECTOR4(int4, int, 16)
RL_EMU_VECTOR4(uint4, unsigned int, 16)
RL_EMU_VECTOR2(float2, float, 8)
RL_EMU_VECTOR4(float4, float, 16)
RL_EMU_VECTOR2(longlong2, long long, 16)
RL_EMU_VECTOR2(ulonglong2, unsigned long long, 16)
RL_EMU_VECTOR2(double2, double, 16)

struct int3 {
  int x, y, z;
};
struct float3 {
  float x, y, z;
};
struct double3 {
  double x, y, z;
};
RL_EMU_VECTOR3(int3, int)
RL_EMU_VECTOR3(uint3, unsigned int)
RL_EMU_VECTOR3(float3, float)
RL_EMU_VECTOR3(double3, double)

#undef RL_EMU_VECTOR2
#undef RL_EMU_VECTOR3
#undef RL_EMU_VECTOR4

static_assert(alignof(float4) == 16 && sizeof(float4) == 16);
static_assert(alignof(float2) == 8 && alignof(int4) == 16 && alignof(double2) == 16);

// The running CUDA thread's built-in variables (see the file comment).
inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};
inline constexpr int warpSize = 32;
