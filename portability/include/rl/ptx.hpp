// Warp-level PTX instructions for device code: tensor-core mma.sync,
// ldmatrix, cp.async, streaming (evict-first) 128-bit global accesses, tf32
// conversion and two MUFU approximations.
//
// On the GPU each wrapper is one inline-PTX instruction (sm_80+; fp8 mma
// sm_89+).  Under the emulator (RL_EMULATE) each warp-wide instruction is a
// full-warp rendezvous whose last lane computes the whole warp's result once
// with the exact semantics in rl/emu/ptx_warp.hpp, which follow the PTX ISA
// fragment layouts (docs: ptx-emulation-reference.md).  Register layouts, in
// short (g = lane / 4, t = lane % 4; 16-bit elements low half first):
//   mma m16n8k16 f16/bf16  A a0..a7: (g|g+8, 2t..2t+1 | +8), B b0..b3: (2t..2t+1 | +8, g)
//   mma m16n8k8 tf32       A a0..a3: (g, t) (g+8, t) (g, t+4) (g+8, t+4); B (t, g) (t+4, g)
//   mma m16n8k32 8-bit     A bytes: (g|g+8, 4t..4t+3 | +16), B bytes: (4t..4t+3 | +16, g)
//   C/D (all)              c0..c3: (g, 2t) (g, 2t+1) (g+8, 2t) (g+8, 2t+1)
// d may alias c.  All mma and ldmatrix calls must be reached by all 32 lanes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "rl/check.hpp"
#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include <bit>
#include <cmath>
#include <cstring>

#include "rl/emu/ptx_warp.hpp"
#include "rl/emu/warp.hpp"
#define RL_PTX_FN inline
#else
#define RL_PTX_FN __device__ __forceinline__
#endif

// Trap on GPU targets an instruction does not exist for: a kernel that needs
// sm_80 is registered with min_cc, so reaching this is a registry bug.
#if defined(__CUDA_ARCH__)
#define RL_PTX_UNSUPPORTED() __trap()
#else
#define RL_PTX_UNSUPPORTED() ((void)0)
#endif

