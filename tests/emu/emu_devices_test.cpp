// Several emulated devices (RL_EMU_DEVICES, rl::emu::set_device_count): the
// current device per host thread, properties, ownership of allocations,
// streams and events, peer access and its errors, peer copies, the launch's
// device checks and cudaDeviceReset of one device (emu/docs/multi-device.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "rl/cuda.hpp"

namespace emu_devices {

__global__ void copy_ints(int* dst, const int* src, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) dst[i] = src[i];
}

__global__ void trap_kernel(int*) {
  __trap();
}

// Each test owns a node of `count` devices and gives it back with nothing
// left on it, so set_device_count(1) succeeds and the next test starts clean.
class Node : public testing::Test {
 protected:
  void use(int count) {
    ASSERT_EQ(rl::emu::set_device_count(count), cudaSuccess);
    count_ = count;
  }
  void TearDown() override {
    for (int d = count_ - 1; d >= 0; --d) {
      ASSERT_EQ(cudaSetDevice(d), cudaSuccess);
      ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
    }
    EXPECT_EQ(rl::emu::set_device_count(1), cudaSuccess);
  }
  // Device memory of `device` holding 0, 1, ..., n-1 (or `fill` everywhere).
  static int* ints_on(int device, int n, int fill = -1) {
    EXPECT_EQ(cudaSetDevice(device), cudaSuccess);
    int* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(int)), cudaSuccess);
    for (int i = 0; i < n; ++i) p[i] = fill < 0 ? i : fill;  // device memory is host memory
    return p;
  }

 private:
  int count_ = 1;
};

TEST(EmuDevices, count_comes_from_RL_EMU_DEVICES_and_a_bad_value_is_one_line_and_exit_2) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_DEVICES", "8", 1);
        int count = 0;
        std::exit(cudaGetDeviceCount(&count) == cudaSuccess && count == 8 ? 3 : 4);
      },
      testing::ExitedWithCode(3), "");
  EXPECT_EXIT(
      {
        unsetenv("RL_EMU_DEVICES");
        std::exit(rl::emu::device_count() == 1 ? 3 : 4);
      },
      testing::ExitedWithCode(3), "");
  for (const char* bad : {"0", "65", "two", "2x", "-1"}) {
    EXPECT_EXIT(
        {
          setenv("RL_EMU_DEVICES", bad, 1);
          rl::emu::device_count();
        },
        testing::ExitedWithCode(2),
        std::string("rl::emu: RL_EMU_DEVICES='") + bad +
            "' is invalid \\(expected an integer in \\[1, 64\\]\\)")
        << bad;
  }
}

TEST_F(Node, set_device_count_checks_its_range_and_refuses_to_remove_a_device_in_use) {
  EXPECT_EQ(rl::emu::set_device_count(0), cudaErrorInvalidValue);
  EXPECT_EQ(rl::emu::set_device_count(65), cudaErrorInvalidValue);
  use(4);
  int* on_three = ints_on(3, 4);
  EXPECT_EQ(rl::emu::set_device_count(3), cudaErrorNotPermitted);
  EXPECT_EQ(rl::emu::set_device_count(4), cudaSuccess);  // keeps device 3
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);  // set_device_count makes device 0 current
  ASSERT_EQ(cudaFree(on_three), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaSetDevice(3), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  EXPECT_EQ(rl::emu::set_device_count(2), cudaErrorNotPermitted);  // a stream lives there
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(rl::emu::set_device_count(2), cudaSuccess);
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 2);
  use(2);
}

TEST_F(Node, the_current_device_is_per_host_thread_and_checked) {
  use(4);
  ASSERT_EQ(cudaSetDevice(2), cudaSuccess);
  int other = -1, other_after = -1;
  std::thread([&] {
    cudaGetDevice(&other);  // a new thread starts on device 0, as in CUDA
    cudaSetDevice(3);
    cudaGetDevice(&other_after);
  }).join();
  EXPECT_EQ(other, 0);
  EXPECT_EQ(other_after, 3);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 2);  // the other thread's choice is its own
  EXPECT_EQ(cudaSetDevice(4), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaSetDevice(-1), cudaErrorInvalidDevice);
  cudaGetLastError();
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 2);  // a refused cudaSetDevice changes nothing
}

