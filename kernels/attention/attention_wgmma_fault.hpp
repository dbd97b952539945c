// Deliberately wrong builds of the wgmma attention kernels, for the negative
// tests of tests/emu_hopper/hopper_attention_test.cpp: they show that
// validation fails the three bugs an online softmax on wgmma fragments is
// most likely to have.
//   skip_rescale:        O's accumulator is not multiplied by exp(m_old -
//                        m_new) when a row's max rises (ℓ still is);
//   causal_off_by_one:   the causal mask lets query i see key i + 1;
//   p_in_wrong_layout:   P's registers are handed to the P·V wgmma with
//                        rows g + 8 and columns 8.. swapped (a1 <-> a2).
// The kernel takes the fault as a template parameter that defaults to none;
// only emulator builds instantiate the faulty ones, so the GPU object holds
// the correct kernel alone.
#pragma once

#include "attention/attention_launch.hpp"
#include "rl/cuda.hpp"

#include <type_traits>

namespace rl::attention {

enum class SoftmaxFault { none, skip_rescale, causal_off_by_one, p_in_wrong_layout };

#if defined(RL_EMULATE)
// The launcher of a rung's bf16 build with `fault`: launcher_of(F) for F, a
// std::integral_constant<SoftmaxFault, ...> (what the rungs' faults:: use).
template <typename LauncherOf>
Launcher<__nv_bfloat16> launcher_with_fault(SoftmaxFault fault, LauncherOf launcher_of) {
  using F = SoftmaxFault;
  switch (fault) {
    case F::none:
      return launcher_of(std::integral_constant<F, F::none>{});
    case F::skip_rescale:
      return launcher_of(std::integral_constant<F, F::skip_rescale>{});
    case F::causal_off_by_one:
      return launcher_of(std::integral_constant<F, F::causal_off_by_one>{});
    case F::p_in_wrong_layout:
      return launcher_of(std::integral_constant<F, F::p_in_wrong_layout>{});
  }
  return nullptr;
}

namespace faults {
// Run with RL_EMU_CC=90 (attention_wgmma_{tma,overlap,pingpong}_sm90a.cu).
Launcher<__nv_bfloat16> attention_wgmma_tma_bf16(SoftmaxFault fault);
Launcher<__nv_bfloat16> attention_wgmma_overlap_bf16(SoftmaxFault fault);
Launcher<__nv_bfloat16> attention_wgmma_pingpong_bf16(SoftmaxFault fault);
}  // namespace faults
#endif

}  // namespace rl::attention
