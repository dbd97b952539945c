// Fiber stacks: one per CUDA thread of the block a worker runs, mapped once
// per worker (with a guard page below each) and reused by every block it runs.
#pragma once

#include <cstddef>
#include <vector>

namespace rl::emu::detail {

// A stack's usable region [bottom, bottom + size).
struct StackBounds {
  const void* bottom = nullptr;
  std::size_t size = 0;
};

class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool();

  // Stack i's usable region (the guard page lies below it).
  StackBounds stack(std::size_t i);

 private:
  std::vector<void*> bases_;
};

// The size of every fiber stack (RL_EMU_STACK_KB, rounded up to whole pages)
// and of the guard page below it.
std::size_t stack_bytes();
std::size_t guard_bytes();

}  // namespace rl::emu::detail
