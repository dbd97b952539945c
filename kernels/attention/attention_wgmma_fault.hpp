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

namespace rl::attention {

enum class SoftmaxFault { none, skip_rescale, causal_off_by_one, p_in_wrong_layout };

#if defined(RL_EMULATE)
namespace faults {
// Run with RL_EMU_CC=90 (attention_wgmma_{tma,overlap,pingpong}_sm90a.cu).
Launcher<__nv_bfloat16> attention_wgmma_tma_bf16(SoftmaxFault fault);
Launcher<__nv_bfloat16> attention_wgmma_overlap_bf16(SoftmaxFault fault);
Launcher<__nv_bfloat16> attention_wgmma_pingpong_bf16(SoftmaxFault fault);
}  // namespace faults
#endif

}  // namespace rl::attention
