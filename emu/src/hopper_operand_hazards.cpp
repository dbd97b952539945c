// Shared memory that an in-flight wgmma still reads, and the writes that may
// not touch it (hopper_operand_hazards.hpp).
#include "hopper_operand_hazards.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "block_reports.hpp"
#include "block_state.hpp"
#include "hopper_async_state.hpp"
#include "hopper_shared_window.hpp"
#include "rl/emu/hopper.hpp"
#include "sanitizer_hooks.hpp"

namespace rl::emu::hopper::impl {
namespace {

// The warpgroup field of a thread's held tcgen05.mma reads: its thread
// index with this bit (one group per thread, until its commit).
constexpr unsigned kTcgen05Thread = 0x80000000U;

// One wgmma-group of one warpgroup (or a thread's uncommitted tcgen05.mmas):
// the operands its instructions read.
struct HeldGroup {
  const detail::Block* block;
  unsigned warpgroup;
  std::uint64_t group;
  std::vector<OperandReads> operands;

  // The first byte run of [lo, hi) this group reads, or false.
  bool overlap(const unsigned char* lo, const unsigned char* hi, ReadRun& hit) const {
    for (const OperandReads& o : operands) {
      if (o.bounds.hi <= lo || hi <= o.bounds.lo) continue;
      for (const ReadRun& r : o.runs)
        if (r.lo < hi && lo < r.hi) {
          hit = {std::max(lo, r.lo), std::min(hi, r.hi)};
          return true;
        }
    }
    return false;
  }
};

// This host worker's held groups (the header says why per worker); a few at
// a time: each warpgroup keeps one or two groups in flight.
std::vector<HeldGroup>& held() {
  thread_local std::vector<HeldGroup> groups;
  return groups;
}

std::string cta_label(const detail::Block& b) {
  std::string s = "block " + detail::block_label(b.index);
  if (b.cluster != nullptr && b.cluster->size > 1)
    s += " (cluster rank " + std::to_string(b.cluster_rank) + ")";
  return s;
}

// The runner's line names the kernel and the writer's block before this.
[[noreturn]] void report(const HeldGroup& g, const ReadRun& hit, std::uint32_t window_lo,
                         const char* writer) {
  const detail::Thread& t = detail::current_thread();
  const detail::Block& own = *t.block;
  const auto bytes = static_cast<std::uint32_t>(hit.hi - hit.lo);
  std::string who = "thread " + std::to_string(t.rank);
  if (own.cluster != nullptr && own.cluster->size > 1)
    who += " of cluster rank " + std::to_string(own.cluster_rank);
  if ((g.warpgroup & kTcgen05Thread) != 0)
    throw std::runtime_error(who + ": " + writer + " wrote shared bytes [" + hex(window_lo) + ", " +
                             hex(std::uint64_t{window_lo} + bytes) + ") of " + cta_label(*g.block) +
                             ", read by a tcgen05.mma still in flight (issued, not yet performed "
                             "by its thread's tcgen05.commit) of its thread " +
                             std::to_string(g.warpgroup & ~kTcgen05Thread));
  throw std::runtime_error(who + ": " + writer + " wrote shared bytes [" + hex(window_lo) + ", " +
                           hex(std::uint64_t{window_lo} + bytes) + ") of " + cta_label(*g.block) +
                           ", read by a wgmma still in flight (committed, not yet retired by "
                           "wgmma.wait_group) of its warpgroup " +
                           std::to_string(g.warpgroup));
}

}  // namespace

Warpgroup running_warpgroup() {
  const detail::Thread& t = detail::current_thread();
  return {t.block, t.rank / 128};
}

void hold_wgmma_reads(std::uint64_t group, OperandReads&& reads) {
  const detail::RaceIgnored bookkeeping;
  const detail::Thread& t = detail::current_thread();
  const unsigned warpgroup = t.rank / 128;
  std::vector<HeldGroup>& groups = held();
  for (HeldGroup& g : groups)
    if (g.block == t.block && g.warpgroup == warpgroup && g.group == group) {
      g.operands.push_back(std::move(reads));
      return;
    }
  groups.push_back({t.block, warpgroup, group, {}});
  groups.back().operands.push_back(std::move(reads));
}

void hold_tcgen05_reads(OperandReads&& reads) {
  const detail::Thread& t = detail::current_thread();
  {
    const detail::RaceIgnored bookkeeping;
    std::vector<HeldGroup>& groups = held();
    bool found = false;
    for (HeldGroup& g : groups)
      if (g.block == t.block && g.warpgroup == (kTcgen05Thread | t.rank)) {
        g.operands.push_back(std::move(reads));
        found = true;
        break;
      }
    if (!found) {
      groups.push_back({t.block, kTcgen05Thread | t.rank, 0, {}});
      groups.back().operands.push_back(std::move(reads));
    }
  }
  AsyncState& s = async_state();  // released at the thread's exit, if no commit comes
  s.tcgen05_block = t.block;
  s.tcgen05_thread = t.rank;
}

void retire_tcgen05_reads(const void* block, unsigned thread) {
  retire_wgmma_reads(block, kTcgen05Thread | thread, std::numeric_limits<std::uint64_t>::max());
}

void retire_wgmma_reads(const void* block, unsigned warpgroup, std::uint64_t below) {
  const detail::RaceIgnored bookkeeping;
  std::erase_if(held(), [&](const HeldGroup& g) {
    return g.block == block && g.warpgroup == warpgroup && g.group < below;
  });
}

void check_shared_write(const unsigned char* host, std::size_t bytes, const char* writer,
                        std::uint32_t window) {
  const detail::RaceIgnored bookkeeping;  // the list is the emulator's, shared by the fibers
  for (const HeldGroup& g : held()) {
    ReadRun hit{};
    if (!g.overlap(host, host + bytes, hit)) continue;
    report(g, hit,
           window != kUnknownWindow ? window + static_cast<std::uint32_t>(hit.lo - host)
                                    : shared_address(hit.lo),
           writer);
  }
}

void check_box_write(const unsigned char* host, std::uint32_t window, std::uint64_t bytes,
                     std::uint32_t swizzle_mask, const char* writer) {
  {
    const detail::RaceIgnored bookkeeping;
    if (held().empty()) return;  // the common case: no wgmma in flight on this worker
  }
  if (swizzle_mask == 0) return check_shared_write(host, bytes, writer, window);
  // The swizzle XORs address bits 4-6 with bits 7-9: it moves 16-byte pieces
  // within their 128-byte row, so the box's whole rows are written whatever
  // the phase, and a partial first or last row piece by piece.
  const std::uint64_t end = std::uint64_t{window} + bytes;
  for (std::uint64_t x = window; x < end;) {
    const std::uint64_t row_end = std::min(end, (x | 127U) + 1);
    if (x % 128 == 0 && row_end % 128 == 0) {
      const std::uint64_t full = end / 128 * 128;  // every whole row from x on
      check_shared_write(host + (x - window), full - x, writer, static_cast<std::uint32_t>(x));
      x = full;
      continue;
    }
    const std::uint64_t piece_end = std::min(row_end, (x | 15U) + 1);
    const auto a = static_cast<std::uint32_t>(x);
    const std::uint32_t moved = a ^ (((a >> 7) & swizzle_mask) << 4);
    check_shared_write(host + (static_cast<std::int64_t>(moved) - window), piece_end - x, writer,
                       moved);
    x = piece_end;
  }
}

}  // namespace rl::emu::hopper::impl
