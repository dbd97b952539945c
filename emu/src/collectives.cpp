// Block barriers, warp rendezvous, __activemask and mbarrier sleeps.
//
// A waiting thread records what it waits in and suspends; the last arrival
// completes the barrier or collective in its own fiber (marking every
// participant runnable) and suspends too, so all continue in the next pass.
// Under racecheck each completion adds exactly the happens-before edges CUDA
// gives (arrivals before the exchange, the exchange before departures).
#include "collectives.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "block_reports.hpp"
#include "fibers.hpp"

namespace rl::emu {
namespace detail {

// racecheck: the TSan sync object of one warp-collective instance, 2
// operations a lane: each waiting participant releases its arrival into it,
// the completer acquires it once, runs the exchange and releases once, each
// waiting participant acquires it as it leaves.  A sync object keeps every
// release it ever received, so no later instance may find this one's: each
// instance gets fresh heap memory, freed when its last lane has left, and
// TSan drops the sync objects inside memory that is freed (libtsan's
// OnUserFree: MetaMap::FreeBlock), also when the allocator hands the same
// address to a later instance (racecheck case shfl_then_reused_sync_object).
struct RaceCollectiveSync {
  unsigned holders = 0;  // lanes that joined and have not left
};

namespace {

// synccheck: a barrier that completes after threads exited without reaching
// it is divergent (the CUDA programming guide: __syncthreads in conditional
// code only if the condition is uniform across the block).
void check_divergent_barrier(Block& b) {
  if (b.exited_since_barrier == 0 || b.aborting) return;
  b.failure = divergent_barrier_description(b);
  b.aborting = true;
}

void release_barrier(Block& b) {
  check_divergent_barrier(b);
  b.barrier_result = {b.barrier_true, static_cast<int>(b.barrier_arrived)};
  b.barrier_arrived = 0;
  b.barrier_true = 0;
  b.exited_since_barrier = 0;
  ++b.barrier_generation;
  for (unsigned i = 0; i < b.count; ++i)
    if (b.states[i] == State::barrier) b.states[i] = State::runnable;
}

// Set bits of a lane mask.  Without -mpopcnt __builtin_popcount is a libgcc
// call, measurable on every warp collective; this is a handful of ALU ops.
inline unsigned lane_count(unsigned mask) {
  mask = mask - ((mask >> 1) & 0x55555555u);
  mask = (mask & 0x33333333u) + ((mask >> 2) & 0x33333333u);
  return (((mask + (mask >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

// The sync object of the instance `t` (mask and function set) joins: that of
// a lane already waiting in it (same warp, mask and function: a lane waits in
// one instance at a time, and an instance completes when all of its lanes
// wait), or a new one.
RaceCollectiveSync* race_join_collective(const Block& b, const Thread& t) {
  const unsigned base = t.rank & ~31u;
  RaceCollectiveSync* sync = nullptr;
  for (unsigned m = t.mask; m != 0 && sync == nullptr; m &= m - 1) {
    const unsigned rank = base + static_cast<unsigned>(__builtin_ctz(m));
    if (rank >= b.count || rank == t.rank) continue;
    const Thread& u = b.threads[rank];
    if ((*u.state) == State::collective && u.mask == t.mask && u.fn == t.fn)
      sync = u.race_collective;
  }
  if (sync == nullptr) sync = new RaceCollectiveSync;
  ++sync->holders;
  return sync;
}

// A lane's hold on its instance's sync object for the duration of its
// warp_collective call, dropped also when an aborted block unwinds it; the
// last lane to leave frees the object.  Nothing outside racecheck.
class RaceCollectiveHold {
 public:
  RaceCollectiveHold(const Block& b, Thread& t) : t_(t) {
    if constexpr (kRacecheck) t.race_collective = race_join_collective(b, t);
  }
  ~RaceCollectiveHold() {
    if constexpr (kRacecheck) {
      RaceCollectiveSync* const sync = std::exchange(t_.race_collective, nullptr);
      if (--sync->holders == 0) delete sync;
    }
  }
  RaceCollectiveHold(const RaceCollectiveHold&) = delete;
  RaceCollectiveHold& operator=(const RaceCollectiveHold&) = delete;

 private:
  Thread& t_;
};

// Completes the collective `t` waits in if every non-exited lane of its mask
// waits in the same one.
bool try_complete_collective(Block& b, const Thread& t) {
  const unsigned base = t.rank & ~31u;
  unsigned participants = 0;
  void* posts[32] = {};
  for (unsigned m = t.mask; m != 0; m &= m - 1) {
    const unsigned lane = static_cast<unsigned>(__builtin_ctz(m));
    if (base + lane >= b.count) continue;  // absent lane of a partial warp
    const Thread& u = b.threads[base + lane];
    if ((*u.state) == State::exited) continue;
    if ((*u.state) != State::collective || u.mask != t.mask || u.fn != t.fn) return false;
    participants |= 1u << lane;
    posts[lane] = u.post;
  }
  // racecheck: every participant's arrival happens before the exchange and
  // the exchange before every participant's departure, nothing else.  The
  // completer is the last participant to arrive (its own arrival needs no
  // release), or an exiting lane, which completes it in a participant's
  // fiber so that the exiting lane's own accesses are ordered before nothing.
  const bool outsider = tl_thread == nullptr || (tl_thread->rank & ~31u) != base ||
                        ((participants >> (tl_thread->rank & 31u)) & 1u) == 0;
  void* const own_fiber = outsider ? race_current_fiber() : nullptr;
  if (outsider)
    race_switch(b.threads[base + static_cast<unsigned>(__builtin_ctz(participants))].race_fiber);
  race_acquire(t.race_collective);
  {
    const RaceVisible warp_instruction;  // e.g. ldmatrix's shared-memory reads
    t.fn(posts, participants);
  }
  race_release(t.race_collective);
  if (outsider) race_switch(own_fiber);
  b.collective_waiting[t.rank / 32] -= lane_count(participants);
  for (unsigned m = participants; m != 0; m &= m - 1) {
    Thread& u = b.threads[base + static_cast<unsigned>(__builtin_ctz(m))];
    u.participants = participants;
    (*u.state) = State::runnable;
  }
  return true;
}

// __activemask's soft rendezvous completes once no lane of the warp can run
// before it: the waiting lanes form the mask.
void complete_activemask_if_ready(Block& b, unsigned warp) {
  const unsigned base = warp * 32;
  const unsigned end = std::min(b.count, base + 32);
  unsigned waiting = 0;
  for (unsigned r = base; r < end; ++r) {
    if (b.states[r] == State::runnable) return;
    if (b.states[r] == State::activemask) waiting |= 1u << (r - base);
  }
  for (unsigned r = base; r < end; ++r) {
    if (b.states[r] != State::activemask) continue;
    b.threads[r].participants = waiting;
    b.states[r] = State::runnable;
  }
  b.activemask_waiting[warp] = 0;
}

// Called whenever a lane blocks or exits; cheap when nobody waits.
inline void try_complete_activemask(Block& b, unsigned warp) {
  if (b.activemask_waiting[warp] != 0) complete_activemask_if_ready(b, warp);
}

}  // namespace

void release_slots(Thread& t) {
  for (ThreadSlot& slot : t.slot) {
    if (slot.cleanup != nullptr) slot.cleanup(slot.ptr);
    slot = ThreadSlot{};
  }
}

void thread_exited(Thread& t) {
  Block& b = *t.block;
  release_slots(t);
  (*t.state) = State::exited;
  b.gone_lanes[t.rank / 32] |= 1u << (t.rank & 31u);
  --b.live;
  if (b.aborting) return;
  ++b.exited_since_barrier;
  if (b.barrier_arrived > 0 && b.barrier_arrived == b.live) release_barrier(b);
  const unsigned base = t.rank & ~31u;
  for (unsigned r = base; r < std::min(b.count, base + 32); ++r)
    if (b.states[r] == State::collective) try_complete_collective(b, b.threads[r]);
  try_complete_activemask(b, t.rank / 32);
}

// ---- entry points (rl/emu/block.hpp, warp.hpp) ----------------------------------

BarrierResult syncthreads_reduce(int predicate) {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  const unsigned generation = b.barrier_generation;
  race_release(b.race_barrier(generation));
  if (b.barrier_arrived == 0) b.barrier_site = __builtin_return_address(0);
  (*t.state) = State::barrier;
  ++b.barrier_arrived;
  b.barrier_true += predicate != 0 ? 1 : 0;
  if (b.barrier_arrived == b.live)
    release_barrier(b);
  else
    try_complete_activemask(b, t.rank / 32);
  ++tl_worker->waits;
  suspend(t);
  race_acquire(b.race_barrier(generation));
  return b.barrier_result;
}

void yield_thread() {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  suspend(t);
}

void wait_on(const void* object, WaitDescriber describe) {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  (*t.state) = State::object;
  t.wait_object = object;
  t.describe = describe;
  ++b.object_waiters;
  try_complete_activemask(b, t.rank / 32);
  ++tl_worker->waits;
  suspend(t);
}

void wake_waiters(const void* object) {
  const RaceIgnored bookkeeping;
  if (tl_thread == nullptr) return;  // host code (unit tests) has nobody to wake
  Block& b = *tl_thread->block;
  for (unsigned i = 0; i < b.count && b.object_waiters > 0; ++i) {
    Thread& u = b.threads[i];
    if ((*u.state) != State::object || u.wait_object != object) continue;
    (*u.state) = State::runnable;
    --b.object_waiters;
  }
}

unsigned warp_collective(unsigned mask, CollectiveFn fn, void* post) {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  const unsigned lane = t.rank & 31u;
  if (((mask >> lane) & 1u) == 0)
    fail_block(t, "thread " + std::to_string(t.rank) + " called a warp collective with mask " +
                      hex(mask) + ", which does not include its own lane " + std::to_string(lane));
  t.mask = mask;
  t.fn = fn;
  t.post = post;
  const RaceCollectiveHold instance(b, t);
  (*t.state) = State::collective;
  const unsigned warp = t.rank / 32;
  ++b.collective_waiting[warp];
  const unsigned needed = lane_count(mask & ~b.gone_lanes[warp]);
  const bool completed = b.collective_waiting[warp] >= needed && try_complete_collective(b, t);
  if (!completed) {
    race_release(t.race_collective);  // this lane's arrival, for the completer
    try_complete_activemask(b, warp);
  }
  ++tl_worker->waits;
  suspend(t);
  if (!completed) race_acquire(t.race_collective);  // the exchange and every arrival
  return t.participants;
}

unsigned active_mask() {
  const RaceIgnored bookkeeping;
  Thread& t = current_thread();
  Block& b = *t.block;
  (*t.state) = State::activemask;
  ++b.activemask_waiting[t.rank / 32];
  try_complete_activemask(b, t.rank / 32);
  ++tl_worker->waits;
  suspend(t);
  return t.participants;
}

void ballot_exchange(void* const* posts, unsigned participants) {
  unsigned ballot = 0;
  for (unsigned m = participants; m != 0; m &= m - 1)
    ballot |= static_cast<BallotPost*>(posts[__builtin_ctz(m)])->bit;
  for (unsigned m = participants; m != 0; m &= m - 1) {
    auto* p = static_cast<BallotPost*>(posts[__builtin_ctz(m)]);
    p->result = ballot;
    p->participants = participants;
  }
}

}  // namespace detail

unsigned warp_allgather(const void* mine, void* all, std::size_t bytes) {
  struct Post {
    const void* mine;
    void* all;
    std::size_t bytes;
  };
  Post post{mine, all, bytes};
  return detail::warp_collective(
      0xffffffffu,
      [](void* const* posts, unsigned participants) {
        for (unsigned m = participants; m != 0; m &= m - 1) {
          auto* p = static_cast<Post*>(posts[__builtin_ctz(m)]);
          auto* out = static_cast<unsigned char*>(p->all);
          for (unsigned lane = 0; lane < 32; ++lane) {
            if (((participants >> lane) & 1u) != 0)
              std::memcpy(out + lane * p->bytes, static_cast<Post*>(posts[lane])->mine, p->bytes);
            else
              std::memset(out + lane * p->bytes, 0, p->bytes);
          }
        }
      },
      &post);
}

}  // namespace rl::emu
