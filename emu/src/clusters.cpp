// Thread block clusters: the launch's cluster shape, the CTA's place in its
// cluster, barrier.cluster, distributed shared memory and remote mbarrier
// arrivals (rl/emu/cluster.hpp; the runner starts a cluster's CTAs together
// in block_runner.cpp).
#include "clusters.hpp"

#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "block_reports.hpp"
#include "block_state.hpp"
#include "hopper_shared_window.hpp"
#include "rl/emu/arch.hpp"
#include "rl/emu/cluster.hpp"
#include "rl/emu/counters.hpp"
#include "rl/emu/hopper.hpp"
#include "sanitizer_hooks.hpp"

namespace rl::emu::detail {
namespace {

// Kernels allowed clusters of more than 8 blocks (cudaFuncSetAttribute).
std::mutex g_non_portable_mutex;
std::unordered_map<const void*, bool>& non_portable_kernels() {
  static std::unordered_map<const void*, bool> kernels;
  return kernels;
}

bool non_portable_allowed(const void* kernel) {
  std::lock_guard lock(g_non_portable_mutex);
  const auto it = non_portable_kernels().find(kernel);
  return it != non_portable_kernels().end() && it->second;
}

// The CUDA programming guide: 8 blocks is the portable cluster size, 16 the
// most a Hopper or Blackwell allows with the non-portable opt-in.
constexpr unsigned kPortableClusterBlocks = 8;
constexpr unsigned kMaxClusterBlocks = 16;

// A window address's CTA: 0 names the running CTA (its own shared::cta
// addresses), r + 1 names CTA r (mapa's results).
constexpr unsigned kRankShift = 24;
constexpr std::uint32_t kOffsetMask = (1U << kRankShift) - 1;

Cluster& running_cluster() {
  return *current_thread().block->cluster;
}

unsigned live_threads(const Cluster& c) {
  unsigned live = 0;
  for (unsigned r = 0; r < c.size; ++r) live += c.blocks[r].live;
  return live;
}

void complete_phase(Cluster& c) {
  ++c.generation;
  c.outstanding = live_threads(c);
  wake_cluster_waiters(&c);
}

std::string describe_cluster_wait(const void* object) {
  const auto& c = *static_cast<const Cluster*>(object);
  return "barrier.cluster.wait (cluster phase " + std::to_string(c.generation) + ": " +
         std::to_string(c.outstanding) + " live threads of the cluster's " +
         std::to_string(c.size) + " CTAs have not arrived)";
}

[[noreturn]] void illegal_address(const std::string& what) {
  fail_current_thread(cudaErrorIllegalAddress, what);
}

Block& cluster_block(Cluster& c, unsigned rank, const char* instruction) {
  if (rank >= c.size)
    illegal_address(std::string(instruction) + " names CTA rank " + std::to_string(rank) +
                    " of a cluster of " + std::to_string(c.size));
  return c.blocks[rank];
}

// The rank of the CTA of `c` whose dynamic shared memory holds p, else c.size.
unsigned cta_holding(const Cluster& c, const void* p) {
  const std::size_t bytes = c.blocks[0].job->spec.shared_bytes;
  const auto* host = static_cast<const unsigned char*>(p);
  for (unsigned r = 0; r < c.size; ++r) {
    const auto* base = static_cast<const unsigned char*>(c.blocks[r].dynamic_shared);
    if (host >= base && host < base + bytes) return r;
  }
  return c.size;
}

// CTA `rank` for a distributed shared memory access by the running thread
// (ld/st.shared::cluster, a remote arrive, a multicast).  Another CTA's
// memory is reachable only once every CTA has started (the CUDA guide asks
// for cluster.sync() first: the first cluster phase has completed) and until
// it exits (its threads are gone, and with them its shared memory).
Block& reachable_cta(Cluster& c, unsigned rank, const char* instruction) {
  Block& target = cluster_block(c, rank, instruction);
  if (&target == current_thread().block) return target;
  const std::string who =
      std::string(instruction) + " reaches CTA " + std::to_string(rank) + "'s shared memory ";
  if (c.generation == 0)
    illegal_address(who +
                    "before the cluster's first barrier.cluster phase completed (cluster.sync() "
                    "first: a CTA of the cluster may not have started)");
  if (target.live == 0) illegal_address(who + "after that CTA exited (its shared memory is gone)");
  return target;
}

// The cluster that deadlock reports describe (DescribedCluster).
thread_local const Cluster* tl_described = nullptr;

}  // namespace

DescribedCluster::DescribedCluster(const Cluster& c) {
  tl_described = &c;
}
DescribedCluster::~DescribedCluster() {
  tl_described = nullptr;
}

void require_own_cta(const void* p, const char* instruction) {
  if (tl_thread == nullptr) return;  // host code (unit tests)
  const Block& b = *tl_thread->block;
  const Cluster& c = *b.cluster;
  if (c.size == 1) return;
  const unsigned r = cta_holding(c, p);
  if (r == c.size || r == b.cluster_rank) return;
  illegal_address(std::string(instruction) + " (a .shared::cta form) on " + cluster_location(p) +
                  ", another CTA's: use the .shared::cluster form (mapa) for another CTA's "
                  "shared memory");
}

std::string cluster_location(const void* p) {
  const Cluster* c = tl_thread != nullptr ? tl_thread->block->cluster : tl_described;
  if (c == nullptr || c->size == 1) return {};
  const unsigned r = cta_holding(*c, p);
  if (r == c->size) return {};
  const auto offset = static_cast<const unsigned char*>(p) -
                      static_cast<const unsigned char*>(c->blocks[r].dynamic_shared);
  return "offset " + hex(static_cast<unsigned>(offset)) + " of CTA " + std::to_string(r) +
         "'s shared memory";
}

cudaError_t allow_non_portable_clusters(const void* kernel, int value) {
  if (kernel == nullptr) return cudaErrorInvalidDeviceFunction;
  if (value != 0 && value != 1) return cudaErrorInvalidValue;
  std::lock_guard lock(g_non_portable_mutex);
  non_portable_kernels()[kernel] = value == 1;
  return cudaSuccess;
}

cudaError_t check_cluster(const LaunchSpec& spec) {
  const dim3 c = spec.cluster;
  if (c.x == 1 && c.y == 1 && c.z == 1) return cudaSuccess;
  const auto refuse = [&](cudaError_t error, const char* why) {
    std::fprintf(stderr, "rl::emu: kernel %s: cluster %ux%ux%u refused: %s\n",
                 kernel_name(spec).c_str(), c.x, c.y, c.z, why);
    return error;
  };
  if (rl::emu::compute_capability() < 90)
    return refuse(cudaErrorNotSupported, "clusters need compute capability 9.0 (RL_EMU_CC)");
  const std::uint64_t blocks = std::uint64_t{c.x} * c.y * c.z;
  if (blocks == 0 || spec.grid.x % c.x != 0 || spec.grid.y % c.y != 0 || spec.grid.z % c.z != 0)
    return refuse(cudaErrorInvalidClusterSize, "the grid is not a multiple of the cluster shape");
  if (blocks > kMaxClusterBlocks ||
      (blocks > kPortableClusterBlocks && !non_portable_allowed(spec.kernel)))
    return refuse(cudaErrorInvalidClusterSize,
                  "more than 8 blocks needs cudaFuncAttributeNonPortableClusterSizeAllowed, "
                  "more than 16 never launch");
  // A static __shared__ object is a thread_local of the host worker, which
  // runs every CTA of the cluster: they would share it.
  if (static_shared_bytes(spec.kernel) > 0)
    return refuse(cudaErrorNotSupported,
                  "the kernel declares static __shared__ memory, which the emulator cannot give "
                  "each CTA of a cluster; use dynamic shared memory (RL_DYNAMIC_SHARED)");
  return cudaSuccess;
}

void cluster_thread_exited(Thread& t) {
  Block& b = *t.block;
  Cluster& c = *b.cluster;
  if (b.aborting) {
    // A failing thread unwinds and exits at once, before the pass runs on:
    // the first such exit is the cluster's first failure.
    if (c.first_failed == nullptr && !b.failure.empty()) c.first_failed = &b;
    return;
  }
  const bool arrived = t.cluster_until == c.generation + 1;
  if (!arrived && --c.outstanding == 0) complete_phase(c);
}

void wake_cluster_waiters(const void* object) {
  const RaceIgnored bookkeeping;
  if (tl_thread == nullptr) return;  // host code (unit tests) has nobody to wake
  Cluster& c = *tl_thread->block->cluster;
  for (unsigned r = 0; r < c.size; ++r) {
    Block& b = c.blocks[r];
    for (unsigned i = 0; i < b.count && b.object_waiters > 0; ++i) {
      Thread& u = b.threads[i];
      if ((*u.state) != State::object || u.wait_object != object) continue;
      (*u.state) = State::runnable;
      --b.object_waiters;
    }
  }
}

}  // namespace rl::emu::detail

