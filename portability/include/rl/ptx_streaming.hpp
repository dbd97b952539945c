// Streaming (evict-first) 128-bit global accesses: the .cs cache operator on
// a read-only load and on a store.  A part of rl/ptx.hpp, which defines
// RL_PTX_FN and RL_PTX_UNSUPPORTED.
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_streaming.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/ptx_warp.hpp"
#endif

namespace rl::ptx {

// ---------------------------------------------------------------------------
// Streaming global accesses: 16 bytes with the .cs cache operator ("cache
// streaming, likely to be accessed once": lines allocated evict-first in L1
// and L2, so data read or written once does not push out data that is
// reused).  PTX calls cache operators performance hints that do not change
// memory consistency, so the emulator performs a plain 16-byte copy; it stops
// on an address that is not 16-byte aligned, as the GPU faults on one.
// nvcc 13.0 compiles them to LDG.E.EF.128.CONSTANT and STG.E.EF.128 on sm_80,
// sm_89, sm_90a, sm_100a and sm_120 (cuobjdump -sass).
// ---------------------------------------------------------------------------

// ld.global.cs.nc.v4.b32: the read-only (.nc) path of a const __restrict__
// load plus the streaming hint, so against a plain 128-bit load of such data
// only the eviction policy changes.  The data must not be written while the
// kernel runs (the .nc contract).
RL_PTX_FN void ld_global_nc_cs_v4(std::uint32_t (&r)[4], const void* address) {
#if defined(RL_EMULATE)
  rl::emu::ptx::load_streaming_v4(address, r);
#elif defined(__CUDA_ARCH__)
  asm volatile("ld.global.cs.nc.v4.b32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "l"(address));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// st.global.cs.v4.b32: a store whose lines are the first evicted (output that
// this kernel never reads back).
RL_PTX_FN void st_global_cs_v4(void* address, const std::uint32_t (&r)[4]) {
#if defined(RL_EMULATE)
  rl::emu::ptx::store_streaming_v4(address, r);
#elif defined(__CUDA_ARCH__)
  asm volatile("st.global.cs.v4.b32 [%0], {%1,%2,%3,%4};\n" ::"l"(address), "r"(r[0]), "r"(r[1]),
               "r"(r[2]), "r"(r[3])
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx
