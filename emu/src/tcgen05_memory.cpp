// Tensor memory of a CTA: its lifetime on the host worker, allocation
// (tcgen05.alloc / dealloc / relinquish_alloc_permit), checked cell access
// and the check that a CTA frees what it allocated.  PTX ISA 9.7.16.1
// "Tensor Memory" (9.7.16.1.1 Addressing, 9.7.16.1.2 Allocation) and 9.7.16.7.1
// "tcgen05.alloc, tcgen05.dealloc, tcgen05.relinquish_alloc_permit".
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "block_reports.hpp"
#include "block_state.hpp"
#include "rl/emu/warp.hpp"
#include "tcgen05_state.hpp"

namespace rl::emu::tcgen05 {
namespace internal {
namespace {

// The running CTA's state on this host worker, and which CTA it belongs to.
struct WorkerCta {
  Cta state;
  detail::Block* block = nullptr;
  const detail::Job* job = nullptr;
  uint3 index{};
  void* dynamic_shared = nullptr;
  unsigned threads_to_exit = 0;  // threads whose exit hook has not run yet
};

WorkerCta& worker_cta() {
  thread_local WorkerCta w;
  return w;
}

}  // namespace
}  // namespace internal
}  // namespace rl::emu::tcgen05

namespace rl::emu::tcgen05 {
namespace internal {
namespace {

constexpr unsigned kOwnSlot = rl::emu::kTcgen05Slot;

// The CTA's last thread has exited: tensor memory still allocated is the
// kernel's error (9.7.16.1.2: "All of the Tensor Memory that was allocated in
// a kernel, must be explicitly deallocated before the kernel exits").
void end_of_cta(WorkerCta& w) {
  detail::Block& b = *w.block;
  if (!b.aborting && !w.state.allocations.empty()) {
    if (b.failure.empty()) {
      b.failure = "tensor memory not freed when the CTA exited: " + allocations_text(w.state) +
                  "; every tcgen05.alloc needs its tcgen05.dealloc before the kernel exits "
                  "(PTX ISA 9.7.16.1.2)";
      b.error = cudaErrorLaunchFailure;
    }
    b.aborting = true;
  }
  w = WorkerCta{};
}

void on_thread_exit(void* p) {
  const detail::RaceIgnored bookkeeping;
  auto& w = *static_cast<WorkerCta*>(p);
  if (w.threads_to_exit > 0 && --w.threads_to_exit == 0) end_of_cta(w);
}

// Hooks the exit of every live thread of `b`, when warp.hpp has our slot (a
// template, so the slot index is not instantiated when it has not).
template <unsigned Slot = kOwnSlot>
void hook_thread_exits(WorkerCta& w, detail::Block& b) {
  if constexpr (Slot < kThreadSlots) {
    for (unsigned r = 0; r < b.count; ++r) {
      if (b.states[r] == detail::State::exited) continue;
      ThreadSlot* slots = b.threads[r].slot;
      slots[Slot] = ThreadSlot{&w, &on_thread_exit};
      ++w.threads_to_exit;
    }
  }
}

}  // namespace

Cta& cta() {
  const detail::RaceIgnored bookkeeping;
  detail::Thread& t = detail::current_thread();
  detail::Block& b = *t.block;
  // The CTAs of a cluster interleave on one worker, and WorkerCta is one
  // CTA's state: it would be reset at every switch between them.
  if (b.cluster->size > 1) [[unlikely]]
    fail(
        "tcgen05 in a clustered launch is not emulated yet (cta_group::2 needs tensor memory "
        "per CTA)");
  WorkerCta& w = worker_cta();
  const bool same = w.block == &b && w.job == b.job && w.index.x == b.index.x &&
                    w.index.y == b.index.y && w.index.z == b.index.z &&
                    w.dynamic_shared == b.dynamic_shared;
  if (!same) {
    w = WorkerCta{};
    w.block = &b;
    w.job = b.job;
    w.index = b.index;
    w.dynamic_shared = b.dynamic_shared;
    hook_thread_exits(w, b);
  }
  return w.state;
}

void fail(const std::string& message) {
  {
    // The launch fails: nothing of this CTA's tensor memory is used again
    // (and without the end-of-CTA hook the next CTA must not inherit it).
    const detail::RaceIgnored bookkeeping;
    worker_cta().state = Cta{};
  }
  detail::fail_current_thread(cudaErrorLaunchFailure, message);
}

unsigned thread_index() {
  return detail::current_thread().rank;
}

unsigned lane_quarter() {
  return (thread_index() / 32U) % 4U;
}

std::string describe(TmemRange r) {
  return "[lanes " + std::to_string(lane_of(r.address)) + ".." +
         std::to_string(lane_of(r.address) + r.lanes - 1) + ", columns " +
         std::to_string(column_of(r.address)) + ".." +
         std::to_string(column_of(r.address) + r.columns - 1) + "]";
}

void check_allocated(TmemRange r, const char* instruction) {
  const Cta& c = cta();
  const unsigned lane = lane_of(r.address), column = column_of(r.address);
  if (r.lanes != 0 && r.columns != 0 && lane + r.lanes <= kLanes)
    for (const Allocation& a : c.allocations)
      if (column >= a.column && column + r.columns <= a.column + a.columns) return;
  fail(std::string(instruction) + " reaches tensor memory " + describe(r) +
       " outside this CTA's allocations (" + allocations_text(c) +
       "; tensor memory has 128 lanes)");
}

std::string allocations_text(const Cta& c) {
  if (c.allocations.empty()) return "none";
  std::string s;
  for (const Allocation& a : c.allocations) {
    if (!s.empty()) s += ", ";
    s += std::to_string(a.columns) + " columns from column " + std::to_string(a.column) +
         " (allocated by warp " + std::to_string(a.warp) + ")";
  }
  return s;
}

std::string hex(unsigned v) {
  return detail::hex(v);
}

}  // namespace internal

bool sees_cta_end() {
  return internal::kOwnSlot < kThreadSlots;
}

using internal::cta;
using internal::fail;

void require_tcgen05(const char* instruction) {
  if (has_tcgen05()) return;
  const int cc = compute_capability();
  fail(std::string(instruction) + " needs sm_100a/sm_103a: run with RL_EMU_CC=100 (the emulated " +
       "device is compute capability " + std::to_string(cc / 10) + "." + std::to_string(cc % 10) +
       ")");
}

namespace {

struct AllocPost {
  std::uint32_t* dst;
  std::uint32_t ncols;
  bool operator==(const AllocPost&) const = default;
};

void check_column_count(std::uint32_t ncols, const char* instruction) {
  if (ncols < 32 || ncols > kColumns || (ncols & (ncols - 1)) != 0)
    fail(std::string(instruction) + ": " + std::to_string(ncols) +
         " columns; the count must be a power of two in [32, 512] (PTX ISA 9.7.16.7.1)");
}

void alloc_exchange(void* const* posts, unsigned participants) {
  const char* const instruction = "tcgen05.alloc";
  const AllocPost& p = internal::aligned_post<AllocPost>(posts, participants, instruction);
  check_column_count(p.ncols, instruction);
  internal::Cta& c = cta();
  if (c.relinquished)
    fail(
        "tcgen05.alloc after tcgen05.relinquish_alloc_permit: the CTA gave up its right to "
        "allocate (PTX ISA 9.7.16.7.1)");
  // The lowest free range aligned to its size (allocations are powers of two).
  for (unsigned start = 0; start + p.ncols <= kColumns; start += p.ncols) {
    bool free = true;
    for (const internal::Allocation& a : c.allocations)
      free = free && (start + p.ncols <= a.column || a.column + a.columns <= start);
    if (!free) continue;
    if (c.cells.empty()) c.cells.assign(std::size_t{kLanes} * kColumns, kLoadPoison);
    // Fresh columns hold what the last user left: here the NaN poison, so an
    // accumulator read before anything wrote it computes NaN.
    for (unsigned lane = 0; lane < kLanes; ++lane)
      for (unsigned col = start; col < start + p.ncols; ++col)
        c.cells[std::size_t{lane} * kColumns + col] = kLoadPoison;
    c.allocations.push_back({start, p.ncols, internal::thread_index() / 32U});
    c.last_alloc_columns = p.ncols;
    *p.dst = tmem_address(0, start);
    return;
  }
  unsigned used = 0;
  for (const internal::Allocation& a : c.allocations) used += a.columns;
  fail("tcgen05.alloc of " + std::to_string(p.ncols) + " columns: no free range that large (" +
       std::to_string(kColumns - used) +
       " of 512 columns free; allocated: " + internal::allocations_text(c) +
       "); one CTA runs per emulated SM, so no other CTA would free columns and the alloc "
       "would block forever");
}

struct DeallocPost {
  std::uint32_t taddr;
  std::uint32_t ncols;
  bool operator==(const DeallocPost&) const = default;
};

void dealloc_exchange(void* const* posts, unsigned participants) {
  const char* const instruction = "tcgen05.dealloc";
  const DeallocPost& p = internal::aligned_post<DeallocPost>(posts, participants, instruction);
  check_column_count(p.ncols, instruction);
  internal::Cta& c = cta();
  const unsigned warp = internal::thread_index() / 32U;
  for (auto it = c.allocations.begin(); it != c.allocations.end(); ++it) {
    if (tmem_address(0, it->column) != p.taddr || it->columns != p.ncols) continue;
    if (it->warp != warp)
      fail("tcgen05.dealloc by warp " + std::to_string(warp) + " of columns warp " +
           std::to_string(it->warp) +
           " allocated: with .cta_group::1 one warp performs the allocation and the "
           "de-allocation (PTX ISA 9.7.16.7.1)");
    c.allocations.erase(it);
    // Without the end-of-CTA hook, a CTA that holds nothing and has nothing
    // in flight starts over, so the next CTA cannot inherit its state.
    if (!sees_cta_end() && c.allocations.empty() && c.queued.empty()) c = internal::Cta{};
    return;
  }
  fail("tcgen05.dealloc of " + std::to_string(p.ncols) + " columns at tensor-memory address " +
       internal::hex(p.taddr) +
       ", which is no allocation of this CTA (allocated: " + internal::allocations_text(c) + ")");
}

struct NoOperands {
  bool operator==(const NoOperands&) const = default;
};

void relinquish_exchange(void* const* posts, unsigned participants) {
  internal::aligned_post<NoOperands>(posts, participants, "tcgen05.relinquish_alloc_permit");
  // Without the end-of-CTA hook the flag could outlive the CTA (see cta()).
  if (sees_cta_end()) cta().relinquished = true;
}

}  // namespace

void alloc(std::uint32_t* dst, std::uint32_t ncols) {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  require_tcgen05("tcgen05.alloc");
  AllocPost post{dst, ncols};
  detail::warp_collective(0xFFFFFFFFU, &internal::failing_exchange<&alloc_exchange>, &post);
}

void dealloc(std::uint32_t taddr, std::uint32_t ncols) {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  require_tcgen05("tcgen05.dealloc");
  DeallocPost post{taddr, ncols};
  detail::warp_collective(0xFFFFFFFFU, &internal::failing_exchange<&dealloc_exchange>, &post);
}

void relinquish_alloc_permit() {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  require_tcgen05("tcgen05.relinquish_alloc_permit");
  NoOperands post;
  detail::warp_collective(0xFFFFFFFFU, &internal::failing_exchange<&relinquish_exchange>, &post);
}

unsigned allocated_columns() {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  unsigned used = 0;
  for (const internal::Allocation& a : cta().allocations) used += a.columns;
  return used;
}

std::uint32_t* tmem_cells(TmemRange range, const char* instruction) {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  internal::check_allocated(range, instruction);
  return &cta().cells[std::size_t{lane_of(range.address)} * kColumns + column_of(range.address)];
}

}  // namespace rl::emu::tcgen05
