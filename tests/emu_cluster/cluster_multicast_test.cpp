// TMA multicast on the emulator (RL_EMU_CC=90): rank 0 of each cluster loads
// one box with cp.async.bulk.tensor .multicast::cluster; it lands in every
// CTA its mask names, each completing the bytes on its own mbarrier, and in
// no other.  Bit-identical under two schedules; a mask bit outside the
// cluster fails the launch.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cluster_launch.hpp"
#include "rl/ptx.hpp"

namespace cluster_test {
namespace {

constexpr int kRows = 8, kCols = 32;  // one box: 8 x 32 int32, 1 KiB
constexpr int kBoxWords = kRows * kCols;
constexpr int kTensorRows = 16;  // two boxes down

// Each CTA whose rank bit is in `mask` expects the box on its own mbarrier
// and copies what landed to out[blockIdx.x]; rank 0 issues the multicast of
// box row clusterid.x % 2.
__global__ void multicast_box(const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap map, std::uint16_t mask,
                              std::int32_t* out) {
  RL_DYNAMIC_SHARED(unsigned char, raw);
  auto* tile = reinterpret_cast<std::int32_t*>(raw);
  auto* bar = reinterpret_cast<std::uint64_t*>(raw + 4 * kBoxWords);
  const unsigned rank = rl::ptx::cluster_ctarank();
  const bool mine = ((mask >> rank) & 1U) != 0;
  if (threadIdx.x == 0) {
    rl::ptx::mbarrier_init(bar, 1);
    rl::ptx::fence_mbarrier_init();
    if (mine) rl::ptx::mbarrier_arrive_expect_tx(bar, 4 * kBoxWords);
  }
  rl::ptx::barrier_cluster_sync();  // every CTA's mbarrier before the copy completes on it
  if (rank == 0 && threadIdx.x == 0) {
    const auto row = static_cast<std::int32_t>(kRows * (rl::ptx::clusterid().x % 2));
    rl::ptx::tma_load_2d_multicast(tile, &map, 0, row, bar, mask);
  }
  if (!mine) return;
  rl::ptx::mbarrier_wait_parity(bar, 0);
  for (unsigned i = threadIdx.x; i < kBoxWords; i += blockDim.x)
    out[blockIdx.x * kBoxWords + i] = tile[i];
}

namespace h = rl::emu::hopper;

struct Tensor {
  std::int32_t* device = nullptr;
  rl::ptx::TensorMap map{};
  explicit Tensor(h::TmaSwizzle swizzle = h::TmaSwizzle::none) {
    std::vector<std::int32_t> host(kTensorRows * kCols);
    for (int i = 0; i < kTensorRows * kCols; ++i) host[i] = 7 * i + 3;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), host.size() * 4), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(device, host.data(), host.size() * 4, cudaMemcpyHostToDevice),
              cudaSuccess);
    const std::uint64_t dims[2] = {kCols, kTensorRows}, strides[1] = {4 * kCols};
    const std::uint32_t box[2] = {kCols, kRows}, es[2] = {1, 1};
    EXPECT_EQ(h::encode_tensor_map_tiled(&map, h::TmaDataType::int32, 2, device, dims, strides, box,
                                         es, h::TmaInterleave::none, swizzle, h::TmaOobFill::zeros),
              0);
  }
  ~Tensor() { cudaFree(device); }
};

std::vector<std::int32_t> run_multicast(const Tensor& t, unsigned blocks, unsigned size,
                                        std::uint16_t mask) {
  std::int32_t* out = nullptr;
  const std::size_t words = std::size_t{blocks} * kBoxWords;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), words * 4), cudaSuccess);
  EXPECT_EQ(cudaMemset(out, 0, words * 4), cudaSuccess);
  EXPECT_EQ(launch_clustered(multicast_box, dim3{blocks}, dim3{64}, dim3{size}, 4 * kBoxWords + 8,
                             t.map, mask, out),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::int32_t> host(words);
  EXPECT_EQ(cudaMemcpy(host.data(), out, words * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(out);
  return host;
}

// Block b holds box row (cluster % 2) when its rank is in the mask, else zeros.
std::vector<std::int32_t> expected(unsigned blocks, unsigned size, std::uint16_t mask) {
  std::vector<std::int32_t> e(std::size_t{blocks} * kBoxWords, 0);
  for (unsigned b = 0; b < blocks; ++b) {
    if (((mask >> (b % size)) & 1U) == 0) continue;
    const unsigned first_row = kRows * ((b / size) % 2);
    for (int i = 0; i < kBoxWords; ++i)
      e[b * kBoxWords + i] = static_cast<std::int32_t>(7 * (first_row * kCols + i) + 3);
  }
  return e;
}

TEST(ClusterMulticast, a_box_lands_in_every_cta_of_the_mask_and_completes_on_each_mbarrier) {
  const Tensor tensor;
  for (const auto& [size, mask] :
       {std::pair<unsigned, std::uint16_t>{2, 0x3}, {4, 0x5}, {4, 0xF}}) {
    const auto outputs =
        rl::emu::run_under_schedules([&] { return run_multicast(tensor, 8, size, mask); });
    EXPECT_EQ(outputs[0], expected(8, size, mask)) << "cluster " << size << ", mask " << mask;
    EXPECT_EQ(outputs[1], outputs[0]) << "cluster " << size << ", mask " << mask;
  }
}

// With the 128-byte swizzle the box's 16-byte chunks are XORed by the row
// (bits 7-9 of the shared address) into bits 4-6.  The tile lies at offset 0
// of every CTA's shared memory, so each CTA holds the issuer's layout (the
// swizzle phase is the shared address's, not where the host put the CTA).
TEST(ClusterMulticast, a_128_byte_swizzled_box_lands_in_the_issuers_layout_in_every_cta) {
  const Tensor tensor(h::TmaSwizzle::b128);
  const auto got = run_multicast(tensor, 8, 4, 0xF);
  std::vector<std::int32_t> issuer(kBoxWords);
  for (int row = 0; row < kRows; ++row)
    for (int col = 0; col < kCols; ++col) {
      const unsigned a = static_cast<unsigned>(4 * (row * kCols + col));
      const unsigned swizzled = a ^ (((a >> 7) & 7U) << 4);
      issuer[swizzled / 4] = 7 * (row * kCols + col) + 3;  // cluster 0: box row 0
    }
  EXPECT_EQ(std::vector<std::int32_t>(got.begin(), got.begin() + kBoxWords), issuer);
  for (unsigned b = 1; b < 4; ++b)
    EXPECT_EQ(
        std::vector<std::int32_t>(got.begin() + b * kBoxWords, got.begin() + (b + 1) * kBoxWords),
        issuer)
        << "CTA " << b << " of cluster 0";
}

TEST(ClusterMulticast, a_mask_bit_outside_the_cluster_is_an_illegal_address) {
  const Tensor tensor;
  std::int32_t* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 2 * kBoxWords * 4), cudaSuccess);
  testing::internal::CaptureStderr();
  EXPECT_EQ(launch_clustered(multicast_box, dim3{2}, dim3{32}, dim3{2}, 4 * kBoxWords + 8,
                             tensor.map, std::uint16_t{0x4}, out),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("CTA mask 0x00000004 in a cluster of 2"), std::string::npos) << log;
  cudaGetLastError();
  cudaFree(out);
}

}  // namespace
}  // namespace cluster_test
