// Hopper (sm_90a) PTX for device code: warpgroup MMA (wgmma), mbarrier, TMA
// (cp.async.bulk.tensor) and the async-proxy fence.  Included only by the last
// line of rl/ptx.hpp (device code includes rl/ptx.hpp), whose RL_PTX_FN and
// RL_PTX_UNSUPPORTED it uses.
//
// On the GPU each wrapper is inline PTX that exists only in sm_90a code
// (behind __CUDA_ARCH_FEAT_SM90_ALL: the "a" features are not forward
// compatible, so sm_100a and sm_120 builds do not have them); other GPU targets
// trap, like ptx.hpp's sm_80 wrappers below their architecture.  The records
// that use these have min_cc = max_cc = 90, and are gpu_only only where the
// emulator is not a Hopper (below).
//
// Under the emulator (RL_EMULATE) each wrapper calls the exact emulation of
// rl/emu/hopper.hpp, which exists only while the emulated device is a Hopper
// (RL_EMU_CC=90): at the default compute capability 8.9 the wrappers stop the
// process with a message naming the instruction (emu_detail::not_emulated),
// as a GPU without sm_90a traps, and the records stay gpu_only for the
// emulator (emulator_runs_sm90a()).
//
// Beside the instructions, the host-and-device arithmetic they need, pure and
// unit-tested (tests/hopper): the shared-memory matrix descriptor of wgmma,
// the 128-byte swizzle, and the parameters of a 2-D TMA tensor map.
// Semantics quoted from the PTX ISA (sections "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate", "Matrix Descriptor Format", "mbarrier",
// "cp.async.bulk.tensor", "membar/fence") and the CUDA driver API
// (cuTensorMapEncodeTiled).
#pragma once

#if !defined(RL_PTX_FN)
#error "rl/ptx_sm90.hpp is included by rl/ptx.hpp; include that instead"
#endif

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(RL_EMULATE)
#include <cstdio>
#include <cstdlib>

#include "rl/emu/hopper.hpp"
#else
#include <cuda.h>  // CUtensorMap and its enums (types only: no libcuda link)
#endif

// A kernel parameter that lives in constant parameter space and whose address
// may be taken (the tensor map TMA reads): __grid_constant__ on the GPU.
#if defined(RL_EMULATE)
#define RL_PTX_GRID_CONSTANT
#else
#define RL_PTX_GRID_CONSTANT __grid_constant__
#endif

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define RL_PTX_SM90A 1
#else
#define RL_PTX_SM90A 0
#endif

