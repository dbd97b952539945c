// The emulator's counts (rl/emu/counters.hpp): one accumulator slot per host
// thread that executes kernel code, summed when read.  A hook adds to its own
// thread's slot, so workers do not contend for a cache line; the launch's and
// the synchronisation's hand-offs order the adds before read_counts and
// reset_counts before the adds.  Everything is a relaxed atomic and no mutex
// is taken: racecheck (TSan) sees no race here and no happens-before edge
// between CUDA threads that CUDA would not give (a lock would hide races).
#include "rl/emu/counters.hpp"

#include "block_state.hpp"
#include "sanitizer_hooks.hpp"

#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rl::emu {
namespace {

// The tensor roles an emulated MMA can be counted under (a subset of
// roofline's counter roles, roofline/src/counter_metrics.cpp).
constexpr const char* kTensorRoles[] = {
    "tensor_fp16_f32",    "tensor_fp16_f16",    "tensor_bf16",    "tensor_tf32",
    "tensor_fp64",        "tensor_int8",        "tensor_fp8_f32", "tensor_fp8_f16",
    "tensor_fp6_fp4_f32", "tensor_fp6_fp4_f16", "tensor_fp4"};
constexpr std::size_t kRoleCount = sizeof kTensorRoles / sizeof kTensorRoles[0];

struct alignas(64) Slot {
  std::atomic<std::uint64_t> load_bytes{0};
  std::atomic<std::uint64_t> store_bytes{0};
  std::atomic<std::uint64_t> tensor_ops[kRoleCount] = {};
  std::atomic<bool> owned{false};
};

// A thread claims a free slot at its first count and frees it when it ends;
// the counts stay in the slot (summed until the next reset) and a later
// thread adds to them.  More threads alive at once than slots share the last
// one (fetch_add keeps that exact, only slower).  Never destroyed: worker
// threads end during static destruction and still free their slots.
constexpr std::size_t kSlots = 256;
struct Registry {
  Slot slots[kSlots];
  std::atomic<bool> on{false};
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

class SlotHolder {
 public:
  SlotHolder() {
    Registry& r = registry();
    for (std::size_t i = 0; i + 1 < kSlots && slot_ == nullptr; ++i)
      if (!r.slots[i].owned.exchange(true, std::memory_order_relaxed)) slot_ = &r.slots[i];
    if (slot_ == nullptr) slot_ = &r.slots[kSlots - 1];  // shared, never owned
  }
  ~SlotHolder() { slot_->owned.store(false, std::memory_order_relaxed); }
  SlotHolder(const SlotHolder&) = delete;
  SlotHolder& operator=(const SlotHolder&) = delete;
  Slot& slot() { return *slot_; }

 private:
  Slot* slot_ = nullptr;
};

// Fibers move between host threads only between instructions, and a hook
// never suspends, so the slot found here is the running host thread's.
Slot& own_slot() {
  thread_local SlotHolder holder;
  return holder.slot();
}

bool counting() {
  return registry().on.load(std::memory_order_relaxed);
}

void add(std::atomic<std::uint64_t>& counter, std::uint64_t amount) {
  counter.fetch_add(amount, std::memory_order_relaxed);
}

std::size_t role_index(const char* role) {
  for (std::size_t i = 0; i < kRoleCount; ++i)
    if (std::strcmp(kTensorRoles[i], role) == 0) return i;
  std::fprintf(stderr, "rl::emu: count_tensor_ops: '%s' is not a tensor counter role\n", role);
  std::abort();
}

// ---- is an address shared memory? (the address hooks, while counting) ----------
// Dynamic shared memory is the block's allocation (each CTA of a cluster has
// its own; a peer's is reached through mapa).  A static __shared__ object is
// a `static thread_local` (rl/emu/types.hpp), so it lies in the host worker's
// TLS block of the module holding the kernel, whichever function of the
// module declares it; kernel code has no other thread_locals.  That block is
// found once per kernel a host thread runs (dl_iterate_phdr) and kept in a
// thread_local: the hot path takes no lock.

struct ModuleTls {
  const void* kernel = nullptr;  // LaunchSpec::kernel it was found for
  const unsigned char* begin = nullptr;
  const unsigned char* end = nullptr;
  bool settled = false;  // false: its TLS not yet allocated here (dlopen()ed), ask again
};

// The calling host thread's TLS block of the module whose loaded segments
// hold `code`: empty (settled) where that module has none or none holds it.
ModuleTls module_tls(const void* code) {
  struct Search {
    std::uintptr_t code;
    ModuleTls found;
  } search{reinterpret_cast<std::uintptr_t>(code), {}};
  search.found.kernel = code;
  search.found.settled = true;  // no module holds it (no kernel pointer): nothing to find
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        bool holds = false;
        std::size_t tls_bytes = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && s->code >= start && s->code < start + ph.p_memsz)
            holds = true;
          if (ph.p_type == PT_TLS) tls_bytes = ph.p_memsz;
        }
        if (!holds) return 0;
        const auto* block = static_cast<const unsigned char*>(info->dlpi_tls_data);
        s->found.settled = tls_bytes == 0 || block != nullptr;
        if (block != nullptr) {
          s->found.begin = block;
          s->found.end = block + tls_bytes;
        }
        return 1;
      },
      &search);
  return search.found;
}

