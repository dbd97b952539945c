// Thread block clusters inside the emulator (clusters.cpp; the public side is
// rl/emu/cluster.hpp, the semantics emu/docs/hopper.md, "Clusters").  Not a
// public header.
#pragma once

#include <string>

#include "internal.hpp"

namespace rl::emu::detail {

struct LaunchSpec;
struct Thread;

// cudaFuncSetAttribute(cudaFuncAttributeNonPortableClusterSizeAllowed):
// value 1 lets `kernel` launch in clusters of 9 to 16 blocks, 0 takes that
// back; any other value is cudaErrorInvalidValue.
cudaError_t allow_non_portable_clusters(const void* kernel, int value);

// The launch's cluster shape against CUDA's rules (one line on stderr for a
// refusal): cudaSuccess, or the error the launch returns.
cudaError_t check_cluster(const LaunchSpec& spec);

// barrier.cluster: a thread that exits counts as arrived in the current
// phase and every later one ("all non-exited threads of the cluster").
void cluster_thread_exited(Thread& t);

// Makes the threads of the running thread's cluster that sleep in
// wait_on(object) runnable, in every CTA of it (a remote mbarrier arrive
// wakes the owning CTA's waiters); outside a kernel nobody sleeps.
void wake_cluster_waiters(const void* object);

// The .shared::cta forms (mbarrier.init/arrive/expect_tx/test_wait/try_wait,
// the TMA load's destination and barrier): in a cluster of more than one CTA
// a pointer into another CTA's shared memory fails the launch with
// cudaErrorIllegalAddress, saying to use the .shared::cluster form (on a GPU
// it is undefined).  Outside a kernel, or in a cluster of one, it passes.
void require_own_cta(const void* p, const char* instruction);

// "offset 0x... of CTA r's shared memory" when p lies in the dynamic shared
// memory of a CTA of the running cluster of more than one CTA (the running
// thread's, else the worker's: the deadlock report runs outside any thread),
// else empty: error messages name a barrier by its real place.
std::string cluster_location(const void* p);

struct Cluster;
// While one lives, cluster_location outside a thread looks into `c` (the
// runner's deadlock report).
struct DescribedCluster {
  explicit DescribedCluster(const Cluster& c);
  ~DescribedCluster();
  DescribedCluster(const DescribedCluster&) = delete;
  DescribedCluster& operator=(const DescribedCluster&) = delete;
};

}  // namespace rl::emu::detail