namespace rl::ptx {

#if defined(RL_EMULATE)
namespace emu_detail {

[[noreturn]] inline void not_emulated(const char* instruction) {
  std::fprintf(stderr,
               "rl::ptx: %s is sm_90a-only and the emulator has no model of it at compute "
               "capability %d: run with RL_EMU_CC=90 to emulate a Hopper\n",
               instruction, rl::emu::hopper::compute_capability());
  std::fflush(stderr);
  std::abort();
}

// Every Hopper wrapper starts here: refused unless the emulated device is sm_90a.
inline void require_sm90a(const char* instruction) {
  if (!rl::emu::hopper::sm90a()) not_emulated(instruction);
}

}  // namespace emu_detail
#define RL_PTX_SM90_NOT_EMULATED(instruction) emu_detail::require_sm90a(instruction)
#endif

// Whether the emulator runs sm_90a records: only in the emulated build with
// RL_EMU_CC=90.  The records' gpu_only is its negation (the CUDA backend never
// reads gpu_only: there the device's compute capability decides).
inline bool emulator_runs_sm90a() {
#if defined(RL_EMULATE)
  return rl::emu::hopper::sm90a();
#else
  return false;
#endif
}

// ---------------------------------------------------------------------------
// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): a
// 64-bit value that tells wgmma where an operand tile lies in shared memory
// and how its 8-row x 16-byte core matrices are laid out.
//   bits  0-13  start address >> 4 (the 18-bit shared-window address)
//   bits 16-29  leading dimension byte offset (LBO) >> 4
//   bits 32-45  stride dimension byte offset (SBO) >> 4
//   bits 49-51  matrix base offset (0: the swizzle pattern starts at an address
//               aligned to its repeat, 1024 bytes for 128B)
//   bits 62-63  swizzle: 0 none, 1 128B, 2 64B, 3 32B
// What LBO and SBO mean depends on the major-ness ("Canonical Layouts",
// T = 8 elements of 16 bits):
//   K-major, 128B swizzle:  ((8,m),(T,2k)):((8T,SBO),(1,T))
//     rows of 128 bytes, SBO = bytes between 8-row groups; LBO unused (the
//     K extent of one wgmma, 32 bytes, lies inside a 128-byte row).
//   MN-major, 128B swizzle: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))
//     64 MN-contiguous elements (128 bytes) per K row, LBO = bytes between
//     such 64-wide column blocks, SBO = bytes between 8-row groups in K.
// ---------------------------------------------------------------------------

enum class SmemSwizzle : std::uint32_t { none = 0, b128 = 1, b64 = 2, b32 = 3 };

__host__ __device__ constexpr std::uint64_t smem_descriptor(std::uint32_t shared_address,
                                                            std::uint32_t leading_byte_offset,
                                                            std::uint32_t stride_byte_offset,
                                                            SmemSwizzle swizzle) {
  return std::uint64_t{(shared_address & 0x3FFFFu) >> 4} |
         (std::uint64_t{(leading_byte_offset & 0x3FFFFu) >> 4} << 16) |
         (std::uint64_t{(stride_byte_offset & 0x3FFFFu) >> 4} << 32) |
         (std::uint64_t{static_cast<std::uint32_t>(swizzle)} << 62);
}

// The 128-byte swizzle (CuTe's Swizzle<3,4,3>) that TMA applies when it
// writes a tile and wgmma undoes when it reads one: within each 1024-byte
// block (8 rows of 128 bytes), the 16-byte chunk index (bits 4-6) is XORed
// with the row index (bits 7-9).  So the 8 rows' chunk c land in 8 different
// chunks: a column of 16-byte chunks hits every bank group once.  The
// pattern is anchored at 1024-byte-aligned addresses, hence tiles aligned to
// 1024 bytes and descriptor steps that stay inside the pattern (+32 bytes
// along K in a K-major row, +1024-byte multiples along rows).
__host__ __device__ constexpr std::uint32_t swizzle_128b(std::uint32_t byte_offset) {
  return byte_offset ^ (((byte_offset >> 7) & 7u) << 4);
}

// ---------------------------------------------------------------------------
// 2-D TMA tensor map for a row-major rows x cols matrix (the parameters of
// cuTensorMapEncodeTiled, innermost dimension first), a box of box_rows x
// box_cols elements, 128-byte swizzle, out-of-bounds elements read as zero.
// The driver's constraints, checked here with the reason: the global address
// and every row pitch (globalStrides) a multiple of 16 bytes (so a 16-bit
// matrix needs ld % 8 == 0), pitch < 2^40, box dimensions 1..256, and with
// the 128B swizzle the box's inner extent at most 128 bytes (a multiple of
// 16).  Host code.
// ---------------------------------------------------------------------------

struct TensorMap2d {
  std::uint64_t global_dim[2];           // {cols, rows}
  std::uint64_t global_stride_bytes[1];  // row pitch; dimension 0 is contiguous
  std::uint32_t box_dim[2];              // {box_cols, box_rows}
  std::uint32_t element_strides[2];      // {1, 1}: every element of the box
  std::uint32_t element_bytes;
  std::uint32_t box_bytes;  // what one copy delivers (mbarrier transaction count)
};

inline TensorMap2d tensor_map_2d(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                 std::uint32_t element_bytes, std::uint32_t box_rows,
                                 std::uint32_t box_cols) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("TMA tensor map: " + why); };
  if (rows < 1 || cols < 1 || rows > 0xFFFFFFFFll || cols > 0xFFFFFFFFll)
    fail("dimensions must be 1 .. 2^32-1 (got " + std::to_string(rows) + " x " +
         std::to_string(cols) + ")");
  if (ld < cols)
    fail("leading dimension " + std::to_string(ld) + " < cols " + std::to_string(cols));
  const std::int64_t pitch = ld * element_bytes;
  if (pitch % 16 != 0)
    fail("row pitch " + std::to_string(pitch) +
         " bytes is not a multiple of 16 (leading dimension " + std::to_string(ld) + " of " +
         std::to_string(element_bytes) + "-byte elements)");
  if (pitch >= (std::int64_t{1} << 40)) fail("row pitch must be < 2^40 bytes");
  if (box_rows < 1 || box_rows > 256 || box_cols < 1 || box_cols > 256)
    fail("box dimensions must be 1 .. 256");
  if (box_cols * element_bytes > 128 || (box_cols * element_bytes) % 16 != 0)
    fail("with the 128B swizzle the box's inner extent must be a multiple of 16 bytes, <= 128");
  return TensorMap2d{
      .global_dim = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows)},
      .global_stride_bytes = {static_cast<std::uint64_t>(pitch)},
      .box_dim = {box_cols, box_rows},
      .element_strides = {1, 1},
      .element_bytes = element_bytes,
      .box_bytes = box_rows * box_cols * element_bytes};
}

