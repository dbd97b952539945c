// Pure per-warp semantics of the warp-level PTX instructions behind
// rl/ptx.hpp, independent of the emulator runtime so tests can call them with
// hand-built register files.
//
// A "_warp" function takes every lane's source registers ([lane][reg]) and
// produces every lane's destinations; a "_lane" function produces one lane's
// destinations only (what rl/ptx.hpp needs after its warp rendezvous).
// Fragment layouts follow the PTX ISA (summarised in
// docs/ptx-emulation-reference.md, sections 1-4):
//   g = lane >> 2, t = lane % 4; 16-bit elements packed low half first,
//   8-bit elements byte 0 first.
//
// Numerics (reference section 1): products are exact, the K products and C
// are summed in double in k order, and the sum is rounded once to fp32.  tf32
// operands keep only their upper 19 bits (low 13 bits dropped, as the
// hardware reads them).  s8 accumulates exactly and wraps modulo 2^32 (no
// .satfinite).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace rl::emu::ptx {

inline constexpr int kWarpLanes = 32;

// cvt.rna.tf32.f32: round to nearest, ties away from zero, to 10 explicit
// mantissa bits; the result is the fp32 pattern with its low 13 bits zero.
// Inf stays Inf (the finite test matters: Inf + 0x1000 would be a NaN), a NaN
// becomes the canonical 0x7FFFFFFF.  A finite value may carry into Inf.
inline std::uint32_t f32_to_tf32_bits(std::uint32_t u) {
  if ((u & 0x7F800000U) != 0x7F800000U) {
    return (u + 0x1000U) & 0xFFFFE000U;
  }
  return (u & 0x007FFFFFU) != 0U ? 0x7FFFFFFFU : u;
}

// .sync.aligned instructions need all 32 lanes of the warp (PTX: undefined
// otherwise, e.g. after a lane exited or in a partial last warp).  The
// emulator stops with one clear line instead of reading a missing lane's
// zero-filled registers or row addresses.
[[noreturn]] void incomplete_warp(const char* instruction, unsigned participants);

inline void require_full_warp(const char* instruction, unsigned participants) {
  if (participants != 0xFFFFFFFFU) {
    incomplete_warp(instruction, participants);
  }
}

// PTX requires naturally aligned addresses (cp.async: cp-size; ldmatrix rows:
// 16 bytes); a GPU faults or misbehaves otherwise, so the emulator stops.
[[noreturn]] void misaligned_address(const char* instruction, const void* address,
                                     unsigned alignment);

// --- mma.sync.aligned.m16n8kK.row.col -----------------------------------------

using MmaA = std::uint32_t[kWarpLanes][4];
using MmaB = std::uint32_t[kWarpLanes][2];
using MmaCF32 = float[kWarpLanes][4];
using MmaCS32 = std::int32_t[kWarpLanes][4];

enum class MmaInput { f16, bf16, tf32, e4m3, e5m2 };

// m16n8k16 for f16/bf16, m16n8k8 for tf32, m16n8k32 for e4m3/e5m2 (A and B of
// the same type); f32 accumulators.
void mma_f32_lane(MmaInput input, unsigned lane, const MmaA& a, const MmaB& b, const float (&c)[4],
                  float (&d)[4]);
void mma_f32_warp(MmaInput input, const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d);

// mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16: C and D are two .f16x2
// registers per lane (c0, c1 in register 0, low half first; c2, c3 in
// register 1), at the f32 accumulators' positions.  Exact products and C
// summed in double, rounded once to f16 (PTX leaves the accumulation's order
// and rounding unspecified beyond "at least single precision").
using MmaCF16 = std::uint32_t[kWarpLanes][2];
void mma_m16n8k16_f16_f16_warp(const MmaA& a, const MmaB& b, const MmaCF16& c, MmaCF16& d);

// mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 (wrapping int32 sums).
void mma_m16n8k32_s8_s32_lane(unsigned lane, const MmaA& a, const MmaB& b,
                              const std::int32_t (&c)[4], std::int32_t (&d)[4]);
void mma_m16n8k32_s8_s32_warp(const MmaA& a, const MmaB& b, const MmaCS32& c, MmaCS32& d);

inline void mma_m16n8k16_f16_f32_warp(const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  mma_f32_warp(MmaInput::f16, a, b, c, d);
}
inline void mma_m16n8k16_bf16_f32_warp(const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  mma_f32_warp(MmaInput::bf16, a, b, c, d);
}
inline void mma_m16n8k8_tf32_f32_warp(const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  mma_f32_warp(MmaInput::tf32, a, b, c, d);
}
inline void mma_m16n8k32_e4m3_f32_warp(const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  mma_f32_warp(MmaInput::e4m3, a, b, c, d);
}
inline void mma_m16n8k32_e5m2_f32_warp(const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  mma_f32_warp(MmaInput::e5m2, a, b, c, d);
}

// --- ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16 -----------------

// rows[L] is the 16-byte row address lane L supplies (row L % 8 of matrix
// L / 8; lanes beyond 8 * matrices are ignored).  out[j] receives lane
// `lane`'s register of matrix j, for j < matrices.
void ldmatrix_lane(unsigned lane, int matrices, bool trans, const void* const (&rows)[kWarpLanes],
                   std::uint32_t* out);
void ldmatrix_warp(int matrices, bool trans, const void* const (&rows)[kWarpLanes],
                   std::uint32_t (&out)[kWarpLanes][4]);

// --- what the runtime executes (rl::emu only: needs the scheduler) ------------

// One full-warp rendezvous per instruction: each lane posts pointers to its
// registers, and the last lane to arrive runs the _warp form above once for
// the whole warp and writes every lane's destinations.  A warp with a lane
// missing stops the process (require_full_warp).
void mma_f32_sync(MmaInput input, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                  const float (&c)[4], float (&d)[4]);
void mma_m16n8k32_s8_s32_sync(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                              const std::int32_t (&c)[4], std::int32_t (&d)[4]);
void mma_m16n8k16_f16_f16_sync(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                               const std::uint32_t (&c)[2], std::uint32_t (&d)[2]);
void ldmatrix_sync(int matrices, bool trans, const void* row, std::uint32_t* out);

// --- ld.global.cs.nc.v4.b32 / st.global.cs.v4.b32 -----------------------------

// Streaming (evict-first) 128-bit global accesses.  PTX treats cache operators
// as performance hints that do not change the memory consistency behaviour,
// so each is a plain 16-byte copy here; what the emulator keeps is PTX's
// requirement that a vector access be naturally aligned (16 bytes), which a
// GPU enforces with a misaligned-address fault.
void load_streaming_v4(const void* address, std::uint32_t (&out)[4]);
void store_streaming_v4(void* address, const std::uint32_t (&in)[4]);

// --- cp.async -------------------------------------------------------------------

// One thread's queued cp.async copies.  Copies are performed when a wait
// covers their group (PTX: groups complete in commit order), so reading the
// destination before the wait sees the old contents, as it may on a GPU.
class CpAsyncQueue {
 public:
  // cp-size bytes to dst: the first src_bytes read from src, the rest zero.
  // src is not touched when src_bytes is 0.
  void issue(void* dst, const void* src, unsigned cp_size, unsigned src_bytes);
  void commit();                             // cp.async.commit_group
  void wait_group(unsigned newest_pending);  // cp.async.wait_group N
  void wait_all();                           // cp.async.wait_all
  std::size_t pending_groups() const { return committed_.size(); }

 private:
  struct Copy {
    void* dst;
    const void* src;
    unsigned cp_size;
    unsigned src_bytes;
  };
  std::vector<Copy> open_;                   // issued, not yet committed
  std::deque<std::vector<Copy>> committed_;  // oldest group first
};

}  // namespace rl::emu::ptx
