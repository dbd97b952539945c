// The CUDA runtime API subset: memory, copies, streams, events, errors and
// the emulated device's description.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rl/cuda.hpp"

TEST(EmuRuntimeApi, MallocMemcpyMemsetRoundTrip) {
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 1000), cudaSuccess);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(device) % 256, 0u);
  std::vector<unsigned char> host(1000), back(1000);
  for (int i = 0; i < 1000; ++i) host[i] = static_cast<unsigned char>(i * 7);
  EXPECT_EQ(cudaMemcpy(device, host.data(), 1000, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemsetAsync(static_cast<unsigned char*>(device) + 10, 0xAB, 5, nullptr),
            cudaSuccess);
  EXPECT_EQ(cudaMemcpyAsync(back.data(), device, 1000, cudaMemcpyDeviceToHost, nullptr),
            cudaSuccess);
  for (int i = 0; i < 1000; ++i)
    EXPECT_EQ(back[i], i >= 10 && i < 15 ? 0xAB : static_cast<unsigned char>(i * 7)) << i;
  EXPECT_EQ(cudaFree(device), cudaSuccess);
}

TEST(EmuRuntimeApi, BadArgumentsGiveCudasErrors) {
  int not_allocated = 0;
  EXPECT_EQ(cudaFree(&not_allocated), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
  char a[4], b[4];
  EXPECT_EQ(cudaMemcpy(a, b, 4, static_cast<cudaMemcpyKind>(7)), cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaMalloc(nullptr, 4), cudaErrorInvalidValue);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  void* huge = nullptr;
  EXPECT_EQ(cudaMalloc(&huge, std::size_t{1} << 62), cudaErrorMemoryAllocation);
  cudaGetLastError();
}

TEST(EmuRuntimeApi, ErrorNamesAndStringsMatchCuda) {
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorLaunchFailure), "cudaErrorLaunchFailure");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidConfiguration), "invalid configuration argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_EQ(static_cast<int>(cudaErrorInvalidConfiguration), 9);
  EXPECT_EQ(static_cast<int>(cudaErrorLaunchFailure), 719);
  EXPECT_EQ(static_cast<int>(cudaErrorNoDevice), 100);
  EXPECT_STREQ(cudaGetErrorName(static_cast<cudaError_t>(998)), "unrecognized error code");
}

TEST(EmuRuntimeApi, LastErrorIsPerHostThread) {
  EXPECT_EQ(cudaSetDevice(3), cudaErrorInvalidDevice);
  cudaError_t other = cudaErrorUnknown;
  std::thread([&] { other = cudaGetLastError(); }).join();
  EXPECT_EQ(other, cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
}

TEST(EmuRuntimeApi, EventsMeasureHostWallTime) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cudaEvent_t start = nullptr, stop = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  float ms = -1.0f;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop),
            cudaErrorInvalidResourceHandle);  // not recorded
  ASSERT_EQ(cudaEventRecord(start, stream), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(cudaEventRecord(stop, stream), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 2000.0f);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(EmuRuntimeApi, DeviceDescribesItselfAsTheCpuEmulator) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 1);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_NE(std::string(prop.name).find("CPU emulator"), std::string::npos);
  EXPECT_EQ(prop.warpSize, 32);
  EXPECT_EQ(prop.maxThreadsPerBlock, 1024);
  EXPECT_EQ(prop.sharedMemPerBlock, 48u * 1024u);
  EXPECT_EQ(prop.sharedMemPerBlockOptin, 227u * 1024u);
  rl::emu::set_worker_threads(3);
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  EXPECT_EQ(prop.multiProcessorCount, 3);
  rl::emu::set_worker_threads(1);
  int value = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
            cudaSuccess);
  EXPECT_EQ(value, 227 * 1024);
  ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrMaxBlockDimZ, 0), cudaSuccess);
  EXPECT_EQ(value, 64);
  EXPECT_EQ(cudaGetDeviceProperties(&prop, 1), cudaErrorInvalidDevice);
  cudaGetLastError();
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  EXPECT_GT(total_bytes, 0u);
  EXPECT_LE(free_bytes, total_bytes);
  int runtime = 0;
  ASSERT_EQ(cudaRuntimeGetVersion(&runtime), cudaSuccess);
  EXPECT_GE(runtime, 12000);
}
