// wgmma's shared-memory matrix descriptor and the 128-byte swizzle that TMA
// writes and wgmma reads: host-and-device arithmetic, pure and unit-tested
// (tests/hopper).  A part of rl/ptx_sm90.hpp.
#pragma once

#if !defined(RL_PTX_SM90A)
#error "rl/ptx_sm90_descriptors.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>

#include "rl/cuda.hpp"

namespace rl::ptx {

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

}  // namespace rl::ptx
