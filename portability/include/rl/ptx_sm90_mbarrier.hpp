// mbarrier: a shared-memory barrier object whose phases complete on arrivals
// and on transaction bytes (what TMA and bulk copies count down).  sm_90 and
// later; a part of rl/ptx_sm90.hpp.
#pragma once

#if !defined(RL_PTX_SM90A)
#error "rl/ptx_sm90_mbarrier.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/hopper.hpp"
#endif

namespace rl::ptx {

// --- mbarrier (shared::cta, 64-bit) ------------------------------------------
// A barrier object in shared memory with a phase: the current phase completes
// when its pending arrival count reaches zero AND its transaction count (bytes
// announced with expect_tx, counted down by completing TMA copies) is zero;
// then the phase bit flips and the counts reset to the init count.

// mbarrier.init.shared::cta.b64 [bar], count: phase 0, `count` arrivals expected.
RL_PTX_FN void mbarrier_init([[maybe_unused]] std::uint64_t* bar,
                             [[maybe_unused]] std::uint32_t count) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("mbarrier.init");
  rl::emu::hopper::mbarrier_init(bar, count);
#elif RL_PTX_SM90
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// fence.mbarrier_init.release.cluster: makes the mbarrier.init of this thread
// visible to the async proxy (TMA's complete_tx) before any copy uses it;
// follow it by a block barrier so the other threads see the init too.
RL_PTX_FN void fence_mbarrier_init() {
#if defined(RL_EMULATE)
  // The init is a plain store on the CPU, visible to TMA's complete_tx at once.
  RL_PTX_REQUIRE_TMA("fence.mbarrier_init");
#elif RL_PTX_SM90
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mbarrier.arrive.shared::cta.b64 _, [bar]: one arrival (release semantics:
// this thread's prior memory accesses happen before the phase completes).
RL_PTX_FN void mbarrier_arrive([[maybe_unused]] std::uint64_t* bar) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("mbarrier.arrive");
  rl::emu::hopper::mbarrier_arrive(bar);
#elif RL_PTX_SM90
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes: raises the
// phase's transaction count by `bytes` (the TMA copies that will complete on
// it), then arrives once.
RL_PTX_FN void mbarrier_arrive_expect_tx([[maybe_unused]] std::uint64_t* bar,
                                         [[maybe_unused]] std::uint32_t bytes) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("mbarrier.arrive.expect_tx");
  rl::emu::hopper::mbarrier_expect_tx(bar, bytes);  // expect-tx, then arrive-on
  rl::emu::hopper::mbarrier_arrive(bar);
#elif RL_PTX_SM90
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
      "r"(bytes)
      : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mbarrier.try_wait.parity.shared::cta.b64: true once the phase with parity
// `parity` (0 for the first phase, 1 for the second, ...) has completed; it
// may suspend the thread for a system-dependent time before returning false.
// Acquire semantics: what the arrivals released (and the TMA bytes) is
// visible after it returns true.
RL_PTX_FN bool mbarrier_try_wait_parity([[maybe_unused]] std::uint64_t* bar,
                                        [[maybe_unused]] std::uint32_t parity) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("mbarrier.try_wait.parity");
  return rl::emu::hopper::mbarrier_try_wait_parity(bar, parity);
#elif RL_PTX_SM90
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
#else
  RL_PTX_UNSUPPORTED();
  return true;
#endif
}

// Spins on try_wait until the phase with parity `parity` has completed.
RL_PTX_FN void mbarrier_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

}  // namespace rl::ptx
