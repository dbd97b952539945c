// Host-side runtime calls and atomics as third-party code uses them: a
// launch sized with cudaOccupancyMaxActiveBlocksPerMultiprocessor and
// cudaFuncGetAttributes, two streams ordered by cudaStreamWaitEvent, a
// half / bf16 atomicAdd histogram, and cudaMemcpy2D's pitch rules.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <vector>

#include "rl/cuda.hpp"
#include "third_party_style.hpp"

namespace {

// Grid-stride loop: correct for any grid, so the grid can come from occupancy.
__global__ void scale_kernel(float* x, int n, float factor) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] *= factor;
}

__global__ void iota_kernel(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = static_cast<float>(i);
}

__global__ void twice_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

// bins[v % nbins] += 1 in half, bf16, half2 and bf162, and the int count
// with the block-scoped atomic (each block owns its own int counter).
__global__ void histogram_kernel(const int* values, int n, int nbins, half* h, nv_bfloat16* bf,
                                 half2* h2, nv_bfloat162* bf2, int* per_block) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int bin = values[i] % nbins;
  atomicAdd(&h[bin], __float2half(1.0f));
  atomicAdd(&bf[bin], __float2bfloat16(1.0f));
  atomicAdd(&h2[bin], __floats2half2_rn(1.0f, 0.5f));
  atomicAdd(&bf2[bin], __floats2bfloat162_rn(0.5f, 1.0f));
  atomicAdd_block(&per_block[blockIdx.x], 1);
  atomicAdd_system(&per_block[gridDim.x], 1);
}

}  // namespace

