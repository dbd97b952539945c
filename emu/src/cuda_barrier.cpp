// cuda::barrier and cuda::memcpy_async on the emulator (rl/emu/cuda_barrier.hpp):
// phase counting in the barrier's own bytes, sleeps in the scheduler's object
// wait, one line for each misuse.
#include "rl/emu/cuda_barrier.hpp"

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>

#include "block_state.hpp"
#include "hopper_shared_window.hpp"
#include "rl/emu/hopper.hpp"

namespace rl::emu::cuda_barrier {
namespace {

using hopper::impl::hex;

// The running block's key, which init() stores in the barrier.  Shared
// memory outlives the block on the CPU (a static __shared__ object is a
// thread_local of the host worker), so a barrier whose key is another
// block's was never initialised by this one.  Zero (fresh thread_local
// memory) and all-ones (RL_EMU_POISON's bytes) are never keys.  The key
// mixes the launch's, the block's and the block record's addresses: a later
// launch from the same call site reuses all three for its block of the same
// index, so only there a barrier left initialised by the previous launch
// goes unnoticed when initcheck is off (RL_EMU_POISON=1, as in the emu tests,
// overwrites it; racecheck gives every block fresh thread_locals).
std::uint64_t block_key() {
  const detail::Block& b = *detail::current_thread().block;
  const auto mix = [](std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    return h;
  };
  std::uint64_t key =
      mix(reinterpret_cast<std::uintptr_t>(b.job), reinterpret_cast<std::uintptr_t>(&b));
  key = mix(key, (std::uint64_t{b.index.z} << 42) ^ (std::uint64_t{b.index.y} << 21) ^ b.index.x);
  return key == 0 || key == ~std::uint64_t{0} ? 1 : key;
}

std::string name(const State* bar) {
  return "the cuda::barrier at shared address " + hex(hopper::shared_address(bar));
}

[[noreturn]] void fail(const std::string& message, cudaError_t error = cudaErrorLaunchFailure) {
  detail::fail_current_thread(error, message);
}

// The barrier's state, after checking that this block initialised it.
State& checked(const State* bar, const char* operation) {
  if (bar->owner != block_key())
    fail(std::string(operation) + " on " + name(bar) +
         ", which this block never initialised (one thread calls init(&bar, expected), then "
         "__syncthreads(), before any thread uses the barrier)");
  return *const_cast<State*>(bar);
}

// What a thread sleeping in wait() waits for, for the deadlock and watchdog
// reports (called outside any thread: the address init() stored).
std::string describe_wait(const void* object) {
  const auto& s = *static_cast<const State*>(object);
  return "the cuda::barrier at shared address " + hex(s.window_address) + " (phase " +
         std::to_string(s.phase) + " still expects " + std::to_string(s.pending) + " of its " +
         std::to_string(s.expected) + " arrivals)";
}

// racecheck: the current phase's sync object, made at its first arrival or
// copy.  One per phase, never reused (a sync object keeps every release it
// got, so a late waiter of one phase must not find the next phase's
// arrivals there).  Under racecheck each block runs on a host thread of its
// own, so these thread_locals are freed with the block, which makes TSan
// forget them.  Nothing outside racecheck.
const void* open_phase(State& s) {
  if constexpr (detail::kRacecheck) {
    thread_local std::deque<std::uint64_t> phases;
    if (s.race_phase == nullptr) s.race_phase = &phases.emplace_back(0);
  }
  return s.race_phase;
}

// The phase completion step: the completion function (after every arrival of
// the phase, before every waiter goes on), then the next phase.
void complete_phase(State& s, Completion completion, void* function_object) {
  if (completion != nullptr) {
    detail::race_acquire(s.race_phase);
    {
      const detail::RaceVisible user_code;
      completion(function_object);
    }
    detail::race_release(s.race_phase);
  }
  ++s.phase;
  s.pending = s.expected;
  s.race_phase = nullptr;
  detail::wake_waiters(&s);
}

Token count_arrival(State& s, std::ptrdiff_t update, const char* operation, Completion completion,
                    void* function_object) {
  if (update < 1)
    fail(std::string(operation) + "(" + std::to_string(update) + ") on " + name(&s) +
         ": the update must be at least 1");
  if (update > static_cast<std::ptrdiff_t>(s.pending))
    fail(std::string(operation) + " on " + name(&s) + " counts " + std::to_string(update) +
         (update == 1 ? " arrival" : " arrivals") + " in phase " + std::to_string(s.phase) +
         ", which expects only " + std::to_string(s.pending) + " more (of " +
         std::to_string(s.expected) + " a phase): more arrivals than the barrier expects");
  const void* const phase = open_phase(s);
  detail::race_release(phase);  // this thread's work (and its copies) before the phase completes
  const Token token{&s, s.phase, phase};
  s.pending -= static_cast<std::uint32_t>(update);
  if (s.pending == 0) complete_phase(s, completion, function_object);
  return token;
}

bool misaligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment != 0;
}

// aligned_size_t<N> promises N-aligned addresses and a multiple of N bytes
// (the GPU's copy uses N-byte accesses: a broken promise is a misaligned access).
[[noreturn]] void fail_misaligned(const void* dst, const void* src, std::size_t bytes,
                                  std::size_t alignment, const State* bar) {
  const std::string what =
      misaligned(dst, alignment)   ? "the destination " + hex(reinterpret_cast<std::uintptr_t>(dst))
      : misaligned(src, alignment) ? "the source " + hex(reinterpret_cast<std::uintptr_t>(src))
                                   : "the size";
  fail("cuda::memcpy_async with cuda::aligned_size_t<" + std::to_string(alignment) + ">(" +
           std::to_string(bytes) + ") on " + name(bar) + ": " + what + " is not a multiple of " +
           std::to_string(alignment),
       cudaErrorMisalignedAddress);
}

}  // namespace

