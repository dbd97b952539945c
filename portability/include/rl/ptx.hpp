// rl::ptx: the PTX instructions device code reaches, one header per family.
// Device code includes this header only; it defines what the parts share and
// includes them (each part refuses to be included on its own):
//   rl/ptx_mma.hpp        mma.sync (f16, bf16, tf32, fp8, s8) and where fp8 is native
//   rl/ptx_ldmatrix.hpp   ldmatrix (x1, x2, x4, .trans)
//   rl/ptx_cp_async.hpp   cp.async and its groups
//   rl/ptx_streaming.hpp  evict-first (.cs) 128-bit global loads and stores
//   rl/ptx_arith.hpp      tf32 conversion, tanh and ex2 approximations
//   rl/ptx_barrier.hpp    named barriers (bar.sync / bar.arrive with an id and a count)
//   rl/ptx_sm90.hpp       sm_90 and later: mbarrier, TMA and bulk copies, wgmma
//   rl/ptx_sm90_cluster.hpp  sm_90 and later: thread block clusters (barrier.cluster,
//                         mapa and distributed shared memory, remote mbarrier arrive)
//
// On the GPU each wrapper is inline PTX for the architectures that have the
// instruction; elsewhere it traps (RL_PTX_UNSUPPORTED: a kernel that needs an
// architecture is registered with min_cc, so reaching the trap is a registry
// bug).  Under the emulator (RL_EMULATE) each wrapper calls the emulator's
// exact model of the instruction (rl/emu/ptx_warp.hpp, rl/emu/hopper.hpp;
// docs: ptx-emulation-reference.md).
#pragma once

// The standard headers this header has always brought in (kernels may lean on them).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "rl/check.hpp"
#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rl/emu/arch.hpp"

#define RL_PTX_FN inline
#else
#define RL_PTX_FN __device__ __forceinline__
#endif

// Trap on GPU targets an instruction does not exist for: a kernel that needs
// sm_80 is registered with min_cc, so reaching this is a registry bug.
#if defined(__CUDA_ARCH__)
#define RL_PTX_UNSUPPORTED() __trap()
#else
#define RL_PTX_UNSUPPORTED() ((void)0)
#endif

// The 32-bit shared-window address of a shared-memory operand (GPU only).
#if !defined(RL_EMULATE) && defined(__CUDA_ARCH__)
#define RL_PTX_SMEM(ptr) static_cast<unsigned>(__cvta_generic_to_shared(ptr))
#endif

#if defined(RL_EMULATE)
namespace rl::ptx::emu_detail {

// Stops the process with one line: `instruction` does not exist on the
// emulated device (rl/emu/arch.hpp), as a GPU without it traps.  `exists`
// says where it does ("sm_90a-only"), `has_it` which RL_EMU_CC values have it.
[[noreturn]] inline void refuse(const char* instruction, const char* exists, const char* has_it) {
  const int cc = rl::emu::compute_capability();
  std::fprintf(stderr,
               "rl::ptx: %s is %s and the emulator has no model of it at compute capability "
               "%d.%d: %s\n",
               instruction, exists, cc / 10, cc % 10, has_it);
  std::fflush(stderr);
  std::abort();
}

}  // namespace rl::ptx::emu_detail
#endif

#include "rl/ptx_arith.hpp"
#include "rl/ptx_barrier.hpp"
#include "rl/ptx_cp_async.hpp"
#include "rl/ptx_ldmatrix.hpp"
#include "rl/ptx_mma.hpp"
#include "rl/ptx_sm90.hpp"
#include "rl/ptx_streaming.hpp"
// Last: it keeps its own sm_90 macros (rl/ptx_sm90.hpp undefines its own).
#include "rl/ptx_sm90_cluster.hpp"

#undef RL_PTX_FN
#undef RL_PTX_UNSUPPORTED
#if defined(RL_PTX_SMEM)
#undef RL_PTX_SMEM
#endif
