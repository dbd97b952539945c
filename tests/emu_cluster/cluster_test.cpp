// Thread block clusters on the emulator (emu/docs/hopper.md, "Clusters"),
// run with RL_EMU_CC=90 (its CMakeLists): the CTA's place in its cluster,
// data exchanged through distributed shared memory under barrier.cluster and
// a remote mbarrier arrive in 2- and 4-CTA clusters, bit-identical under two
// schedules; CUDA's launch refusals; and the launch failures of misuse.
#include <cooperative_groups.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cluster_kernels.hpp"
#include "rl/emu/arch.hpp"

namespace cluster_test {
namespace {

constexpr unsigned kThreads = 64;

std::vector<unsigned> run_into(unsigned words, const auto& launch) {
  unsigned* out = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), words * 4), cudaSuccess);
  EXPECT_EQ(cudaMemset(out, 0, words * 4), cudaSuccess);
  EXPECT_EQ(launch(out), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned> host(words);
  EXPECT_EQ(cudaMemcpy(host.data(), out, words * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(out);
  return host;
}

// The special registers, 14 words per block (thread 0 writes them).
__global__ void record_identity(unsigned* out) {
  if (threadIdx.x != 0) return;
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned* o = out + 14 * block;
  o[0] = rl::ptx::cluster_ctarank();
  o[1] = rl::ptx::cluster_nctarank();
  const uint3 v[4] = {rl::ptx::cluster_ctaid(), rl::ptx::cluster_nctaid(), rl::ptx::clusterid(),
                      rl::ptx::nclusterid()};
  for (int i = 0; i < 4; ++i) {
    o[2 + 3 * i] = v[i].x;
    o[3 + 3 * i] = v[i].y;
    o[4 + 3 * i] = v[i].z;
  }
}

TEST(ClusterIdentity, special_registers_name_the_cta_in_a_2x2_cluster_of_a_4x2x2_grid) {
  const dim3 grid{4, 2, 2}, shape{2, 2, 1};
  const auto got = run_into(14 * 16, [&](unsigned* out) {
    return launch_clustered(record_identity, grid, dim3{32}, shape, 0, out);
  });
  // Block (3,1,1): rank 1 + 2 * 1 = 3 in cluster (1,0,1) of a 2x1x2 grid of clusters.
  const unsigned block = 3 + 4 * (1 + 2 * 1);
  const std::vector<unsigned> expected{3, 4, 1, 1, 0, 2, 2, 1, 1, 0, 1, 2, 1, 2};
  EXPECT_EQ(std::vector<unsigned>(got.begin() + 14 * block, got.begin() + 14 * block + 14),
            expected);
  for (unsigned b = 0; b < 16; ++b) {  // every block: rank = x + 2y of its place
    const unsigned x = b % 4, y = (b / 4) % 2;
    EXPECT_EQ(got[14 * b], x % 2 + 2 * (y % 2)) << "block " << b;
    EXPECT_EQ(got[14 * b + 8], x / 2) << "block " << b;
  }
}

TEST(ClusterIdentity, a_launch_without_a_cluster_is_a_1x1x1_cluster) {
  const auto got = run_into(14 * 3, [](unsigned* out) {
    rl::launch(record_identity, dim3{3}, dim3{32}, 0, nullptr, out);
    return cudaGetLastError();
  });
  const std::vector<unsigned> expected{0, 1, 0, 0, 0, 1, 1, 1, 2, 0, 0, 3, 1, 1};
  EXPECT_EQ(std::vector<unsigned>(got.begin() + 28, got.end()), expected);
}

// CTA r of each cluster ends with CTA r + 2's value plus one (ring_exchange).
std::vector<unsigned> ring_expected(unsigned blocks, unsigned size) {
  std::vector<unsigned> expected(3 * blocks * kThreads);
  for (unsigned b = 0; b < blocks; ++b) {
    const unsigned first = b - b % size, rank = b % size;
    for (unsigned t = 0; t < kThreads; ++t) {
      unsigned* e = &expected[3 * (b * kThreads + t)];
      e[0] = own_value(first + (rank + 2) % size, t) + 1;
      e[1] = e[2] = own_value(first + (rank + 1) % size, t);
    }
  }
  return expected;
}

void expect_ring_exchange(unsigned size) {
  const unsigned blocks = 8;
  const auto outputs = rl::emu::run_under_schedules([&] {
    return run_into(3 * blocks * kThreads, [&](unsigned* out) {
      return launch_clustered(ring_exchange, dim3{blocks}, dim3{kThreads}, dim3{size},
                              2 * kThreads * 4, out);
    });
  });
  EXPECT_EQ(outputs[0], ring_expected(blocks, size));
  EXPECT_EQ(outputs[1], outputs[0]);
}

TEST(ClusterSharedMemory, a_ring_of_2_ctas_exchanges_through_dsmem_under_barrier_cluster) {
  expect_ring_exchange(2);
}

TEST(ClusterSharedMemory, a_ring_of_4_ctas_exchanges_through_dsmem_under_barrier_cluster) {
  expect_ring_exchange(4);
}

TEST(ClusterSharedMemory, ctas_arrive_on_rank_0s_mbarrier_remotely) {
  for (const unsigned size : {2U, 4U}) {
    const unsigned blocks = 8, clusters = blocks / size;
    const auto outputs = rl::emu::run_under_schedules([&] {
      return run_into(clusters * kThreads, [&](unsigned* out) {
        return launch_clustered(gather_through_remote_mbarrier, dim3{blocks}, dim3{kThreads},
                                dim3{size}, 8 + 4 * size * kThreads, out);
      });
    });
    std::vector<unsigned> expected(clusters * kThreads);
    for (unsigned c = 0; c < clusters; ++c)
      for (unsigned t = 0; t < kThreads; ++t)
        for (unsigned r = 1; r < size; ++r)
          expected[c * kThreads + t] += (c * size + r + 1) * (t + 1);
    EXPECT_EQ(outputs[0], expected) << "clusters of " << size;
    EXPECT_EQ(outputs[1], outputs[0]) << "clusters of " << size;
  }
}

// The same exchange as CUDA code writes it with cooperative groups: each
// block sums every block's word of the cluster (map_shared_rank) between
// two cluster.sync()s, and records its thread's rank in the cluster.
__global__ void cooperative_groups_cluster_sum(unsigned* out) {
  namespace cg = cooperative_groups;
  RL_DYNAMIC_SHARED(unsigned, smem);
  const cg::cluster_group cluster = cg::this_cluster();
  smem[threadIdx.x] = cluster.block_rank() + 1;
  cluster.sync();
  unsigned sum = 0;
  for (unsigned r = 0; r < cluster.num_blocks(); ++r)
    sum += cluster.map_shared_rank(smem, r)[threadIdx.x];
  cluster.sync();
  out[2 * (blockIdx.x * blockDim.x + threadIdx.x)] = sum;
  out[2 * (blockIdx.x * blockDim.x + threadIdx.x) + 1] = cluster.thread_rank();
}

TEST(ClusterSharedMemory, cooperative_groups_this_cluster_syncs_and_maps_shared_memory) {
  const auto got = run_into(2 * 8 * 32, [](unsigned* out) {
    return launch_clustered(cooperative_groups_cluster_sum, dim3{8}, dim3{32}, dim3{4}, 32 * 4,
                            out);
  });
  for (unsigned b = 0; b < 8; ++b)
    for (unsigned t = 0; t < 32; ++t) {
      EXPECT_EQ(got[2 * (b * 32 + t)], 1U + 2U + 3U + 4U) << "block " << b << " thread " << t;
      EXPECT_EQ(got[2 * (b * 32 + t) + 1], (b % 4) * 32 + t) << "block " << b << " thread " << t;
    }
}

// Rank 0 alone takes the cluster barrier: the other CTAs' threads have
// exited, and exited threads count as arrived.
__global__ void only_rank_0_syncs(unsigned* out) {
  if (rl::ptx::cluster_ctarank() != 0) return;
  rl::ptx::barrier_cluster_sync();
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

TEST(ClusterBarrier, exited_threads_count_as_arrived) {
  const auto got = run_into(4 * 32, [](unsigned* out) {
    return launch_clustered(only_rank_0_syncs, dim3{4}, dim3{32}, dim3{2}, 0, out);
  });
  for (unsigned b = 0; b < 4; ++b) EXPECT_EQ(got[b * 32], b % 2 == 0 ? 1U : 0U) << "block " << b;
}

// Rank 1 waits on its own mbarrier, which nothing arrives on, and never
// reaches the cluster barrier rank 0 waits at: the cluster deadlocks.
__global__ void rank_1_never_arrives(unsigned*) {
  RL_DYNAMIC_SHARED(std::uint64_t, bar);
  if (rl::ptx::cluster_ctarank() == 1) {
    if (threadIdx.x == 0) rl::ptx::mbarrier_init(bar, 1);
    __syncthreads();
    rl::ptx::mbarrier_wait_parity(bar, 0);
  } else {
    rl::ptx::barrier_cluster_sync();
  }
}

// Launches `kernel` in 2-CTA clusters and returns the launch failure and stderr.
std::pair<cudaError_t, std::string> failed_launch(void (*kernel)(unsigned*), std::size_t shared) {
  unsigned* out = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 4096), cudaSuccess);
  testing::internal::CaptureStderr();
  EXPECT_EQ(launch_clustered(kernel, dim3{2}, dim3{32}, dim3{2}, shared, out), cudaSuccess);
  const cudaError_t error = cudaDeviceSynchronize();
  const std::string log = testing::internal::GetCapturedStderr();
  cudaGetLastError();
  cudaFree(out);
  return {error, log};
}

TEST(ClusterBarrier, a_cta_that_never_arrives_is_a_deadlock_named_in_the_report) {
  const auto [error, log] = failed_launch(rank_1_never_arrives, 8);
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(log.find("deadlock"), std::string::npos) << log;
  EXPECT_NE(log.find("CTA 0: 32 of 32 threads alive"), std::string::npos) << log;
  EXPECT_NE(log.find("barrier.cluster.wait"), std::string::npos) << log;
  EXPECT_NE(log.find("CTA 1: 32 of 32 threads alive"), std::string::npos) << log;
  EXPECT_NE(log.find("the mbarrier at offset 0x00000000 of CTA 1's shared memory"),
            std::string::npos)
      << log;
}

__global__ void wait_without_arrive(unsigned*) {
  rl::ptx::barrier_cluster_wait();
}

TEST(ClusterBarrier, a_wait_without_an_arrive_fails_the_launch) {
  const auto [error, log] = failed_launch(wait_without_arrive, 0);
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(log.find("without a barrier.cluster.arrive"), std::string::npos) << log;
}

// Reads 4 KiB past the start of the next CTA's 256 bytes of shared memory.
__global__ void read_past_the_peer_window(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  rl::ptx::barrier_cluster_sync();
  const std::uint32_t there = rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(smem) + 4096,
                                                           (rl::ptx::cluster_ctarank() + 1) % 2);
  out[threadIdx.x] = rl::ptx::ld_shared_cluster_u32(there);
  rl::ptx::barrier_cluster_sync();
}

