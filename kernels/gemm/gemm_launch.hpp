// GEMM launcher interface: the arguments every rung's launcher takes, the
// grid of output tiles, and (device builds) the one launch call every rung
// makes.
#pragma once

#include "rl/cuda.hpp"

#include <functional>

namespace rl::gemm {

template <typename T>
struct Args {
  float* C;
  const T* A;
  const T* B;
  int M;
  int N;
  int K;
  int lda;
  int ldb;
  int ldc;
};

template <typename T>
using Launcher = std::function<void(const Args<T>&, cudaStream_t)>;

// Grid of output tiles: x walks N, y walks M.
inline dim3 tile_grid(int M, int N, int tile_m, int tile_n) {
  return dim3(static_cast<unsigned>((N + tile_n - 1) / tile_n),
              static_cast<unsigned>((M + tile_m - 1) / tile_m));
}

// Device builds only: the host compiler sees this header too, from the tests
// of the CUDA backend.
#if defined(__CUDACC__) || defined(RL_EMULATE)

// Launches a kernel with the (C, A, B, M, N, K, lda, ldb, ldc) parameters of
// every rung.
template <typename T, typename Kernel>
void launch_gemm(Kernel kernel, dim3 grid, dim3 block, const Args<T>& a, cudaStream_t stream) {
  rl::launch(kernel, grid, block, 0, stream, a.C, a.A, a.B, a.M, a.N, a.K, a.lda, a.ldb, a.ldc);
}

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::gemm
