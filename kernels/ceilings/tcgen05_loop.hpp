// The loop the tcgen05 roofs share (tensor_tcgen05_sm100a.cu: the plain
// kinds; tensor_tcgen05_block_scaled_sm100a.cu: FP6, FP4 and the block-scaled
// kinds): one CTA of four warps, cta_group::1, M = 128, N = 256, the
// accumulator in tensor memory (allocated and freed by warp 0), A and B in
// shared memory, K-major without swizzle (8 x 16-byte core matrices, LBO =
// 128 B along K, SBO = 256 B along M / N; every kind reads 32 bytes of K per
// row).  One thread issues kStepsPerCommit MMAs, commits them to one of two
// mbarriers and waits for the batch before, so a batch is always queued
// behind the one executing and the pipe never drains.
#pragma once

#include "ceilings/support.hpp"
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"
#include "rl/ptx_sm100_mma.hpp"
#include "rl/ptx_sm100_tmem.hpp"
#include "rl/registry.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rl::ceilings::tcgen05 {

constexpr int kBlockThreads = 128;  // four warps: one per lane quarter of tensor memory
constexpr int kStepsPerCommit = 4;
constexpr int kTileM = 128, kTileN = 256;
constexpr int kRowBytes = 32;  // K bytes per operand row, every kind
constexpr std::uint32_t kLeadingBytes = 128, kStrideBytes = 256;

// The launch shapes: one CTA per SM; the fallback (no device) assumes a
// B200's 148 SMs.
inline std::vector<Shape> launch_shapes(SizePreset preset) {
  const int sms = device_attribute_or(cudaDevAttrMultiProcessorCount, 148);
  return loop_shapes(preset, sms, kBlockThreads, 1024);
}

// parse_loop_shape, and the block the loop is written for.
inline LoopShape parse_shape(const Shape& shape, std::int64_t max_iters) {
  const LoopShape s = parse_loop_shape(shape, max_iters);
  if (s.threads != kBlockThreads)
    throw std::invalid_argument("tcgen05 loop: threads must be 128 (four warps)");
  return s;
}

// A tcgen05 roof record: what they all share, with the record's own cost and
// workload (max_cc narrowed by the caller where sm_103a lacks the kind).
inline KernelRecord roof_record(const char* name, roofline::Precision precision,
                                roofline::ComputeUnit unit, decltype(KernelRecord::cost) cost,
                                decltype(KernelRecord::make_workload) make_workload) {
  return KernelRecord{
      .name = name,
      .family = "ceilings",
      .variant = "tcgen05_loop",
      .precision = precision,
      .unit = unit,
      .baseline = "",
      .ceiling = std::string(roofline::compute_ceiling_name(unit)),
      .gpu_only = !rl::ptx::emulator_runs_tcgen05(),  // RL_EMU_CC=100 or 103
      .min_cc = 100,
      .max_cc = 103,
      .shapes = launch_shapes,
      .cost = std::move(cost),
      .make_workload = std::move(make_workload),
      .instruction = "tcgen05.mma, one CTA, D in tensor memory",
  };
}

// The descriptor of an operand tile laid out as the header says.
__device__ __forceinline__ std::uint64_t operand_descriptor(const void* tile) {
  return rl::ptx::tcgen05_smem_descriptor(rl::ptx::shared_address(tile), kLeadingBytes,
                                          kStrideBytes, rl::ptx::Tcgen05Swizzle::none);
}

// Every thread, after it wrote the operand tiles: warp 0 allocates `columns`
// of tensor memory (written to *tmem_base), thread 0 initialises the two
// mbarriers; the block then meets.
__device__ __forceinline__ void start(std::uint32_t* tmem_base, std::uint64_t (&done)[2],
                                      std::uint32_t columns) {
  rl::ptx::fence_proxy_async_shared();  // ordinary stores before the MMA's async-proxy reads
  if (threadIdx.x / 32 == 0) {
    rl::ptx::tmem_alloc(tmem_base, columns);
    rl::ptx::tmem_relinquish_alloc_permit();
  }
  if (threadIdx.x == 0) {
    rl::ptx::mbarrier_init(&done[0], 1);
    rl::ptx::mbarrier_init(&done[1], 1);
    rl::ptx::fence_mbarrier_init();
  }
  rl::ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  rl::ptx::tcgen05_fence_after_thread_sync();
}

// Thread 0: iters batches of kStepsPerCommit calls mma(negate, accumulate),
// in pairs whose second has negate = AlternateSign (so with it each batch
// ends where it started), then, with AlternateSign, one more positive MMA;
// returns when every MMA has completed.
template <bool AlternateSign, typename Mma>
__device__ __forceinline__ void issue(int iters, std::uint64_t (&done)[2], Mma mma) {
  for (int it = 0; it < iters; ++it) {
    for (int s = 0; s < kStepsPerCommit; s += 2) {
      mma(false, it > 0 || s > 0);
      mma(AlternateSign, true);
    }
    rl::ptx::tmem_commit(&done[it & 1]);
    // The batch before completes while this one waits behind it.
    if (it > 0) rl::ptx::mbarrier_wait_parity(&done[(it - 1) & 1], ((it - 1) >> 1) & 1);
  }
  if constexpr (AlternateSign) {
    mma(false, iters > 0);
    rl::ptx::tmem_commit(&done[iters & 1]);
    rl::ptx::mbarrier_wait_parity(&done[iters & 1], (iters >> 1) & 1);
  } else if (iters > 0) {
    rl::ptx::mbarrier_wait_parity(&done[(iters - 1) & 1], ((iters - 1) >> 1) & 1);
  }
}

// Every thread, after thread 0's issue(): the block meets so that D may be read.
__device__ __forceinline__ void await_accumulator() {
  if (threadIdx.x == 0) rl::ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  rl::ptx::tcgen05_fence_after_thread_sync();
}

// Warp w's 32 lanes of D (rows 32 w .. 32 w + 31: this thread's row), columns
// c .. c + 31 into r.
__device__ __forceinline__ void read_row_chunk(std::uint32_t d, int c, std::uint32_t (&r)[32]) {
  rl::ptx::tmem_ld<rl::ptx::TmemShape::s32x32b, 32>(d + ((32u * (threadIdx.x / 32)) << 16) + c, r);
  rl::ptx::tmem_wait_ld();
}

// Every thread, last: warp 0 frees the columns once every warp has read.
__device__ __forceinline__ void finish(std::uint32_t d, std::uint32_t columns) {
  rl::ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (threadIdx.x / 32 == 0) rl::ptx::tmem_dealloc(d, columns);
}

}  // namespace rl::ceilings::tcgen05
