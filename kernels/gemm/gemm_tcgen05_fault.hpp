// The faulty builds of the tcgen05 rung (gemm_tcgen05_sm100a.cu), declared
// for the negative tests of its validation (tests/emu_blackwell/
// sm100_gemm_tcgen05_test.cpp): the same two pipeline bugs as the other pipelined
// rungs (gemm_pipeline_fault.hpp), built into the thread that issues the
// tcgen05.mma instructions.  Emulator builds only, run with RL_EMU_CC=100.
#pragma once

#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_pipeline_fault.hpp"
#include "rl/cuda.hpp"

namespace rl::gemm::faults {

#if defined(RL_EMULATE)
Launcher<__nv_bfloat16> tcgen05_bf16(PipelineFault fault);
#endif

}  // namespace rl::gemm::faults