TEST_F(Node, every_device_describes_itself_with_its_own_name_and_pci_bus) {
  use(8);
  std::vector<int> buses;
  for (int d = 0; d < 8; ++d) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, d), cudaSuccess);
    EXPECT_NE(std::string(prop.name).find("CPU emulator"), std::string::npos);
    EXPECT_NE(std::string(prop.name).find("device " + std::to_string(d) + " of 8"),
              std::string::npos)
        << prop.name;
    for (const int bus : buses) EXPECT_NE(prop.pciBusID, bus);
    buses.push_back(prop.pciBusID);
    int value = -1;
    ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrPciBusId, d), cudaSuccess);
    EXPECT_EQ(value, prop.pciBusID);
    ASSERT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, d), cudaSuccess);
    EXPECT_EQ(value, 32);
    ASSERT_EQ(cudaSetDevice(d), cudaSuccess);
    std::size_t free_bytes = 0, total_bytes = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
    EXPECT_EQ(total_bytes, prop.totalGlobalMem);
  }
  cudaDeviceProp prop{};
  EXPECT_EQ(cudaGetDeviceProperties(&prop, 8), cudaErrorInvalidDevice);
  int value = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 8), cudaErrorInvalidDevice);
  cudaGetLastError();
}

TEST_F(Node, each_allocation_belongs_to_the_device_current_when_it_was_made) {
  use(4);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  char* device_mem = nullptr;
  ASSERT_EQ(cudaMalloc(&device_mem, 1000), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(2), cudaSuccess);
  void* pitched = nullptr;
  std::size_t pitch = 0;
  ASSERT_EQ(cudaMallocPitch(&pitched, &pitch, 100, 4), cudaSuccess);
  float* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 64), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(3), cudaSuccess);
  int* pinned = nullptr;
  ASSERT_EQ(cudaHostAlloc(&pinned, 64, cudaHostAllocMapped | cudaHostAllocPortable), cudaSuccess);

  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, device_mem + 999), cudaSuccess);  // interior
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.devicePointer, device_mem + 999);
  EXPECT_EQ(a.hostPointer, nullptr);
  ASSERT_EQ(cudaPointerGetAttributes(&a, pitched), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(a.device, 2);
  ASSERT_EQ(cudaPointerGetAttributes(&a, managed), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeManaged);
  EXPECT_EQ(a.device, 2);
  EXPECT_EQ(a.hostPointer, managed);
  ASSERT_EQ(cudaPointerGetAttributes(&a, pinned), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeHost);
  EXPECT_EQ(a.device, 3);
  EXPECT_EQ(a.devicePointer, pinned);
  EXPECT_EQ(a.hostPointer, pinned);
  int on_stack = 0;
  ASSERT_EQ(cudaPointerGetAttributes(&a, &on_stack), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(a.device, cudaInvalidDeviceId);
  EXPECT_EQ(a.devicePointer, nullptr);
  ASSERT_EQ(cudaPointerGetAttributes(&a, device_mem + 1000), cudaSuccess);  // one past the end
  EXPECT_EQ(a.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(cudaPointerGetAttributes(nullptr, device_mem), cudaErrorInvalidValue);

  void* mapped = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);  // portable: any device maps it
  ASSERT_EQ(cudaHostGetDevicePointer(&mapped, pinned, 0), cudaSuccess);
  EXPECT_EQ(mapped, pinned);
  EXPECT_EQ(cudaHostGetDevicePointer(&mapped, pinned, 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostGetDevicePointer(&mapped, device_mem, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaHostGetDevicePointer(&mapped, &on_stack, 0), cudaErrorInvalidValue);
  int* bad_flags = nullptr;
  EXPECT_EQ(cudaHostAlloc(&bad_flags, 64, 0x8), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST_F(Node, peer_access_is_queried_enabled_and_disabled_with_cudas_errors) {
  use(3);
  int can = -1;
  for (int d = 0; d < 3; ++d)
    for (int p = 0; p < 3; ++p) {
      ASSERT_EQ(cudaDeviceCanAccessPeer(&can, d, p), cudaSuccess);
      EXPECT_EQ(can, d != p ? 1 : 0) << d << "->" << p;
    }
  EXPECT_EQ(cudaDeviceCanAccessPeer(&can, 0, 3), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaDeviceCanAccessPeer(&can, -1, 0), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaDeviceCanAccessPeer(nullptr, 0, 1), cudaErrorInvalidValue);

  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaErrorInvalidDevice);  // itself
  EXPECT_EQ(cudaDeviceEnablePeerAccess(3, 0), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(0, 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaSuccess);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessAlreadyEnabled);
  EXPECT_EQ(cudaGetLastError(), cudaErrorPeerAccessAlreadyEnabled);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);  // one-way
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(0), cudaSuccess);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(0), cudaErrorPeerAccessNotEnabled);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(5), cudaErrorInvalidDevice);
  EXPECT_STREQ(cudaGetErrorName(cudaErrorPeerAccessNotEnabled), "cudaErrorPeerAccessNotEnabled");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorPeerAccessAlreadyEnabled),
               "peer access is already enabled");
  cudaGetLastError();
}