// The encoded, opaque map (128 bytes, 64-byte aligned) a kernel receives as a
// `const RL_PTX_GRID_CONSTANT TensorMap` parameter.
#if defined(RL_EMULATE)
using TensorMap = rl::emu::hopper::TensorMap;  // the emulated CUtensorMap
#else
using TensorMap = CUtensorMap;
#endif

enum class TensorMapElement { bf16, fp16 };

// cuTensorMapEncodeTiled, reached through the runtime's driver entry point
// (cudaGetDriverEntryPointByVersion: the unversioned cudaGetDriverEntryPoint is
// deprecated in CUDA 13), so nothing links against libcuda.  Throws
// std::runtime_error with the driver's code when encoding fails.  Under the
// emulator there is no driver: it throws.
inline TensorMap encode_tensor_map_2d(const TensorMap2d& p, TensorMapElement element,
                                      const void* global_address) {
#if defined(RL_EMULATE)
  namespace h = rl::emu::hopper;
  if (!h::sm90a())
    throw std::runtime_error(
        "rl::ptx::encode_tensor_map_2d: TMA exists only on a Hopper; the emulated device is "
        "compute capability 8.9 (RL_EMU_CC=90 emulates one)");
  TensorMap map{};
  const char* why = "";
  const std::uint64_t strides[1] = {p.global_stride_bytes[0]};
  if (h::encode_tensor_map_tiled(
          &map,
          element == TensorMapElement::bf16 ? h::TmaDataType::bfloat16 : h::TmaDataType::float16, 2,
          global_address, p.global_dim, strides, p.box_dim, p.element_strides,
          h::TmaInterleave::none, h::TmaSwizzle::b128, h::TmaOobFill::zeros, &why) != 0)
    throw std::runtime_error(std::string("cuTensorMapEncodeTiled (emulated) failed: ") + why);
  return map;
#else
  using Encode =
      CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static const Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn,
                                                                12000, cudaEnableDefault, &found);
    if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw std::runtime_error(std::string("cuTensorMapEncodeTiled not found through the driver "
                                           "entry point: ") +
                               cudaGetErrorString(status));
    return reinterpret_cast<Encode>(fn);
  }();
  if ((reinterpret_cast<std::uintptr_t>(global_address) & 15u) != 0)
    throw std::invalid_argument("TMA tensor map: global address not 16-byte aligned");
  CUtensorMap map{};
  const CUresult result =
      encode(&map,
             element == TensorMapElement::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                               : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
             2, const_cast<void*>(global_address), p.global_dim, p.global_stride_bytes, p.box_dim,
             p.element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(result)));
  return map;
