// Hopper (sm_90a) on the emulator: the emulated device's compute capability
// (RL_EMU_CC), the shared-memory window, mbarrier, wgmma.mma_async and TMA
// (cp.async.bulk.tensor), behind the rl::ptx wrappers of rl/ptx_sm90.hpp.
//
// Semantics (PTX ISA sections named in emu/docs/hopper.md): an mbarrier's
// phase completes when its pending arrivals and its transaction count are
// both zero; a try_wait that fails blocks its thread until the barrier
// changes, so a wait nothing can complete is the scheduler's deadlock, named.
// A wgmma reads its operands at issue but hands its accumulators over only at
// the wgmma.wait_group that covers it: meanwhile the registers hold a NaN
// poison, so a kernel that reads them early computes NaN, and one that writes
// them is reported at the wait.  A TMA load lands at issue and completes its
// bytes on the mbarrier at once; a bulk store (TMA or plain) is performed at
// the cp.async.bulk.wait_group that covers it (the latest legal moment, so a
// source overwritten too early is stored as overwritten).
// Blocks run on one host worker each and their fibers never run at the same
// time, so none of this state needs atomics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rl/emu/arch.hpp"

namespace rl::emu::hopper {

// The emulated device's compute capability (rl/emu/arch.hpp).
using rl::emu::compute_capability;
// True when the emulated device is a Hopper with the sm_90a feature set.
inline bool sm90a() {
  return rl::emu::has_wgmma();
}

// ---- the shared window ------------------------------------------------------
// Device code names shared memory with 32-bit shared-window addresses
// (cvta.to.shared); wgmma descriptors keep 18 bits of them.  The emulator
// places the block's dynamic shared memory at window address 0 and each static
// __shared__ object (a thread_local of the host worker) in a 64 KiB slot
// after it, so one block's shared memory fits the 18 bits as on a GPU.  The
// low 10 bits of a window address equal the host address's, so the swizzle
// patterns (which read address bits 4-9) are the same in both.
std::uint32_t shared_address(const void* p);
// The host pointer of a window address this block has handed out.
unsigned char* shared_pointer(std::uint32_t window_address);

// ---- mbarrier -----------------------------------------------------------------
// The 64-bit object holds the whole state: pending arrivals (bits 0-20), the
// expected arrival count (21-41), the signed transaction count (42-62) and the
// phase parity (63).  Expected count 0 means "never initialised".
struct MbarrierState {
  std::uint32_t pending;
  std::uint32_t expected;
  std::int32_t tx_count;
  std::uint32_t phase;  // parity of the current (incomplete) phase
};
MbarrierState mbarrier_state(std::uint64_t word);
std::uint64_t mbarrier_word(const MbarrierState& s);

void mbarrier_init(std::uint64_t* bar, std::uint32_t count);
void mbarrier_arrive(std::uint64_t* bar);
void mbarrier_expect_tx(std::uint64_t* bar, std::uint32_t bytes);
void mbarrier_complete_tx(std::uint64_t* bar, std::uint32_t bytes);
// test_wait.parity: true once the phase of parity `parity` has completed, i.e.
// the current phase's parity differs.  Never blocks.
bool mbarrier_test_wait_parity(const std::uint64_t* bar, std::uint32_t parity);
// try_wait.parity: as test_wait; when false, the thread first sleeps until
// the barrier's state changes (the instruction's "suspend for a
// system-dependent time limit"; here the limit is the next arrival or
// transaction on this barrier).  A wait no thread can ever complete leaves
// the block with no runnable thread: the scheduler's deadlock report names
// the barrier, its phase, pending arrivals and transaction count.
bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity);

// ---- wgmma -------------------------------------------------------------------

enum class WgmmaInput { f16, bf16, tf32, e4m3, e5m2, s8 };

// A decoded shared-memory matrix descriptor ("Matrix Descriptor Format").
struct Descriptor {
  std::uint32_t start;        // window byte address (18 bits)
  std::uint32_t lbo;          // leading dimension byte offset
  std::uint32_t sbo;          // stride dimension byte offset
  std::uint32_t base_offset;  // bits 49-51
  unsigned swizzle_bytes;     // 0 (none), 32, 64 or 128
};
Descriptor decode_descriptor(std::uint64_t desc);

