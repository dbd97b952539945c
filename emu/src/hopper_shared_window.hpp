// The shared window's bookkeeping (rl/emu/hopper.hpp describes the window),
// shared by the Hopper emulation's files: the mbarrier deadlock report names
// a barrier by its window address, wgmma and TMA translate window addresses
// back to host pointers.  Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rl/emu/hopper.hpp"

namespace rl::emu::hopper::impl {

// "0x..." for messages.
std::string hex(std::uint64_t v);

struct Anchor {
  const unsigned char* host;
  std::uint32_t window;
};

// Per host worker: the kernel and dynamic shared memory the window was laid
// out for and the static objects' anchors.
struct Window {
  const void* kernel = nullptr;  // LaunchSpec::kernel
  const unsigned char* dynamic = nullptr;
  std::size_t dynamic_bytes = 0;
  std::vector<Anchor> anchors;

  // Lays the window out again when the running block is another kernel's, or
  // its dynamic shared memory another allocation (another CTA of the cluster).
  void refresh();
  std::uint32_t first_slot() const;
};

// This worker's window as the running block last laid it out (the
// scheduler's deadlock report asks outside any thread, where the block's
// dynamic shared memory cannot be asked for).
Window& laid_out_window();
// This worker's window, refreshed for the running block.
Window& window();
// The window address of host pointer p, anchoring a new static object when p
// lies in none.
std::uint32_t address_in(Window& w, const void* p);
// shared_pointer in a window already refreshed (wgmma translates thousands
// of operand addresses per instruction; the refresh asks the allocator).
unsigned char* pointer_in(const Window& w, std::uint32_t window_address);

// The cluster's paths into another CTA's shared memory (clusters.cpp), which
// the public .shared::cta forms refuse in a cluster of more than one CTA.
// tma_load with the destination's window address given: a multicast lands
// at the issuer's window address in every CTA, so the swizzle phase is the
// issuer's (shared_address of a peer's pointer would make up a slot).
// Returns the box's in-bounds bytes, the global bytes read, which the caller
// counts (once for a multicast: rl/emu/counters.hpp).
std::uint64_t tma_load_at(void* dst, std::uint32_t dst_window, const TensorMap& map,
                          const std::int32_t* coords, std::uint32_t rank, std::uint64_t* bar);
// mbarrier.arrive on any CTA's barrier of the cluster (a remote arrive).
void mbarrier_arrive_any_cta(std::uint64_t* bar);

}  // namespace rl::emu::hopper::impl