#endif
}

// ---------------------------------------------------------------------------
// Device instructions
// ---------------------------------------------------------------------------

// The 32-bit shared-window address of a generic pointer into shared memory
// (cvta.to.shared), what descriptors, mbarrier and TMA operands take.
RL_PTX_FN std::uint32_t shared_address([[maybe_unused]] const void* p) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("cvta.to.shared (shared_address)");
  return rl::emu::hopper::shared_address(p);
#elif defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
#else
  return 0;
#endif
}

// fence.proxy.async.shared::cta: orders this thread's ordinary (generic proxy)
// shared-memory accesses before later async-proxy accesses (wgmma operand
// reads, TMA writes) of the same memory, and vice versa.
RL_PTX_FN void fence_proxy_async_shared() {
#if defined(RL_EMULATE)
  // Shared memory has one proxy on the CPU: nothing to order.
  RL_PTX_SM90_NOT_EMULATED("fence.proxy.async.shared::cta");
#elif RL_PTX_SM90A
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// --- mbarrier (shared::cta, 64-bit) ------------------------------------------
// A barrier object in shared memory with a phase: the current phase completes
// when its pending arrival count reaches zero AND its transaction count (bytes
// announced with expect_tx, counted down by completing TMA copies) is zero;
// then the phase bit flips and the counts reset to the init count.

// mbarrier.init.shared::cta.b64 [bar], count: phase 0, `count` arrivals expected.
RL_PTX_FN void mbarrier_init([[maybe_unused]] std::uint64_t* bar,
                             [[maybe_unused]] std::uint32_t count) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("mbarrier.init");
  rl::emu::hopper::mbarrier_init(bar, count);
#elif RL_PTX_SM90A
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// fence.mbarrier_init.release.cluster: makes the mbarrier.init of this thread
// visible to the async proxy (TMA's complete_tx) before any copy uses it;
// follow it by a block barrier so the other threads see the init too.
RL_PTX_FN void fence_mbarrier_init() {
#if defined(RL_EMULATE)
  // The init is a plain store on the CPU, visible to TMA's complete_tx at once.
  RL_PTX_SM90_NOT_EMULATED("fence.mbarrier_init");
#elif RL_PTX_SM90A
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mbarrier.arrive.shared::cta.b64 _, [bar]: one arrival (release semantics:
// this thread's prior memory accesses happen before the phase completes).
RL_PTX_FN void mbarrier_arrive([[maybe_unused]] std::uint64_t* bar) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("mbarrier.arrive");
  rl::emu::hopper::mbarrier_arrive(bar);
#elif RL_PTX_SM90A
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(bar)) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes: raises the
// phase's transaction count by `bytes` (the TMA copies that will complete on
// it), then arrives once.
RL_PTX_FN void mbarrier_arrive_expect_tx([[maybe_unused]] std::uint64_t* bar,
                                         [[maybe_unused]] std::uint32_t bytes) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("mbarrier.arrive.expect_tx");
  rl::emu::hopper::mbarrier_expect_tx(bar, bytes);  // expect-tx, then arrive-on
  rl::emu::hopper::mbarrier_arrive(bar);
#elif RL_PTX_SM90A
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)),
      "r"(bytes)
      : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// mbarrier.try_wait.parity.shared::cta.b64: true once the phase with parity
// `parity` (0 for the first phase, 1 for the second, ...) has completed; it
// may suspend the thread for a system-dependent time before returning false.
// Acquire semantics: what the arrivals released (and the TMA bytes) is
// visible after it returns true.
RL_PTX_FN bool mbarrier_try_wait_parity([[maybe_unused]] std::uint64_t* bar,
                                        [[maybe_unused]] std::uint32_t parity) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("mbarrier.try_wait.parity");
  return rl::emu::hopper::mbarrier_try_wait_parity(bar, parity);
#elif RL_PTX_SM90A
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
#else
  RL_PTX_UNSUPPORTED();
  return true;
