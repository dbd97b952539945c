// The calling CUDA thread's asynchronous Hopper state: wgmma results waiting
// for their wgmma.wait_group and bulk stores waiting for their
// cp.async.bulk.wait_group (rl/emu/hopper.hpp).  Shared by hopper_wgmma.cpp
// and hopper_tma.cpp; not a public header.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "rl/emu/hopper.hpp"

namespace rl::emu::hopper::impl {

struct PendingWgmma {
  void* d;                            // the thread's accumulator registers
  std::vector<std::uint32_t> result;  // what the wait will write there
};

// A bulk copy shared -> global, performed at the wait that covers it.
struct BulkStore {
  bool tensor = false;
  // plain (cp.async.bulk): bytes from src to dst
  void* dst = nullptr;
  const unsigned char* src = nullptr;
  std::uint32_t bytes = 0;
  // tensor (cp.async.bulk.tensor): the box at coords of map, read at src
  // (window address src_window, for the swizzle)
  TensorMap map{};
  std::int32_t coords[5] = {};
  std::uint32_t src_window = 0;
};

// Performs a bulk store (hopper_tma.cpp).
void perform(const BulkStore& copy);

struct AsyncState {
  std::vector<PendingWgmma> wgmma_open;                 // issued since the last commit_group
  std::vector<std::vector<PendingWgmma>> wgmma_groups;  // committed, oldest first
  std::vector<BulkStore> bulk_open;
  std::vector<std::vector<BulkStore>> bulk_groups;
  // wgmma.commit_groups so far, the number of the group open now; and the
  // warpgroup whose in-flight operands hold shared memory (set by the first
  // wgmma; hopper_operand_hazards.hpp), released when the thread exits.
  std::uint64_t wgmma_commits = 0;
  const void* wgmma_block = nullptr;
  unsigned wgmma_warpgroup = 0;
  // The block of this thread's held tcgen05.mma reads (set at its first).
  const void* tcgen05_block = nullptr;
  unsigned tcgen05_thread = 0;

  // The newest pending wgmma writing accumulators d, or nullptr.
  const PendingWgmma* newest_for(const void* d) const {
    for (auto it = wgmma_open.rbegin(); it != wgmma_open.rend(); ++it)
      if (it->d == d) return &*it;
    for (auto g = wgmma_groups.rbegin(); g != wgmma_groups.rend(); ++g)
      for (auto it = g->rbegin(); it != g->rend(); ++it)
        if (it->d == d) return &*it;
    return nullptr;
  }
};

// commit_group: what was issued since the last commit becomes the newest group.
template <typename T>
void close_group(std::vector<T>& open, std::vector<std::vector<T>>& groups) {
  groups.push_back(std::move(open));
  open.clear();
}

// The calling CUDA thread's state, in its own runtime slot (fibers share host
// threads, so thread_local would mix CUDA threads).  Bulk stores still
// pending when the thread exits are performed then (the block's shared
// memory is still there); pending wgmma results die with the registers.
AsyncState& async_state();

}  // namespace rl::emu::hopper::impl
