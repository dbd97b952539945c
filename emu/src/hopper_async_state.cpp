// The calling CUDA thread's asynchronous Hopper state (hopper_async_state.hpp).
#include "hopper_async_state.hpp"

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
      delete state;
    };
  }
  return *static_cast<AsyncState*>(slot.ptr);
}

}  // namespace rl::emu::hopper::impl