#endif
}

// Spins on try_wait until the phase with parity `parity` has completed.
RL_PTX_FN void mbarrier_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  while (!mbarrier_try_wait_parity(bar, parity)) {
  }
}

// --- TMA -------------------------------------------------------------------

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
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
  RL_PTX_SM90_NOT_EMULATED("cp.async.bulk.tensor.2d");
  const std::int32_t coords[2] = {col, row};
  rl::emu::hopper::tma_load(dst, *map, coords, 2, bar);
#elif RL_PTX_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(shared_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(col), "r"(row), "r"(shared_address(bar))
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
  RL_PTX_SM90_NOT_EMULATED("cp.async.bulk.tensor.2d.global.shared::cta");
  const std::int32_t coords[2] = {col, row};
  rl::emu::hopper::tma_store(*map, coords, 2, src);
#elif RL_PTX_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(shared_address(src)), "r"(col), "r"(row)
      : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], bytes, [bar]:
// copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from
// global src to shared dst and counts them down on bar's transaction count
// (announce them first with mbarrier_arrive_expect_tx).  One thread issues it.
RL_PTX_FN void bulk_load([[maybe_unused]] void* dst, [[maybe_unused]] const void* src,
                         [[maybe_unused]] std::uint32_t bytes,
                         [[maybe_unused]] std::uint64_t* bar) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("cp.async.bulk.shared::cluster.global");
  rl::emu::hopper::bulk_load(dst, src, bytes, bar);
#elif RL_PTX_SM90A
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(shared_address(dst)),
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
  RL_PTX_SM90_NOT_EMULATED("cp.async.bulk.global.shared::cta");
  rl::emu::hopper::bulk_store(dst, src, bytes);
#elif RL_PTX_SM90A
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
  RL_PTX_SM90_NOT_EMULATED("cp.async.bulk.commit_group");
  rl::emu::hopper::bulk_commit_group();
#elif RL_PTX_SM90A
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
  RL_PTX_SM90_NOT_EMULATED("cp.async.bulk.wait_group");
  rl::emu::hopper::bulk_wait_group(N);
#elif RL_PTX_SM90A
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
  RL_PTX_SM90_NOT_EMULATED("cp.async.bulk.wait_group.read");
  rl::emu::hopper::bulk_wait_group(N);
#elif RL_PTX_SM90A
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// --- wgmma (warpgroup: 4 consecutive warps, 128 threads, warp 0's index a
// multiple of 4; every thread of the warpgroup executes each call) ----------

