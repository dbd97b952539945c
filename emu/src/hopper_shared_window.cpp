// The shared window: 32-bit shared-window addresses of the block's shared
// memory (rl/emu/hopper.hpp: dynamic shared memory at 0, each static
// __shared__ object in a 64 KiB slot after it).
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "block_state.hpp"
#include "hopper_shared_window.hpp"
#include "internal.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/launch.hpp"

namespace rl::emu::hopper {
namespace impl {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

namespace {

constexpr std::uint32_t kSlotBytes = 64 * 1024;
constexpr std::uint32_t kSlotReach = 31 * 1024;  // a static object within this of its anchor

}  // namespace

void Window::refresh() {
  const detail::Block& block = *detail::current_thread().block;
  // The kernel too, not only the allocation: malloc may hand every block the
  // same one (always, for kernels without dynamic shared memory, once its
  // free lists settle), and anchors kept from kernel to kernel would fill
  // the 18 bits a descriptor keeps (4 slots) and then alias other kernels'
  // objects.  One kernel's static objects are the same thread_locals at
  // every launch, so its anchors stay few.
  const void* running = block.job->spec.kernel;
  const auto* base = static_cast<const unsigned char*>(block.dynamic_shared);
  // The allocation's usable size (the requested size under ASan): a static
  // __shared__ (a thread_local) is never inside it.
  const std::size_t bytes = malloc_usable_size(const_cast<unsigned char*>(base));
  if (running != kernel || base != dynamic || bytes != dynamic_bytes) {
    kernel = running;
    dynamic = base;
    dynamic_bytes = bytes;
    anchors.clear();
  }
}

std::uint32_t Window::first_slot() const {
  return static_cast<std::uint32_t>((dynamic_bytes + kSlotBytes - 1) / kSlotBytes * kSlotBytes);
}

Window& laid_out_window() {
  thread_local Window w;
  return w;
}

Window& window() {
  const detail::RaceIgnored bookkeeping;
  Window& w = laid_out_window();
  w.refresh();
  return w;
}

std::uint32_t address_in(Window& w, const void* p) {
  const detail::RaceIgnored bookkeeping;  // the worker's window, shared by its fibers
  const auto* host = static_cast<const unsigned char*>(p);
  if (host >= w.dynamic && host < w.dynamic + w.dynamic_bytes)
    return static_cast<std::uint32_t>(host - w.dynamic);
  for (const Anchor& a : w.anchors) {
    const std::ptrdiff_t off = host - a.host;
    if (off > -static_cast<std::ptrdiff_t>(kSlotReach) && off < kSlotReach)
      return static_cast<std::uint32_t>(static_cast<std::int64_t>(a.window) + off);
  }
  // A new slot; the anchor keeps the host address's low 10 bits (swizzle phase).
  const std::uint32_t slot =
      w.first_slot() + static_cast<std::uint32_t>(w.anchors.size()) * kSlotBytes;
  const std::uint32_t window_address =
      slot + kSlotBytes / 2 +
      static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) & 1023U);
  w.anchors.push_back({host, window_address});
  return window_address;
}

unsigned char* pointer_in(const Window& w, std::uint32_t window_address) {
  const detail::RaceIgnored bookkeeping;
  // Descriptors keep 18 bits: compare modulo 2^18.
  constexpr std::uint32_t kMask = 0x3FFFF;
  const std::uint32_t a18 = window_address & kMask;
  if (a18 < w.dynamic_bytes) return const_cast<unsigned char*>(w.dynamic) + a18;
  for (const Anchor& a : w.anchors) {
    const auto off = static_cast<std::int32_t>(((a18 - a.window) & kMask) << 14) >> 14;
    if (off > -static_cast<std::int32_t>(kSlotReach) && off < static_cast<std::int32_t>(kSlotReach))
      return const_cast<unsigned char*>(a.host) + off;
  }
  throw std::runtime_error("shared-window address " + hex(window_address) +
                           " names no shared memory this block has taken the address of");
}

}  // namespace impl

std::uint32_t shared_address(const void* p) {
  return impl::address_in(impl::window(), p);
}

unsigned char* shared_pointer(std::uint32_t window_address) {
  return impl::pointer_in(impl::window(), window_address);
}

}  // namespace rl::emu::hopper
