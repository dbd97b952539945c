// Thread block clusters inside the emulator (clusters.cpp; the public side is
// rl/emu/cluster.hpp, the semantics emu/docs/hopper.md, "Clusters").  Not a
// public header.
#pragma once

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

}  // namespace rl::emu::detail