// wgmma.fence.sync.aligned: orders this warpgroup's prior register accesses
// (the accumulators) before the wgmma.mma_async that follow.  Needed before
// the first wgmma and whenever the accumulators were touched in between.
RL_PTX_FN void wgmma_fence() {
#if defined(RL_EMULATE)
  // Each wgmma reads its registers at issue: nothing to order.
  RL_PTX_SM90_NOT_EMULATED("wgmma.fence");
#elif RL_PTX_SM90A
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.commit_group.sync.aligned: closes a group of this warpgroup's
// uncommitted wgmma.mma_async operations.
RL_PTX_FN void wgmma_commit_group() {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.commit_group");
  rl::emu::hopper::wgmma_commit_group();
#elif RL_PTX_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.wait_group.sync.aligned N: waits until at most N groups are pending;
// only then may the accumulators of the completed groups be read and their
// shared-memory operands be overwritten.  The emulator hands the results
// over here: until then the accumulators hold a NaN poison (and writing
// them is reported), so a read before the wait fails validation.
template <int N>
RL_PTX_FN void wgmma_wait_group() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes an immediate 0..7");
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.wait_group");
  rl::emu::hopper::wgmma_wait_group(N);
#elif RL_PTX_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// A compiler-only fence on the accumulator registers (no instruction): the
// compiler may not move their reads or writes across it, so epilogue reads
// stay after wgmma_wait_group and initialisation stays before wgmma_fence.
template <int N>
RL_PTX_FN void wgmma_fence_operand([[maybe_unused]] float (&d)[N]) {
#if defined(__CUDA_ARCH__) && !defined(RL_EMULATE)
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
#endif
}

// The same for s32 accumulators (integer wgmma).
template <int N>
RL_PTX_FN void wgmma_fence_operand([[maybe_unused]] std::int32_t (&d)[N]) {
#if defined(__CUDA_ARCH__) && !defined(RL_EMULATE)
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
#endif
}

// The register lists of the m64nNk16 f32 accumulators: thread t of the
// warpgroup holds, in d[4j .. 4j+3] for each 8-column block j,
// (r, 8j + c) (r, 8j + c + 1) (r + 8, 8j + c) (r + 8, 8j + c + 1) with
// r = 16 (t / 32) + (t % 32) / 4 and c = 2 (t % 4) ("Register Fragments").
#define RL_PTX_WGMMA_D64_REGS                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
  "%56, %57, %58, %59, %60, %61, %62, %63}"
// The asm operands of 8, 64 or 128 accumulators, each through C ("+f" for
// f32, "+r" for s32).
#define RL_PTX_WGMMA_F32(x) "+f"(x)
#define RL_PTX_WGMMA_S32(x) "+r"(x)
#define RL_PTX_WGMMA_D8(C, d, i) \
  C(d[i]), C(d[i + 1]), C(d[i + 2]), C(d[i + 3]), C(d[i + 4]), C(d[i + 5]), C(d[i + 6]), C(d[i + 7])
#define RL_PTX_WGMMA_D64_OF(C, d)                                                      \
  RL_PTX_WGMMA_D8(C, d, 0), RL_PTX_WGMMA_D8(C, d, 8), RL_PTX_WGMMA_D8(C, d, 16),       \
      RL_PTX_WGMMA_D8(C, d, 24), RL_PTX_WGMMA_D8(C, d, 32), RL_PTX_WGMMA_D8(C, d, 40), \
      RL_PTX_WGMMA_D8(C, d, 48), RL_PTX_WGMMA_D8(C, d, 56)
#define RL_PTX_WGMMA_D64(d) RL_PTX_WGMMA_D64_OF(RL_PTX_WGMMA_F32, d)
#define RL_PTX_WGMMA_D128_REGS                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "     \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "     \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, " \
  "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "     \
  "%124, %125, %126, %127}"
// One m64n256 wgmma with both operands in shared memory, inside a wrapper
// whose parameters are d (128 accumulators), desc_a, desc_b and accumulate:
// the instruction, the constraint of its accumulators (RL_PTX_WGMMA_F32 or
// _S32), the immediate operands after scale-d (", 1, %131" ...) and the
// asm operands those name.
#define RL_PTX_WGMMA_SS_N256(instruction, C, immediates, ...)                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n" instruction        \
               " " RL_PTX_WGMMA_D128_REGS ", %128, %129, p" immediates ";\n}\n" \
               : RL_PTX_WGMMA_D64_OF(C, d), RL_PTX_WGMMA_D64_OF(C, (d + 64))    \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate)__VA_OPT__(, ) __VA_ARGS__)

// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16}
//   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b
// D(64 x N, f32) = A(64 x 16) * B(16 x N) + (accumulate ? D : 0), A and B in
// shared memory through descriptors.  imm-trans-a = 0: A is K-major (a
// row-major M x K tile).  imm-trans-b = TransposeB: 0 for a K-major B (each
// of the N columns contiguous in K), 1 for an N-major B (a row-major K x N
// tile, what a row-major B matrix gives); the transpose exists only for
// 16-bit types.  Asynchronous: issue between wgmma_fence and
// wgmma_commit_group, read d only after wgmma_wait_group.
// T is __nv_bfloat16 or __half.
template <typename T, bool TransposeB>
RL_PTX_FN void wgmma_m64n128k16_f32([[maybe_unused]] float (&d)[64],
                                    [[maybe_unused]] std::uint64_t desc_a,
                                    [[maybe_unused]] std::uint64_t desc_b,
                                    [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.mma_async.m64n128k16");
  rl::emu::hopper::wgmma({std::is_same_v<T, __half> ? rl::emu::hopper::WgmmaInput::f16
                                                    : rl::emu::hopper::WgmmaInput::bf16,
                          128, desc_a, desc_b, accumulate != 0, 1, 1, false, TransposeB},
                         d);
#elif RL_PTX_SM90A
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " RL_PTX_WGMMA_D64_REGS
        ", %64, %65, p, 1, 1, 0, %67;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransposeB ? 1 : 0));
  } else {
    static_assert(std::is_same_v<T, __half>, "wgmma f16/bf16 only");
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " RL_PTX_WGMMA_D64_REGS
        ", %64, %65, p, 1, 1, 0, %67;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransposeB ? 1 : 0));
  }
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.mma_async.sync.aligned.m64n128k16.f32.{bf16,f16}.{bf16,f16} with A
// from registers:
//   d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b
// As above, but thread t of the warpgroup holds its part of the 64 x 16 A
// tile in four registers of two 16-bit elements each (low half first):
// element i (0..7) is A(16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2),
// 2 (t % 4) + i % 2 + 8 (i / 4)) ("Register Fragments", the m64nNk16 figure
// of matrix A; warp w of the warpgroup holds rows 16w .. 16w + 15 in the
// layout of mma.sync m16n8k16's A).  There is no imm-trans-a.  The
// registers are read at issue.
template <typename T, bool TransposeB>
RL_PTX_FN void wgmma_m64n128k16_f32_rs([[maybe_unused]] float (&d)[64],
                                       [[maybe_unused]] const std::uint32_t (&a)[4],
                                       [[maybe_unused]] std::uint64_t desc_b,
                                       [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.mma_async.m64n128k16 (A from registers)");
  rl::emu::hopper::WgmmaOp op{std::is_same_v<T, __half> ? rl::emu::hopper::WgmmaInput::f16
                                                        : rl::emu::hopper::WgmmaInput::bf16,
                              128,
                              0,
                              desc_b,
                              accumulate != 0,
                              1,
                              1,
                              false,
                              TransposeB};
  op.a_registers = a;
  rl::emu::hopper::wgmma(op, d);
#elif RL_PTX_SM90A
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " RL_PTX_WGMMA_D64_REGS
        ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate),
          "n"(TransposeB ? 1 : 0));
  } else {
    static_assert(std::is_same_v<T, __half>, "wgmma f16/bf16 only");
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " RL_PTX_WGMMA_D64_REGS
        ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate),
          "n"(TransposeB ? 1 : 0));
  }
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// The same with N = 256 (128 accumulators per thread), what the tensor-core
// ceilings issue: the widest N amortises the A reads over the most columns.
template <typename T, bool TransposeB>
RL_PTX_FN void wgmma_m64n256k16_f32([[maybe_unused]] float (&d)[128],
                                    [[maybe_unused]] std::uint64_t desc_a,
                                    [[maybe_unused]] std::uint64_t desc_b,
                                    [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.mma_async.m64n256k16");
  rl::emu::hopper::wgmma({std::is_same_v<T, __half> ? rl::emu::hopper::WgmmaInput::f16
                                                    : rl::emu::hopper::WgmmaInput::bf16,
                          256, desc_a, desc_b, accumulate != 0, 1, 1, false, TransposeB},
                         d);
#elif RL_PTX_SM90A
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", RL_PTX_WGMMA_F32,
                         ", 1, 1, 0, %131", "n"(TransposeB ? 1 : 0));
  } else {
    static_assert(std::is_same_v<T, __half>, "wgmma f16/bf16 only");
    RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", RL_PTX_WGMMA_F32,
                         ", 1, 1, 0, %131", "n"(TransposeB ? 1 : 0));
  }
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
//   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b
// D(64 x 256, f32) = A(64 x 8) * B(8 x 256) + (accumulate ? D : 0), tf32
// operands (32-bit containers; the tensor core reads sign, 8-bit exponent and
// the top 10 mantissa bits).  No transpose immediates: for tf32 both A and B
// must be K-major in shared memory (8 elements = 32 bytes of K per row, two
// core matrices).  imm-scale-b = -1 when NegateB (the products negated).
template <bool NegateB>
RL_PTX_FN void wgmma_m64n256k8_f32_tf32([[maybe_unused]] float (&d)[128],
                                        [[maybe_unused]] std::uint64_t desc_a,
                                        [[maybe_unused]] std::uint64_t desc_b,
                                        [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.mma_async.m64n256k8.tf32");
  rl::emu::hopper::wgmma({rl::emu::hopper::WgmmaInput::tf32, 256, desc_a, desc_b, accumulate != 0,
                          1, NegateB ? -1 : 1, false, false},
                         d);
#elif RL_PTX_SM90A
  RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", RL_PTX_WGMMA_F32,
                       ", 1, %131", "n"(NegateB ? -1 : 1));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
//   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b
// D(64 x 256, f32) = A(64 x 32) * B(32 x 256) + (accumulate ? D : 0), fp8
// e4m3 operands (1 sign, 4 exponent bits with bias 7, 3 mantissa bits).  As
// for tf32, both operands K-major only (32 bytes of K per row).  Hopper adds
// fp8 products into the f32 accumulator with fewer than 24 mantissa bits
// (DeepSeek-V3 technical report, section 3.3.2).  imm-scale-b = -1 when
// NegateB.
template <bool NegateB>
RL_PTX_FN void wgmma_m64n256k32_f32_e4m3([[maybe_unused]] float (&d)[128],
                                         [[maybe_unused]] std::uint64_t desc_a,
                                         [[maybe_unused]] std::uint64_t desc_b,
                                         [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.mma_async.m64n256k32.e4m3");
  rl::emu::hopper::wgmma({rl::emu::hopper::WgmmaInput::e4m3, 256, desc_a, desc_b, accumulate != 0,
                          1, NegateB ? -1 : 1, false, false},
                         d);
#elif RL_PTX_SM90A
  RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", RL_PTX_WGMMA_F32,
                       ", 1, %131", "n"(NegateB ? -1 : 1));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 d, a-desc, b-desc, scale-d
// D(64 x 256, s32) = A(64 x 32) * B(32 x 256) + (accumulate ? D : 0), signed
// 8-bit operands, exact 32-bit integer sums (the optional .satfinite, not
// used, would clamp them on overflow).  Integer wgmma has no scale or
// transpose immediates: both operands K-major (32 bytes of K per row).  The
// accumulator fragment layout is that of the f32 one above.
RL_PTX_FN void wgmma_m64n256k32_s32_s8([[maybe_unused]] std::int32_t (&d)[128],
                                       [[maybe_unused]] std::uint64_t desc_a,
                                       [[maybe_unused]] std::uint64_t desc_b,
                                       [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_SM90_NOT_EMULATED("wgmma.mma_async.m64n256k32.s8");
  rl::emu::hopper::wgmma(
      {rl::emu::hopper::WgmmaInput::s8, 256, desc_a, desc_b, accumulate != 0, 1, 1, false, false},
      d);
#elif RL_PTX_SM90A
  RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8", RL_PTX_WGMMA_S32, "");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

#undef RL_PTX_WGMMA_D64_REGS
#undef RL_PTX_WGMMA_D64
#undef RL_PTX_WGMMA_D128_REGS
#undef RL_PTX_WGMMA_SS_N256
#undef RL_PTX_WGMMA_D64_OF
#undef RL_PTX_WGMMA_D8
#undef RL_PTX_WGMMA_F32
#undef RL_PTX_WGMMA_S32

}  // namespace rl::ptx

#undef RL_PTX_SM90A
#if defined(RL_PTX_SM90_NOT_EMULATED)
#undef RL_PTX_SM90_NOT_EMULATED
#endif
