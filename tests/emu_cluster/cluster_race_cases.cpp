// Racecheck cases for clusters (RL_SANITIZE=thread, preset tsan):
// `cluster_race_cases <case>` runs one 2-CTA cluster kernel and exits 0 when
// its result is right (a racy case's result is not checked).  CMakeLists.txt
// registers each case with what ThreadSanitizer must say: a data race naming
// the kernel and this file's line, or nothing.
//
// Each kernel: rank 1 writes into rank 0's shared memory through mapa, rank 0
// reads it.  Only a release arrive and an acquire wait of barrier.cluster
// between them (or a remote mbarrier arrive and the owner's wait) order the
// two; the CTAs run on one host thread, so without them the write and the
// read are two TSan fibers with nothing between them.
#include <cstdio>
#include <cstring>
#include <vector>

#include "cluster_kernels.hpp"

namespace cluster_race {

constexpr unsigned kThreads = 32;

// The write and the read with no cluster barrier between them.
__global__ void dsmem_read_without_cluster_barrier(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  const unsigned t = threadIdx.x;
  if (rl::ptx::cluster_ctarank() == 1) rl::ptx::map_shared_rank(smem, 0)[t] = t + 1;
  if (rl::ptx::cluster_ctarank() == 0) out[t] = smem[t];
  rl::ptx::barrier_cluster_sync();  // neither CTA exits while the other may reach its memory
}

// The same with a relaxed arrive: the barrier waits, but orders nothing.
__global__ void dsmem_read_after_relaxed_arrive(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  const unsigned t = threadIdx.x;
  if (rl::ptx::cluster_ctarank() == 1) rl::ptx::map_shared_rank(smem, 0)[t] = t + 1;
  rl::ptx::barrier_cluster_arrive_relaxed();
  rl::ptx::barrier_cluster_wait();
  if (rl::ptx::cluster_ctarank() == 0) out[t] = smem[t];
  rl::ptx::barrier_cluster_sync();
}

// The correct form: release arrive, acquire wait.
__global__ void dsmem_read_after_cluster_barrier(unsigned* out) {
  RL_DYNAMIC_SHARED(unsigned, smem);
  const unsigned t = threadIdx.x;
  if (rl::ptx::cluster_ctarank() == 1) rl::ptx::map_shared_rank(smem, 0)[t] = t + 1;
  rl::ptx::barrier_cluster_sync();
  if (rl::ptx::cluster_ctarank() == 0) out[t] = smem[t];
  rl::ptx::barrier_cluster_sync();
}

template <typename Launch>
int run_and_check(const Launch& launch, unsigned words, const std::vector<unsigned>* expected) {
  unsigned* out = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&out), words * 4) != cudaSuccess) return 1;
  cudaMemset(out, 0, words * 4);
  if (launch(out) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return 1;
  std::vector<unsigned> host(words);
  cudaMemcpy(host.data(), out, words * 4, cudaMemcpyDeviceToHost);
  cudaFree(out);
  if (expected != nullptr && host != *expected) {
    std::fprintf(stderr, "cluster_race_cases: wrong result\n");
    return 1;
  }
  return 0;
}

int run(const char* name) {
  std::vector<unsigned> written(kThreads);
  for (unsigned t = 0; t < kThreads; ++t) written[t] = t + 1;
  struct Case {
    const char* name;
    void (*kernel)(unsigned*);
    bool racy;
  };
  const Case cases[] = {
      {"dsmem_read_without_cluster_barrier", dsmem_read_without_cluster_barrier, true},
      {"dsmem_read_after_relaxed_arrive", dsmem_read_after_relaxed_arrive, true},
      {"dsmem_read_after_cluster_barrier", dsmem_read_after_cluster_barrier, false},
  };
  for (const Case& c : cases) {
    if (std::strcmp(name, c.name) != 0) continue;
    return run_and_check(
        [&](unsigned* out) {
          return cluster_test::launch_clustered(c.kernel, dim3{2}, dim3{kThreads}, dim3{2},
                                                kThreads * 4, out);
        },
        kThreads, c.racy ? nullptr : &written);
  }
  if (std::strcmp(name, "dsmem_gather_through_remote_mbarrier") == 0) {
    std::vector<unsigned> sums(kThreads);
    for (unsigned t = 0; t < kThreads; ++t) sums[t] = 2 * (t + 1);  // rank 1 is block 1
    return run_and_check(
        [](unsigned* out) {
          return cluster_test::launch_clustered(cluster_test::gather_through_remote_mbarrier,
                                                dim3{2}, dim3{kThreads}, dim3{2},
                                                8 + 4 * 2 * kThreads, out);
        },
        kThreads, &sums);
  }
  std::fprintf(stderr, "cluster_race_cases: unknown case '%s'\n", name);
  return 2;
}

}  // namespace cluster_race

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cluster_race_cases <case>\n");
    return 2;
  }
  return cluster_race::run(argv[1]);
}
