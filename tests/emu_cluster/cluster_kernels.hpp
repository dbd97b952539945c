// Kernels shared by the cluster tests (cluster_test.cpp) and the racecheck
// cases (cluster_race_cases.cpp), two executables: CTAs of 2- and 4-CTA
// clusters exchanging data through distributed shared memory.  Included by
// one source per executable (the kernels are defined here).
#pragma once

#include <cstdint>

#include "cluster_launch.hpp"
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

namespace cluster_test {

// What CTA `block` (its blockIdx.x) puts in its shared memory for thread t.
__host__ __device__ inline unsigned own_value(unsigned block, unsigned t) {
  return 1000U * block + t;
}

// A ring over each cluster of a 1-D grid, blockDim.x threads and 2 *
// blockDim.x words of dynamic shared memory per CTA: every CTA writes
// own_value into the first half of its shared memory; after a cluster
// barrier each thread pulls its word of the next CTA's (generic mapa, and
// again through mapa.shared::cluster + ld.shared::cluster) and pushes it,
// plus one, into the second half of the previous CTA's
// (st.shared::cluster); after a second barrier each CTA writes its second
// half and the two pulled copies to out (3 words a thread).  So CTA r's
// output is CTA r + 2's value plus one (ranks modulo the cluster size).
__global__ void ring_exchange(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  const unsigned t = threadIdx.x, n = blockDim.x;
  const unsigned rank = rl::ptx::cluster_ctarank(), size = rl::ptx::cluster_nctarank();
  smem[t] = own_value(blockIdx.x, t);
  rl::ptx::barrier_cluster_arrive();
  rl::ptx::barrier_cluster_wait();
  const unsigned next = (rank + 1) % size, previous = (rank + size - 1) % size;
  const unsigned pulled = rl::ptx::map_shared_rank(smem, next)[t];
  const std::uint32_t there = rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(&smem[t]), next);
  const unsigned loaded = rl::ptx::ld_shared_cluster_u32(there);
  const std::uint32_t slot =
      rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(&smem[n + t]), previous);
  rl::ptx::st_shared_cluster_u32(slot, pulled + 1);
  rl::ptx::barrier_cluster_arrive();
  rl::ptx::barrier_cluster_wait();  // also: no CTA exits while another reads its memory
  unsigned* o = out + 3 * (blockIdx.x * n + t);
  o[0] = smem[n + t];
  o[1] = pulled;
  o[2] = loaded;
}

// Every CTA but rank 0 writes (blockIdx.x + 1) * (t + 1) into its slot of
// rank 0's shared memory and arrives on rank 0's mbarrier (a remote arrive,
// as a consumer frees a producer's stage); rank 0 waits on the barrier and
// writes each thread's sum over the other CTAs to out[clusterid * blockDim.x
// + t].  Dynamic shared memory: 8 + 4 * cluster size * blockDim.x bytes.
__global__ void gather_through_remote_mbarrier(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned char, raw);
  auto* bar = reinterpret_cast<std::uint64_t*>(raw);
  auto* slots = reinterpret_cast<unsigned*>(raw + 8);
  const unsigned t = threadIdx.x, n = blockDim.x;
  const unsigned rank = rl::ptx::cluster_ctarank(), size = rl::ptx::cluster_nctarank();
  if (rank == 0 && t == 0) {
    rl::ptx::mbarrier_init(bar, (size - 1) * n);
    rl::ptx::fence_mbarrier_init();
  }
  rl::ptx::barrier_cluster_arrive();  // the init before any remote arrival
  rl::ptx::barrier_cluster_wait();
  if (rank != 0) {
    rl::ptx::map_shared_rank(slots, 0)[rank * n + t] = (blockIdx.x + 1) * (t + 1);
    rl::ptx::mbarrier_arrive_cluster(rl::ptx::mapa_shared_cluster(rl::ptx::shared_address(bar), 0));
    return;  // rank 0 reads nothing of this CTA's
  }
  rl::ptx::mbarrier_wait_parity(bar, 0);
  unsigned sum = 0;
  for (unsigned r = 1; r < size; ++r) sum += slots[r * n + t];
  out[rl::ptx::clusterid().x * n + t] = sum;
}

}  // namespace cluster_test
