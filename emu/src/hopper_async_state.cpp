// The calling CUDA thread's asynchronous Hopper state (hopper_async_state.hpp).
#include "hopper_async_state.hpp"

#include <limits>

#include "hopper_operand_hazards.hpp"

#include "rl/emu/warp.hpp"

namespace rl::emu::hopper::impl {

AsyncState& async_state() {
  ThreadSlot& slot = thread_slot(kHopperSlot);
  if (slot.ptr == nullptr) {
    slot.ptr = new AsyncState();
    slot.cleanup = [](void* p) {
      auto* state = static_cast<AsyncState*>(p);
      for (const auto& group : state->bulk_groups)
        for (const BulkStore& copy : group) perform(copy);
      for (const BulkStore& copy : state->bulk_open) perform(copy);
      // Its in-flight wgmmas end with it (as their results do), for the
      // whole warpgroup: leniently, since the others are .aligned with it.
      if (state->wgmma_block != nullptr)
        retire_wgmma_reads(state->wgmma_block, state->wgmma_warpgroup,
                           std::numeric_limits<std::uint64_t>::max());
      // So do its uncommitted tcgen05.mmas' operands (the commit never comes).
      if (state->tcgen05_block != nullptr)
        retire_tcgen05_reads(state->tcgen05_block, state->tcgen05_thread);
      delete state;
    };
  }
  return *static_cast<AsyncState*>(slot.ptr);
}

}  // namespace rl::emu::hopper::impl
