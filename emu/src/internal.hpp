// Shared between the emulator's sources; not part of the public headers.
#pragma once

#include "rl/emu/runtime.hpp"

namespace rl::emu::detail {

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
