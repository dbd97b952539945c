// LayerNorm rung 7: each block normalises many rows, weight and bias loaded
// once per block.
//
// Rung 6 (vec128_rowcached) launches a block per row: every row loads weight
// and bias again, and only after its two reductions, so each row waits for
// one more L2 round trip behind two block barriers; at wide C a row fills a
// whole SM (up to 1024 threads), so that wait is not hidden by other rows.
// Here the grid is one resident wave of blocks (as many as fit on the GPU at
// once) and block b takes rows b, b + gridDim.x, ...: each thread loads its
// slice of weight and bias into registers once, before its first row, and a
// row then costs only its x load (held in registers as in rung 6), the two
// reductions and the y store.  The one idea against rung 6: weight and bias
// per block instead of per row.  (Streaming cache hints on x and y would be
// the next idea; the project has no wrapper for them yet.)
//
// Each thread caches kChunks 16-byte chunks of x, weight and bias, three
// times rung 6's registers (and nvcc hoists the bf16 weight and bias out of
// the row loop already converted to fp32: twice their bf16 registers), so the
// launcher picks the smallest kChunks whose thread limit covers the row: 1024
// threads (64 registers) for one chunk, 768 (80 registers) for two and, fp32
// only, four.  That reaches C = 12288 in both precisions, the large preset's
// widest rows, with nothing spilled (four bf16 chunks would spill).
#include "ceilings/support.hpp"
#include "layernorm/layernorm_common.hpp"

#include <stdexcept>
#include <string>

namespace rl::layernorm {

template <int kChunks>
constexpr int kMaxRowsPerBlockThreads = kChunks == 1 ? 1024 : 768;

// Cost model: x read exactly once, weight and bias once per block (a few
// hundred blocks read the same C-vectors from L2: counted once, as for every
// rung): bytes_model = bytes_min.
double bytes_model_rows_per_block(const Dims& d) {
  return x_read_bytes(d, 1, 1.0) + bytes_except_x(d);
}

// rl-static: kernel=layernorm_vec128_rows_per_block max_regs=80 max_smem=128
// rl-static: kernel=layernorm_vec128_rows_per_block sass=LDG.E.128,STG.E.128
template <typename T, int kChunks>
__global__ void __launch_bounds__(kMaxRowsPerBlockThreads<kChunks>)
    layernorm_vec128_rows_per_block(T* __restrict__ y, float* __restrict__ mean,
                                    float* __restrict__ rstd, const T* __restrict__ x,
                                    const T* __restrict__ weight, const T* __restrict__ bias,
                                    int rows, int C) {
  constexpr int kVec = Packed128<T>::size;
  __shared__ float scratch[32];
  const int threads = static_cast<int>(blockDim.x);
  const int tid = static_cast<int>(threadIdx.x);
  const bool aligned = C % kVec == 0;  // then every row starts 16-byte aligned

  // Chunk k of this thread: elements (k * threads + tid) * kVec onwards, the
  // same columns in every row, so weight and bias are this block's for good.
  Packed128<T> w[kChunks], b[kChunks];
  for (int k = 0; k < kChunks; ++k) {
    const int e = (k * threads + tid) * kVec;
    w[k] = load_chunk(weight, e, C, aligned);
    b[k] = load_chunk(bias, e, C, aligned);
  }

  for (int row = static_cast<int>(blockIdx.x); row < rows; row += static_cast<int>(gridDim.x)) {
    const T* xr = x + static_cast<std::int64_t>(row) * C;
    T* yr = y + static_cast<std::int64_t>(row) * C;
    Packed128<T> cached[kChunks];
    load_cached_row(cached, xr, C, aligned);
    const auto [m, s] = cached_row_stats(cached, C, scratch);

    for (int k = 0; k < kChunks; ++k) {
      const int e = (k * threads + tid) * kVec;
      if (e >= C) break;
      Packed128<T> out;
      for (int j = 0; j < kVec; ++j)
        out[j] = from_f32<T>((to_f32(cached[k][j]) - m) * s * to_f32(w[k][j]) + to_f32(b[k][j]));
      store_chunk(yr, e, C, aligned, out);
    }
    if (tid == 0) {
      mean[row] = m;
      rstd[row] = s;
    }
  }
}

// Tests lower `max_blocks` so that blocks go round the row loop at small
// row counts too.
template <typename T, int kChunks>
bool try_launch_rows_per_block(const Args<T>& a, cudaStream_t stream, std::int64_t max_blocks) {
  constexpr int kVec = Packed128<T>::size;
  const int chunks = (a.C + kVec - 1) / kVec;
  const int threads = ((chunks + kChunks - 1) / kChunks + 31) / 32 * 32;
  if (threads > kMaxRowsPerBlockThreads<kChunks>) return false;
  const auto kernel = layernorm_vec128_rows_per_block<T, kChunks>;
  // The resident wave for this block size, asked once per process: an
  // occupancy query per launch would delay the kernel inside the timed region.
  static int wave_blocks[kMaxRowsPerBlockThreads<kChunks> / 32 + 1] = {};
  int& wave = wave_blocks[threads / 32];
  if (wave == 0) wave = rl::ceilings::resident_blocks(kernel, threads, std::int64_t{1} << 31);
  const int blocks = static_cast<int>(std::min<std::int64_t>({wave, a.rows, max_blocks}));
  rl::launch(kernel, dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(threads)), 0,
             stream, a.y, a.mean, a.rstd, a.x, a.weight, a.bias, a.rows, a.C);
  return true;
}

template <typename T>
void launch_layernorm_vec128_rows_per_block(const Args<T>& a, cudaStream_t stream,
                                            std::int64_t max_blocks) {
  bool launched = try_launch_rows_per_block<T, 1>(a, stream, max_blocks) ||
                  try_launch_rows_per_block<T, 2>(a, stream, max_blocks);
  if constexpr (sizeof(T) == 4)
    launched = launched || try_launch_rows_per_block<T, 4>(a, stream, max_blocks);
  if (!launched)
    throw std::invalid_argument("layernorm_vec128_rows_per_block: C = " + std::to_string(a.C) +
                                " does not fit in the registers of one block");
}

template <typename T>
KernelRecord rows_per_block_record(std::string name, std::string baseline) {
  return make_record<T>({.name = std::move(name),
                         .variant = "vec128_rows_per_block",
                         .baseline = std::move(baseline),
                         .launcher =
                             [](const Args<T>& a, cudaStream_t stream) {
                               launch_layernorm_vec128_rows_per_block<T>(a, stream, a.max_blocks);
                             },
                         .bytes_model = &bytes_model_rows_per_block});
}

RL_REGISTER_KERNEL(rows_per_block_record<float>("layernorm_vec128_rows_per_block_f32",
                                                "layernorm_vec128_rowcached_f32"));
RL_REGISTER_KERNEL(rows_per_block_record<__nv_bfloat16>("layernorm_vec128_rows_per_block_bf16",
                                                        "layernorm_vec128_rowcached_bf16"));

}  // namespace rl::layernorm
