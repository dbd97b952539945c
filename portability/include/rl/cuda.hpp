// The only CUDA include of device code and of the harness.
//
// Under nvcc (and host code of the CUDA backend) it brings in the CUDA runtime,
// cuda_fp16.h, cuda_bf16.h and mma.h.  With RL_EMULATE (set by linking rl::emu)
// it brings in the CUDA-on-CPU emulator, which provides the same names.
//
// Kernels are launched only through rl::launch(kernel, grid, block,
// shared_bytes, stream, args...); launch errors are reported, as in CUDA, by
// cudaGetLastError().  Dynamic shared memory is declared only with
// RL_DYNAMIC_SHARED(T, name).
#pragma once

#if defined(RL_EMULATE)

#include "rl/emu/runtime.hpp"

#else  // CUDA backend

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#if defined(__CUDACC__)
#include <mma.h>

namespace rl {

template <typename... KernelParams, typename... Args>
inline void launch(void (*kernel)(KernelParams...), dim3 grid, dim3 block, std::size_t shared_bytes,
                   cudaStream_t stream, Args&&... args) {
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
}

}  // namespace rl

#define RL_DYNAMIC_SHARED(T, name)                                  \
  extern __shared__ __align__(16) unsigned char rl_dynamic_smem_[]; \
  T* name = reinterpret_cast<T*>(rl_dynamic_smem_)

#endif  // __CUDACC__
#endif  // RL_EMULATE
