// What every ceiling kernel of this family shares: a grid that fills the
// device exactly once (the kernels are grid-stride loops, so the grid does not
// depend on the problem size), and a comparison of large outputs against a
// reference computed chunk by chunk (a 1 GiB output would need 2 GiB of
// float64 reference at once).
#pragma once

#include "ceilings/occupancy.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace rl::ceilings {

// Encoding of v in {-2, -1, 0, 1, 2} (zero or a signed power of two) in a
// floating-point format with `mantissa_bits` and exponent bias `bias`, the
// sign in bit `mantissa_bits + exponent_bits`: the exact small-integer
// operands of the tensor-core roof loops.
constexpr std::uint32_t encode_small_float(int v, int mantissa_bits, int exponent_bits, int bias) {
  if (v == 0) return 0;
  const int magnitude = v < 0 ? -v : v;
  const std::uint32_t exponent = static_cast<std::uint32_t>(bias + (magnitude == 2 ? 1 : 0));
  const std::uint32_t sign = v < 0 ? 1u : 0u;
  return (sign << (mantissa_bits + exponent_bits)) | (exponent << mantissa_bits);
}

// An attribute of the current device, or `fallback` without a device (when
// the registry is listed); the harness asks again on the device it measures.
inline int device_attribute_or(cudaDeviceAttr attribute, int fallback) {
  int device = 0;
  int value = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&value, attribute, device) != cudaSuccess || value <= 0) {
    cudaGetLastError();  // not sticky: leave no error behind for the caller
    return fallback;
  }
  return value;
}

// L2 size of the current device in bytes (40 MB assumed without a device).
inline std::int64_t device_l2_bytes() {
  return device_attribute_or(cudaDevAttrL2CacheSize, 40 << 20);
}

inline constexpr Tolerance kExactIntegers{1e-9, 1e-9};

// One resident wave of `kernel` for launch-shape declarations (shapes(), which
// must not throw when the registry is listed on a machine without a device):
// `fallback` blocks when no device answers.
template <typename... Params>
std::int64_t one_wave_blocks(void (*kernel)(Params...), int block_threads, std::int64_t fallback) {
  try {
    return device_fill(kernel, block_threads).blocks();
  } catch (const CudaError&) {
    cudaGetLastError();  // not sticky: leave no error behind for the caller
    return fallback;
  }
}

// A tensor roof loop's cost: `mmas` MMA instructions of 2 m n k operations
// each (`ops_per_mma`), `bytes` its output.  Every FLOP of the loop is an
// MMA's, so it declares them as tensor_ops too (issue 28: what the counters
// check, exactly on the emulator).
inline roofline::Cost tensor_loop_cost(double mmas, double ops_per_mma, double bytes,
                                       roofline::ComputeUnit unit) {
  const double ops = mmas * ops_per_mma;
  return {.flops = ops, .bytes_min = bytes, .bytes_model = bytes, .unit = unit, .tensor_ops = ops};
}

// Launch shape of the compute-ceiling loops: the cost model needs the thread
// count, so it is part of the shape (one or more full resident waves, found
// when the shapes are listed).
struct LoopShape {
  std::int64_t blocks = 0, threads = 0, iters = 0;
};

inline LoopShape parse_loop_shape(const Shape& shape, std::int64_t max_iters) {
  const LoopShape s{shape.at("blocks"), shape.at("threads"), shape.at("iters")};
  if (s.blocks <= 0 || s.blocks > (std::int64_t{1} << 24) || s.threads <= 0 || s.threads > 1024 ||
      s.threads % 32 != 0 || s.iters <= 0 || s.iters > max_iters)
    throw std::invalid_argument(
        "compute ceiling: need 0 < blocks <= 2^24, threads a multiple of 32 <= 1024, 0 < iters "
        "<= " +
        std::to_string(max_iters) + "; got " + shape.to_string());
  return s;
}

// The large preset runs `large_iters`; medium half, small a quarter.
inline std::vector<Shape> loop_shapes(SizePreset preset, std::int64_t blocks, int threads,
                                      std::int64_t large_iters) {
  const std::int64_t divisor =
      preset == SizePreset::small ? 4 : (preset == SizePreset::medium ? 2 : 1);
  return {Shape{{{"blocks", blocks}, {"threads", threads}, {"iters", large_iters / divisor}}}};
}

// Compares `got` with reference(i) in chunks; the Validation accumulates over
// chunks (compare_to_reference's last parameter), so the first failure wins.
template <typename Reference>
Validation compare_in_chunks(std::span<const float> got, Reference reference, Tolerance tol) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  Validation result;
  std::vector<double> ref;
  for (std::size_t begin = 0; begin < got.size(); begin += kChunk) {
    const std::size_t count = std::min(kChunk, got.size() - begin);
    ref.resize(count);
    for (std::size_t i = 0; i < count; ++i) ref[i] = reference(begin + i);
    const bool failed_before = !result.passed && !result.detail.empty();
    result = compare_to_reference(got.subspan(begin, count), ref, tol, result);
    if (!failed_before && !result.passed && begin > 0)
      result.detail = "(chunk at " + std::to_string(begin) + ") " + result.detail;
  }
  if (got.empty()) result.detail = "empty output";
  return result;
}

// The validate() of every ceiling workload: poison the output, run once,
// compare every element with reference(i) exactly.  Outputs of other types
// (double, int32) are small integers, so converting them to float is exact.
template <typename T, typename Reference>
Validation run_and_compare_exact(Workload& workload, DeviceBuffer<T>& out, cudaStream_t stream,
                                 Reference reference) {
  out.poison(stream);
  workload.run(stream);
  RL_CUDA_CHECK(cudaGetLastError());
  RL_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<T> raw = out.download();
  std::vector<float> got(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) got[i] = static_cast<float>(raw[i]);
  return compare_in_chunks(got, reference, kExactIntegers);
}

}  // namespace rl::ceilings
