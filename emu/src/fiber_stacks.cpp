#include "fiber_stacks.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

#include "environment.hpp"

namespace rl::emu::detail {

std::size_t stack_bytes() {
  static const std::size_t bytes = [] {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return (stack_kib_setting() * 1024 + page - 1) / page * page;
  }();
  return bytes;
}

std::size_t guard_bytes() {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

StackPool::~StackPool() {
  for (void* base : bases_) munmap(base, stack_bytes() + guard_bytes());
}

void StackPool::renew(std::size_t count) {
  for (std::size_t i = 0; i < count && i < bases_.size(); ++i) {
    void* usable = static_cast<char*>(bases_[i]) + guard_bytes();
    if (mmap(usable, stack_bytes(), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
      throw std::bad_alloc();
  }
}

StackBounds StackPool::stack(std::size_t i) {
  while (bases_.size() <= i) {
    void* base = mmap(nullptr, stack_bytes() + guard_bytes(), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    mprotect(base, guard_bytes(), PROT_NONE);
    bases_.push_back(base);
  }
  // Stacks are a page multiple apart, so their tops would share a few cache
  // sets and evict each other on every switch; a per-stack offset of whole
  // cache lines ("colouring") spreads the hot top-of-stack lines over all sets.
  const std::size_t colour = ((i / 32) % 64) * 64;
  return {static_cast<char*>(bases_[i]) + guard_bytes(), stack_bytes() - colour};
}

}  // namespace rl::emu::detail
