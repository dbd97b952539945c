// Thread block clusters (sm_90 and later): the CTA's place in its cluster,
// barrier.cluster, distributed shared memory (mapa, ld/st.shared::cluster),
// the cluster-scope fence and an arrival on another CTA's mbarrier.  A part
// of rl/ptx.hpp (included last there: its sm_90 macros are gone by then, so
// this part keeps its own).
//
// A kernel launched in clusters (cudaLaunchKernelEx with
// cudaLaunchAttributeClusterDimension) may reach the shared memory of every
// CTA of its cluster.  Under the emulator each wrapper calls the exact model
// of rl/emu/cluster.hpp; the CTAs of a cluster run together there, so one may
// wait for another.  Semantics quoted from the PTX ISA ("Cluster of
// Cooperative Thread Arrays", "barrier.cluster", "mapa", "ld", "st",
// "mbarrier.arrive", "membar/fence", "Special Registers").
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_sm90_cluster.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/cluster.hpp"
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RL_PTX_CLUSTER 1
#else
#define RL_PTX_CLUSTER 0
#endif

#if defined(RL_EMULATE)
#define RL_PTX_REQUIRE_CLUSTER(instruction) emu_detail::require_tma(instruction)
#endif

// Special registers, read with mov.u32 (GPU only).
#define RL_PTX_CLUSTER_SREG(reg)                      \
  std::uint32_t v = 0;                                \
  asm volatile("mov.u32 %0, %%" reg ";\n" : "=r"(v)); \
  return v
#define RL_PTX_CLUSTER_SREG3(reg)                                                           \
  uint3 v;                                                                                  \
  asm volatile("mov.u32 %0, %%" reg ".x;\n\tmov.u32 %1, %%" reg ".y;\n\tmov.u32 %2, %%" reg \
               ".z;\n"                                                                      \
               : "=r"(v.x), "=r"(v.y), "=r"(v.z));                                          \
  return v

namespace rl::ptx {

// --- the CTA's place ---------------------------------------------------------
// A launch without a cluster shape is a 1x1x1 cluster: rank 0 of 1, cluster
// id = blockIdx.

// %cluster_ctarank: this CTA's rank in its cluster, 0 .. %cluster_nctarank - 1
// (the cluster's CTAs in x-fastest order).
RL_PTX_FN std::uint32_t cluster_ctarank() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("%cluster_ctarank");
  return rl::emu::cluster::cta_rank();
#elif RL_PTX_CLUSTER
  RL_PTX_CLUSTER_SREG("cluster_ctarank");
#else
  RL_PTX_UNSUPPORTED();
  return 0;
#endif
}

// %cluster_nctarank: the CTAs in this cluster.
RL_PTX_FN std::uint32_t cluster_nctarank() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("%cluster_nctarank");
  return rl::emu::cluster::cta_count();
#elif RL_PTX_CLUSTER
  RL_PTX_CLUSTER_SREG("cluster_nctarank");
#else
  RL_PTX_UNSUPPORTED();
  return 1;
#endif
}

// %cluster_ctaid: this CTA's position in its cluster.
RL_PTX_FN uint3 cluster_ctaid() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("%cluster_ctaid");
  return rl::emu::cluster::cta_id();
#elif RL_PTX_CLUSTER
  RL_PTX_CLUSTER_SREG3("cluster_ctaid");
#else
  RL_PTX_UNSUPPORTED();
  return uint3{0, 0, 0};
#endif
}

// %cluster_nctaid: the cluster's shape in CTAs.
RL_PTX_FN uint3 cluster_nctaid() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("%cluster_nctaid");
  return rl::emu::cluster::shape();
#elif RL_PTX_CLUSTER
  RL_PTX_CLUSTER_SREG3("cluster_nctaid");
#else
  RL_PTX_UNSUPPORTED();
  return uint3{1, 1, 1};
#endif
}

// %clusterid: this cluster's position in the grid (in clusters).
RL_PTX_FN uint3 clusterid() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("%clusterid");
  return rl::emu::cluster::cluster_id();