void init(State* bar, std::ptrdiff_t expected) {
  const detail::RaceIgnored bookkeeping;  // the barrier's bytes are the emulator's state
  if (expected < 1 || expected > kMaxExpected)
    fail("init(&bar, " + std::to_string(expected) + ") on " + name(bar) +
         ": the expected count must be 1 .. " + std::to_string(kMaxExpected) +
         " (cuda::barrier::max(), an mbarrier's arrival count)");
  *bar = State{block_key(),
               0,
               static_cast<std::uint32_t>(expected),
               static_cast<std::uint32_t>(expected),
               hopper::shared_address(bar),
               0,
               nullptr};
  detail::wake_waiters(bar);
}

Token arrive(State* bar, std::ptrdiff_t update, Completion completion, void* function_object) {
  const detail::RaceIgnored bookkeeping;
  return count_arrival(checked(bar, "arrive"), update, "arrive", completion, function_object);
}

void arrive_and_drop(State* bar, Completion completion, void* function_object) {
  const detail::RaceIgnored bookkeeping;
  State& s = checked(bar, "arrive_and_drop");
  if (s.pending == 0)
    fail("arrive_and_drop on " + name(bar) +
         ", which expects no more arrivals: every participant has dropped already");
  --s.expected;  // from the next phase on; this one counts the arrival
  count_arrival(s, 1, "arrive_and_drop", completion, function_object);
}

void wait(const State* bar, const Token& token) {
  const detail::RaceIgnored bookkeeping;
  const State& s = checked(bar, "wait");
  if (token.barrier != bar)
    fail("wait on " + name(bar) + " with an arrival token " +
         (token.barrier == nullptr ? std::string("that no arrive() returned")
                                   : "of " + name(token.barrier)));
  if (token.phase != s.phase && token.phase + 1 != s.phase)
    fail("wait on " + name(bar) + " with the token of phase " + std::to_string(token.phase) +
         " while the barrier is in phase " + std::to_string(s.phase) +
         ": a token is good in its own phase and the next one only (std::barrier::wait; a GPU "
         "compares the phase's parity and may wait forever)");
  while (s.phase == token.phase) detail::wait_on(bar, &describe_wait);
  detail::race_acquire(token.race_phase);  // every arrival and copy of the phase
}

void copy(void* dst, const void* src, std::size_t bytes, std::size_t alignment, State* bar) {
  {
    const detail::RaceIgnored bookkeeping;
    checked(bar, "cuda::memcpy_async");
    if (misaligned(dst, alignment) || misaligned(src, alignment) || bytes % alignment != 0)
      fail_misaligned(dst, src, bytes, alignment, bar);
  }
  std::memcpy(dst, src, bytes);  // the kernel's own accesses, seen by racecheck
  const detail::RaceIgnored bookkeeping;
  detail::race_release(open_phase(*bar));  // landed before the current phase completes
}

}  // namespace rl::emu::cuda_barrier