TEST_F(Node, peer_copies_copy_exactly_and_check_each_pointer_belongs_to_its_device) {
  use(2);
  constexpr int kN = 1000;
  int* src = ints_on(0, kN);
  int* dst = ints_on(1, kN, 7);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMemcpyPeer(dst, 1, src, 0, kN * sizeof(int)), cudaSuccess);  // no peer access
  for (int i = 0; i < kN; ++i) ASSERT_EQ(dst[i], i);
  // CUDA documents cudaErrorInvalidValue and cudaErrorInvalidDevice: a
  // pointer of another device than the one named is the first.
  EXPECT_EQ(cudaMemcpyPeer(dst, 0, src, 0, 4), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyPeer(dst, 1, src, 1, 4), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyPeer(dst + 1, 1, src, 0, kN * sizeof(int)), cudaErrorInvalidValue);
  int host[4] = {};
  EXPECT_EQ(cudaMemcpyPeer(host, 1, src, 0, sizeof host), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyPeer(dst, 2, src, 0, 4), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaMemcpyPeer(dst, 1, src, -1, 4), cudaErrorInvalidDevice);

  cudaStream_t on_one = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&on_one), cudaSuccess);
  for (int i = 0; i < kN; ++i) src[i] = 3 * i;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);  // the stream may be another device's
  ASSERT_EQ(cudaMemcpyPeerAsync(dst, 1, src, 0, kN * sizeof(int), on_one), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(on_one), cudaSuccess);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(dst[i], 3 * i);
  ASSERT_EQ(cudaStreamDestroy(on_one), cudaSuccess);
  EXPECT_EQ(cudaMemcpyPeerAsync(dst, 1, src, 0, 4, on_one), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST_F(Node, a_launch_into_another_devices_stream_is_refused_with_one_line) {
  use(2);
  int* src = ints_on(0, 64);
  int* dst = ints_on(0, 64, 7);
  cudaStream_t on_zero = nullptr;
  ASSERT_EQ(cudaStreamCreate(&on_zero), cudaSuccess);
  rl::launch(copy_ints, dim3(1), dim3(64), 0, on_zero, dst, src, 64);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(dst[63], 63);
  dst[63] = 7;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  testing::internal::CaptureStderr();
  rl::launch(copy_ints, dim3(1), dim3(64), 0, on_zero, dst, src, 64);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(dst[63], 7);  // nothing ran
  EXPECT_NE(err.find("copy_ints"), std::string::npos) << err;
  EXPECT_NE(err.find("a stream of device 0 while device 1 is current"), std::string::npos) << err;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(on_zero), cudaSuccess);
  testing::internal::CaptureStderr();
  rl::launch(copy_ints, dim3(1), dim3(64), 0, on_zero, dst, src, 64);  // destroyed
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
}

