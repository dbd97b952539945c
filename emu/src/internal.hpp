// Shared between the emulator's sources; not part of the public headers.
#pragma once

#include <cstddef>

#include "rl/emu/runtime.hpp"

#if defined(RL_EMU_TSAN)
#include <sanitizer/tsan_interface.h>
// Exported by libtsan but not declared by GCC 12's header.
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace rl::emu::detail {

// ---- racecheck (RL_SANITIZE=thread) -------------------------------------------
// Every CUDA thread is a TSan fiber and a switch between fibers implies no
// synchronisation, so TSan sees only the happens-before edges these calls
// add where CUDA gives them (barriers, warp collectives, mbarriers, fenced
// atomics, kernel boundaries).  The emulator's own bookkeeping, touched by
// whichever fiber runs, is hidden from TSan with RaceIgnored; a kernel's own
// memory accesses stay visible.  All no-ops in other builds.
#if defined(RL_EMU_TSAN)
inline void race_release(const void* sync) {
  __tsan_release(const_cast<void*>(sync));
}
inline void race_acquire(const void* sync) {
  __tsan_acquire(const_cast<void*>(sync));
}
inline void race_ignore_begin() {
  __tsan_ignore_thread_begin();
}
inline void race_ignore_end() {
  __tsan_ignore_thread_end();
}
#else
inline void race_release(const void*) {}
inline void race_acquire(const void*) {}
inline void race_ignore_begin() {}
inline void race_ignore_end() {}
#endif

// Emulator bookkeeping for the rest of the scope: TSan neither checks nor
// records this fiber's memory accesses (nests).
struct RaceIgnored {
  RaceIgnored() { race_ignore_begin(); }
  ~RaceIgnored() { race_ignore_end(); }
  RaceIgnored(const RaceIgnored&) = delete;
  RaceIgnored& operator=(const RaceIgnored&) = delete;
};

// The opposite, inside a RaceIgnored scope: the kernel's own accesses (its
// body, a warp instruction's shared-memory reads) are checked again.
struct RaceVisible {
  RaceVisible() { race_ignore_end(); }
  ~RaceVisible() { race_ignore_begin(); }
  RaceVisible(const RaceVisible&) = delete;
  RaceVisible& operator=(const RaceVisible&) = delete;
};

// The calling host thread's error state (cudaGetLastError semantics).
void record_error(cudaError_t error);
// A failed launch: reported by cudaGetLastError and by the next synchronising call.
void record_launch_failure();
// Returns and clears the failure the next synchronising call reports.
cudaError_t take_pending_failure();

// initcheck (RL_EMU_POISON=1): new device allocations and every block's
// dynamic shared memory start filled with kPoisonByte.  0xFF repeated is a
// NaN in every floating-point format kernels use (f64, f32, tf32, f16, bf16,
// e4m3, e5m2) and -1 / the maximum in every integer type, so a kernel that
// reads memory it never wrote produces NaN (or absurd indices) and fails
// validation instead of passing on whatever the host allocator returned.
inline constexpr unsigned char kPoisonByte = 0xFF;
bool poison_enabled();

inline constexpr std::size_t kDefaultSharedPerBlock = 48 * 1024;
inline constexpr std::size_t kOptInSharedPerBlock = 227 * 1024;
inline constexpr std::size_t kSharedPerMultiprocessor = 228 * 1024;

// The dynamic shared memory a kernel may use (48 KiB unless raised with
// cudaFuncAttributeMaxDynamicSharedMemorySize).
std::size_t max_dynamic_shared(const void* kernel);
cudaError_t set_max_dynamic_shared(const void* kernel, int bytes);

}  // namespace rl::emu::detail
