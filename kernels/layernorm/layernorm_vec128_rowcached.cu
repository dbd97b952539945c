// LayerNorm layernorm_vec128_rowcached_*: its baseline
// layernorm_vec128_block_per_row_* (128-bit accesses, a block per row) with
// the row held in registers, so x is read once.
//
// layernorm_warp_per_row_twopass_*, layernorm_block_per_row_* and
// layernorm_vec128_block_per_row_* sweep the row three times and rely on cache
// for the re-reads.  Here each thread of the row's block (up to 1024 threads)
// loads its slice of the row once, as 16-byte vectors, into registers; the
// mean, the centred variance (a second pass, over registers instead of memory)
// and the normalisation all run on those registers.  The one idea against
// layernorm_vec128_block_per_row_*: register caching, so x crosses the memory
// bus exactly once whatever C and however many rows are in flight.  This is the
// rung that should sit on the hbm.copy roof at every C, bf16 at twice the
// intensity of fp32.
//
// Each thread caches kChunks 16-byte chunks; the launcher picks the smallest
// kChunks that covers the row within that kChunks' thread limit (C up to
// 12288 fp32, the large preset's widest row, / 24576 bf16).  The limit falls
// as kChunks grows so that the cached row stays in registers: 1024 threads
// leave 64 registers a thread, in which 4 chunks of bf16 spill on sm_100a;
// 768 threads leave 80.  A row whose start is not 16-byte aligned (C not a multiple of
// the vector width) and the ragged end of a row use scalar accesses.
#include "layernorm/layernorm_device.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "rl/device_instances.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_workload.hpp"
#endif

#include <stdexcept>

namespace rl::layernorm {

// Threads per block (and so registers per thread) for kChunks chunks a thread.
template <int kChunks>
constexpr int kMaxThreads = kChunks <= 2 ? 1024 : 768;

// 80 registers is the 768-thread bound of kChunks = 4; kChunks 1 and 2 are
// held to 64 by their own launch bound.
// rl-static: kernel=layernorm_vec128_rowcached max_regs=80 max_smem=128
// rl-static: kernel=layernorm_vec128_rowcached sass=LDG.E.128,STG.E.128
template <typename T, int kChunks>
__global__ void __launch_bounds__(kMaxThreads<kChunks>)
    layernorm_vec128_rowcached(T* __restrict__ y, float* __restrict__ mean,
                               float* __restrict__ rstd, const T* __restrict__ x,
                               const T* __restrict__ weight, const T* __restrict__ bias, int C) {
  constexpr int kVec = Packed128<T>::size;
  __shared__ float scratch[32];
  const int row = static_cast<int>(blockIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  const int tid = static_cast<int>(threadIdx.x);
  const T* xr = x + static_cast<std::int64_t>(row) * C;
  T* yr = y + static_cast<std::int64_t>(row) * C;
  const bool aligned = C % kVec == 0;  // then every row starts 16-byte aligned

  Packed128<T> cached[kChunks];
  load_cached_row(cached, xr, C, aligned);
  const auto [m, s] = cached_row_stats(cached, C, scratch);

  for (int k = 0; k < kChunks; ++k) {
    const int e = (k * threads + tid) * kVec;
    if (e >= C) break;
    const Packed128<T> w = load_chunk(weight, e, C, aligned);
    const Packed128<T> b = load_chunk(bias, e, C, aligned);
    Packed128<T> out;
    for (int j = 0; j < kVec; ++j)
      out[j] = from_f32<T>((to_f32(cached[k][j]) - m) * s * to_f32(w[j]) + to_f32(b[j]));
    store_chunk(yr, e, C, aligned, out);
  }
  if (tid == 0) {
    mean[row] = m;
    rstd[row] = s;
  }
}

template <typename T, int kChunks>
bool try_launch(const Args<T>& a, cudaStream_t stream) {
  constexpr int kVec = Packed128<T>::size;
  const int chunks = (a.C + kVec - 1) / kVec;
  const int threads = ((chunks + kChunks - 1) / kChunks + 31) / 32 * 32;
  if (threads > kMaxThreads<kChunks>) return false;
  rl::launch(layernorm_vec128_rowcached<T, kChunks>, dim3(static_cast<unsigned>(a.rows)),
             dim3(static_cast<unsigned>(threads)), 0, stream, a.y, a.mean, a.rstd, a.x, a.weight,
             a.bias, a.C);
  return true;
}

template <typename T>
void launch_layernorm_vec128_rowcached(const Args<T>& a, cudaStream_t stream) {
  if (!(try_launch<T, 1>(a, stream) || try_launch<T, 2>(a, stream) || try_launch<T, 4>(a, stream)))
    throw std::invalid_argument("layernorm_vec128_rowcached: C = " + std::to_string(a.C) +
                                " does not fit in the registers of one block");
}

RL_DEVICE_INSTANCES(&launch_layernorm_vec128_rowcached<float>,
                    &launch_layernorm_vec128_rowcached<__nv_bfloat16>);

#if !defined(__CUDA_ARCH__)
// Cost model: x read exactly once, whatever C: bytes_model = bytes_min.
double bytes_model_rowcached(const Dims& d) {
  return x_read_bytes(d, 1, 1.0) + bytes_except_x(d);
}

RL_REGISTER_KERNEL(make_record<float>({.name = "layernorm_vec128_rowcached_f32",
                                       .variant = "vec128_rowcached",
                                       .baseline = "layernorm_vec128_block_per_row_f32",
                                       .launcher = &launch_layernorm_vec128_rowcached<float>,
                                       .bytes_model = &bytes_model_rowcached,
                                       .idea = "the row held in registers: x read once"}));
RL_REGISTER_KERNEL(
    make_record<__nv_bfloat16>({.name = "layernorm_vec128_rowcached_bf16",
                                .variant = "vec128_rowcached",
                                .baseline = "layernorm_vec128_block_per_row_bf16",
                                .launcher = &launch_layernorm_vec128_rowcached<__nv_bfloat16>,
                                .bytes_model = &bytes_model_rowcached,
                                .idea = "the row held in registers: x read once"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
