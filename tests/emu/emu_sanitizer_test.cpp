// The emulator's sanitizers on kernels written to trip them.
//
// initcheck (RL_EMU_POISON=1): new device allocations and dynamic shared
// memory start as 0xFF bytes, a NaN in every float format, so reading memory
// nobody wrote gives NaN.  Each case runs in a child process that sets the
// variable before the emulator reads it (it is read once per process).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "rl/cuda.hpp"

namespace emu_sanitizer {

__global__ void scale(const float* in, float* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = 2.0f * in[i] + 1.0f;
}

// Stages `in` through dynamic shared memory; with `skip_odd` the odd slots
// are never written but still read.
__global__ void through_shared(const float* in, float* out, bool skip_odd) {
  RL_DYNAMIC_SHARED(float, staged);
  const unsigned i = threadIdx.x;
  if (!skip_odd || i % 2 == 0) staged[i] = in[i];
  __syncthreads();
  out[i] = staged[i];
}

// Runs scale() over `n` floats of fresh device memory, writing the input
// first only if `write_input`; returns how many outputs are NaN.
int nan_outputs_of_scale(bool write_input) {
  constexpr int n = 256;
  float* in = nullptr;
  float* out = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&in), n * sizeof(float)) != cudaSuccess) return -1;
  if (cudaMalloc(reinterpret_cast<void**>(&out), n * sizeof(float)) != cudaSuccess) return -1;
  if (write_input) {
    std::vector<float> host(n, 3.0f);
    cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  }
  rl::launch(scale, dim3(2), dim3(128), 0, nullptr, in, out, n);
  std::vector<float> result(n);
  cudaMemcpy(result.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  int nans = 0;
  for (float v : result) {
    if (std::isnan(v))
      ++nans;
    else if (v != 7.0f)
      return -2;  // a written input must give exactly 2 * 3 + 1
  }
  cudaFree(in);
  cudaFree(out);
  return nans;
}

int nan_outputs_through_shared(bool skip_odd) {
  std::vector<float> in(64, 5.0f), out(64, 0.0f);
  rl::launch(through_shared, dim3(1), dim3(64), 64 * sizeof(float), nullptr, in.data(), out.data(),
             skip_odd);
  int nans = 0;
  for (float v : out) nans += std::isnan(v) ? 1 : 0;
  return nans;
}

}  // namespace emu_sanitizer

TEST(InitCheck, reading_never_written_device_memory_gives_nan) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_POISON", "1", 1);
        std::exit(emu_sanitizer::nan_outputs_of_scale(false) == 256 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(InitCheck, written_device_memory_reads_back_its_values) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_POISON", "1", 1);
        std::exit(emu_sanitizer::nan_outputs_of_scale(true) == 0 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(InitCheck, reading_never_written_shared_memory_gives_nan) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_POISON", "1", 1);
        const int skipped = emu_sanitizer::nan_outputs_through_shared(true);
        const int written = emu_sanitizer::nan_outputs_through_shared(false);
        std::exit(skipped == 32 && written == 0 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(InitCheck, a_malformed_value_is_refused_in_one_line) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_POISON", "yes", 1);
        emu_sanitizer::nan_outputs_through_shared(true);
      },
      testing::ExitedWithCode(2), "RL_EMU_POISON='yes' is invalid");
}
