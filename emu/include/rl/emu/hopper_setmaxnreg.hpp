// setmaxnreg.{inc,dec}.sync.aligned.u32 N (sm_90a) on the emulator.
//
// A GPU moves registers between the warps of a CTA with it; the emulator has
// no register file to resize (a CUDA thread's registers are its fiber's C++
// variables), so what it checks is what the instruction's form demands:
// .sync.aligned, i.e. all 32 lanes of the warp execute the same instruction.
// Each (direction, N) is its own rendezvous, like mma.sync's input types: a
// lane that exited makes the warp incomplete (one line, the process stops,
// rl/emu/ptx_warp.hpp), lanes at different setmaxnreg never meet (the
// scheduler's deadlock report names the block).  Who has the instruction
// (RL_EMU_CC=90) is the rl::ptx wrapper's check, as for wgmma.
#pragma once

#include "rl/emu/ptx_warp.hpp"
#include "rl/emu/warp.hpp"

namespace rl::emu::hopper {
namespace setmaxnreg_detail {

template <bool Increase, unsigned Count>
void exchange(void* const* /*posts*/, unsigned participants) {
  rl::emu::ptx::require_full_warp(Increase ? "setmaxnreg.inc" : "setmaxnreg.dec", participants);
}

}  // namespace setmaxnreg_detail

// One warp-wide setmaxnreg: returns once every lane of the warp executed it.
template <bool Increase, unsigned Count>
void setmaxnreg() {
  int post = 0;  // the instruction has no register operands to exchange
  rl::emu::detail::warp_collective(0xFFFFFFFFU, &setmaxnreg_detail::exchange<Increase, Count>,
                                   &post);
}

}  // namespace rl::emu::hopper