// The window byte address of element (mn, k) of a wgmma operand (mn: the row
// of A or the column of B; k along K) of `element_bytes`-byte elements, K-major
// (mn_major false) or MN-major, in the canonical layouts of "Shared Memory
// Matrix Layout", swizzle applied last to the absolute address.  Throws
// std::invalid_argument for what is not emulated (a non-zero base offset,
// MN-major without swizzle).
std::uint32_t operand_address(const Descriptor& d, bool mn_major, unsigned element_bytes,
                              unsigned mn, unsigned k);

// The row and column of accumulator register i of thread t (0..127) of the
// warpgroup (m64nNk*, f32 or s32: N/2 registers).
inline unsigned accumulator_row(unsigned t, unsigned i) {
  return 16U * (t / 32U) + (t % 32U) / 4U + 8U * ((i >> 1U) & 1U);
}
inline unsigned accumulator_col(unsigned t, unsigned i) {
  return 8U * (i >> 2U) + 2U * (t % 4U) + (i & 1U);
}

// The row and column (k) of element i of thread t's A fragment when A comes
// from registers (four 32-bit registers: 8 16-bit, 4 tf32 or 16 8-bit
// elements, low half of each register first): "Register Fragments", the
// figures of matrix A for m64nNk16, m64nNk8 and m64nNk32.  Warp w of the
// warpgroup holds rows 16w .. 16w + 15, as for mma.sync m16n8k{16,8,32}.
inline unsigned a_fragment_row(unsigned t, unsigned i, unsigned element_bytes) {
  const unsigned reg = i / (4U / element_bytes);
  return 16U * (t / 32U) + (t % 32U) / 4U + 8U * (reg & 1U);
}
inline unsigned a_fragment_col(unsigned t, unsigned i, unsigned element_bytes) {
  const unsigned per_reg = 4U / element_bytes, k = 32U / element_bytes;
  return per_reg * (t % 4U) + i % per_reg + (k / 2U) * ((i / per_reg) >> 1U);
}

struct WgmmaOp {
  WgmmaInput input;
  unsigned n;  // 8 .. 256, a multiple of 8
  std::uint64_t desc_a, desc_b;
  bool scale_d;           // false: D = A*B (the old D ignored)
  int scale_a, scale_b;   // +1 or -1 (imm-scale-a/b)
  bool trans_a, trans_b;  // imm-trans: MN-major operand (16-bit types only)
  // A from registers: this thread's four A registers (desc_a and trans_a
  // ignored); nullptr: A from shared memory through desc_a.
  const std::uint32_t* a_registers = nullptr;
};

// wgmma.mma_async: the calling thread's warp rendezvous, then the warp's 16
// rows of D (rows 16w .. 16w + 15, w = warp % 4) are computed once for its 32
// lanes (a row of D depends only on the same row of A, so the warpgroup's
// four warps need not meet).  d holds this thread's N/2 accumulators: float,
// or std::int32_t for s8.  The result is held back until the
// wgmma_wait_group that covers it; d is filled with kAccumulatorPoison until
// then.  A wgmma on accumulators another pending wgmma of this thread writes
// (the usual chain over K) starts from that one's result, as the hardware's
// in-order accumulation does.
// Numerics as mma.sync (reference section 1): exact products summed with C in
// double in k order, rounded once to f32; s8 sums wrap modulo 2^32.
void wgmma(const WgmmaOp& op, void* d);
// What an in-flight wgmma's accumulator registers hold: a NaN as f32, -1 as s32.
inline constexpr std::uint32_t kAccumulatorPoison = 0xFFFFFFFFU;
// wgmma.commit_group: this thread's wgmmas since the last commit become a group.
void wgmma_commit_group();
// wgmma.wait_group n: completes this thread's oldest groups until at most n
// are pending, writing their results to the accumulators.  Throws if a
// pending accumulator register was written in the meantime (its content at
// the wait is not the poison): the result would overwrite that write.
void wgmma_wait_group(unsigned n);

