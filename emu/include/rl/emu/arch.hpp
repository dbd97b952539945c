// The emulated device's architecture: its compute capability (RL_EMU_CC) and
// the instruction families that capability has.  One place decides what an
// emulated architecture can run, so a wrapper refuses an instruction the
// emulated device lacks with the same answer everywhere.
#pragma once

namespace rl::emu {

// The emulated device's compute capability x10, from RL_EMU_CC: 89 (the
// default, Ada), 90 (Hopper, sm_90a), 100 and 103 (datacenter Blackwell,
// sm_100a / sm_103a), 120 and 121 (RTX 50 / RTX PRO / GB10, sm_120a /
// sm_121a); "9.0"-style spellings are accepted.  Any other value stops the
// process with a message: a typo must not silently emulate another device.
int compute_capability();

// wgmma.mma_async and setmaxnreg: sm_90a only (Blackwell has no wgmma).
inline bool has_wgmma() {
  return compute_capability() == 90;
}
// TMA (cp.async.bulk.tensor), bulk copies and mbarrier transaction counts: 9.0 and later.
inline bool has_tma() {
  return compute_capability() >= 90;
}
// tcgen05 (tensor memory, tcgen05.mma): sm_100a and sm_103a.
inline bool has_tcgen05() {
  const int cc = compute_capability();
  return cc == 100 || cc == 103;
}
// The block-scaled and f8f6f4 kinds of mma.sync: sm_120a and sm_121a.
inline bool has_block_scaled_mma_sync() {
  const int cc = compute_capability();
  return cc == 120 || cc == 121;
}

}  // namespace rl::emu
