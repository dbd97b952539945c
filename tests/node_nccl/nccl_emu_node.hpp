// The fixture of the emulated-NCCL tests (nccl_emu_api_test.cpp,
// nccl_emu_errors_test.cpp): an emulated node of GetParam() devices, one
// communicator (ncclCommInitAll) and one stream per device, and device
// buffers filled from the host, freed with the node.
#pragma once

#include <nccl.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

#include "rl/emu/launch.hpp"

namespace rl::test {

constexpr std::size_t kCount = 37;  // per rank (per slot for the chunked ones): odd, not a vector

// Rank r's input element i: a small integer, different per rank and element,
// so a product over 8 ranks stays exact and a wrong slot shows.
template <typename T>
T value(int r, std::size_t i) {
  return static_cast<T>(static_cast<int>((3 * r + 5 * i + 1) % 9) - 4);
}
constexpr int kUnwritten = 99;  // what outputs hold before a collective writes them

class NcclOnDevices : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    n_ = GetParam();
    ASSERT_EQ(rl::emu::set_device_count(n_), cudaSuccess);
    comms_.assign(static_cast<std::size_t>(n_), nullptr);
    ASSERT_EQ(ncclCommInitAll(comms_.data(), n_, nullptr), ncclSuccess);
    streams_.assign(comms_.size(), nullptr);
    for (int r = 0; r < n_; ++r) {
      ASSERT_EQ(cudaSetDevice(r), cudaSuccess);
      ASSERT_EQ(cudaStreamCreate(&streams_[r]), cudaSuccess);
    }
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
  void TearDown() override {
    for (ncclComm_t c : comms_) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
    for (auto [device, p] : allocations_) {
      cudaSetDevice(device);
      cudaFree(p);
    }
    for (cudaStream_t s : streams_) cudaStreamDestroy(s);
    cudaSetDevice(0);
    rl::emu::set_device_count(1);
  }

  // `count` elements on device r: element i is fill(i).
  template <typename T, typename Fill>
  T* upload(int r, std::size_t count, Fill fill) {
    EXPECT_EQ(cudaSetDevice(r), cudaSuccess);
    T* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, count * sizeof(T)), cudaSuccess);
    allocations_.emplace_back(r, p);
    std::vector<T> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = fill(i);
    EXPECT_EQ(cudaMemcpy(p, host.data(), count * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    cudaSetDevice(0);
    return p;
  }
  template <typename T>
  T* inputs(int r, std::size_t count) {
    return upload<T>(r, count, [r](std::size_t i) { return value<T>(r, i); });
  }
  template <typename T>
  T* unwritten(int r, std::size_t count) {
    return upload<T>(r, count, [](std::size_t) { return static_cast<T>(kUnwritten); });
  }
  // Runs `call` on a host thread of its own: a rank driven by another thread
  // may complete a call that this thread made outside a group.
  template <typename Call>
  static ncclResult_t on_another_thread(Call call) {
    ncclResult_t result = ncclInternalError;
    std::thread([&] { result = call(); }).join();
    return result;
  }
  template <typename T>
  static std::vector<T> download(const T* p, std::size_t count) {
    std::vector<T> host(count);
    EXPECT_EQ(cudaMemcpy(host.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

  int n_ = 0;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  std::vector<std::pair<int, void*>> allocations_;
};

}  // namespace rl::test
