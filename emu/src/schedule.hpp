// RL_EMU_SCHEDULE's orders applied to a block: the order in which a worker
// resumes the block's threads in each pass.  A correct kernel gives the same
// result under every order; parse_schedule and to_string (the public
// spelling) are in schedule.cpp as well.
#pragma once

#include <cstdint>
#include <vector>

#include "rl/emu/runtime.hpp"

namespace rl::emu::detail {

class PassOrder {
 public:
  // The passes of block `linear` (its random orders differ from other blocks').
  PassOrder(const Schedule& schedule, std::uint64_t linear);

  // Rank order (reversed under `reverse`) of a block of `count` threads.
  void start(std::vector<unsigned>& order, unsigned count) const;
  // Before each pass: under `random` a fresh permutation of `order`.
  void next_pass(std::vector<unsigned>& order);

 private:
  ScheduleOrder kind_;
  std::uint64_t rng_;
};

}  // namespace rl::emu::detail
