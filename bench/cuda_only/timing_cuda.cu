// The CUDA backend's side of the timed region (rl/bench/timing.hpp): the L2
// flush's read pass and the blocking kernel.
#include "rl/bench/timing.hpp"

namespace rl::bench {

namespace {

// The flush's read pass: every 16 bytes of the buffer are loaded; the sum is
// stored only when it equals a value it cannot reach in practice, which the
// compiler cannot prove, so the loads stay.
__global__ void read_to_evict(const uint4* __restrict__ in, std::size_t n16,
                              unsigned* __restrict__ sink) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  unsigned sum = 0;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n16; i += stride) {
    const uint4 v = in[i];
    sum += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (sum == 0x9e3779b9u) sink[0] = sum;
}

// Spins until the host sets flags[0]; after `max_cycles` SM cycles without it
// sets flags[1] and returns, so a release that cannot come (the launch queue
// filled behind this kernel) costs seconds, not a hang.
__global__ void hold_stream_until_released(volatile int* flags, long long max_cycles) {
  const long long start = clock64();
  while (flags[0] == 0) {
    if (clock64() - start > max_cycles) {
      flags[1] = 1;
      return;
    }
    __nanosleep(256);
  }
}

// About ten seconds at 3 GHz, longer at lower clocks.
constexpr long long kHoldMaxCycles = 30'000'000'000LL;

}  // namespace

L2Flusher::L2Flusher(std::size_t l2_bytes)
    : written_(2 * l2_bytes), read_(2 * l2_bytes), sink_(l2_bytes > 0 ? 1 : 0) {
  if (read_.size() > 0) RL_CUDA_CHECK(cudaMemset(read_.get(), 0, read_.bytes()));
}

L2Flusher::~L2Flusher() = default;

void L2Flusher::flush(cudaStream_t stream) {
  if (written_.size() == 0) return;
  RL_CUDA_CHECK(cudaMemsetAsync(written_.get(), ++fill_, written_.bytes(), stream));
  const std::size_t n16 = read_.bytes() / sizeof(uint4);
  launch(read_to_evict, dim3(1024), dim3(256), 0, stream,
         reinterpret_cast<const uint4*>(read_.get()), n16, sink_.get());
  RL_CUDA_CHECK(cudaGetLastError());
}

LaunchBlocker::LaunchBlocker() {
  void* host = nullptr;
  RL_CUDA_CHECK(cudaHostAlloc(&host, 2 * sizeof(int), cudaHostAllocMapped));
  host_flags_ = static_cast<int*>(host);
  host_flags_[0] = host_flags_[1] = 0;
  void* device = nullptr;
  RL_CUDA_CHECK(cudaHostGetDevicePointer(&device, host, 0));
  device_flags_ = static_cast<int*>(device);
}

LaunchBlocker::~LaunchBlocker() {
  if (host_flags_ != nullptr) cudaFreeHost(host_flags_);
}

void LaunchBlocker::block(cudaStream_t stream) {
  // The previous sample synchronised its stream: no kernel reads these now.
  __atomic_store_n(&host_flags_[0], 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&host_flags_[1], 0, __ATOMIC_SEQ_CST);
  launch(hold_stream_until_released, dim3(1), dim3(1), 0, stream, device_flags_, kHoldMaxCycles);
  RL_CUDA_CHECK(cudaGetLastError());
}

void LaunchBlocker::release() {
  __atomic_store_n(&host_flags_[0], 1, __ATOMIC_SEQ_CST);
}

bool LaunchBlocker::timed_out() const {
  return __atomic_load_n(&host_flags_[1], __ATOMIC_SEQ_CST) != 0;
}

}  // namespace rl::bench
