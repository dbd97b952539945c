// TMA (cp.async.bulk.tensor: boxes of a tensor map) and plain bulk copies
// (cp.async.bulk), global -> shared completing on an mbarrier, shared ->
// global in bulk async-groups.  sm_90 and later; a part of rl/ptx_sm90.hpp.
#pragma once

#if !defined(RL_PTX_SM90A)
#error "rl/ptx_sm90_tma.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/hopper.hpp"
#endif

// The state space of a global -> shared copy's destination.  The copy
// writes this CTA's shared memory and completes on this CTA's mbarrier, so
// .shared::cta (PTX ISA 8.6) says what is meant.  With .shared::cluster and
// a CTA-window address, ptxas 13.0 for sm_120 checks at run time whether the
// address lies in this CTA and, if not, calls a system routine (CALL.ABS, an
// 8-byte stack frame in gemm_wgmma_tma); with .shared::cta it emits the copy
// alone.  sm_90 keeps .shared::cluster, the form toolkits before PTX ISA 8.6
// accept (every toolkit that compiles sm_100 or later knows 8.6).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define RL_PTX_BULK_DST "shared::cta"
#else
#define RL_PTX_BULK_DST "shared::cluster"
#endif

namespace rl::ptx {

// --- TMA -------------------------------------------------------------------

// cp.async.bulk.tensor.2d.shared::{cluster,cta}.global.tile.mbarrier::complete_tx::bytes
// [dst], [map, {col, row}], [bar]: copies the box at element coordinates
// (col, row) (innermost first, may lie partly or wholly outside the tensor:
// those elements are written as zero) into shared memory at dst, in the map's
// swizzle, and counts the box's full byte size down on bar's transaction
// count when done.  dst must be aligned to the swizzle's repeat (1024 bytes
// for 128B); one thread issues it.
RL_PTX_FN void tma_load_2d([[maybe_unused]] void* dst, [[maybe_unused]] const TensorMap* map,
                           [[maybe_unused]] std::int32_t col, [[maybe_unused]] std::int32_t row,
                           [[maybe_unused]] std::uint64_t* bar) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cp.async.bulk.tensor.2d");
  const std::int32_t coords[2] = {col, row};
  rl::emu::hopper::tma_load(dst, *map, coords, 2, bar);
#elif RL_PTX_SM90
  asm volatile("cp.async.bulk.tensor.2d." RL_PTX_BULK_DST
               ".global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(shared_address(dst)),
               "l"(reinterpret_cast<std::uint64_t>(map)), "r"(col), "r"(row),
               "r"(shared_address(bar))
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [map, {col, row}], [src]:
// writes the box at element coordinates (col, row) of the map's tensor from
// shared memory at src (laid out as tma_load_2d writes it, in the map's
// swizzle); elements outside the tensor are not written.  One thread issues
// it, after fence_proxy_async_shared() and a barrier have made the other
// threads' writes to src visible to the async proxy.  It joins this thread's
// bulk async-group: bulk_commit_group(), then bulk_wait_group_read<0>()
// before src is overwritten and bulk_wait_group<0>() before the writes must
// be visible.
RL_PTX_FN void tma_store_2d([[maybe_unused]] const TensorMap* map,
                            [[maybe_unused]] std::int32_t col, [[maybe_unused]] std::int32_t row,
                            [[maybe_unused]] const void* src) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cp.async.bulk.tensor.2d.global.shared::cta");
  const std::int32_t coords[2] = {col, row};
  rl::emu::hopper::tma_store(*map, coords, 2, src);
#elif RL_PTX_SM90
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(shared_address(src)), "r"(col), "r"(row)
      : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.shared::{cluster,cta}.global.mbarrier::complete_tx::bytes [dst], [src], bytes,
// [bar]: copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global src to
// shared dst and counts them down on bar's transaction count (announce them first with
// mbarrier_arrive_expect_tx).  One thread issues it.
RL_PTX_FN void bulk_load([[maybe_unused]] void* dst, [[maybe_unused]] const void* src,
                         [[maybe_unused]] std::uint32_t bytes,
                         [[maybe_unused]] std::uint64_t* bar) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cp.async.bulk.shared::cluster.global");
  rl::emu::hopper::bulk_load(dst, src, bytes, bar);
#elif RL_PTX_SM90
  asm volatile(
      "cp.async.bulk." RL_PTX_BULK_DST
      ".global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(shared_address(dst)),
      "l"(src), "r"(bytes), "r"(shared_address(bar))
      : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.global.shared::cta.bulk_group [dst], [src], bytes: copies
// `bytes` (as above) from shared src to global dst, in this thread's bulk
// async-group (completed as for tma_store_2d).
RL_PTX_FN void bulk_store([[maybe_unused]] void* dst, [[maybe_unused]] const void* src,
                          [[maybe_unused]] std::uint32_t bytes) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cp.async.bulk.global.shared::cta");
  rl::emu::hopper::bulk_store(dst, src, bytes);
#elif RL_PTX_SM90
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
               "r"(shared_address(src)), "r"(bytes)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.commit_group: this thread's bulk stores issued since the last
// commit form one bulk async-group.
RL_PTX_FN void bulk_commit_group() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cp.async.bulk.commit_group");
  rl::emu::hopper::bulk_commit_group();
#elif RL_PTX_SM90
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.wait_group N: waits until at most N of this thread's bulk
// async-groups are pending (their writes done and visible to this thread).
template <int N>
RL_PTX_FN void bulk_wait_group() {
  static_assert(N >= 0 && N <= 63, "cp.async.bulk.wait_group takes an immediate 0..63");
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cp.async.bulk.wait_group");
  rl::emu::hopper::bulk_wait_group(N);
#elif RL_PTX_SM90
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.wait_group.read N: as bulk_wait_group, but only until the
// pending groups' sources have been read (shared memory reusable).  The
// emulator performs the whole copies here (one legal way to have read them).
template <int N>
RL_PTX_FN void bulk_wait_group_read() {
  static_assert(N >= 0 && N <= 63, "cp.async.bulk.wait_group.read takes an immediate 0..63");
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_TMA("cp.async.bulk.wait_group.read");
  rl::emu::hopper::bulk_wait_group(N);
#elif RL_PTX_SM90
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

}  // namespace rl::ptx

#undef RL_PTX_BULK_DST