// ---- TMA ---------------------------------------------------------------------

// cuTensorMapEncodeTiled's enums, numbered as cuda.h numbers them.
enum class TmaDataType : std::uint32_t {
  uint8 = 0,
  uint16 = 1,
  uint32 = 2,
  int32 = 3,
  uint64 = 4,
  int64 = 5,
  float16 = 6,
  float32 = 7,
  float64 = 8,
  bfloat16 = 9,
  float32_ftz = 10,
  tfloat32 = 11,
  tfloat32_ftz = 12
};
enum class TmaSwizzle : std::uint32_t { none = 0, b32 = 1, b64 = 2, b128 = 3 };
enum class TmaInterleave : std::uint32_t { none = 0, b16 = 1, b32 = 2 };
enum class TmaOobFill : std::uint32_t { zeros = 0, nan_request_zero_fma = 1 };

// The emulated CUtensorMap: 128 bytes, 64-byte aligned, what
// encode_tensor_map_tiled writes and tma_load reads.
struct alignas(64) TensorMap {
  std::uint64_t words[16];
};

// cuTensorMapEncodeTiled: validates like the driver (CUDA driver API,
// "Tensor Map Object Management") and writes the map.  Returns 0
// (CUDA_SUCCESS) or 1 (CUDA_ERROR_INVALID_VALUE) with the reason in *why
// when why is not null.
int encode_tensor_map_tiled(TensorMap* map, TmaDataType type, std::uint32_t rank,
                            const void* global_address, const std::uint64_t* global_dim,
                            const std::uint64_t* global_strides, const std::uint32_t* box_dim,
                            const std::uint32_t* element_strides, TmaInterleave interleave,
                            TmaSwizzle swizzle, TmaOobFill fill, const char** why = nullptr);

// cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes:
// the box at coords (innermost first) lands densely at dst in the map's
// swizzle (elements outside the tensor read as zero), then the box's bytes
// complete on bar's transaction count.
void tma_load(void* dst, const TensorMap& map, const std::int32_t* coords, std::uint32_t rank,
              std::uint64_t* bar);

// Test instrumentation: while recording, every tma_load appends the tensor's
// global address and the box's coordinates (innermost first) to a log, from
// every thread of every launch, so a test can count which tiles a kernel
// loaded (the causal attention rungs skip the key tiles above the diagonal;
// tests/emu_hopper/hopper_attention_test.cpp).  record_tma_loads(true)
// clears the log; the order of the entries is the threads' order.
struct TmaLoadRecord {
  const void* global;
  std::int32_t coords[5];
  std::uint32_t rank;
};
void record_tma_loads(bool on);
std::vector<TmaLoadRecord> recorded_tma_loads();

// cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group: the box at
// coords, read densely (in the map's swizzle) from src, is written to the
// tensor; elements outside the tensor are not written.  Joins this thread's
// uncommitted bulk async-group; performed at the bulk_wait_group covering it.
void tma_store(const TensorMap& map, const std::int32_t* coords, std::uint32_t rank,
               const void* src);

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes: `bytes`
// (a multiple of 16, both addresses 16-byte aligned) from global src to
// shared dst, then the bytes complete on bar's transaction count.
void bulk_load(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar);
// cp.async.bulk.global.shared::cta.bulk_group: `bytes` (as above) from shared
// src to global dst, in this thread's uncommitted bulk async-group.
void bulk_store(void* dst, const void* src, std::uint32_t bytes);
// cp.async.bulk.commit_group: this thread's uncommitted bulk stores become a group.
void bulk_commit_group();
// cp.async.bulk.wait_group[.read] n: performs this thread's oldest groups
// until at most n are pending (.read only promises the sources were read;
// performing the whole copy is one legal way to keep that promise).  Bulk
// stores a thread leaves pending when it exits are performed then.
void bulk_wait_group(unsigned n);

}  // namespace rl::emu::hopper