TEST(RuntimeStyle, FuncAttributesReportLimitsAndTheDynamicSharedMaximumSet) {
  cudaFuncAttributes attr;
  cudaCheck(cudaFuncGetAttributes(&attr, scale_kernel));
  cudaDeviceProp prop;
  cudaCheck(cudaGetDeviceProperties(&prop, 0));
  EXPECT_EQ(attr.maxThreadsPerBlock, prop.maxThreadsPerBlock);
  EXPECT_EQ(attr.maxDynamicSharedSizeBytes, static_cast<int>(prop.sharedMemPerBlock));
  EXPECT_EQ(attr.binaryVersion, prop.major * 10 + prop.minor);
  EXPECT_EQ(attr.ptxVersion, prop.major * 10 + prop.minor);
  EXPECT_EQ(attr.numRegs, 0);  // not knowable without nvcc's compiled kernel
  cudaCheck(
      cudaFuncSetAttribute(iota_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  cudaCheck(cudaFuncGetAttributes(&attr, iota_kernel));
  EXPECT_EQ(attr.maxDynamicSharedSizeBytes, 64 * 1024);
  EXPECT_EQ(cudaFuncGetAttributes(&attr, nullptr), cudaErrorInvalidDeviceFunction);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
}

TEST(RuntimeStyle, OccupancyFollowsTheDeviceLimitsAndSizesAWorkingLaunch) {
  cudaDeviceProp prop;
  cudaCheck(cudaGetDeviceProperties(&prop, 0));
  int blocks = -1;
  cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale_kernel, 256, 0));
  EXPECT_EQ(blocks,
            std::min(prop.maxBlocksPerMultiProcessor, prop.maxThreadsPerMultiProcessor / 256));
  EXPECT_GE(blocks, 1);
  // Negative cases: a block too large to launch, more dynamic shared memory
  // than the kernel may use, and shared memory beyond one multiprocessor.
  cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale_kernel, 1025, 0));
  EXPECT_EQ(blocks, 0);
  cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale_kernel, 256,
                                                          prop.sharedMemPerBlock + 1));
  EXPECT_EQ(blocks, 0);
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale_kernel, 0, 0),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);

  int min_grid = 0, block_size = 0;
  cudaCheck(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, scale_kernel));
  int best = 0;
  cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&best, scale_kernel, block_size, 0));
  for (int size = 32; size <= prop.maxThreadsPerBlock; size += 32) {
    int b = 0;
    cudaCheck(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, scale_kernel, size, 0));
    EXPECT_LE(b * size, best * block_size) << "block size " << size << " fills more threads";
  }
  EXPECT_EQ(min_grid, best * prop.multiProcessorCount);

  // The launch such code makes: as many blocks as are resident at once.
  const int n = 3001;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  float* d = nullptr;
  cudaCheck(cudaMalloc(&d, n * sizeof(float)));
  cudaCheck(cudaMemcpy(d, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  rl::launch(scale_kernel, dim3(min_grid), dim3(block_size), 0, nullptr, d, n, 0.5f);
  cudaCheck(cudaGetLastError());
  cudaCheck(cudaMemcpy(host.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  cudaCheck(cudaFree(d));
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], 0.5f * static_cast<float>(i)) << i;
}

// Streams run synchronously under the emulator, so the order is never at
// risk here; what this checks is that the multi-stream idiom runs unchanged
// and gives the right result, and that the call validates its handles.
TEST(RuntimeStyle, StreamWaitEventOrdersTwoStreams) {
  const int n = 1000;
  cudaStream_t producer, consumer;
  cudaEvent_t produced;
  cudaCheck(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  cudaCheck(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaCheck(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
  float *x, *y;
  cudaCheck(cudaMalloc(&x, n * sizeof(float)));
  cudaCheck(cudaMalloc(&y, n * sizeof(float)));
  rl::launch(iota_kernel, dim3((n + 255) / 256), dim3(256), 0, producer, x, n);
  cudaCheck(cudaEventRecord(produced, producer));
  cudaCheck(cudaStreamWaitEvent(consumer, produced, 0));
  rl::launch(twice_kernel, dim3((n + 255) / 256), dim3(256), 0, consumer, x, y, n);
  cudaCheck(cudaStreamSynchronize(consumer));
  std::vector<float> out(n);
  cudaCheck(cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * static_cast<float>(i));
  EXPECT_EQ(cudaStreamWaitEvent(consumer, nullptr, 0), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamWaitEvent(consumer, produced, 0x4), cudaErrorInvalidValue);
  cudaGetLastError();
  cudaCheck(cudaFree(x));
  cudaCheck(cudaFree(y));
  cudaCheck(cudaEventDestroy(produced));
  cudaCheck(cudaStreamDestroy(producer));
  cudaCheck(cudaStreamDestroy(consumer));
}

// Counts up to 143 per bin are exact in half (integers to 2048) and bf16
// (to 256), so the atomics' result is exact whatever their order.
TEST(RuntimeStyle, HalfAndBf16AtomicAddHistogramIsExact) {
  const int n = 1000, nbins = 7, block = 128, grid = (n + block - 1) / block;
  std::vector<int> values(n);
  for (int i = 0; i < n; ++i) values[i] = (i * 7919) % 1009;
  std::vector<int> want(nbins, 0);
  for (int v : values) ++want[v % nbins];
  struct Result {
    std::vector<half> h;
    std::vector<nv_bfloat16> bf;
    std::vector<half2> h2;
    std::vector<nv_bfloat162> bf2;
    std::vector<int> per_block;
  };
  const auto runs = third_party_style::under_two_schedules([&] {
    int* d_values;
    half* h;
    nv_bfloat16* bf;
    half2* h2;
    nv_bfloat162* bf2;
    int* per_block;
    cudaCheck(cudaMalloc(&d_values, n * sizeof(int)));
    cudaCheck(cudaMalloc(&h, nbins * sizeof(half)));
    cudaCheck(cudaMalloc(&bf, nbins * sizeof(nv_bfloat16)));
    cudaCheck(cudaMalloc(&h2, nbins * sizeof(half2)));
    cudaCheck(cudaMalloc(&bf2, nbins * sizeof(nv_bfloat162)));
    cudaCheck(cudaMalloc(&per_block, (grid + 1) * sizeof(int)));
    cudaCheck(cudaMemcpy(d_values, values.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    cudaCheck(cudaMemset(h, 0, nbins * sizeof(half)));
    cudaCheck(cudaMemset(bf, 0, nbins * sizeof(nv_bfloat16)));
    cudaCheck(cudaMemset(h2, 0, nbins * sizeof(half2)));
    cudaCheck(cudaMemset(bf2, 0, nbins * sizeof(nv_bfloat162)));
    cudaCheck(cudaMemset(per_block, 0, (grid + 1) * sizeof(int)));
    rl::launch(histogram_kernel, dim3(grid), dim3(block), 0, nullptr, d_values, n, nbins, h, bf, h2,
               bf2, per_block);
    cudaCheck(cudaGetLastError());
    Result r{std::vector<half>(nbins), std::vector<nv_bfloat16>(nbins), std::vector<half2>(nbins),
             std::vector<nv_bfloat162>(nbins), std::vector<int>(grid + 1)};
    cudaCheck(cudaMemcpy(r.h.data(), h, nbins * sizeof(half), cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(r.bf.data(), bf, nbins * sizeof(nv_bfloat16), cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(r.h2.data(), h2, nbins * sizeof(half2), cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(r.bf2.data(), bf2, nbins * sizeof(nv_bfloat162), cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(r.per_block.data(), per_block, (grid + 1) * sizeof(int),
                         cudaMemcpyDeviceToHost));
    for (void* p : {static_cast<void*>(d_values), static_cast<void*>(h), static_cast<void*>(bf),
                    static_cast<void*>(h2), static_cast<void*>(bf2), static_cast<void*>(per_block)})
      cudaCheck(cudaFree(p));
    return r;
  });
  for (const Result& r : runs) {
    for (int b = 0; b < nbins; ++b) {
      EXPECT_EQ(__half2float(r.h[b]), want[b]) << "bin " << b;
      EXPECT_EQ(__bfloat162float(r.bf[b]), want[b]) << "bin " << b;
      EXPECT_EQ(__low2float(r.h2[b]), want[b]);
      EXPECT_EQ(__high2float(r.h2[b]), 0.5 * want[b]);
      EXPECT_EQ(__low2float(r.bf2[b]), 0.5 * want[b]);
      EXPECT_EQ(__high2float(r.bf2[b]), want[b]);
    }
    for (int b = 0; b < grid; ++b) EXPECT_EQ(r.per_block[b], std::min(block, n - b * block));
    EXPECT_EQ(r.per_block[grid], n);
  }
}

// One rounding per add: 2048 + 1 in half is a tie that rounds to even (2048),
// so the atomic is the 16-bit add, not a wider sum converted at the end.
TEST(RuntimeStyle, HalfAtomicAddRoundsEachAddToHalf) {
  half value = __float2half(2048.0f);
  const half old = atomicAdd(&value, __float2half(1.0f));
  EXPECT_EQ(__half2float(old), 2048.0f);
  EXPECT_EQ(__half2float(value), 2048.0f);
  atomicAdd(&value, __float2half(3.0f));
  EXPECT_EQ(__half2float(value), 2052.0f);
}

TEST(RuntimeStyle, Memcpy2DCopiesRowsAndRefusesPitchesNarrowerThanARow) {
  const int rows = 5, cols = 7;
  std::vector<int> src(rows * cols);
  for (int i = 0; i < rows * cols; ++i) src[i] = i;
  int* pitched = nullptr;
  std::size_t pitch = 0;
  cudaCheck(cudaMallocPitch(&pitched, &pitch, cols * sizeof(int), rows));
  EXPECT_GE(pitch, cols * sizeof(int));
  EXPECT_EQ(pitch % 512, 0U);
  cudaCheck(cudaMemcpy2D(pitched, pitch, src.data(), cols * sizeof(int), cols * sizeof(int), rows,
                         cudaMemcpyHostToDevice));
  // Back with a wider host pitch (one spare int per row, left untouched).
  std::vector<int> back(rows * (cols + 1), -1);
  cudaCheck(cudaMemcpy2D(back.data(), (cols + 1) * sizeof(int), pitched, pitch, cols * sizeof(int),
                         rows, cudaMemcpyDeviceToHost));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) EXPECT_EQ(back[r * (cols + 1) + c], r * cols + c);
    EXPECT_EQ(back[r * (cols + 1) + cols], -1);
  }
  EXPECT_EQ(cudaMemcpy2D(back.data(), 4, pitched, pitch, 8, 1, cudaMemcpyDeviceToHost),
            cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidPitchValue);
  cudaCheck(cudaFree(pitched));
}