#elif RL_PTX_CLUSTER
  RL_PTX_CLUSTER_SREG3("clusterid");
#else
  RL_PTX_UNSUPPORTED();
  return uint3{0, 0, 0};
#endif
}

// %nclusterid: the grid's shape in clusters.
RL_PTX_FN uint3 nclusterid() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("%nclusterid");
  return rl::emu::cluster::cluster_count();
#elif RL_PTX_CLUSTER
  RL_PTX_CLUSTER_SREG3("nclusterid");
#else
  RL_PTX_UNSUPPORTED();
  return uint3{1, 1, 1};
#endif
}

// --- barrier.cluster ---------------------------------------------------------
// Each thread arrives, then waits until every non-exited thread of the
// cluster has arrived; arrive and wait alternate.  .aligned: every thread of
// the warp executes the same barrier.cluster instruction (the wrappers are
// for warp-uniform code).  Between a write to another CTA's shared memory
// and that CTA's read of it, a release arrive and an acquire wait order them.

// barrier.cluster.arrive.release.aligned: this thread's earlier memory
// accesses happen before every wait of this phase returns.
RL_PTX_FN void barrier_cluster_arrive() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("barrier.cluster.arrive.release");
  rl::emu::cluster::barrier_arrive(true);
#elif RL_PTX_CLUSTER
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// barrier.cluster.arrive.relaxed.aligned: an arrival that orders nothing (a
// CTA that only signals "I have started", e.g. before using another CTA's
// mbarriers).
RL_PTX_FN void barrier_cluster_arrive_relaxed() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("barrier.cluster.arrive.relaxed");
  rl::emu::cluster::barrier_arrive(false);
#elif RL_PTX_CLUSTER
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// barrier.cluster.wait.acquire.aligned: returns once every non-exited thread
// of the cluster has arrived in this thread's phase; what release arrivals
// ordered before them is visible after it.
RL_PTX_FN void barrier_cluster_wait() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("barrier.cluster.wait.acquire");
  rl::emu::cluster::barrier_wait();
#elif RL_PTX_CLUSTER
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// Both: the cluster-wide __syncthreads (cooperative_groups' cluster.sync()).
RL_PTX_FN void barrier_cluster_sync() {
  barrier_cluster_arrive();
  barrier_cluster_wait();
}

// fence.acq_rel.cluster: orders this thread's memory accesses at cluster
// scope (with a flag in another CTA's shared memory, say).
RL_PTX_FN void fence_acq_rel_cluster() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("fence.acq_rel.cluster");
  __threadfence();  // a full fence here; racecheck's fence-then-atomic model with it
#elif RL_PTX_CLUSTER
  asm volatile("fence.acq_rel.cluster;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// --- distributed shared memory -----------------------------------------------

// mapa.u64 (generic addresses): the same variable of shared memory in CTA
// `rank` of this cluster; ordinary loads and stores through the result reach
// that CTA's shared memory (cooperative_groups' cluster.map_shared_rank).
template <typename T>
RL_PTX_FN T* map_shared_rank(T* p, [[maybe_unused]] std::uint32_t rank) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("mapa");
  return static_cast<T*>(rl::emu::cluster::map_shared(p, rank));
#elif RL_PTX_CLUSTER
  std::uint64_t mapped;
  asm volatile("mapa.u64 %0, %1, %2;\n"
               : "=l"(mapped)
               : "l"(reinterpret_cast<std::uint64_t>(p)), "r"(rank));
  return reinterpret_cast<T*>(mapped);
#else
  RL_PTX_UNSUPPORTED();
  return p;
#endif
}

// mapa.shared::cluster.u32: the shared::cluster address of the byte at
// shared-window address `address` (shared_address(p)) in CTA `rank`.
RL_PTX_FN std::uint32_t mapa_shared_cluster([[maybe_unused]] std::uint32_t address,
                                            [[maybe_unused]] std::uint32_t rank) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("mapa.shared::cluster");
  return rl::emu::cluster::map_shared_address(address, rank);
