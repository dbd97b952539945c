// A block's 16 named barriers (bar.sync / bar.arrive): their state, kept in
// the Block (block_state.hpp) so each block starts with fresh ones.  The
// operations are in named_barriers.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <deque>

namespace rl::emu::detail {

struct NamedBarrier {
  unsigned id = 0;
  unsigned expected = 0;    // the current phase's thread count; 0 until its first arrival
  unsigned arrived = 0;     // threads counted in the current phase (whole warps)
  unsigned waiting = 0;     // of them, threads waiting in bar.sync
  unsigned generation = 0;  // phases completed
  // racecheck: the current phase's sync object (nullptr until its first arrival)
  const void* race_phase = nullptr;
};

struct NamedBarriers {
  static constexpr unsigned kCount = 16;
  std::array<NamedBarrier, kCount> slot;
  // racecheck: one sync object per phase, never reused within the block (a
  // sync object keeps every release it received, so a later phase's
  // arrivals must not reach an earlier phase's late waiter); freed with the
  // block, which makes TSan forget them.  Empty outside racecheck.
  std::deque<std::uint64_t> race_phases;

  NamedBarriers() {
    for (unsigned i = 0; i < kCount; ++i) slot[i].id = i;
  }
  NamedBarriers(const NamedBarriers&) = delete;
  NamedBarriers& operator=(const NamedBarriers&) = delete;
};

}  // namespace rl::emu::detail
