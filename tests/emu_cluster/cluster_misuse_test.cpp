// Misuse of distributed shared memory on the emulator (RL_EMU_CC=90;
// emu/docs/hopper.md, "Clusters"): what a GPU leaves undefined fails the
// launch with cudaErrorIllegalAddress and one line saying why.  A
// .shared::cta form given another CTA's memory, a DSMEM access before the
// first cluster barrier or after the peer exited, the CTA's own memory out
// of bounds through ld.shared::cluster; a remote barrier is named by its
// CTA and offset; tcgen05 in a clustered launch (RL_EMU_CC=100) and
// this_cluster() below sm_90 (RL_EMU_CC=89) are refused.
#include <cooperative_groups.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "cluster_launch.hpp"
#include "rl/emu/arch.hpp"
#include "rl/emu/launch.hpp"
#include "rl/ptx.hpp"
#include "rl/ptx_sm100_tmem.hpp"

namespace cluster_test {
namespace {

// Launches `kernel` as one 2-CTA cluster of 32 threads each with 256 bytes
// of dynamic shared memory; returns the launch failure and stderr.
std::pair<cudaError_t, std::string> misuse(void (*kernel)(unsigned*)) {
  unsigned* out = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 4096), cudaSuccess);
  testing::internal::CaptureStderr();
  EXPECT_EQ(launch_clustered(kernel, dim3{2}, dim3{32}, dim3{2}, 256, out), cudaSuccess);
  const cudaError_t error = cudaDeviceSynchronize();
  const std::string log = testing::internal::GetCapturedStderr();
  cudaGetLastError();
  cudaFree(out);
  return {error, log};
}

// Rank 1 arrives on rank 0's mbarrier through the .shared::cta form with a
// generic pointer from mapa: on a GPU the address names rank 1's own memory.
__global__ void shared_cta_arrive_on_the_peer(unsigned*) {
  RL_DYNAMIC_SHARED(std::uint64_t, bar);
  if (threadIdx.x == 0) rl::ptx::mbarrier_init(&bar[2], 1);
  rl::ptx::barrier_cluster_sync();
  if (rl::ptx::cluster_ctarank() == 1 && threadIdx.x == 0)
    rl::ptx::mbarrier_arrive(rl::ptx::map_shared_rank(&bar[2], 0));
  rl::ptx::barrier_cluster_sync();
}

TEST(ClusterMisuse, a_shared_cta_mbarrier_form_on_a_peers_barrier_is_an_illegal_address) {
  const auto [error, log] = misuse(shared_cta_arrive_on_the_peer);
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(log.find("mbarrier.arrive (a .shared::cta form) on offset 0x00000010 of CTA 0's shared "
                     "memory"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("use the .shared::cluster form"), std::string::npos) << log;
}

// A remote arrive (the .shared::cluster form) on a barrier nobody initialised.
__global__ void remote_arrive_on_an_uninitialised_barrier(unsigned*) {
  RL_DYNAMIC_SHARED(std::uint64_t, bar);
  if (threadIdx.x == 0) bar[2] = 0;  // zero: never initialised
  rl::ptx::barrier_cluster_sync();
  if (rl::ptx::cluster_ctarank() == 1 && threadIdx.x == 0)
    rl::ptx::mbarrier_arrive_cluster(
        rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(&bar[2]), 0));
  rl::ptx::barrier_cluster_sync();
}

TEST(ClusterMisuse, a_remote_barrier_is_named_by_its_cta_and_offset) {
  const auto [error, log] = misuse(remote_arrive_on_an_uninitialised_barrier);
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(log.find("the mbarrier at offset 0x00000010 of CTA 0's shared memory, which was never "
                     "initialised"),
            std::string::npos)
      << log;
}

// Reads the peer's memory before any cluster barrier: the peer may not have
// started (the CUDA guide asks for cluster.sync() first).
__global__ void dsmem_before_the_first_cluster_barrier(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  const std::uint32_t there = rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(smem),
                                                           (rl::ptx::cluster_ctarank() + 1) % 2);
  out[threadIdx.x] = rl::ptx::ld_shared_cluster_u32(there);
  rl::ptx::barrier_cluster_sync();
}