namespace rl::emu::cluster {
namespace {

using detail::Block;
using detail::Cluster;

const Block& running_block() {
  return *detail::current_thread().block;
}

uint3 divide(const uint3& a, const dim3& b) {
  return uint3{a.x / b.x, a.y / b.y, a.z / b.z};
}

}  // namespace

unsigned cta_rank() {
  return running_block().cluster_rank;
}
unsigned cta_count() {
  return running_block().cluster->size;
}
uint3 cta_id() {
  const Block& b = running_block();
  const dim3 s = b.job->cluster;
  return uint3{b.index.x % s.x, b.index.y % s.y, b.index.z % s.z};
}
uint3 shape() {
  const dim3 s = running_block().job->cluster;
  return uint3{s.x, s.y, s.z};
}
uint3 cluster_id() {
  const Block& b = running_block();
  return divide(b.index, b.job->cluster);
}
uint3 cluster_count() {
  const Block& b = running_block();
  const dim3 g = b.job->spec.grid;
  return divide(uint3{g.x, g.y, g.z}, b.job->cluster);
}

void barrier_arrive(bool release) {
  const detail::RaceIgnored bookkeeping;
  detail::Thread& t = detail::current_thread();
  Cluster& c = *t.block->cluster;
  if (t.cluster_until != 0)
    detail::fail_current_thread(cudaErrorLaunchFailure,
                                "barrier.cluster.arrive twice without a barrier.cluster.wait");
  if (release) detail::race_release(c.race_phase(c.generation));
  t.cluster_until = c.generation + 1;
  if (--c.outstanding == 0) detail::complete_phase(c);
}

void barrier_wait() {
  const detail::RaceIgnored bookkeeping;
  detail::Thread& t = detail::current_thread();
  Cluster& c = *t.block->cluster;
  if (t.cluster_until == 0)
    detail::fail_current_thread(cudaErrorLaunchFailure,
                                "barrier.cluster.wait without a barrier.cluster.arrive before it");
  while (c.generation < t.cluster_until) detail::wait_on(&c, &detail::describe_cluster_wait);
  detail::race_acquire(c.race_phase(t.cluster_until - 1));
  t.cluster_until = 0;
}

void* map_shared(const void* p, unsigned rank) {
  const detail::RaceIgnored bookkeeping;
  Cluster& c = detail::running_cluster();
  const unsigned holder = detail::cta_holding(c, p);
  if (holder == c.size)
    detail::illegal_address("mapa of a pointer into no CTA's dynamic shared memory of the cluster");
  Block& target = detail::cluster_block(c, rank, "mapa");
  return static_cast<unsigned char*>(target.dynamic_shared) +
         (static_cast<const unsigned char*>(p) -
          static_cast<const unsigned char*>(c.blocks[holder].dynamic_shared));
}

std::uint32_t map_shared_address(std::uint32_t address, unsigned rank) {
  detail::cluster_block(detail::running_cluster(), rank, "mapa.shared::cluster");
  // The offset: an own-CTA address is one (dynamic shared memory is at 0).
  return ((rank + 1U) << detail::kRankShift) | (address & detail::kOffsetMask);
}

void* cluster_pointer(std::uint32_t address, std::size_t bytes) {
  if (address % bytes != 0)
    detail::fail_current_thread(cudaErrorMisalignedAddress,
                                "misaligned address: shared::cluster address " +
                                    detail::hex(address) + " is not " + std::to_string(bytes) +
                                    "-byte aligned");
  const detail::RaceIgnored bookkeeping;
  const Block& self = running_block();
  const unsigned hi = address >> detail::kRankShift;
  // An own shared-window address: static __shared__ objects (a cluster of
  // one only: clustered launches refuse them) lie in slots after the dynamic
  // memory's window; everything below is the dynamic memory, bounds-checked
  // as a peer's.
  if (hi == 0 && self.cluster->size == 1) {
    hopper::impl::Window& w = hopper::impl::window();
    if (address >= w.first_slot()) return hopper::impl::pointer_in(w, address);
  }
  const unsigned rank = hi == 0 ? self.cluster_rank : hi - 1;
  Block& target = detail::reachable_cta(detail::running_cluster(), rank, "ld/st.shared::cluster");
  const std::uint32_t offset = address & detail::kOffsetMask;
  if (offset + bytes > target.job->spec.shared_bytes)
    detail::illegal_address("shared::cluster address " + detail::hex(address) +
                            " lies outside CTA " + std::to_string(rank) + "'s " +
                            std::to_string(target.job->spec.shared_bytes) +
                            " bytes of dynamic shared memory");
  return static_cast<unsigned char*>(target.dynamic_shared) + offset;
}

void mbarrier_arrive_remote(std::uint32_t address) {
  hopper::impl::mbarrier_arrive_any_cta(static_cast<std::uint64_t*>(cluster_pointer(address, 8)));
}

void tma_load_multicast(void* dst, const hopper::TensorMap& map, const std::int32_t* coords,
                        std::uint32_t rank, std::uint64_t* bar, std::uint16_t cta_mask) {
  Cluster& c = detail::running_cluster();
  if (cta_mask == 0 || (c.size < 16 && (cta_mask >> c.size) != 0))
    detail::illegal_address("cp.async.bulk.tensor .multicast::cluster with CTA mask " +
                            detail::hex(cta_mask) + " in a cluster of " + std::to_string(c.size));
  detail::require_own_cta(dst, "cp.async.bulk.tensor .multicast::cluster's destination");
  detail::require_own_cta(bar, "cp.async.bulk.tensor .multicast::cluster's mbarrier");
  // The issuer's window address, the same offset in every CTA: the swizzle
  // phase comes from it, not from where each CTA's memory lies on the host.
  const std::uint32_t window = hopper::shared_address(dst);
  std::uint64_t read = 0;  // the same box for every CTA: L2 reads it once
  for (unsigned r = 0; r < c.size; ++r) {
    if (((cta_mask >> r) & 1U) == 0) continue;
    detail::reachable_cta(c, r, "cp.async.bulk.tensor .multicast::cluster");
    read = hopper::impl::tma_load_at(map_shared(dst, r), window, map, coords, rank,
                                     static_cast<std::uint64_t*>(map_shared(bar, r)));
  }
  count_global_load(read);
}

}  // namespace rl::emu::cluster
