// Hopper (sm_90a) on the emulator: the emulated device's compute capability
// (RL_EMU_CC), the shared-memory window, mbarrier, wgmma.mma_async and TMA
// (cp.async.bulk.tensor), behind the rl::ptx wrappers of rl/ptx_sm90.hpp.
//
// Semantics (PTX ISA 8.x sections named in docs/ptx-emulation-reference.md
// section 8): an mbarrier's phase completes when its pending arrivals and its
// transaction count are both zero; a wgmma is computed at issue (reading its
// results before wgmma.wait_group is undefined, so computing early is legal);
// a TMA copy lands at issue and completes its bytes on the mbarrier at once.
// Blocks run on one host worker each and their fibers never run at the same
// time, so none of this state needs atomics.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rl::emu::hopper {

// The emulated device's compute capability x10: 89 (default) or 90 when the
// environment says RL_EMU_CC=90 (or 9.0).  Any other value stops the process
// with a message: a typo must not silently emulate another device.
int compute_capability();
// True when the emulated device is a Hopper with the sm_90a feature set.
inline bool sm90a() {
  return compute_capability() == 90;
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
// try_wait.parity: as test_wait; when false, lets the block's other threads
// run first (the instruction's "suspend for a system-dependent time").  A
// wait that fails kDeadlockPolls times in a row while no mbarrier of the block
// changes state can never complete: it throws, naming the barrier, and the
// launch fails as a deadlock.
bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity);
inline constexpr std::uint64_t kDeadlockPolls = std::uint64_t{1} << 22;

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

struct WgmmaOp {
  WgmmaInput input;
  unsigned n;  // 8 .. 256, a multiple of 8
  std::uint64_t desc_a, desc_b;
  bool scale_d;           // false: D = A*B (the old D ignored)
  int scale_a, scale_b;   // +1 or -1 (imm-scale-a/b)
  bool trans_a, trans_b;  // imm-trans: MN-major operand (16-bit types only)
};

// wgmma.mma_async with both operands in shared memory: the calling thread's
// warp rendezvous, then the warp's 16 rows of D (rows 16w .. 16w + 15, w =
// warp % 4) are computed once for its 32 lanes (a row of D depends only on
// the same row of A, so the warpgroup's four warps need not meet).  d holds
// this thread's N/2 accumulators: float, or std::int32_t for s8.
// Numerics as mma.sync (reference section 1): exact products summed with C in
// double in k order, rounded once to f32; s8 sums wrap modulo 2^32.
void wgmma(const WgmmaOp& op, void* d);

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

}  // namespace rl::emu::hopper
