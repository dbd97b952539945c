// Two kernels in llm.c's dev/cuda style that move float arrays through int4
// (its Packed128 with load128/store128, written here after common.h) and read
// the same bytes back as floats.  Correct CUDA: nvcc does not exploit
// type-based aliasing across these accesses.  g++ at -O2 does unless the code
// is compiled with -fno-strict-aliasing (rl::emu's flag, emu/CMakeLists.txt).
//
// Everything here has internal linkage: strict_aliasing_strict_build.cpp
// compiles the same kernels with -fstrict-aliasing, and the linker must not
// fold one build's inline functions into the other's.
#pragma once

#include <cstring>
#include <vector>

#include "rl/cuda.hpp"

namespace emu_traps {

struct Packed128Outputs {
  std::vector<float> sums;     // per thread: its four doubled inputs, read back as floats
  std::vector<float> clamped;  // max(x, 0) per element, read back through int4
};

// The same computation on the host, in the same float order.
Packed128Outputs packed128_reference(const std::vector<float>& in);

// Runs both kernels under the emulator (one host worker, the current schedule).
Packed128Outputs run_packed128_kernels(const std::vector<float>& in);
// The same kernels from a translation unit compiled with -fstrict-aliasing.
Packed128Outputs run_packed128_kernels_strict(const std::vector<float>& in);

namespace {

template <class ElementType>
struct alignas(16) Packed128 {
  Packed128() = default;
  __device__ explicit Packed128(int4 bits) { std::memcpy(&payload, &bits, sizeof(bits)); }
  __device__ ElementType& operator[](int index) { return payload[index]; }
  __device__ int4 get_bits() const {
    int4 bits;
    std::memcpy(&bits, &payload, sizeof(bits));
    return bits;
  }
  static constexpr int size = sizeof(int4) / sizeof(ElementType);
  ElementType payload[size];
};
using f128 = Packed128<float>;

template <class ElementType>
__device__ Packed128<ElementType> load128(const ElementType* address) {
  return Packed128<ElementType>{*reinterpret_cast<const int4*>(address)};
}
template <class ElementType>
__device__ void store128(ElementType* target, Packed128<ElementType> value) {
  *reinterpret_cast<int4*>(target) = value.get_bits();
}

// out = 2 * in through one store128 per thread over a cleared output, then
// each thread sums its four outputs as floats.  With strict aliasing g++
// forwards the 0.0f it stored to out[i] past the int4 store.
__global__ void double_store128_then_sum(float* out, float* sums, const float* in, int n) {
  const int i = 4 * static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  out[i] = 0.0f;
  f128 x = load128(in + i);
  for (int k = 0; k < f128::size; ++k) x[k] = 2.0f * x[k];
  store128(out + i, x);
  sums[i / 4] = ((out[i] + out[i + 1]) + out[i + 2]) + out[i + 3];
}

// buf = max(buf, 0) element by element (float stores), then the result is
// copied through load128/store128.  With strict aliasing g++ reuses the first
// int4 load for the second: the negative inputs come out unclamped.
__global__ void clamp_then_copy128(float* out, float* buf, int n) {
  const int i = 4 * static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  f128 before = load128(buf + i);
  for (int k = 0; k < f128::size; ++k) buf[i + k] = before[k] > 0.0f ? before[k] : 0.0f;
  store128(out + i, load128(buf + i));
}

inline Packed128Outputs run_packed128_kernels_here(const std::vector<float>& in) {
  const int n = static_cast<int>(in.size());
  const std::size_t bytes = in.size() * sizeof(float);
  float *d_in = nullptr, *d_out = nullptr, *d_sums = nullptr, *d_buf = nullptr;
  cudaMalloc(&d_in, bytes);
  cudaMalloc(&d_out, bytes);
  cudaMalloc(&d_buf, bytes);
  cudaMalloc(&d_sums, bytes / 4);
  cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_buf, in.data(), bytes, cudaMemcpyHostToDevice);
  const int threads = n / 4;
  const int block = 32;
  const int grid = (threads + block - 1) / block;
  rl::launch(double_store128_then_sum, dim3(grid), dim3(block), 0, nullptr, d_out, d_sums, d_in, n);
  Packed128Outputs result{std::vector<float>(in.size() / 4), std::vector<float>(in.size())};
  cudaMemcpy(result.sums.data(), d_sums, bytes / 4, cudaMemcpyDeviceToHost);
  rl::launch(clamp_then_copy128, dim3(grid), dim3(block), 0, nullptr, d_out, d_buf, n);
  cudaMemcpy(result.clamped.data(), d_out, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaFree(d_buf);
  cudaFree(d_sums);
  return result;
}

}  // namespace
}  // namespace emu_traps