TEST(ClusterSharedMemory, an_access_outside_the_peers_shared_memory_is_an_illegal_address) {
  const auto [error, log] = failed_launch(read_past_the_peer_window, 256);
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(log.find("outside CTA"), std::string::npos) << log;
}

__global__ void map_to_rank_2_of_2(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  out[threadIdx.x] = *rl::ptx::map_shared_rank(smem, 2);
}

TEST(ClusterSharedMemory, mapa_to_a_rank_outside_the_cluster_is_an_illegal_address) {
  const auto [error, log] = failed_launch(map_to_rank_2_of_2, 64);
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(log.find("rank 2 of a cluster of 2"), std::string::npos) << log;
}

__global__ void empty_kernel(unsigned*) {}

__global__ void static_shared_kernel(unsigned* out) {
  __shared__ unsigned s[32];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[31 - threadIdx.x];
}

cudaError_t refusal(void (*kernel)(unsigned*), dim3 grid, dim3 cluster) {
  testing::internal::CaptureStderr();
  const cudaError_t error = launch_clustered(kernel, grid, dim3{32}, cluster, 0, nullptr);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaGetLastError(), error) << "a refused launch is the last error too";
  if (error != cudaSuccess) {
    EXPECT_NE(log.find("refused"), std::string::npos) << log;
  }
  return error;
}

