// Loop-unrolling hints for kernel code, one definition for every family.
//   RL_UNROLL     `#pragma unroll`: nvcc keeps a fragment or register-tile
//                 array in registers only when the loops indexing it are
//                 unrolled (else it lives on the stack, in local memory).
//   RL_NO_UNROLL  `#pragma unroll 1`: a loop whose body is already long (a
//                 k-loop of 64 mma), which nvcc would otherwise unroll twice
//                 on some targets at the price of registers, up to spilling.
// The emulator's host compiler does not know the pragmas (-Wunknown-pragmas):
// there they are empty.
#pragma once

#if defined(__CUDACC__)
#define RL_UNROLL _Pragma("unroll")
#define RL_NO_UNROLL _Pragma("unroll 1")
#else
#define RL_UNROLL
#define RL_NO_UNROLL
#endif
