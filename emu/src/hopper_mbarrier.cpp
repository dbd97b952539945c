// mbarrier on the emulator: phases that complete on arrivals and transaction
// bytes, waits that sleep until the barrier changes (rl/emu/hopper.hpp).
// Every change wakes the barrier's waiters in the whole cluster: an arrival
// may come from another CTA (rl/emu/cluster.hpp).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "clusters.hpp"
#include "hopper_shared_window.hpp"
#include "internal.hpp"
#include "rl/emu/hopper.hpp"

namespace rl::emu::hopper {

MbarrierState mbarrier_state(std::uint64_t word) {
  const auto tx =
      static_cast<std::int32_t>(static_cast<std::uint32_t>((word >> 42) & 0x1FFFFF) << 11) >> 11;
  return {static_cast<std::uint32_t>(word & 0x1FFFFF),
          static_cast<std::uint32_t>((word >> 21) & 0x1FFFFF), tx,
          static_cast<std::uint32_t>(word >> 63)};
}

std::uint64_t mbarrier_word(const MbarrierState& s) {
  return (std::uint64_t{s.pending} & 0x1FFFFF) | ((std::uint64_t{s.expected} & 0x1FFFFF) << 21) |
         ((std::uint64_t{static_cast<std::uint32_t>(s.tx_count)} & 0x1FFFFF) << 42) |
         (std::uint64_t{s.phase & 1U} << 63);
}

namespace {

// In a cluster of more than one CTA, by its CTA and offset (a remote
// barrier has no address in this CTA's window).
std::string barrier_name(const std::uint64_t* bar) {
  const std::string place = detail::cluster_location(bar);
  return "the mbarrier at " +
         (place.empty() ? "shared address " + impl::hex(shared_address(bar)) : place);
}

// The same, callable outside a thread (the deadlock report).
std::string laid_out_barrier_name(const std::uint64_t* bar) {
  const std::string place = detail::cluster_location(bar);
  return "the mbarrier at " +
         (place.empty()
              ? "shared address " + impl::hex(impl::address_in(impl::laid_out_window(), bar))
              : place);
}

// What a thread sleeping in try_wait waits for, for the deadlock report.
std::string describe_wait(const void* object) {
  const auto* bar = static_cast<const std::uint64_t*>(object);
  const MbarrierState s = mbarrier_state(*bar);
  return laid_out_barrier_name(bar) + " (current phase parity " + std::to_string(s.phase) +
         ", which can never complete: pending arrivals " + std::to_string(s.pending) + " of " +
         std::to_string(s.expected) + ", transaction count " + std::to_string(s.tx_count) +
         " bytes)";
}

MbarrierState checked_state(const std::uint64_t* bar, const char* operation) {
  const MbarrierState s = mbarrier_state(*bar);
  if (s.expected == 0)
    throw std::runtime_error(std::string(operation) + " on " + barrier_name(bar) +
                             ", which was never initialised (mbarrier.init)");
  return s;
}

// A phase completes when no arrival and no transaction byte is pending; the
// next phase starts with the expected count again ("Phase Completion").
void store(std::uint64_t* bar, MbarrierState s) {
  if (s.pending == 0 && s.tx_count == 0) {
    s.phase ^= 1U;
    s.pending = s.expected;
  }
  *bar = mbarrier_word(s);
  detail::wake_cluster_waiters(bar);
}

// The tx-count's range (PTX "Contents of the mbarrier object"): 2^20 - 1 each way.
constexpr std::int32_t kTxLimit = (1 << 20) - 1;

void add_tx(std::uint64_t* bar, std::int64_t delta, const char* operation) {
  MbarrierState s = checked_state(bar, operation);
  const std::int64_t tx = s.tx_count + delta;
  if (tx > kTxLimit || tx < -kTxLimit)
    throw std::runtime_error(std::string(operation) + " on " + barrier_name(bar) +
                             ": transaction count " + std::to_string(tx) +
                             " leaves the range +-(2^20 - 1)");
  s.tx_count = static_cast<std::int32_t>(tx);
  store(bar, s);
}

}  // namespace

// racecheck: the mbarrier word is the emulator's bookkeeping; every arrival
// and transaction update releases at the barrier's address and a wait that
// sees its phase complete acquires there (internal.hpp).
// The public functions are the .shared::cta forms: in a cluster, only the
// running CTA's barriers (detail::require_own_cta); the cluster's remote
// arrive and multicast come in through impl.
void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
  const detail::RaceIgnored bookkeeping;
  detail::require_own_cta(bar, "mbarrier.init");
  detail::race_release(bar);
  if (count < 1 || count > (1U << 20) - 1)
    throw std::runtime_error("mbarrier.init with count " + std::to_string(count) +
                             " (must be 1 .. 2^20 - 1)");
  *bar = mbarrier_word({count, count, 0, 0});
  detail::wake_cluster_waiters(bar);
}

void impl::mbarrier_arrive_any_cta(std::uint64_t* bar) {
  const detail::RaceIgnored bookkeeping;
  detail::race_release(bar);
  MbarrierState s = checked_state(bar, "mbarrier.arrive");
  if (s.pending == 0)
    throw std::runtime_error("mbarrier.arrive on " + barrier_name(bar) +
                             " with no arrival pending in its phase");
  --s.pending;
  store(bar, s);
}

void mbarrier_arrive(std::uint64_t* bar) {
  detail::require_own_cta(bar, "mbarrier.arrive");
  impl::mbarrier_arrive_any_cta(bar);
}

void mbarrier_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  const detail::RaceIgnored bookkeeping;
  detail::require_own_cta(bar, "mbarrier.expect_tx");
  detail::race_release(bar);
  add_tx(bar, bytes, "mbarrier.expect_tx");
}

void mbarrier_complete_tx(std::uint64_t* bar, std::uint32_t bytes) {
  const detail::RaceIgnored bookkeeping;
  detail::race_release(bar);
  add_tx(bar, -static_cast<std::int64_t>(bytes), "mbarrier complete_tx");
}

bool mbarrier_test_wait_parity(const std::uint64_t* bar, std::uint32_t parity) {
  const detail::RaceIgnored bookkeeping;
  detail::require_own_cta(bar, "mbarrier.test_wait/try_wait");
  const bool complete = checked_state(bar, "mbarrier.test_wait").phase != (parity & 1U);
  if (complete) detail::race_acquire(bar);
  return complete;
}

bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  const detail::RaceIgnored bookkeeping;
  if (mbarrier_test_wait_parity(bar, parity)) return true;
  detail::wait_on(bar, &describe_wait);
  return mbarrier_test_wait_parity(bar, parity);
}

}  // namespace rl::emu::hopper
