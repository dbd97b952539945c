// bar.sync / bar.arrive on the emulator (rl/emu/named_barrier.hpp): a
// rendezvous of the whole warp, then its 32 threads counted at one of the
// block's 16 barriers (named_barriers.hpp).
#include <string>

#include "block_state.hpp"
#include "rl/emu/named_barrier.hpp"
#include "rl/emu/ptx_warp.hpp"
#include "rl/emu/warp.hpp"

namespace rl::emu {
namespace detail {
namespace {

constexpr unsigned kWarpSize = 32;

enum class Outcome { counted, lanes_disagree, count_differs };

struct BarInstruction {
  unsigned id;
  unsigned threads;
  bool sync;
  bool operator==(const BarInstruction&) const = default;
};

// One lane's bar instruction in the warp rendezvous; the exchange fills in
// the rest for every lane.
struct BarPost {
  BarInstruction mine;
  Outcome outcome = Outcome::counted;
  unsigned generation = 0;  // counted: the phase the warp arrived in
  const void* race_phase = nullptr;
  unsigned phase_threads = 0;  // count_differs: the count the phase has
  BarInstruction other{};      // lanes_disagree: what other lanes of the warp execute
};

std::string text(const BarInstruction& i) {
  return std::string(i.sync ? "bar.sync " : "bar.arrive ") + std::to_string(i.id) + ", " +
         std::to_string(i.threads);
}

// What a thread waiting in bar.sync waits for, for the deadlock report.
std::string describe_wait(const void* object) {
  const auto& bar = *static_cast<const NamedBarrier*>(object);
  return "named barrier " + std::to_string(bar.id) + " (bar.sync; its phase has " +
         std::to_string(bar.arrived) + " of " + std::to_string(bar.expected) +
         " threads arrived, " + std::to_string(bar.waiting) +
         " of them waiting in bar.sync, and can never complete)";
}

// racecheck: the current phase's sync object, made at its first arrival.
const void* open_phase(NamedBarriers& barriers, NamedBarrier& bar) {
  if constexpr (kRacecheck) {
    if (bar.race_phase == nullptr) bar.race_phase = &barriers.race_phases.emplace_back(0);
  }
  return bar.race_phase;
}

// The exchange of one warp's bar instruction, run by the lane that completes
// the rendezvous: by then the warp collective has made every lane's accesses
// so far this fiber's (collectives.cpp), so one release covers the warp.
void count_warp(void* const* posts, unsigned participants) {
  const RaceIgnored bookkeeping;  // the barrier's state, which every fiber touches
  const BarInstruction first = static_cast<BarPost*>(posts[__builtin_ctz(participants)])->mine;
  rl::emu::ptx::require_full_warp(first.sync ? "bar.sync" : "bar.arrive", participants);
  const auto for_each_lane = [&](auto&& f) {
    for (unsigned lane = 0; lane < kWarpSize; ++lane) f(*static_cast<BarPost*>(posts[lane]));
  };
  for (unsigned lane = 0; lane < kWarpSize; ++lane) {
    const BarInstruction differing = static_cast<const BarPost*>(posts[lane])->mine;
    if (differing == first) continue;
    for_each_lane([&](BarPost& q) {
      q.outcome = Outcome::lanes_disagree;
      q.other = q.mine == first ? differing : first;
    });
    return;
  }
  NamedBarriers& barriers = current_thread().block->named_barriers;
  NamedBarrier& bar = barriers.slot[first.id];
  if (bar.expected != 0 && bar.expected != first.threads) {
    for_each_lane([&](BarPost& q) {
      q.outcome = Outcome::count_differs;
      q.phase_threads = bar.expected;
    });
    return;
  }
  bar.expected = first.threads;
  const void* const phase = open_phase(barriers, bar);
  race_release(phase);  // the warp's arrival
  for_each_lane([&](BarPost& q) {
    q.generation = bar.generation;
    q.race_phase = phase;
  });
  bar.arrived += kWarpSize;
  if (first.sync) bar.waiting += kWarpSize;
  if (bar.arrived < bar.expected) return;
  // The phase completes: its waiters go on, the barrier starts its next phase.
  bar.expected = 0;
  bar.arrived = 0;
  bar.waiting = 0;
  bar.race_phase = nullptr;
  ++bar.generation;
  wake_waiters(&bar);
}

void bar_instruction(unsigned id, unsigned threads, bool sync) {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  const unsigned block_threads = t.block->count;
  const BarInstruction mine{id, threads, sync};
  if (id >= NamedBarriers::kCount)
    fail_current_thread(cudaErrorLaunchFailure,
                        text(mine) + ": barrier id " + std::to_string(id) +
                            " is out of range (a block has barriers 0 .. 15)");
  if (threads == 0 || threads % kWarpSize != 0 || threads > block_threads)
    fail_current_thread(cudaErrorLaunchFailure,
                        text(mine) +
                            ": the thread count must be a non-zero multiple of 32 (whole warps) "
                            "and at most the block's " +
                            std::to_string(block_threads) + " threads");
  BarPost post{mine};
  warp_collective(0xFFFFFFFFU, &count_warp, &post);
  if (post.outcome == Outcome::lanes_disagree)
    fail_current_thread(cudaErrorLaunchFailure,
                        text(mine) + " in a warp whose other lanes execute " + text(post.other) +
                            ": .aligned needs the whole warp at the same bar instruction");
  if (post.outcome == Outcome::count_differs)
    fail_current_thread(cudaErrorLaunchFailure,
                        text(mine) + " arrives in a phase of barrier " + std::to_string(id) +
                            " that counts " + std::to_string(post.phase_threads) +
                            " threads: every arrival of a phase names the same count");
  if (!sync) return;  // bar.arrive: no wait, nothing acquired
  const NamedBarrier& bar = t.block->named_barriers.slot[id];
  while (bar.generation == post.generation) wait_on(&bar, &describe_wait);
  race_acquire(post.race_phase);  // every participant's arrival
}

}  // namespace
}  // namespace detail

void named_barrier_sync(unsigned id, unsigned threads) {
  detail::bar_instruction(id, threads, true);
}

void named_barrier_arrive(unsigned id, unsigned threads) {
  detail::bar_instruction(id, threads, false);
}

}  // namespace rl::emu
