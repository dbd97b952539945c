// Fiber stacks: one per CUDA thread of the block a worker runs, mapped once
// per worker (with a guard page below each) and reused by every block it runs.
// Under racecheck each block gets them renewed (renew): new memory to TSan.
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

  // Maps fresh zero pages over the usable region of the first `count` stacks
  // (those that exist).  TSan forgets the history of a range mapped again, so
  // a block's fibers do not race with the previous block's on its stacks,
  // without an edge between the blocks; one mmap a stack instead of the
  // munmap, mmap and mprotect of a new pool (and TSan's meta-map walk on the
  // munmap).
  void renew(std::size_t count);

  // Takes the other pool's stacks and gives it these (a block's own worker
  // borrows its host worker's under racecheck).
  void swap(StackPool& other) noexcept { bases_.swap(other.bases_); }

 private:
  std::vector<void*> bases_;
};

// The size of every fiber stack (RL_EMU_STACK_KB, rounded up to whole pages)
// and of the guard page below it.
std::size_t stack_bytes();
std::size_t guard_bytes();

}  // namespace rl::emu::detail