TEST_F(Node, a_pointer_argument_into_a_peer_needs_peer_access_from_the_launching_device) {
  use(2);
  constexpr int kN = 300;
  int* src = ints_on(0, kN);
  int* dst = ints_on(1, kN, 7);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);  // a read of device 0's memory from device 1
  testing::internal::CaptureStderr();
  rl::launch(copy_ints, dim3(3), dim3(128), 0, nullptr, dst, src, kN);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(dst[i], 7) << i;  // nothing ran
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;        // one line
  EXPECT_NE(err.find("copy_ints"), std::string::npos) << err;
  EXPECT_NE(err.find("on device 1: argument 2 points into memory of device 0"), std::string::npos)
      << err;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);  // the wrong direction
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  testing::internal::CaptureStderr();
  rl::launch(copy_ints, dim3(3), dim3(128), 0, nullptr, dst, src + 1, kN - 1);  // interior
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), cudaErrorIllegalAddress);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaSuccess);
  rl::launch(copy_ints, dim3(3), dim3(128), 0, nullptr, dst, src, kN);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(dst[i], i) << i;
  // The write direction: device 0 writes into device 1 through the peer pointer.
  for (int i = 0; i < kN; ++i) dst[i] = 7;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  rl::launch(copy_ints, dim3(3), dim3(128), 0, nullptr, dst, src, kN);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(dst[i], i) << i;
  // Pinned host memory needs no peer access from any device.
  int* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, kN * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaDeviceDisablePeerAccess(0), cudaSuccess);
  rl::launch(copy_ints, dim3(3), dim3(128), 0, nullptr, dst, static_cast<const int*>(pinned), 0);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(Node, events_follow_cudas_device_rules) {
  use(2);
  cudaEvent_t on_zero = nullptr, on_one = nullptr;
  cudaStream_t stream_zero = nullptr, stream_one = nullptr;
  ASSERT_EQ(cudaEventCreate(&on_zero), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream_zero), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&on_one), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream_one), cudaSuccess);
  // cudaEventRecord fails when event and stream belong to different devices
  // (the default stream is the current device's).
  EXPECT_EQ(cudaEventRecord(on_zero, stream_one), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(on_zero, nullptr), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(on_one, nullptr), cudaSuccess);
  EXPECT_EQ(cudaEventRecord(on_zero, stream_zero), cudaSuccess);  // any current device
  // A cross-device wait is allowed; synchronising or querying another
  // device's event too.
  EXPECT_EQ(cudaStreamWaitEvent(stream_one, on_zero, 0), cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(stream_zero, on_one, 0), cudaSuccess);
  EXPECT_EQ(cudaEventSynchronize(on_zero), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(on_zero), cudaSuccess);
  float ms = 0.0f;
  EXPECT_EQ(cudaEventElapsedTime(&ms, on_zero, on_one), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventDestroy(on_zero), cudaSuccess);  // from another device
  EXPECT_EQ(cudaEventDestroy(on_zero), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamWaitEvent(stream_one, on_zero, 0), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST_F(Node, cudaDeviceReset_resets_the_current_device_only) {
  use(3);
  int* keep = ints_on(0, 16);
  int* lose = ints_on(1, 16);
  cudaStream_t stream_zero = nullptr, stream_one = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream_zero), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(1, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(2, 0), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&stream_one), cudaSuccess);
  ASSERT_EQ(cudaDeviceEnablePeerAccess(2, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, lose), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeUnregistered);  // freed
  ASSERT_EQ(cudaPointerGetAttributes(&a, keep), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(cudaStreamQuery(stream_one), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamQuery(stream_zero), cudaSuccess);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(2), cudaErrorPeerAccessNotEnabled);  // from 1: gone
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaDeviceDisablePeerAccess(1), cudaErrorPeerAccessNotEnabled);  // to 1: gone
  EXPECT_EQ(cudaDeviceDisablePeerAccess(2), cudaSuccess);                    // kept
  EXPECT_EQ(keep[15], 15);
  ASSERT_EQ(cudaStreamDestroy(stream_zero), cudaSuccess);
  cudaGetLastError();
}

// A __trap on device 1 is that device's sticky error: device 0 goes on,
// cudaDeviceSynchronize reports it only with device 1 current, and resetting
// device 1 clears it.  In a child process: the trapped fiber is never unwound.
bool sticky_error_stays_on_its_device() {
  bool ok = rl::emu::set_device_count(2) == cudaSuccess;
  int out[64] = {};
  ok = ok && cudaSetDevice(1) == cudaSuccess;
  rl::launch(trap_kernel, dim3(1), dim3(32), 0, nullptr, out);
  ok = ok && cudaGetLastError() == cudaErrorLaunchFailure;
  ok = ok && cudaSetDevice(0) == cudaSuccess;
  ok = ok && cudaDeviceSynchronize() == cudaSuccess;
  ok = ok && cudaGetLastError() == cudaSuccess;
  std::vector<int> src(64, 5);
  std::vector<int> dst(64, 0);
  rl::launch(copy_ints, dim3(1), dim3(64), 0, nullptr, dst.data(),
             static_cast<const int*>(src.data()), 64);
  ok = ok && cudaGetLastError() == cudaSuccess && dst[63] == 5;
  ok = ok && cudaSetDevice(1) == cudaSuccess;
  ok = ok && cudaDeviceSynchronize() == cudaErrorLaunchFailure;
  ok = ok && cudaDeviceReset() == cudaSuccess;
  ok = ok && cudaDeviceSynchronize() == cudaSuccess;
  return ok;
}

TEST(EmuDevices, a_sticky_error_belongs_to_the_device_that_raised_it) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(sticky_error_stays_on_its_device() ? 0 : 1), testing::ExitedWithCode(0),
              "__trap\\(\\)");
}

}  // namespace emu_devices