bool in_shared_memory(const void* address) {
  const detail::Thread* thread = detail::tl_thread;
  if (thread == nullptr) return false;  // host code: no shared memory
  const detail::Block& block = *thread->block;
  const auto* p = static_cast<const unsigned char*>(address);
  const std::size_t dynamic_bytes = block.job->spec.shared_bytes;
  const detail::Cluster& cluster = *block.cluster;
  for (unsigned r = 0; r < cluster.size; ++r) {
    const auto* base = static_cast<const unsigned char*>(cluster.blocks[r].dynamic_shared);
    if (p >= base && p < base + dynamic_bytes) return true;
  }
  constinit thread_local ModuleTls tls;
  const void* kernel = block.job->spec.kernel;
  if (tls.kernel != kernel || !tls.settled) tls = module_tls(kernel);
  return p >= tls.begin && p < tls.end;
}

}  // namespace

void reset_counts() {
  Registry& r = registry();
  for (Slot& s : r.slots) {
    s.load_bytes.store(0, std::memory_order_relaxed);
    s.store_bytes.store(0, std::memory_order_relaxed);
    for (auto& ops : s.tensor_ops) ops.store(0, std::memory_order_relaxed);
  }
  r.on.store(true, std::memory_order_relaxed);
}

void stop_counting() {
  registry().on.store(false, std::memory_order_relaxed);
}

Counts read_counts() {
  const Registry& r = registry();
  std::uint64_t load = 0, store = 0, ops[kRoleCount] = {};
  for (const Slot& s : r.slots) {
    load += s.load_bytes.load(std::memory_order_relaxed);
    store += s.store_bytes.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < kRoleCount; ++i)
      ops[i] += s.tensor_ops[i].load(std::memory_order_relaxed);
  }
  Counts counts;
  counts.global_load_bytes = static_cast<double>(load);
  counts.global_store_bytes = static_cast<double>(store);
  for (std::size_t i = 0; i < kRoleCount; ++i)
    if (ops[i] != 0) counts.tensor_ops[kTensorRoles[i]] = static_cast<double>(ops[i]);
  return counts;
}

// racecheck: a host thread's slot (its thread_local, and the lazy
// initialisation's guard) is touched by every fiber that thread runs, CUDA
// threads TSan tells apart: emulator bookkeeping, hidden from it.
void count_global_load(std::size_t bytes) {
  if (!counting()) return;
  const detail::RaceIgnored bookkeeping;
  add(own_slot().load_bytes, bytes);
}

void count_global_store(std::size_t bytes) {
  if (!counting()) return;
  const detail::RaceIgnored bookkeeping;
  add(own_slot().store_bytes, bytes);
}

void count_generic_load(const void* address, std::size_t bytes) {
  if (!counting()) return;
  const detail::RaceIgnored bookkeeping;
  if (!in_shared_memory(address)) add(own_slot().load_bytes, bytes);
}

void count_generic_store(const void* address, std::size_t bytes) {
  if (!counting()) return;
  const detail::RaceIgnored bookkeeping;
  if (!in_shared_memory(address)) add(own_slot().store_bytes, bytes);
}

void count_tensor_ops(const char* role, double operations) {
  if (!counting()) return;
  const detail::RaceIgnored bookkeeping;
  add(own_slot().tensor_ops[role_index(role)], static_cast<std::uint64_t>(operations));
}

}  // namespace rl::emu
