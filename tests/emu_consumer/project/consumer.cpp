// CUDA-style kernels compiled as plain C++ against bench_roofline's emulator.
// Prints "emu_consumer: all checks passed" and exits 0 when every kernel gives
// the hardware's result; otherwise one line per failed check and exit 1.
#include <cstdio>
#include <cstring>
#include <vector>

#include "rl/cuda.hpp"
#if __has_include("rl/ptx.hpp")
#include "rl/ptx.hpp"
#define CONSUMER_HAS_PTX 1
#endif

namespace consumer {

// Block sum: warp shuffles, shared memory, a barrier, then one atomic per
// block; plus a ballot count of odd values.
__global__ void block_sum(const int* in, int n, unsigned long long* total, int* odd_count) {
  __shared__ int warp_sums[32];
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int v = i < n ? in[i] : 0;
  int s = v;
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
  const unsigned odd = __ballot_sync(0xffffffffu, i < n && (v & 1) != 0);
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    warp_sums[warp] = s;
    atomicAdd(odd_count, __popc(odd));
  }
  __syncthreads();
  if (warp == 0) {
    int w = lane < blockDim.x / 32 ? warp_sums[lane] : 0;
    for (int offset = 16; offset > 0; offset /= 2) w += __shfl_xor_sync(0xffffffffu, w, offset);
    if (lane == 0) atomicAdd(total, static_cast<unsigned long long>(w));
  }
}

// Dynamic shared memory: reverse each block's slice.
__global__ void reverse_blocks(const float* in, float* out) {
  RL_DYNAMIC_SHARED(float, slice);
  const unsigned base = blockIdx.x * blockDim.x;
  slice[threadIdx.x] = in[base + threadIdx.x];
  __syncthreads();
  out[base + threadIdx.x] = slice[blockDim.x - 1 - threadIdx.x];
}

#if defined(CONSUMER_HAS_PTX)
// cp.async of 16 bytes per thread into shared memory, then a tf32 mma
// m16n8k8 whose fragments follow the PTX ISA layouts (small integers, exact).
__global__ void cp_async_then_mma(const float4* in, float4* copied, float* d_out) {
  __shared__ float4 staged[32];
  rl::ptx::cp_async_16(&staged[threadIdx.x], &in[threadIdx.x]);
  rl::ptx::cp_async_commit();
  rl::ptx::cp_async_wait<0>();
  __syncthreads();
  copied[threadIdx.x] = staged[31 - threadIdx.x];

  const unsigned lane = threadIdx.x, g = lane >> 2, t = lane & 3;
  auto a_at = [](unsigned r, unsigned c) {
    return static_cast<float>(static_cast<int>(r + 2 * c) % 5 - 2);
  };
  auto b_at = [](unsigned r, unsigned c) {
    return static_cast<float>(static_cast<int>(3 * r + c) % 7 - 3);
  };
  uint32_t a[4], b[2];
  for (unsigned i = 0; i < 4; ++i)
    a[i] = rl::ptx::f32_to_tf32(a_at(g + 8 * (i & 1), t + 4 * (i >> 1)));
  for (unsigned i = 0; i < 2; ++i) b[i] = rl::ptx::f32_to_tf32(b_at(t + 4 * i, g));
  const float c[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  float d[4];
  rl::ptx::mma_m16n8k8_tf32_f32(d, a, b, c);
  for (unsigned i = 0; i < 4; ++i) d_out[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}
#endif

}  // namespace consumer

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("emu_consumer: FAILED %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  const int n = 10000;
  std::vector<int> host(n);
  for (int i = 0; i < n; ++i) host[i] = i;
  int* in = nullptr;
  unsigned long long* total = nullptr;
  int* odd = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&in), n * sizeof(int)) == cudaSuccess, "cudaMalloc");
  cudaMalloc(reinterpret_cast<void**>(&total), sizeof *total);
  cudaMalloc(reinterpret_cast<void**>(&odd), sizeof *odd);
  cudaMemcpy(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(total, 0, sizeof *total);
  cudaMemset(odd, 0, sizeof *odd);
  rl::launch(consumer::block_sum, dim3((n + 255) / 256), dim3(256), 0, nullptr, in, n, total, odd);
  check(cudaGetLastError() == cudaSuccess, "block_sum launch");
  unsigned long long sum = 0;
  int odd_host = 0;
  cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost);
  cudaMemcpy(&odd_host, odd, sizeof odd_host, cudaMemcpyDeviceToHost);
  check(sum == static_cast<unsigned long long>(n) * (n - 1) / 2, "block_sum total");
  check(odd_host == n / 2, "ballot odd count");

  std::vector<float> values(4 * 64), reversed(values.size());
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  rl::launch(consumer::reverse_blocks, dim3(4), dim3(64), 64 * sizeof(float), nullptr,
             values.data(), reversed.data());
  check(cudaGetLastError() == cudaSuccess, "reverse_blocks launch");
  bool reversed_ok = true;
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 64; ++t) reversed_ok &= reversed[b * 64 + t] == values[b * 64 + 63 - t];
  check(reversed_ok, "dynamic shared memory reverse");

#if defined(CONSUMER_HAS_PTX)
  std::vector<float4> src(32), copied(32);
  for (int i = 0; i < 32; ++i) src[i] = make_float4(i, i + 0.5f, -i, 2.0f * i);
  std::vector<float> d(16 * 8, 0.0f);
  rl::launch(consumer::cp_async_then_mma, dim3(1), dim3(32), 0, nullptr, src.data(), copied.data(),
             d.data());
  check(cudaGetLastError() == cudaSuccess, "cp_async_then_mma launch");
  bool copy_ok = true;
  for (int i = 0; i < 32; ++i)
    copy_ok &= std::memcmp(&copied[i], &src[31 - i], sizeof(float4)) == 0;
  check(copy_ok, "cp.async copy");
  bool mma_ok = true;
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 8; ++c) {
      float ref = 1.0f;
      for (int k = 0; k < 8; ++k)
        ref += static_cast<float>((r + 2 * k) % 5 - 2) * static_cast<float>((3 * k + c) % 7 - 3);
      mma_ok &= d[r * 8 + c] == ref;
    }
  check(mma_ok, "mma m16n8k8 tf32");
#endif

  cudaFree(in);
  cudaFree(total);
  cudaFree(odd);
  if (failures != 0) return 1;
  std::printf("emu_consumer: all checks passed\n");
  return 0;
}
