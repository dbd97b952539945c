// What the tcgen05 GEMM rungs share (gemm_tcgen05_sm100a.cu and
// gemm_tcgen05_block_scaled_sm100a.cu, sm_100a / sm_103a): the block shape,
// four warps, one CTA a 128 x 256 tile of C, D in tensor memory; the
// kernel's start (tensor memory, barriers) and its end (the epilogue that
// reads D back row by row and stores it inside C, then frees D).  The first
// rung's header explains the design.
#pragma once

#include "gemm/gemm_wgmma_parts.hpp"  // wgmma::BlockTile
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"
#include "rl/ptx_sm100_mma.hpp"
#include "rl/ptx_sm100_tmem.hpp"
#include "rl/unroll.hpp"

#include <cstdint>

namespace rl::gemm::tcgen05 {

constexpr int kThreads = 128;  // four warps: one per lane quarter of D
constexpr int kBlockM = 128, kBlockN = 256;
constexpr std::uint32_t kAccumulatorColumns = kBlockN;  // one fp32 column per column of D
constexpr int kEpilogueColumns = 32;                    // columns per tcgen05.ld (32x32b.x32)

#if defined(__CUDACC__) || defined(RL_EMULATE)

// The epilogue, every thread: row `row` of the tile (lane `row` of D), 32
// columns a tcgen05.ld, stored where they are inside C.
__device__ __forceinline__ void store_row(std::uint32_t d, int row, float* __restrict__ C, int M,
                                          int N, int ldc, wgmma::BlockTile tile) {
  const int c_row = tile.row + row;
  RL_UNROLL
  for (int c = 0; c < kBlockN; c += kEpilogueColumns) {
    if (tile.col + c >= N) break;  // the whole warp: every lane has the same columns
    std::uint32_t r[kEpilogueColumns];
    // taddr of the warp's lane quarter (row - row % 32 is the warp's first row)
    rl::ptx::tmem_ld<rl::ptx::TmemShape::s32x32b, kEpilogueColumns>(
        d + (static_cast<std::uint32_t>(row - row % 32) << 16) + static_cast<std::uint32_t>(c), r);
    rl::ptx::tmem_wait_ld();
    if (c_row < M) {
      RL_UNROLL
      for (int j = 0; j < kEpilogueColumns; ++j)
        if (tile.col + c + j < N) C[c_row * ldc + tile.col + c + j] = __uint_as_float(r[j]);
    }
  }
}

// The shared-memory descriptors of MMA `step` of a stage whose A and B tiles
// start at shared addresses a and b (the wgmma ring's layouts, 128B swizzle;
// each step reads the next 32 bytes of K of every row).
struct OperandDescriptors {
  std::uint64_t a, b;
};
template <typename Ring>
__device__ __forceinline__ OperandDescriptors operand_descriptors(std::uint32_t a, std::uint32_t b,
                                                                  int step) {
  return {rl::ptx::tcgen05_smem_descriptor(a + step * wgmma::kAStepBytes, wgmma::kAUnusedLbo,
                                           wgmma::kRowGroupBytes, rl::ptx::Tcgen05Swizzle::b128),
          rl::ptx::tcgen05_smem_descriptor(b + step * Ring::kBStepBytes, Ring::kBLbo,
                                           wgmma::kRowGroupBytes, rl::ptx::Tcgen05Swizzle::b128)};
}

// Every thread, first: warp 0 allocates `columns` of tensor memory (and
// gives up the permit to allocate more), thread 0 initialises the ring's
// "full" / "empty" barriers (one arrival each: the producer's
// arrive_expect_tx, the MMA thread's commit) and "done"; the block meets at
// init_ring_barriers' __syncthreads.  Returns D's tensor-memory address.
// `thread` is threadIdx.x, read by the kernel (gemm_wgmma_parts.hpp says why).
template <typename Ring>
__device__ __forceinline__ std::uint32_t start(std::uint32_t* tmem_base, std::uint32_t columns,
                                               std::uint64_t* full, std::uint64_t* empty,
                                               std::uint64_t* done, int thread) {
  if (thread / 32 == 0) {
    rl::ptx::tmem_alloc(tmem_base, columns);
    rl::ptx::tmem_relinquish_alloc_permit();
    rl::ptx::tcgen05_fence_before_thread_sync();
  }
  if (thread == 0) rl::ptx::mbarrier_init(done, 1);  // init_ring_barriers fences it
  wgmma::init_ring_barriers<Ring>(full, empty, 1, thread == 0);
  rl::ptx::tcgen05_fence_after_thread_sync();
  return *tmem_base;
}

// Every thread, after the producer's and MMA thread's loops: wait until D is
// complete, store this thread's row, then warp 0 frees the columns once
// every warp has read its lanes.
__device__ __forceinline__ void finish(std::uint32_t d, std::uint32_t columns, std::uint64_t* done,
                                       int thread, float* __restrict__ C, int M, int N, int ldc,
                                       wgmma::BlockTile tile) {
  __syncwarp();  // tcgen05.ld is .sync.aligned: the whole warp again
  rl::ptx::mbarrier_wait_parity(done, 0);
  rl::ptx::tcgen05_fence_after_thread_sync();
  store_row(d, thread, C, M, N, ldc, tile);
  rl::ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (thread / 32 == 0) {
    rl::ptx::tcgen05_fence_after_thread_sync();
    rl::ptx::tmem_dealloc(d, columns);
  }
}

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::gemm::tcgen05
