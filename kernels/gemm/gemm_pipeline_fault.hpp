// Deliberately wrong builds of the pipelined rungs, for the negative tests of
// GEMM validation (tests/gemm/gemm_pipeline_fault_test.cpp): they show that
// the exact check (gemm_exact_check.hpp) fails the two pipeline bugs a
// multistage kernel is most likely to have, at a shape with many k-tiles.
//   skip_one_k_tile:  the middle k-tile is loaded and released but never
//                     multiplied (a wrong loop bound or stage count);
//   read_stage_early: the middle k-tile's math reads the stage of the NEXT
//                     k-tile, one step before the wait that covers it (a
//                     wrong stage index or a wait one group short).
// The cluster rung (gemm_wgmma_cluster_sm90a.cu) has one more, its own:
//   release_own_cta_only: a consumed stage is released to this CTA's
//                     producer only, not to the peer's, whose multicast
//                     then writes the next k-tile's B half into a stage this
//                     CTA's wgmmas may still read.  The emulator reports it
//                     (emu/docs/hopper.md, "Operands in flight"); the exact
//                     check alone does not see it (the emulator reads wgmma
//                     operands at issue).
// A kernel template takes the fault as a parameter that defaults to none;
// only emulator builds instantiate the faulty ones (the GPU objects hold the
// correct kernel alone, so its SASS is unchanged).
#pragma once

#include "gemm/gemm_launch.hpp"
#include "rl/cuda.hpp"

namespace rl::gemm {

enum class PipelineFault { none, skip_one_k_tile, read_stage_early };
enum class ReleaseFault { none, release_own_cta_only };

// The k-tile a faulty build gets wrong: the middle one, so that neither the
// prologue nor the drain of the pipeline covers it.
__host__ __device__ constexpr int faulty_k_tile(int k_tiles) {
  return k_tiles / 2;
}

// The stage a build reads for k-tile kt of a ring of `stages`.
template <PipelineFault F>
__host__ __device__ constexpr int stage_read(int kt, int k_tiles, int stages) {
  if constexpr (F == PipelineFault::read_stage_early)
    if (kt == faulty_k_tile(k_tiles)) return (kt + 1) % stages;
  return kt % stages;
}

// Whether a build multiplies k-tile kt.
template <PipelineFault F>
__host__ __device__ constexpr bool multiplies(int kt, int k_tiles) {
  return F != PipelineFault::skip_one_k_tile || kt != faulty_k_tile(k_tiles);
}

#if defined(RL_EMULATE)
// The faulty launchers, defined by the rungs' files in emulator builds.
namespace faults {
Launcher<__nv_bfloat16> mma_sync_multistage_bf16(PipelineFault fault);
Launcher<__nv_bfloat16> wgmma_tma_bf16(PipelineFault fault);     // runs with RL_EMU_CC=90
Launcher<__nv_bfloat16> wgmma_cluster_bf16(ReleaseFault fault);  // runs with RL_EMU_CC=90
}  // namespace faults
#endif

}  // namespace rl::gemm
