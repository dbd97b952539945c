// LayerNorm layernorm_vec128_rows_per_block_streaming_*: its baseline
// layernorm_vec128_rows_per_block_* (many rows a block, weight and bias loaded
// once per block) with x read and y written through streaming cache hints.
//
// Every byte of x is read once and every byte of y written once, yet plain
// loads and stores allocate their lines in L2 with the normal eviction policy,
// the same as weight and bias, which every block reads again at the start of
// its rows.  At the large preset 2 GiB of x and y flow through a 50 MB L2, so
// those streams compete for lines with the data that is reused.  Here whole
// 16-byte chunks of x use ld.global.cs.nc (the read-only path of
// layernorm_vec128_rows_per_block_*'s const __restrict__ loads, plus the
// streaming hint) and of y st.global.cs: their lines are allocated evict-first,
// so L2 gives them up before anything else.  The one idea against
// layernorm_vec128_rows_per_block_*: the cache hint on x and y (weight, bias,
// mean, rstd and a row's scalar ends keep plain accesses).  What it should buy:
// the last few percent between layernorm_vec128_rows_per_block_* and the
// hbm.copy roof at large C, where it is already memory-bound; a goal until
// measured on a GPU.  Through rl::ptx wrappers (LDG.E.EF.128.CONSTANT and
// STG.E.EF.128 in the SASS of every architecture built; the emulator treats the
// hint as the plain access it is semantically).
#include "layernorm/layernorm_rows_per_block.hpp"
#include "rl/device_instances.hpp"

namespace rl::layernorm {

// No STG.E.128 may remain: every whole chunk of y is a streaming store (the
// scalar STG.E of mean, rstd and a ragged row end are not 128-bit).
// rl-static: kernel=layernorm_vec128_rows_per_block_streaming max_regs=80 max_smem=128
// rl-static: kernel=layernorm_vec128_rows_per_block_streaming sass=LDG.E.EF.128.CONSTANT
// rl-static: kernel=layernorm_vec128_rows_per_block_streaming sass=STG.E.EF.128
// rl-static: kernel=layernorm_vec128_rows_per_block_streaming sass_absent=STG.E.128
template <typename T, int kChunks>
__global__ void __launch_bounds__(kMaxRowsPerBlockThreads<kChunks>)
    layernorm_vec128_rows_per_block_streaming(T* __restrict__ y, float* __restrict__ mean,
                                              float* __restrict__ rstd, const T* __restrict__ x,
                                              const T* __restrict__ weight,
                                              const T* __restrict__ bias, int rows, int C) {
  normalise_rows<T, kChunks, StreamingChunks>(y, mean, rstd, x, weight, bias, rows, C);
}

// This rung as launch_rows_per_block and rows_per_block_record take it.
struct RowsPerBlockStreaming {
  static constexpr const char* kVariant = "vec128_rows_per_block_streaming";
  static constexpr const char* kIdea = "streaming (evict-first) cache hints on x and y";
  template <typename T, int kChunks>
  static auto kernel() {
    return layernorm_vec128_rows_per_block_streaming<T, kChunks>;
  }
};

RL_DEVICE_INSTANCES(&launch_rows_per_block<RowsPerBlockStreaming, float>,
                    &launch_rows_per_block<RowsPerBlockStreaming, __nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(rows_per_block_record<RowsPerBlockStreaming, float>(
    "layernorm_vec128_rows_per_block_streaming_f32", "layernorm_vec128_rows_per_block_f32"));
RL_REGISTER_KERNEL(rows_per_block_record<RowsPerBlockStreaming, __nv_bfloat16>(
    "layernorm_vec128_rows_per_block_streaming_bf16", "layernorm_vec128_rows_per_block_bf16"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