TEST(ClusterLaunch, refusals_are_cudas) {
  EXPECT_EQ(refusal(empty_kernel, dim3{6}, dim3{4}), cudaErrorInvalidClusterSize);  // 6 % 4
  EXPECT_EQ(refusal(empty_kernel, dim3{4, 3}, dim3{2, 2}), cudaErrorInvalidClusterSize);
  EXPECT_EQ(refusal(empty_kernel, dim3{16}, dim3{16}), cudaErrorInvalidClusterSize);  // > 8
  EXPECT_EQ(refusal(empty_kernel, dim3{16}, dim3{8}), cudaSuccess);
  EXPECT_EQ(refusal(empty_kernel, dim3{8}, dim3{0}), cudaErrorInvalidClusterSize);
  EXPECT_EQ(refusal(static_shared_kernel, dim3{2}, dim3{2}), cudaErrorNotSupported);
}

TEST(ClusterLaunch, sixteen_ctas_need_the_non_portable_attribute_and_32_never_launch) {
  EXPECT_EQ(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1),
            cudaSuccess);
  EXPECT_EQ(refusal(empty_kernel, dim3{16}, dim3{16}), cudaSuccess);
  EXPECT_EQ(refusal(empty_kernel, dim3{32}, dim3{32}), cudaErrorInvalidClusterSize);
  EXPECT_EQ(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 0),
            cudaSuccess);
  EXPECT_EQ(refusal(empty_kernel, dim3{16}, dim3{16}), cudaErrorInvalidClusterSize);
  EXPECT_EQ(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 2),
            cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST(ClusterLaunch, an_attribute_the_emulator_does_not_model_is_refused) {
  cudaLaunchAttribute attribute{};
  attribute.id = static_cast<cudaLaunchAttributeID>(2);  // cudaLaunchAttributeCooperative
  cudaLaunchConfig_t config{};
  config.gridDim = dim3{1};
  config.blockDim = dim3{32};
  config.attrs = &attribute;
  config.numAttrs = 1;
  testing::internal::CaptureStderr();
  EXPECT_EQ(cudaLaunchKernelEx(&config, empty_kernel, nullptr), cudaErrorNotSupported);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("not emulated"), std::string::npos);
  cudaGetLastError();
}

// Registered a second time with RL_EMU_CC=89 (CMakeLists.txt); skipped here.
TEST(ClusterBelowHopper, a_cluster_launch_is_not_supported) {
  if (rl::emu::compute_capability() >= 90) GTEST_SKIP() << "runs with RL_EMU_CC=89";
  EXPECT_EQ(refusal(empty_kernel, dim3{2}, dim3{2}), cudaErrorNotSupported);
  EXPECT_EQ(refusal(empty_kernel, dim3{2}, dim3{1}), cudaSuccess);
}

}  // namespace
}  // namespace cluster_test