TEST(ClusterMisuse, dsmem_before_the_first_cluster_barrier_is_an_illegal_address) {
  const auto [error, log] = misuse(dsmem_before_the_first_cluster_barrier);
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(log.find("before the cluster's first barrier.cluster phase completed"),
            std::string::npos)
      << log;
}

// Rank 1 exits after the first barrier; rank 0's second barrier completes
// only once rank 1's threads are gone (exited threads count as arrived),
// then it writes into rank 1's memory.
__global__ void dsmem_after_the_peer_exited(unsigned*) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  rl::ptx::barrier_cluster_sync();
  if (rl::ptx::cluster_ctarank() == 1) return;
  rl::ptx::barrier_cluster_sync();
  rl::ptx::st_shared_cluster_u32(rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(smem), 1), 1);
}

TEST(ClusterMisuse, dsmem_after_the_peer_exited_is_an_illegal_address) {
  const auto [error, log] = misuse(dsmem_after_the_peer_exited);
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(log.find("after that CTA exited"), std::string::npos) << log;
}

// The CTA's own shared-window address 4 KiB into its 256 bytes, through
// ld.shared::cluster (no mapa): bounds-checked as a peer's.
__global__ void own_address_past_the_window(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  rl::ptx::barrier_cluster_sync();
  out[threadIdx.x] = rl::ptx::ld_shared_cluster_u32(rl::ptx::shared_address(smem) + 4096);
  rl::ptx::barrier_cluster_sync();
}

TEST(ClusterMisuse, the_ctas_own_address_past_its_shared_memory_is_an_illegal_address) {
  const auto [error, log] = misuse(own_address_past_the_window);
  EXPECT_EQ(error, cudaErrorIllegalAddress);
  EXPECT_NE(log.find("0x00001000 lies outside CTA"), std::string::npos) << log;
}

// Thread 0 of every CTA reads past its own shared memory in the first pass,
// in schedule order: the launch reports the CTA that failed first.
__global__ void every_cta_reads_past_its_window(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  if (threadIdx.x == 0)
    out[blockIdx.x] = rl::ptx::ld_shared_cluster_u32(rl::ptx::shared_address(smem) + 4096);
}

TEST(ClusterMisuse, the_launch_reports_the_cta_that_failed_first) {
  const auto logs =
      rl::emu::run_under_schedules([] { return misuse(every_cta_reads_past_its_window).second; });
  EXPECT_NE(logs[0].find("failed in block (0,0,0): thread (0,0,0): shared::cluster address "
                         "0x00001000 lies outside CTA 0's"),
            std::string::npos)
      << "forward: " << logs[0];
  EXPECT_NE(logs[1].find("failed in block (1,0,0): thread (0,0,0): shared::cluster address "
                         "0x00001000 lies outside CTA 1's"),
            std::string::npos)
      << "reverse: " << logs[1];
}

// Registered again with RL_EMU_CC=100 (CMakeLists.txt); skipped here.
__global__ void tmem_alloc_in_a_cluster(unsigned*) {
  RL_DYNAMIC_SHARED(std::uint32_t, slot);
  if (threadIdx.x < 32) rl::ptx::tmem_alloc(slot, 32);
}

TEST(ClusterTcgen05, tensor_memory_in_a_clustered_launch_is_refused) {
  if (!rl::emu::has_tcgen05()) GTEST_SKIP() << "runs with RL_EMU_CC=100";
  const auto [error, log] = misuse(tmem_alloc_in_a_cluster);
  EXPECT_EQ(error, cudaErrorLaunchFailure);
  EXPECT_NE(log.find("tcgen05 in a clustered launch is not emulated yet"), std::string::npos)
      << log;
}

__global__ void cluster_rank_through_cooperative_groups(unsigned* out) {
  out[threadIdx.x] = cooperative_groups::this_cluster().block_rank();
}

// Registered again with RL_EMU_CC=89 (CMakeLists.txt); skipped here.
TEST(ClusterBelowHopper, this_cluster_is_refused) {
  if (rl::emu::compute_capability() >= 90) GTEST_SKIP() << "runs with RL_EMU_CC=89";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  unsigned* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 128), cudaSuccess);
  EXPECT_DEATH(
      rl::launch(cluster_rank_through_cooperative_groups, dim3(1), dim3(32), 0, nullptr, out),
      "this_cluster\\(\\) needs compute capability 9.0");
  cudaFree(out);
}

}  // namespace
}  // namespace cluster_test
