// sm_90 and later PTX for device code: the shared-window address, the
// async-proxy fence, and the parts below.  Included only by rl/ptx.hpp
// (device code includes that), whose RL_PTX_FN and RL_PTX_UNSUPPORTED it uses:
//   rl/ptx_sm90_descriptors.hpp  wgmma's shared-memory matrix descriptor, the 128B swizzle
//   rl/ptx_sm90_tensor_map.hpp   2-D TMA tensor maps (host: parameters and encoding)
//   rl/ptx_sm90_mbarrier.hpp     mbarrier (transaction-counted phases)
//   rl/ptx_sm90_tma.hpp          cp.async.bulk.tensor (TMA) and plain bulk copies
//   rl/ptx_sm90_wgmma.hpp        wgmma.mma_async (warpgroup MMA)
//
// On the GPU each wrapper is inline PTX that exists only in sm_90a code
// (behind __CUDA_ARCH_FEAT_SM90_ALL: the "a" features are not forward
// compatible, so sm_100a and sm_120 builds do not have them); other GPU targets
// trap, like ptx.hpp's sm_80 wrappers below their architecture.  The records
// that use these have min_cc = max_cc = 90, and are gpu_only only where the
// emulator is not a Hopper (below).
//
// Under the emulator (RL_EMULATE) each wrapper calls the exact emulation of
// rl/emu/hopper.hpp, which exists only while the emulated device is a Hopper
// (RL_EMU_CC=90): at the default compute capability 8.9 the wrappers stop the
// process with a message naming the instruction (emu_detail::not_emulated),
// as a GPU without sm_90a traps, and the records stay gpu_only for the
// emulator (emulator_runs_sm90a()).
//
// Semantics quoted from the PTX ISA (sections
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

// GPU code of the mbarrier, TMA, bulk-copy and fence wrappers.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
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

[[noreturn]] inline void not_emulated(const char* instruction) {
  std::fprintf(stderr,
               "rl::ptx: %s is sm_90a-only and the emulator has no model of it at compute "
               "capability %d: run with RL_EMU_CC=90 to emulate a Hopper\n",
               instruction, rl::emu::hopper::compute_capability());
  std::fflush(stderr);
  std::abort();
}

// Every Hopper wrapper starts here: refused unless the emulated device is sm_90a.
inline void require_sm90a(const char* instruction) {
  if (!rl::emu::hopper::sm90a()) not_emulated(instruction);
}

}  // namespace rl::ptx::emu_detail
#define RL_PTX_REQUIRE_TMA(instruction) emu_detail::require_sm90a(instruction)
#define RL_PTX_REQUIRE_WGMMA(instruction) emu_detail::require_sm90a(instruction)
#endif

namespace rl::ptx {

// Whether the emulator runs sm_90a (wgmma) records: only in the emulated
// build with RL_EMU_CC=90.  The records' gpu_only is its negation (the CUDA
// backend never reads gpu_only: there the device's compute capability decides).
inline bool emulator_runs_sm90a() {
#if defined(RL_EMULATE)
  return rl::emu::hopper::sm90a();
#else
  return false;
#endif
}

// The 32-bit shared-window address of a generic pointer into shared memory
// (cvta.to.shared), what descriptors, mbarrier and TMA operands take.
RL_PTX_FN std::uint32_t shared_address([[maybe_unused]] const void* p) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cvta.to.shared (shared_address)");
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
#include "rl/ptx_sm90_tensor_map.hpp"
#include "rl/ptx_sm90_tma.hpp"
#include "rl/ptx_sm90_wgmma.hpp"

#undef RL_PTX_SM90
#undef RL_PTX_SM90A
#if defined(RL_PTX_REQUIRE_TMA)
#undef RL_PTX_REQUIRE_TMA
#undef RL_PTX_REQUIRE_WGMMA
#endif
