// Device memory and seeded input data for workloads.
#pragma once

#include "rl/check.hpp"
#include "rl/cuda.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rl {

// RAII device allocation of `count` elements of T.  Out-of-memory surfaces as
// rl::CudaError (cudaErrorMemoryAllocation) from the constructor.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) RL_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);  // no throw from a destructor
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(std::span<const T> host) {
    if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    RL_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    RL_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // Fill with 0xFF bytes: NaN for every floating-point type, so an element the
  // kernel forgot to write fails validation.
  void poison(cudaStream_t stream = nullptr) {
    RL_CUDA_CHECK(cudaMemsetAsync(ptr_, 0xFF, bytes(), stream));
  }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Deterministic across platforms (splitmix64 + exact scaling), unlike
// std::uniform_real_distribution.
class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed) : state_(seed) {}
  // The seed of stream `index` of `seed` (one per chunk of inputs drawn in
  // parallel): splitmix64 of the seed xor splitmix64 of the index, so
  // neighbouring seeds and indices start far apart in splitmix64's sequence.
  static std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t index) {
    return SeededRng(seed ^ SeededRng(index).next_u64()).next_u64();
  }
  std::uint64_t next_u64() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
  }
  // Approximately normal (sum of 4 uniforms, variance scaled to 1).
  double normal(double mean, double stddev) {
    double s = 0;
    for (int i = 0; i < 4; ++i) s += uniform(-1.0, 1.0);
    return mean + stddev * s * 0.8660254037844386;  // sqrt(3/4): var of the sum is 4/3
  }

 private:
  std::uint64_t state_;
};

inline std::vector<float> uniform_floats(std::size_t count, std::uint64_t seed, double lo = -1.0,
                                         double hi = 1.0) {
  SeededRng rng(seed);
  std::vector<float> out(count);
  for (auto& v : out) v = static_cast<float>(rng.uniform(lo, hi));
  return out;
}

}  // namespace rl
