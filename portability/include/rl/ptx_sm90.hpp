// sm_90 and later PTX for device code: the shared-window address, the
// async-proxy fence, and the parts below.  Included only by rl/ptx.hpp
// (device code includes that), whose RL_PTX_FN and RL_PTX_UNSUPPORTED it uses:
//   rl/ptx_sm90_descriptors.hpp  wgmma's shared-memory matrix descriptor, the 128B swizzle
//   rl/ptx_sm90_tensor_map.hpp   2-D TMA tensor maps (host: parameters and encoding)
//   rl/ptx_sm90_mbarrier.hpp     mbarrier (transaction-counted phases)
//   rl/ptx_sm90_tma.hpp          cp.async.bulk.tensor (TMA) and plain bulk copies
//   rl/ptx_sm90_wgmma.hpp        wgmma.mma_async (warpgroup MMA)
//   rl/ptx_sm90_setmaxnreg.hpp   setmaxnreg (a warpgroup's register count)
//
// Who has what (the same answer as rl/emu/arch.hpp gives the emulator):
// - mbarrier, TMA, bulk copies and the async-proxy fences exist from sm_90 on
//   (9.0, 10.x, 12.x): under the emulator they run when rl::emu::has_tma(),
//   on the GPU they are inline PTX wherever __CUDA_ARCH__ >= 900
//   (RL_PTX_SM90), so the tcgen05 loops of sm_100a wait on real mbarriers.
//   The global -> shared copies name their destination .shared::cta from
//   sm_100 on (rl/ptx_sm90_tma.hpp says why).
// - wgmma and setmaxnreg are sm_90a-only: the "a"
//   features are not forward compatible, so sm_100a and sm_120 builds do not
//   have them.  On the GPU it is inline PTX behind __CUDA_ARCH_FEAT_SM90_ALL
//   (RL_PTX_SM90A); under the emulator it runs when rl::emu::has_wgmma(), i.e.
//   RL_EMU_CC=90, and emulator_runs_sm90a() says so for the records.
// Elsewhere a GPU traps (RL_PTX_UNSUPPORTED, like ptx.hpp's sm_80 wrappers
// below their architecture) and the emulator stops the process with one line
// naming the instruction, the emulated compute capability and the RL_EMU_CC
// values that have the instruction (emu_detail::refuse).  The records that
// use wgmma have min_cc = max_cc = 90, and are gpu_only only where the
// emulator is not a Hopper.
//
// Under the emulator each wrapper calls the exact emulation of
// rl/emu/hopper.hpp.  Semantics quoted from the PTX ISA (sections
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate", "Matrix
// Descriptor Format", "mbarrier", "cp.async.bulk.tensor", "membar/fence") and
// the CUDA driver API (cuTensorMapEncodeTiled).
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_sm90.hpp is included by rl/ptx.hpp; include that instead"
#endif

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(RL_EMULATE)
#include <cstdio>
#include <cstdlib>

#include "rl/emu/arch.hpp"
#include "rl/emu/hopper.hpp"
#else
#include <cuda.h>  // CUtensorMap and its enums (types only: no libcuda link)
#endif

// GPU code of the sm_90+ families (mbarrier, TMA, bulk copies, fences).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RL_PTX_SM90 1
#else
#define RL_PTX_SM90 0
#endif
// GPU code of the sm_90a-only family (wgmma).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define RL_PTX_SM90A 1
#else
#define RL_PTX_SM90A 0
#endif

#if defined(RL_EMULATE)
namespace rl::ptx::emu_detail {

// Every wrapper of the sm_90+ families starts here (rl/emu/arch.hpp: has_tma()).
inline void require_tma(const char* instruction) {
  if (!rl::emu::has_tma())
    refuse(instruction, "sm_90 and later",
           "RL_EMU_CC=90, 100, 103, 120 or 121 emulates a device that has it");
}

// Every wgmma wrapper starts here (rl/emu/arch.hpp: has_wgmma()).
inline void require_wgmma(const char* instruction) {
  if (!rl::emu::has_wgmma())
    refuse(instruction, "sm_90a-only",
           "RL_EMU_CC=90 emulates the one device that has it, a Hopper");
}

}  // namespace rl::ptx::emu_detail
#define RL_PTX_REQUIRE_TMA(instruction) emu_detail::require_tma(instruction)
#define RL_PTX_REQUIRE_WGMMA(instruction) emu_detail::require_wgmma(instruction)
#endif

namespace rl::ptx {

// Whether the emulator runs sm_90a (wgmma) records: only in the emulated
// build with RL_EMU_CC=90.  The records' gpu_only is its negation (the CUDA
// backend never reads gpu_only: there the device's compute capability decides).
inline bool emulator_runs_sm90a() {
#if defined(RL_EMULATE)
  return rl::emu::has_wgmma();
#else
  return false;
#endif
}

// The 32-bit shared-window address of a generic pointer into shared memory
// (cvta.to.shared), what descriptors, mbarrier and TMA operands take.  It
// exists on every architecture (so the emulator refuses it nowhere, as its
// __cvta_generic_to_shared does not).
RL_PTX_FN std::uint32_t shared_address([[maybe_unused]] const void* p) {
#if defined(RL_EMULATE)
  return rl::emu::hopper::shared_address(p);
#elif defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  return 0;
#endif
}

// fence.proxy.async.shared::cta: orders this thread's ordinary (generic proxy)
// shared-memory accesses before later async-proxy accesses (wgmma operand
// reads, TMA writes) of the same memory, and vice versa.
RL_PTX_FN void fence_proxy_async_shared() {
#if defined(RL_EMULATE)
  // Shared memory has one proxy on the CPU: nothing to order.
  RL_PTX_REQUIRE_TMA("fence.proxy.async.shared::cta");
#elif RL_PTX_SM90
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx

#include "rl/ptx_sm90_descriptors.hpp"
#include "rl/ptx_sm90_mbarrier.hpp"
#include "rl/ptx_sm90_setmaxnreg.hpp"
#include "rl/ptx_sm90_tensor_map.hpp"
#include "rl/ptx_sm90_tma.hpp"
#include "rl/ptx_sm90_wgmma.hpp"

#undef RL_PTX_SM90
#undef RL_PTX_SM90A
#if defined(RL_PTX_REQUIRE_TMA)
#undef RL_PTX_REQUIRE_TMA
#undef RL_PTX_REQUIRE_WGMMA
#endif
