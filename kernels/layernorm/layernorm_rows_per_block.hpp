// layernorm_vec128_rows_per_block_* and its streaming variant
// layernorm_vec128_rows_per_block_streaming_* share one body: a resident wave
// of blocks, each normalising rows b, b + gridDim.x, ... with weight and bias
// loaded once into registers (layernorm_vec128_rows_per_block.cu says
// why).  The body is templated on how x and y cross the memory bus (`Chunks`),
// so the only difference measured between the two rungs is that: plain 128-bit
// accesses in the first, streaming (evict-first) ones in the second.  Each rung
// keeps its own kernel name (profiles and static checks tell them apart) and
// calls normalise_rows from it.
#pragma once

#include "ceilings/occupancy.hpp"
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_device.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "rl/ptx.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "layernorm/layernorm_workload.hpp"
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace rl::layernorm {

// Threads per block for kChunks 16-byte chunks a thread: each thread caches
// kChunks chunks of x, weight and bias, three times
// layernorm_vec128_rowcached_*'s registers (and nvcc hoists the bf16 weight and
// bias out of the row loop already converted to fp32: twice their bf16
// registers), so the launcher picks the smallest kChunks whose thread limit
// covers the row: 1024 threads (64 registers) for one chunk, 768 (80 registers)
// for two and, fp32 only, four.  That reaches C = 12288 in both precisions, the
// large preset's widest rows, with nothing spilled (four bf16 chunks would
// spill).
//
// What that costs at wide C (registers from ptxas for sm_90a, an H100's 64 K
// registers and 2048 threads an SM): rows in flight per SM are 10, 8, 2, 1, 1
// in fp32 and 14, 10, 2, 1, 1 in bf16 at C = 768, 1024, 4096, 8192, 12288.
// From C = 8192 on, x, weight and bias of one row fill most of the register
// file, so an SM loads a row, reduces it behind two barriers and stores it
// before it loads the next: the HBM goal is least certain there.  Holding
// weight and bias in shared memory instead would leave the registers to x and
// allow two rows in flight (a rung of its own, not written yet).
template <int kChunks>
constexpr int kMaxRowsPerBlockThreads = kChunks == 1 ? 1024 : 768;

// Cost model: x read exactly once, weight and bias once per block (a few
// hundred blocks read the same C-vectors from L2: counted once, as for every
// rung): bytes_model = bytes_min.  The streaming hints change which lines L2
// keeps, not the compulsory traffic, so the streaming variant has the same
// model.
inline double bytes_model_rows_per_block(const Dims& d) {
  return x_read_bytes(d, 1, 1.0) + bytes_except_x(d);
}

#if defined(__CUDACC__) || defined(RL_EMULATE)

// Whole 16-byte chunks of x and y with the .cs cache operator: each byte of x
// is read once and each byte of y written once, so their lines are allocated
// evict-first and the lines that are reused (weight and bias, read by every
// block) are the ones L2 keeps.  x goes through the read-only path as
// layernorm_vec128_rows_per_block_*'s const __restrict__ loads do
// (LDG.E.EF.128.CONSTANT against LDG.E.128.CONSTANT), so only the eviction
// policy differs.  A row's ragged end (C not a multiple of the vector) is read
// through __ldg: nvcc infers the read-only path for
// layernorm_vec128_rows_per_block_*'s plain loads, but not past the opaque asm
// of the streaming store in the same loop, and would fall back to coherent
// LDG.E.
struct StreamingChunks {
  template <typename T>
  __device__ __forceinline__ static Packed128<T> load(const T* address) {
    std::uint32_t bits[4];
    rl::ptx::ld_global_nc_cs_v4(bits, address);
    Packed128<T> out;
    memcpy(&out, bits, sizeof(bits));
    return out;
  }
  template <typename T>
  __device__ __forceinline__ static T load_scalar(const T* row, int i) {
    return __ldg(row + i);
  }
  template <typename T>
  __device__ __forceinline__ static void store(T* address, const Packed128<T>& value) {
    std::uint32_t bits[4];
    memcpy(bits, &value, sizeof(bits));
    rl::ptx::st_global_cs_v4(address, bits);
  }
};

// The body of both rungs' kernels.  Chunk k of this thread is elements
// (k * blockDim.x + threadIdx.x) * kVec onwards, the same columns in every
// row, so weight and bias are this block's for good.
template <typename T, int kChunks, typename Chunks>
__device__ __forceinline__ void normalise_rows(T* __restrict__ y, float* __restrict__ mean,
                                               float* __restrict__ rstd, const T* __restrict__ x,
                                               const T* __restrict__ weight,
                                               const T* __restrict__ bias, int rows, int C) {
  constexpr int kVec = Packed128<T>::size;
  __shared__ float scratch[32];
  const int threads = static_cast<int>(blockDim.x);
  const int tid = static_cast<int>(threadIdx.x);
  const bool aligned = C % kVec == 0;  // then every row starts 16-byte aligned

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
    load_cached_row<Chunks>(cached, xr, C, aligned);
    const auto [m, s] = cached_row_stats(cached, C, scratch);

    for (int k = 0; k < kChunks; ++k) {
      const int e = (k * threads + tid) * kVec;
      if (e >= C) break;
      Packed128<T> out;
      for (int j = 0; j < kVec; ++j)
        out[j] = from_f32<T>((to_f32(cached[k][j]) - m) * s * to_f32(w[k][j]) + to_f32(b[k][j]));
      store_chunk<Chunks>(yr, e, C, aligned, out);
    }
    if (tid == 0) {
      mean[row] = m;
      rstd[row] = s;
    }
  }
}

