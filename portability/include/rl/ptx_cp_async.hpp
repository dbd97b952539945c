// cp.async: per-thread asynchronous global -> shared copies, committed in
// groups and waited for by group.  A part of rl/ptx.hpp, which defines
// RL_PTX_FN, RL_PTX_UNSUPPORTED and (GPU) RL_PTX_SMEM.
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_cp_async.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/ptx_warp.hpp"
#include "rl/emu/warp.hpp"
#endif

#if defined(RL_EMULATE)
namespace rl::ptx::emu_detail {

// The calling CUDA thread's cp.async queue, in the runtime's per-thread slot
// (fibers share host threads, so thread_local would mix CUDA threads).
// Copies still queued when the thread exits are dropped: no thread can
// legally observe them (visibility needs the issuer's wait).
inline rl::emu::ptx::CpAsyncQueue& cp_async_queue() {
  rl::emu::ThreadSlot& slot = rl::emu::thread_slot();
  if (slot.ptr == nullptr) {
    slot.ptr = new rl::emu::ptx::CpAsyncQueue();
    slot.cleanup = [](void* queue) { delete static_cast<rl::emu::ptx::CpAsyncQueue*>(queue); };
  }
  return *static_cast<rl::emu::ptx::CpAsyncQueue*>(slot.ptr);
}

}  // namespace rl::ptx::emu_detail
#endif  // RL_EMULATE

namespace rl::ptx {

// ---------------------------------------------------------------------------
// cp.async (sm_80+): global -> shared copies that complete per thread, in
// commit order.  The destination may be read only after a cp_async_wait that
// covers the copy (and, by other threads, after a barrier following it).  The
// emulator performs copies at that wait, so reading a stage early sees stale
// data, as it may on a GPU.
// ---------------------------------------------------------------------------

// 16 bytes, L1 bypassed (.cg); both addresses 16-byte aligned.
RL_PTX_FN void cp_async_16(void* shared_dst, const void* global_src) {
#if defined(RL_EMULATE)
  emu_detail::cp_async_queue().issue(shared_dst, global_src, 16, 16);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(RL_PTX_SMEM(shared_dst)),
               "l"(global_src)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// 8 bytes (.ca); both addresses 8-byte aligned.
RL_PTX_FN void cp_async_8(void* shared_dst, const void* global_src) {
#if defined(RL_EMULATE)
  emu_detail::cp_async_queue().issue(shared_dst, global_src, 8, 8);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(RL_PTX_SMEM(shared_dst)),
               "l"(global_src)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// 4 bytes (.ca); both addresses 4-byte aligned.
RL_PTX_FN void cp_async_4(void* shared_dst, const void* global_src) {
#if defined(RL_EMULATE)
  emu_detail::cp_async_queue().issue(shared_dst, global_src, 4, 4);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(RL_PTX_SMEM(shared_dst)),
               "l"(global_src)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// 16 bytes of which only the first src_bytes (0..16) are read from
// global_src; the rest of the destination is zeroed.  With src_bytes == 0
// the source is not read at all (use it for out-of-bounds tiles).
RL_PTX_FN void cp_async_16_zfill(void* shared_dst, const void* global_src, unsigned src_bytes) {
#if defined(RL_EMULATE)
  emu_detail::cp_async_queue().issue(shared_dst, global_src, 16, src_bytes);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(RL_PTX_SMEM(shared_dst)),
               "l"(global_src), "r"(src_bytes)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.commit_group: closes a group with this thread's uncommitted copies.
RL_PTX_FN void cp_async_commit() {
#if defined(RL_EMULATE)
  emu_detail::cp_async_queue().commit();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.wait_group N: all but the N most recent groups have completed.
template <int N>
RL_PTX_FN void cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group takes a non-negative immediate");
#if defined(RL_EMULATE)
  emu_detail::cp_async_queue().wait_group(static_cast<unsigned>(N));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.wait_all: commit, then wait for every group.
RL_PTX_FN void cp_async_wait_all() {
#if defined(RL_EMULATE)
  emu_detail::cp_async_queue().wait_all();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx
