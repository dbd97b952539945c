// Static __shared__ arrays are aligned as nvcc aligns them (16 bytes at
// least), so the 16-byte vector stores kernels make into arrays of narrower
// types work: g++ compiles them to aligned SSE moves (movaps/movdqa), which
// fault on a 2-byte-aligned __half array.  A larger __align__ still wins.
#include <gtest/gtest.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "rl/cuda.hpp"

namespace {

constexpr int kTile = 16;

struct TileRun {
  std::vector<__half> transposed;      // kTile x kTile
  std::vector<int> rotated;            // 32 x 4: thread t's ints are thread t+1's
  std::vector<unsigned> misalignment;  // addresses mod 16 (mod 128 for the __align__(128) ones)
};

// The layout of a tensor-core kernel's staging: 32 threads fill a 16 x 16
// __half tile with one 16-byte store each (row t/2, columns (t%2)*8 ..), and
// a __shared__ char buffer with one int4 each; after the barrier each thread
// reads what others stored.
__global__ void transpose_through_vector_stores(__half* out, int* rotated, unsigned* misalignment,
                                                const __half* in) {
  __shared__ __half tile[kTile][kTile];
  __shared__ char bytes[32 * 16 + 3];  // an odd size: the next object would be misaligned
  __shared__ __align__(128) float wide[3];
  __align__(128) __shared__ float wide_first[3];
  static_assert(__alignof__(tile) >= 16 && __alignof__(bytes) >= 16);
  static_assert(__alignof__(wide) == 128 && __alignof__(wide_first) == 128);
  const int t = static_cast<int>(threadIdx.x);
  const int r = t / 2;
  const int c = (t % 2) * 8;
  *reinterpret_cast<int4*>(&tile[r][c]) = *reinterpret_cast<const int4*>(in + r * kTile + c);
  *reinterpret_cast<int4*>(&bytes[16 * t]) = make_int4(4 * t, 4 * t + 1, 4 * t + 2, 4 * t + 3);
  if (t == 0) {
    misalignment[0] = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(&tile[0][0]) % 16);
    misalignment[1] = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(&bytes[0]) % 16);
    // The shared-window address cp.async and ldmatrix take: 16-byte aligned too.
    misalignment[2] = static_cast<unsigned>(__cvta_generic_to_shared(&tile[0][0]) % 16);
    misalignment[3] = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(&wide[0]) % 128);
    misalignment[4] = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(&wide_first[0]) % 128);
  }
  __syncthreads();
  for (int j = 0; j < 8; ++j) out[r * kTile + c + j] = tile[c + j][r];
  const int4 next = *reinterpret_cast<const int4*>(&bytes[16 * ((t + 1) % 32)]);
  std::memcpy(rotated + 4 * t, &next, sizeof next);
}

TileRun run_tile_kernel(const std::vector<__half>& in) {
  TileRun run{std::vector<__half>(kTile * kTile), std::vector<int>(32 * 4),
              std::vector<unsigned>(5, 99U)};
  alignas(16) __half d_in[kTile * kTile];
  std::memcpy(d_in, in.data(), sizeof d_in);
  rl::launch(transpose_through_vector_stores, dim3(1), dim3(32), 0, nullptr, run.transposed.data(),
             run.rotated.data(), run.misalignment.data(), static_cast<const __half*>(d_in));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  return run;
}

std::vector<unsigned short> bits(const std::vector<__half>& h) {
  std::vector<unsigned short> b(h.size());
  std::memcpy(b.data(), h.data(), h.size() * sizeof(__half));
  return b;
}

TEST(SharedAlignment, half_tile_and_char_buffer_take_16_byte_vector_stores_under_two_schedules) {
  std::vector<__half> in(kTile * kTile);
  for (int i = 0; i < kTile * kTile; ++i)
    in[i] = __float2half(static_cast<float>(i) * 0.25f - 7.0f);
  const std::vector<TileRun> runs =
      rl::emu::run_under_schedules([&] { return run_tile_kernel(in); });
  ASSERT_EQ(runs.size(), 2U);
  std::vector<unsigned short> want(kTile * kTile);
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c) std::memcpy(&want[r * kTile + c], &in[c * kTile + r], 2);
  std::vector<int> want_rotated(32 * 4);
  for (int t = 0; t < 32; ++t)
    for (int k = 0; k < 4; ++k) want_rotated[4 * t + k] = 4 * ((t + 1) % 32) + k;
  for (const TileRun& run : runs) {
    EXPECT_EQ(run.misalignment, (std::vector<unsigned>{0, 0, 0, 0, 0}));
    EXPECT_EQ(bits(run.transposed), want);
    EXPECT_EQ(run.rotated, want_rotated);
  }
}

}  // namespace
