// Thread block clusters on the emulator (sm_90 and later): the CTA's place in
// its cluster, barrier.cluster, distributed shared memory (mapa and
// ld/st.shared::cluster) and arrivals on another CTA's mbarrier, behind the
// rl::ptx wrappers of rl/ptx_sm90_cluster.hpp.  Semantics: emu/docs/hopper.md,
// "Clusters".
//
// The CTAs of one cluster run together on one host worker, their threads in
// one schedule, so one CTA may wait for another.  A launch without a cluster
// shape runs each CTA as a cluster of one, as the hardware does (PTX ISA:
// "a CTA not launched in a cluster is an implicit 1x1x1 cluster").
//
// Shared::cluster window addresses (32 bits): a CTA's own shared-window
// addresses (rl/emu/hopper.hpp) name its own shared memory; mapa to CTA r
// gives (r + 1) << 24 plus the offset in CTA r's dynamic shared memory.  The
// hardware's encoding is not documented, only that mapa's result is the
// address to use; a kernel that computes cluster addresses itself is not
// portable, here or there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rl/emu/hopper.hpp"
#include "rl/emu/types.hpp"

namespace rl::emu::cluster {

// %cluster_ctarank, %cluster_nctarank: the CTA's linear rank in its cluster
// (x fastest) and the cluster's CTA count.
unsigned cta_rank();
unsigned cta_count();
// %cluster_ctaid, %cluster_nctaid, %clusterid, %nclusterid.
uint3 cta_id();
uint3 shape();
uint3 cluster_id();
uint3 cluster_count();

// barrier.cluster.arrive{.release,.relaxed}: this thread arrives in the
// cluster barrier's current phase; `release` orders its earlier memory
// accesses before every thread's wait of that phase.  Arriving twice without
// a wait in between fails the launch.
void barrier_arrive(bool release);
// barrier.cluster.wait{.acquire}: sleeps until every non-exited thread of the
// cluster has arrived in the phase of this thread's arrival.  A wait without
// an arrival before it fails the launch.
void barrier_wait();

// mapa.u64 (generic): the address of the same byte of dynamic shared memory
// in CTA `rank` of the cluster, for a pointer into any CTA's dynamic shared
// memory of this cluster.  A rank outside the cluster or a pointer into no
// CTA's dynamic shared memory fails the launch with cudaErrorIllegalAddress.
void* map_shared(const void* p, unsigned rank);
// mapa.shared::cluster.u32: the shared::cluster window address in CTA `rank`
// of the byte at window address `address` (its own CTA's, or a cluster
// address); refused as map_shared.
std::uint32_t map_shared_address(std::uint32_t address, unsigned rank);
// The host pointer of `bytes` bytes at shared::cluster window address
// `address`, for ld/st.shared::cluster: out of the window of the CTA it
// names fails the launch with cudaErrorIllegalAddress, a misaligned address
// with cudaErrorMisalignedAddress.
void* cluster_pointer(std::uint32_t address, std::size_t bytes);

// mbarrier.arrive.release.cluster.shared::cluster.b64 _, [address]: one
// arrival on the mbarrier at a shared::cluster address (another CTA's, from
// mapa); wakes that CTA's threads waiting on it.
void mbarrier_arrive_remote(std::uint32_t address);

// cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes
// .multicast::cluster [dst], [map, coords], [bar], cta_mask: the box lands at
// dst's offset in the dynamic shared memory of every CTA whose rank bit is
// set in cta_mask, and its bytes complete on the mbarrier at bar's offset in
// each of them (hopper::tma_load, once per CTA; the load log records each).
// dst and bar lie in the issuing CTA's dynamic shared memory; a mask bit at
// or above the cluster size, or an empty mask, fails the launch with
// cudaErrorIllegalAddress.
void tma_load_multicast(void* dst, const hopper::TensorMap& map, const std::int32_t* coords,
                        std::uint32_t rank, std::uint64_t* bar, std::uint16_t cta_mask);

}  // namespace rl::emu::cluster