namespace rl::ptx {

#if defined(RL_EMULATE)
namespace emu_detail {

// mma.sync: one warp rendezvous; the last lane to arrive computes every
// lane's D with the fragments decoded once (rl/emu/ptx_warp.hpp).
inline void mma_f32(rl::emu::ptx::MmaInput input, float (&d)[4], const std::uint32_t (&a)[4],
                    const std::uint32_t (&b)[2], const float (&c)[4]) {
  rl::emu::ptx::mma_f32_sync(input, a, b, c, d);
}

template <int Matrices>
void ldmatrix(std::uint32_t* out, const void* row, bool trans) {
  rl::emu::ptx::ldmatrix_sync(Matrices, trans, row, out);
}

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

}  // namespace emu_detail
#endif  // RL_EMULATE

// ---------------------------------------------------------------------------
// mma.sync: D = A * B + C, f32 accumulators (int32 for s8)
// ---------------------------------------------------------------------------

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
RL_PTX_FN void mma_m16n8k16_f16_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::f16, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16: f16 accumulators, two
// .f16x2 registers for C and D (c0, c1 in c[0], low half first; c2, c3 in
// c[1]).  The emulator sums in double and rounds once to f16; PTX leaves the
// order and rounding of the accumulation unspecified (test with tolerances).
RL_PTX_FN void mma_m16n8k16_f16_f16(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2], const std::uint32_t (&c)[2]) {
#if defined(RL_EMULATE)
  rl::emu::ptx::mma_m16n8k16_f16_f16_sync(a, b, c, d);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
      "{%8,%9};\n"
      : "=r"(d[0]), "=r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
RL_PTX_FN void mma_m16n8k16_bf16_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                     const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::bf16, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32.  The tensor core reads
// only the upper 19 bits of each operand: convert with f32_to_tf32 first.
RL_PTX_FN void mma_m16n8k8_tf32_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                    const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::tf32, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 (sm_89+).
RL_PTX_FN void mma_m16n8k32_e4m3_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                     const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::e4m3, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// Where mma.sync with 8-bit float inputs is a tensor-core instruction.  nvcc
// 13.0 compiles mma_m16n8k32_e4m3_f32 to QMMA.16832.F32.E4M3.E4M3 for sm_89
// (Ada) and sm_120 (consumer Blackwell), but for sm_90a and sm_100a to f16
// unpacks (F2FP.F16.E4M3.UNPACK_B) feeding HMMA: an emulation, whose timing
// is not an fp8 tensor-core measurement (cuobjdump -sass of each).  Other
// parts are treated as emulating until their SASS says otherwise.
constexpr bool fp8_mma_sync_is_native(int cc_major, int cc_minor) {
  return (cc_major == 8 && cc_minor >= 9) || cc_major == 12;
}

// Host side of a workload that times fp8 mma.sync: throws, naming `what`, on
// a device where the instruction is emulated.  The CPU emulator executes the
// instruction exactly, so nothing is refused there.
// Why fp8 mma.sync is not timed on compute capability cc_x10 (x10, 90 for
// sm_90), or nullopt where it is a tensor instruction: the records'
// KernelRecord::refuse_on (the harness skips the instance with this reason).
inline std::optional<std::string> fp8_mma_sync_refusal(int cc_x10) {
  if (fp8_mma_sync_is_native(cc_x10 / 10, cc_x10 % 10)) return std::nullopt;
  return "mma.sync e4m3 is emulated on sm_" + std::to_string(cc_x10) +
         " (f16 unpacks and HMMA), not an fp8 tensor-core measurement";
}

inline void refuse_emulated_fp8_mma_sync(const char* what) {
#if defined(RL_EMULATE)
  (void)what;
#else
  int device = 0, major = 0, minor = 0;
  RL_CUDA_CHECK(cudaGetDevice(&device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  RL_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (const std::optional<std::string> why = fp8_mma_sync_refusal(major * 10 + minor))
    throw std::runtime_error(std::string(what) + ": " + *why);
#endif
}

// mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 (sm_89+).
RL_PTX_FN void mma_m16n8k32_e5m2_f32(float (&d)[4], const std::uint32_t (&a)[4],
                                     const std::uint32_t (&b)[2], const float (&c)[4]) {
#if defined(RL_EMULATE)
  emu_detail::mma_f32(rl::emu::ptx::MmaInput::e5m2, d, a, b, c);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
        "f"(c[2]), "f"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32: exact int32 sums that wrap
// (no .satfinite).
RL_PTX_FN void mma_m16n8k32_s8_s32(std::int32_t (&d)[4], const std::uint32_t (&a)[4],
                                   const std::uint32_t (&b)[2], const std::int32_t (&c)[4]) {
#if defined(RL_EMULATE)
  rl::emu::ptx::mma_m16n8k32_s8_s32_sync(a, b, c, d);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%10,%11,%12,%13};\n"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
        "r"(c[2]), "r"(c[3]));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// ---------------------------------------------------------------------------
// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16
// Lane L passes the shared-memory address of row L % 8 of matrix L / 8 (16
// contiguous, 16-byte-aligned bytes).  Register j of lane L receives
// M_j[L/4][2(L%4) .. +1], or with .trans M_j[2(L%4) .. +1][L/4].
// ---------------------------------------------------------------------------

#if !defined(RL_EMULATE) && defined(__CUDA_ARCH__)
#define RL_PTX_SMEM(ptr) static_cast<unsigned>(__cvta_generic_to_shared(ptr))
#endif

RL_PTX_FN void ldmatrix_x1(std::uint32_t& r, const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<1>(&r, row, false);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(r)
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x2(std::uint32_t (&r)[2], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<2>(r, row, false);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x4(std::uint32_t (&r)[4], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<4>(r, row, false);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x1_trans(std::uint32_t& r, const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<1>(&r, row, true);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(r)
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x2_trans(std::uint32_t (&r)[2], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<2>(r, row, true);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row) {
#if defined(RL_EMULATE)
  emu_detail::ldmatrix<4>(r, row, true);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(RL_PTX_SMEM(row)));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

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

// ---------------------------------------------------------------------------
// Streaming global accesses: 16 bytes with the .cs cache operator ("cache
// streaming, likely to be accessed once": lines allocated evict-first in L1
// and L2, so data read or written once does not push out data that is
// reused).  PTX calls cache operators performance hints that do not change
// memory consistency, so the emulator performs a plain 16-byte copy; it stops
// on an address that is not 16-byte aligned, as the GPU faults on one.
// nvcc 13.0 compiles them to LDG.E.EF.128.CONSTANT and STG.E.EF.128 on sm_80,
// sm_89, sm_90a, sm_100a and sm_120 (cuobjdump -sass).
// ---------------------------------------------------------------------------

// ld.global.cs.nc.v4.b32: the read-only (.nc) path of a const __restrict__
// load plus the streaming hint, so against a plain 128-bit load of such data
// only the eviction policy changes.  The data must not be written while the
// kernel runs (the .nc contract).
RL_PTX_FN void ld_global_nc_cs_v4(std::uint32_t (&r)[4], const void* address) {
#if defined(RL_EMULATE)
  rl::emu::ptx::load_streaming_v4(address, r);
#elif defined(__CUDA_ARCH__)
  asm volatile("ld.global.cs.nc.v4.b32 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "l"(address));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// st.global.cs.v4.b32: a store whose lines are the first evicted (output that
// this kernel never reads back).
RL_PTX_FN void st_global_cs_v4(void* address, const std::uint32_t (&r)[4]) {
#if defined(RL_EMULATE)
  rl::emu::ptx::store_streaming_v4(address, r);
#elif defined(__CUDA_ARCH__)
  asm volatile("st.global.cs.v4.b32 [%0], {%1,%2,%3,%4};\n" ::"l"(address), "r"(r[0]), "r"(r[1]),
               "r"(r[2]), "r"(r[3])
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// ---------------------------------------------------------------------------
// Conversions and approximations
// ---------------------------------------------------------------------------

// cvt.rna.tf32.f32: nearest, ties away from zero, 10 mantissa bits kept; the
// fp32 pattern with the low 13 bits zero.  Inf stays Inf, NaN -> 0x7FFFFFFF.
RL_PTX_FN std::uint32_t f32_to_tf32(float x) {
#if defined(RL_EMULATE)
  return rl::emu::ptx::f32_to_tf32_bits(std::bit_cast<std::uint32_t>(x));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
#else
  RL_PTX_UNSUPPORTED();
  return 0;
#endif
}

// tanh.approx.f32 (sm_75+, MUFU.TANH).  The hardware result is approximate:
// the PTX ISA's tanh section gives a maximum relative error of 2^-10.987
// (about 4.9e-4); measurements published on NVIDIA's developer forum
// ("Hardware-accelerated tanh() on Turing") found at most about 1.1e-5.  The emulator returns
// std::tanh (nearly correctly rounded), so kernels using this must validate with a tolerance of at
// least 2^-11 relative, never bit equality.
RL_PTX_FN float tanh_approx(float x) {
#if defined(RL_EMULATE)
  return std::tanh(x);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  RL_PTX_UNSUPPORTED();
  return 0.0f;
#endif
}

// ex2.approx.f32: 2^x, approximate on the GPU (MUFU.EX2; bound in the PTX
// ISA's ex2 section).  The emulator returns std::exp2; validate with a
// tolerance, never bit equality.
RL_PTX_FN float ex2_approx(float x) {
#if defined(RL_EMULATE)
  return std::exp2(x);
#elif defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  RL_PTX_UNSUPPORTED();
  return 0.0f;
#endif
}

}  // namespace rl::ptx

#include "rl/ptx_sm90.hpp"  // Hopper: wgmma, mbarrier, TMA (sm_90a)

#undef RL_PTX_FN
#undef RL_PTX_UNSUPPORTED
#if defined(RL_PTX_SMEM)
#undef RL_PTX_SMEM
#endif