#elif RL_PTX_CLUSTER
  std::uint32_t mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(mapped) : "r"(address), "r"(rank));
  return mapped;
#else
  RL_PTX_UNSUPPORTED();
  return 0;
#endif
}

// ld.shared::cluster.u32: a 32-bit load from a shared::cluster address.
RL_PTX_FN std::uint32_t ld_shared_cluster_u32([[maybe_unused]] std::uint32_t address) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("ld.shared::cluster");
  return *static_cast<const std::uint32_t*>(rl::emu::cluster::cluster_pointer(address, 4));
#elif RL_PTX_CLUSTER
  std::uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(v) : "r"(address) : "memory");
  return v;
#else
  RL_PTX_UNSUPPORTED();
  return 0;
#endif
}

// st.shared::cluster.u32: a 32-bit store to a shared::cluster address.
RL_PTX_FN void st_shared_cluster_u32([[maybe_unused]] std::uint32_t address,
                                     [[maybe_unused]] std::uint32_t value) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("st.shared::cluster");
  *static_cast<std::uint32_t*>(rl::emu::cluster::cluster_pointer(address, 4)) = value;
#elif RL_PTX_CLUSTER
  asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(address), "r"(value) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mbarrier.arrive.release.cluster.shared::cluster.b64 _, [address]: one
// arrival on the mbarrier at a shared::cluster address, usually another
// CTA's (mapa_shared_cluster of the barrier's shared_address): the consumer
// that frees a stage of a multicast pipeline tells each producer CTA so.
// Release at cluster scope: this thread's earlier accesses happen before
// the phase completes for that CTA's waiters.
RL_PTX_FN void mbarrier_arrive_cluster([[maybe_unused]] std::uint32_t address) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("mbarrier.arrive.release.cluster.shared::cluster");
  rl::emu::cluster::mbarrier_arrive_remote(address);
#elif RL_PTX_CLUSTER
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(address)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// .multicast::cluster [dst], [map, {col, row}], [bar], cta_mask: tma_load_2d's
// box, landing at dst's offset in the shared memory of every CTA of the
// cluster whose rank bit is set in cta_mask; the box's bytes complete on the
// mbarrier at bar's offset in each of those CTAs (each expects them).  The
// shared operand of a 2-CTA GEMM is loaded once for both CTAs this way.
// Not on sm_120/121: ptxas 13.0 warns that multicast is slow there and
// calls a system routine for it (CALL.ABS.NOINC and a stack frame), so the
// wrapper traps there, and the emulator refuses it at RL_EMU_CC=120 and 121.
RL_PTX_FN void tma_load_2d_multicast([[maybe_unused]] void* dst,
                                     [[maybe_unused]] const TensorMap* map,
                                     [[maybe_unused]] std::int32_t col,
                                     [[maybe_unused]] std::int32_t row,
                                     [[maybe_unused]] std::uint64_t* bar,
                                     [[maybe_unused]] std::uint16_t cta_mask) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_CLUSTER("cp.async.bulk.tensor.2d .multicast::cluster");
  if (rl::emu::compute_capability() >= 120)
    emu_detail::refuse("cp.async.bulk.tensor .multicast::cluster",
                       "for sm_90a and sm_100a here (sm_120 emulates it in software)",
                       "RL_EMU_CC=90, 100 or 103 emulates a device that has it");
  const std::int32_t coords[2] = {col, row};
  rl::emu::cluster::tma_load_multicast(dst, *map, coords, 2, bar, cta_mask);
#elif RL_PTX_CLUSTER && __CUDA_ARCH__ < 1200
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(col), "r"(row), "r"(shared_address(bar)),
      "h"(cta_mask)
      : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx

#undef RL_PTX_CLUSTER_SREG
#undef RL_PTX_CLUSTER_SREG3
#undef RL_PTX_CLUSTER
#if defined(RL_PTX_REQUIRE_CLUSTER)
#undef RL_PTX_REQUIRE_CLUSTER
#endif
