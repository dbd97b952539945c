// LayerNorm layernorm_vec128_rows_per_block_* (baseline
// layernorm_vec128_rowcached_*): each block normalises many rows, weight and
// bias loaded once per block.
//
// layernorm_vec128_rowcached_* launches a block per row: every row loads weight
// and bias again, and only after its two reductions, so each row waits for one
// more L2 round trip behind two block barriers; at wide C a row fills a whole
// SM (up to 1024 threads), so that wait is not hidden by other rows.  Here the
// grid is one resident wave of blocks (as many as fit on the GPU at once) and
// block b takes rows b, b + gridDim.x, ...: each thread loads its slice of
// weight and bias into registers once, before its first row, and a row then
// costs only its x load (held in registers as in layernorm_vec128_rowcached_*),
// the two reductions and the y store.  The one idea against
// layernorm_vec128_rowcached_*: weight and bias per block instead of per
// row.  Streaming cache hints on x and y are the next idea
// (layernorm_vec128_rows_per_block_streaming_*); the body both share, the
// launcher's choice of chunks a thread and the cost model are in
// layernorm_rows_per_block.hpp.
#include "layernorm/layernorm_rows_per_block.hpp"
#include "rl/device_instances.hpp"

namespace rl::layernorm {

// rl-static: kernel=layernorm_vec128_rows_per_block max_regs=80 max_smem=128
// rl-static: kernel=layernorm_vec128_rows_per_block sass=LDG.E.128,STG.E.128
template <typename T, int kChunks>
__global__ void __launch_bounds__(kMaxRowsPerBlockThreads<kChunks>)
    layernorm_vec128_rows_per_block(T* __restrict__ y, float* __restrict__ mean,
                                    float* __restrict__ rstd, const T* __restrict__ x,
                                    const T* __restrict__ weight, const T* __restrict__ bias,
                                    int rows, int C) {
  normalise_rows<T, kChunks, PlainChunks>(y, mean, rstd, x, weight, bias, rows, C);
}

// This rung as launch_rows_per_block and rows_per_block_record take it.
struct RowsPerBlock {
  static constexpr const char* kVariant = "vec128_rows_per_block";
  static constexpr const char* kIdea = "many rows a block, weight and bias loaded once per block";
  template <typename T, int kChunks>
  static auto kernel() {
    return layernorm_vec128_rows_per_block<T, kChunks>;
  }
};

RL_DEVICE_INSTANCES(&launch_rows_per_block<RowsPerBlock, float>,
                    &launch_rows_per_block<RowsPerBlock, __nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(rows_per_block_record<RowsPerBlock, float>("layernorm_vec128_rows_per_block_f32",
                                                              "layernorm_vec128_rowcached_f32"));
RL_REGISTER_KERNEL(rows_per_block_record<RowsPerBlock, __nv_bfloat16>(
    "layernorm_vec128_rows_per_block_bf16", "layernorm_vec128_rowcached_bf16"));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
