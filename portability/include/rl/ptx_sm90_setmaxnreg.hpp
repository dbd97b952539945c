// setmaxnreg: a warpgroup gives registers back to the CTA's pool or takes
// more from it, so warp-specialised kernels can give their math warps more
// registers than __launch_bounds__ alone allows.  sm_90a-only; a part of
// rl/ptx_sm90.hpp.
//
// PTX ("setmaxnreg"): setmaxnreg.{inc,dec}.sync.aligned.u32 N sets the
// executing warp's per-thread register count to N, 24 <= N <= 256, N a
// multiple of 8; .inc blocks until the pool has the registers, .dec releases
// them (the registers above N lose their contents).  All warps of a
// warpgroup must execute the same setmaxnreg.  The counts of every warp must
// fit the SM's 64K registers; the kernel's header does that arithmetic.
#pragma once

#if !defined(RL_PTX_SM90A)
#error "rl/ptx_sm90_setmaxnreg.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#if defined(RL_EMULATE)
#include "rl/emu/hopper_setmaxnreg.hpp"
#endif

namespace rl::ptx {

template <int N>
constexpr bool kValidRegisterCount = N >= 24 && N <= 256 && N % 8 == 0;

// setmaxnreg.inc.sync.aligned.u32 N: raise this warp's registers to N.
template <int N>
RL_PTX_FN void setmaxnreg_inc() {
  static_assert(kValidRegisterCount<N>, "setmaxnreg takes 24 .. 256 registers, a multiple of 8");
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("setmaxnreg.inc");
  rl::emu::hopper::setmaxnreg<true, N>();
#elif RL_PTX_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// setmaxnreg.dec.sync.aligned.u32 N: lower this warp's registers to N.
template <int N>
RL_PTX_FN void setmaxnreg_dec() {
  static_assert(kValidRegisterCount<N>, "setmaxnreg takes 24 .. 256 registers, a multiple of 8");
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("setmaxnreg.dec");
  rl::emu::hopper::setmaxnreg<false, N>();
#elif RL_PTX_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx
