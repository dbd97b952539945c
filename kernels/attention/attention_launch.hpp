// Attention launcher interface: the arguments every variant's launcher
// takes, the naive path's softmax launch (shared with the library
// baselines), and (device builds) what the fused kernels' launchers share.
#pragma once

#include "rl/check.hpp"
#include "rl/cuda.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace rl::attention {

template <typename T>
struct Args {
  T* O;
  const T* Q;
  const T* K;
  const T* V;
  T* S;  // the naive path's [B, H, N, N] scores, nullptr for the fused ones
  T* P;  // the naive path's [B, H, N, N] probabilities
  int B, H, N, d;
  bool causal;
  float scale;  // 1/√d
};

template <typename T>
using Launcher = std::function<void(const Args<T>&, cudaStream_t)>;

// The naive path's softmax, shared with the library baselines (cuda_only/):
// P = softmax(S) row by row for `rows` = B·H·N rows of N scores (row
// head·N + i is query i of a head), S already scaled; under the causal mask
// P[i][j] = 0 for j > i.  Reads S as T, computes in fp32, writes P as T.
// Defined in attention_naive.cu for float, __nv_bfloat16 and __half.
template <typename T>
void launch_attention_softmax(T* P, const T* S, std::int64_t rows, int N, bool causal,
                              cudaStream_t stream);

// ---------------------------------------------------------------- fused launches
//
// What the fused kernels' launchers share (device code: the host compiler of
// the CUDA backend's tests sees this header too).  Every fused kernel takes
// (O, Q, K, V, N, causal, scale·log2 e) and runs on the grid (B·H, ⌈N /
// block_m⌉): heads on x, query tiles on y (at most 65535); its dynamic shared
// memory is opted in once (needed above 48 KB).  The head dim is a template
// parameter compiled for 64 and 128: dispatch_head_dim refuses any other.
#if defined(__CUDACC__) || defined(RL_EMULATE)

inline constexpr float kLog2e = 1.44269504088896341f;  // exp(x) = exp2(x·log2 e)

template <auto Kernel, typename T>
void launch_fused(const std::string& name, const Args<T>& a, int block_m, int threads,
                  std::size_t shared_bytes, cudaStream_t stream) {
  const int query_tiles = (a.N + block_m - 1) / block_m;
  if (query_tiles > 65535)
    throw std::invalid_argument(name + ": N = " + std::to_string(a.N) +
                                " needs more than 65535 query tiles");
  static const bool opted_in = [shared_bytes] {
    RL_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared_bytes)));
    return true;
  }();
  (void)opted_in;
  rl::launch(Kernel, dim3(static_cast<unsigned>(a.B * a.H), static_cast<unsigned>(query_tiles)),
             dim3(static_cast<unsigned>(threads)), shared_bytes, stream, a.O, a.Q, a.K, a.V, a.N,
             a.causal, a.scale * kLog2e);
}

// launch(std::integral_constant<int, D>{}) for d = D in {64, 128}.
template <typename Launch>
void dispatch_head_dim(const std::string& name, int d, Launch&& launch) {
  switch (d) {
    case 64:
      return launch(std::integral_constant<int, 64>{});
    case 128:
      return launch(std::integral_constant<int, 128>{});
    default:
      throw std::invalid_argument(name + ": head dim d=" + std::to_string(d) +
                                  " is not compiled (supported: 64, 128)");
  }
}

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::attention
