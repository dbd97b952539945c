// ldmatrix: warp-level loads of 8x8 matrices of 16-bit elements from shared
// memory into the register fragments mma.sync takes.  A part of rl/ptx.hpp,
// which defines RL_PTX_FN, RL_PTX_UNSUPPORTED and (GPU) RL_PTX_SMEM.
//
// On the GPU each wrapper is one inline-PTX instruction (sm_75+).  Under the
// emulator (RL_EMULATE) each is a full-warp rendezvous whose last lane loads
// the whole warp's fragments once (rl/emu/ptx_warp.hpp).  All ldmatrix calls
// must be reached by all 32 lanes.
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_ldmatrix.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/ptx_warp.hpp"
#endif

#if defined(RL_EMULATE)
namespace rl::ptx::emu_detail {

template <int Matrices>
void ldmatrix(std::uint32_t* out, const void* row, bool trans) {
  rl::emu::ptx::ldmatrix_sync(Matrices, trans, row, out);
}

}  // namespace rl::ptx::emu_detail
#endif  // RL_EMULATE

namespace rl::ptx {

// ---------------------------------------------------------------------------
// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16
// Lane L passes the shared-memory address of row L % 8 of matrix L / 8 (16
// contiguous, 16-byte-aligned bytes).  Register j of lane L receives
// M_j[L/4][2(L%4) .. +1], or with .trans M_j[2(L%4) .. +1][L/4].
// ---------------------------------------------------------------------------

RL_PTX_FN void ldmatrix_x1(std::uint32_t& r, const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<1>(&r, row, false);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(r)
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x2(std::uint32_t (&r)[2], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<2>(r, row, false);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x4(std::uint32_t (&r)[4], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<4>(r, row, false);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x1_trans(std::uint32_t& r, const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<1>(&r, row, true);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(r)
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x2_trans(std::uint32_t (&r)[2], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<2>(r, row, true);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<4>(r, row, true);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx
