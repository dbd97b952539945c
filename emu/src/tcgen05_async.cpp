// The asynchronous tcgen05 operations (mma, cp) and their completion:
// queued per issuing thread, performed at its tcgen05.commit, which then
// arrives on the mbarrier.  PTX ISA 9.7.16.6.1 "Asynchronous Operations",
// 9.7.16.11.1 "tcgen05.fence", 9.7.16.12.1 "tcgen05.commit".
#include <string>
#include <utility>
#include <vector>

#include "block_state.hpp"
#include "hopper_operand_hazards.hpp"
#include "rl/emu/hopper.hpp"
#include "tcgen05_state.hpp"

namespace rl::emu::tcgen05 {
namespace internal {
namespace {

bool overlap(TmemRange a, TmemRange b) {
  const unsigned la = lane_of(a.address), lb = lane_of(b.address);
  const unsigned ca = column_of(a.address), cb = column_of(b.address);
  return la < lb + b.lanes && lb < la + a.lanes && ca < cb + b.columns && cb < ca + a.columns;
}

}  // namespace

void check_not_in_flight(TmemRange range, const char* instruction) {
  for (const QueuedOp& op : cta().queued)
    if (overlap(op.writes, range))
      fail(std::string(instruction) + " reads tensor memory " + describe(range) + " that a " +
           op.instruction + " issued by thread " + std::to_string(op.thread) + " still writes " +
           describe(op.writes) +
           ": accumulator read before its commit completed (tcgen05.commit to an mbarrier, "
           "then wait on it, PTX ISA 9.7.16.6)");
}

}  // namespace internal

void enqueue_async(const char* instruction, TmemRange writes, std::function<void()> perform) {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  require_tcgen05(instruction);
  internal::check_allocated(writes, instruction);
  internal::cta().queued.push_back(
      {internal::thread_index(), instruction, writes, std::move(perform)});
}

void commit(std::uint64_t* mbar) {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  require_tcgen05("tcgen05.commit");
  const unsigned me = internal::thread_index();
  // This thread's operations, in issue order, out of the queue before any
  // runs (a perform may look at the queue, e.g. through tmem_cells).
  std::vector<internal::QueuedOp> mine;
  std::vector<internal::QueuedOp>& queued = internal::cta().queued;
  for (internal::QueuedOp& op : queued)
    if (op.thread == me) mine.push_back(std::move(op));
  std::erase_if(queued, [me](const internal::QueuedOp& op) { return op.thread == me; });
  for (internal::QueuedOp& op : mine) op.perform();
  // Performed: their shared operands are free from this arrival on.
  hopper::impl::retire_tcgen05_reads(detail::current_thread().block, me);
  hopper::mbarrier_arrive(mbar);
}

void fence_before_thread_sync() {
  require_tcgen05("tcgen05.fence::before_thread_sync");
}

void fence_after_thread_sync() {
  require_tcgen05("tcgen05.fence::after_thread_sync");
}

}  // namespace rl::emu::tcgen05