#endif  // __CUDACC__ || RL_EMULATE

// Launches `Rung::kernel<T, kChunks>()` if kChunks chunks a thread cover the
// row within that kChunks' thread limit, as many blocks as are resident at
// once (at most `max_blocks`: tests lower it so that blocks go round the row
// loop at small row counts too).  `Rung` also keys the cached wave, since the
// two rungs' kernels may differ in registers and so in residency.
template <typename Rung, typename T, int kChunks>
bool try_launch_rows_per_block(const Args<T>& a, cudaStream_t stream) {
  constexpr int kVec = Packed128<T>::size;
  const int chunks = (a.C + kVec - 1) / kVec;
  const int threads = ((chunks + kChunks - 1) / kChunks + 31) / 32 * 32;
  if (threads > kMaxRowsPerBlockThreads<kChunks>) return false;
  const auto kernel = Rung::template kernel<T, kChunks>();
  // The resident wave for this block size, asked once per process: an
  // occupancy query per launch would delay the kernel inside the timed region.
  static int wave_blocks[kMaxRowsPerBlockThreads<kChunks> / 32 + 1] = {};
  int& wave = wave_blocks[threads / 32];
  if (wave == 0) wave = rl::ceilings::resident_blocks(kernel, threads, std::int64_t{1} << 31);
  const int blocks = static_cast<int>(std::min<std::int64_t>({wave, a.rows, a.max_blocks}));
  rl::launch(kernel, dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(threads)), 0,
             stream, a.y, a.mean, a.rstd, a.x, a.weight, a.bias, a.rows, a.C);
  return true;
}

// `Rung` names a rung: kVariant (the record's variant, "layernorm_" + it the
// kernel's name), kIdea (the report's line on what it changes) and
// kernel<T, kChunks>() (its kernel for kChunks chunks).
template <typename Rung, typename T>
void launch_rows_per_block(const Args<T>& a, cudaStream_t stream) {
  bool launched = try_launch_rows_per_block<Rung, T, 1>(a, stream) ||
                  try_launch_rows_per_block<Rung, T, 2>(a, stream);
  if constexpr (sizeof(T) == 4)
    launched = launched || try_launch_rows_per_block<Rung, T, 4>(a, stream);
  if (!launched)
    throw std::invalid_argument("layernorm_" + std::string(Rung::kVariant) +
                                ": C = " + std::to_string(a.C) +
                                " does not fit in the registers of one block");
}

#if !defined(__CUDA_ARCH__)
template <typename Rung, typename T>
KernelRecord rows_per_block_record(std::string name, std::string baseline) {
  return make_record<T>({.name = std::move(name),
                         .variant = Rung::kVariant,
                         .baseline = std::move(baseline),
                         .launcher = &launch_rows_per_block<Rung, T>,
                         .bytes_model = &bytes_model_rows_per_block,
                         .idea = Rung::kIdea});
}
#endif  // !__CUDA_ARCH__

}  // namespace rl::layernorm
