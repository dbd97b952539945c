// Host-side arithmetic of the Hopper wrappers (rl/ptx_sm90.hpp), and what the
// emulator does with a Hopper instruction.  Built against the emulator only:
// rl/ptx.hpp is device code, which a host compiler of the CUDA backend does
// not take; the arithmetic is the same constexpr code in both backends.
//
// The expected descriptor and tensor-map values are computed by hand from the
// PTX ISA ("Matrix Descriptor Format": start address bits 0-13, LBO bits
// 16-29, SBO bits 32-45, all >> 4; swizzle bits 62-63, 1 = 128B) and the
// driver API (cuTensorMapEncodeTiled: dimensions innermost first, rank - 1
// byte strides, 16-byte multiples; with the 128B swizzle the box's inner
// extent at most 128 bytes), not with the code under test.
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

namespace {

using rl::ptx::SmemSwizzle;

// ------------------------------------------------------------- descriptors

TEST(SmemDescriptor, fields_sit_where_the_ptx_isa_table_puts_them) {
  // Address 0x12340 -> 0x1234; LBO 8192 -> 0x200 at bit 16; SBO 1024 -> 0x40
  // at bit 32; 128B swizzle -> 1 at bit 62.
  const std::uint64_t expected = 0x1234ull | (0x200ull << 16) | (0x40ull << 32) | (1ull << 62);
  EXPECT_EQ(rl::ptx::smem_descriptor(0x12340, 8192, 1024, SmemSwizzle::b128), expected);
  EXPECT_EQ(expected, 0x4000'0040'0200'1234ull);  // the same, written out
}

TEST(SmemDescriptor, swizzle_modes_encode_as_0_none_1_128b_2_64b_3_32b) {
  EXPECT_EQ(rl::ptx::smem_descriptor(0, 0, 0, SmemSwizzle::none) >> 62, 0u);
  EXPECT_EQ(rl::ptx::smem_descriptor(0, 0, 0, SmemSwizzle::b128) >> 62, 1u);
  EXPECT_EQ(rl::ptx::smem_descriptor(0, 0, 0, SmemSwizzle::b64) >> 62, 2u);
  EXPECT_EQ(rl::ptx::smem_descriptor(0, 0, 0, SmemSwizzle::b32) >> 62, 3u);
}

TEST(SmemDescriptor, fields_keep_only_their_14_bits_and_leave_the_gaps_zero) {
  // Shared-window addresses are 18 bits (256 KiB): bit 18 and up is dropped,
  // the low 4 bits too.  The largest field values fill exactly bits 0-13,
  // 16-29 and 32-45.
  EXPECT_EQ(rl::ptx::smem_descriptor(0x40100, 0, 0, SmemSwizzle::none), 0x10ull);
  const std::uint64_t all = rl::ptx::smem_descriptor(0x3FFF0, 0x3FFF0, 0x3FFF0, SmemSwizzle::none);
  EXPECT_EQ(all, 0x3FFFull | (0x3FFFull << 16) | (0x3FFFull << 32));
  EXPECT_EQ(all & 0xFFFF'C000'C000'C000ull, 0u);
}

TEST(SmemDescriptor, the_rungs_k_steps_move_only_the_start_address) {
  // A (K-major): +32 bytes per k16 step; B (N-major): +2048 bytes.  Tiles at
  // 0x8400 (a 1024-byte multiple), consumer 1's A rows at +8192.
  const std::uint32_t a = 0x8400 + 8192, b = 0x8400 + 16384;
  for (std::uint32_t step = 0; step < 4; ++step) {
    const std::uint64_t da = rl::ptx::smem_descriptor(a + 32 * step, 16, 1024, SmemSwizzle::b128);
    const std::uint64_t db =
        rl::ptx::smem_descriptor(b + 2048 * step, 8192, 1024, SmemSwizzle::b128);
    EXPECT_EQ(da & 0x3FFF, (a + 32 * step) >> 4);
    EXPECT_EQ((da >> 16) & 0x3FFF, 1u);
    EXPECT_EQ((da >> 32) & 0x3FFF, 64u);
    EXPECT_EQ(db & 0x3FFF, (b + 2048 * step) >> 4);
    EXPECT_EQ((db >> 16) & 0x3FFF, 512u);
    EXPECT_EQ((db >> 32) & 0x3FFF, 64u);
    EXPECT_EQ(da >> 62, 1u);
    EXPECT_EQ(db >> 62, 1u);
  }
}

// ------------------------------------------------------------- 128B swizzle

TEST(Swizzle128B, row_r_chunk_c_lands_in_chunk_c_xor_r_within_its_1024_bytes) {
  for (std::uint32_t row = 0; row < 8; ++row)
    for (std::uint32_t chunk = 0; chunk < 8; ++chunk)
      for (std::uint32_t byte = 0; byte < 16; byte += 5) {
        const std::uint32_t logical = row * 128 + chunk * 16 + byte;
        EXPECT_EQ(rl::ptx::swizzle_128b(logical), row * 128 + (chunk ^ row) * 16 + byte);
      }
}

TEST(Swizzle128B, a_column_of_16_byte_chunks_covers_all_8_chunk_positions) {
  // Eight rows reading the same logical chunk (what a wgmma core matrix or a
  // column of ldmatrix rows does) hit eight different 16-byte positions: the
  // 32 banks are each used once per 128 bytes.
  for (std::uint32_t chunk = 0; chunk < 8; ++chunk) {
    std::set<std::uint32_t> positions;
    for (std::uint32_t row = 0; row < 8; ++row)
      positions.insert((rl::ptx::swizzle_128b(row * 128 + chunk * 16) % 128) / 16);
    EXPECT_EQ(positions.size(), 8u) << "chunk " << chunk;
  }
}

TEST(Swizzle128B, is_a_permutation_repeating_every_1024_bytes) {
  std::set<std::uint32_t> image;
  for (std::uint32_t x = 0; x < 1024; ++x) {
    image.insert(rl::ptx::swizzle_128b(x));
    // Why tiles sit on 1024-byte boundaries and B's k16 step (2048 bytes)
    // keeps the pattern: moving by a multiple of 1024 commutes with it.
    EXPECT_EQ(rl::ptx::swizzle_128b(x + 2048), rl::ptx::swizzle_128b(x) + 2048);
  }
  EXPECT_EQ(image.size(), 1024u);
  EXPECT_EQ(*image.rbegin(), 1023u);
}

// ------------------------------------------------------------- tensor maps

TEST(TensorMap2d, a_of_the_gemm_rung_is_k_innermost_with_a_128_by_64_box) {
  // A: M = 300 rows, K = 520 columns of bf16, lda = K; box 128 rows x 64.
  const rl::ptx::TensorMap2d a = rl::ptx::tensor_map_2d(300, 520, 520, 2, 128, 64);
  EXPECT_EQ(a.global_dim[0], 520u);
  EXPECT_EQ(a.global_dim[1], 300u);
  EXPECT_EQ(a.global_stride_bytes[0], 1040u);
  EXPECT_EQ(a.box_dim[0], 64u);  // 64 x 2 bytes = 128: the swizzle's row
  EXPECT_EQ(a.box_dim[1], 128u);
  EXPECT_EQ(a.element_strides[0], 1u);
  EXPECT_EQ(a.element_strides[1], 1u);
  EXPECT_EQ(a.box_bytes, 16384u);
}

TEST(TensorMap2d, b_of_the_gemm_rung_is_n_innermost_with_a_64_by_64_box) {
  // B: K = 520 rows, N = 264 columns of fp16, ldb = N; box 64 rows x 64.
  const rl::ptx::TensorMap2d b = rl::ptx::tensor_map_2d(520, 264, 264, 2, 64, 64);
  EXPECT_EQ(b.global_dim[0], 264u);
  EXPECT_EQ(b.global_dim[1], 520u);
  EXPECT_EQ(b.global_stride_bytes[0], 528u);
  EXPECT_EQ(b.box_dim[0], 64u);
  EXPECT_EQ(b.box_dim[1], 64u);
  EXPECT_EQ(b.box_bytes, 8192u);
  // One stage of the rung: an A box and two B boxes, the mbarrier's
  // transaction count (kStageBytes).
  EXPECT_EQ(rl::ptx::tensor_map_2d(300, 520, 520, 2, 128, 64).box_bytes + 2 * b.box_bytes, 32768u);
}

TEST(TensorMap2d, refuses_a_row_pitch_that_is_not_a_multiple_of_16_bytes) {
  // K = 65 bf16: 130-byte rows.  The message names the pitch.
  try {
    rl::ptx::tensor_map_2d(127, 65, 65, 2, 128, 64);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("130 bytes is not a multiple of 16"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(rl::ptx::tensor_map_2d(127, 65, 72, 2, 128, 64));  // padded pitch: fine
}

TEST(TensorMap2d, refuses_boxes_the_128b_swizzle_or_the_hardware_cannot_take) {
  EXPECT_THROW(rl::ptx::tensor_map_2d(256, 256, 256, 2, 64, 128), std::invalid_argument);  // 256 B
  EXPECT_THROW(rl::ptx::tensor_map_2d(256, 256, 256, 2, 257, 64), std::invalid_argument);
  EXPECT_THROW(rl::ptx::tensor_map_2d(256, 256, 256, 2, 0, 64), std::invalid_argument);
  EXPECT_THROW(rl::ptx::tensor_map_2d(256, 256, 256, 2, 64, 4), std::invalid_argument);  // 8 B
  EXPECT_THROW(rl::ptx::tensor_map_2d(256, 256, 128, 2, 64, 64),
               std::invalid_argument);  // ld < cols
  EXPECT_THROW(rl::ptx::tensor_map_2d(0, 256, 256, 2, 64, 64), std::invalid_argument);
}

// At the default compute capability 8.9 the emulator has no model of the
// Hopper instructions: reaching one stops the process with the instruction's
// name, never a silent no-op.
TEST(HopperEmulation, a_hopper_instruction_stops_the_process_with_its_name) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(rl::ptx::wgmma_fence(), "wgmma.fence is sm_90a-only and the emulator has no model");
  std::uint64_t bar = 0;
  EXPECT_DEATH(rl::ptx::mbarrier_init(&bar, 1), "mbarrier.init is sm_90 and later and the emulator");
}

TEST(HopperEmulation, tensor_map_encoding_throws_without_a_driver) {
  const rl::ptx::TensorMap2d p = rl::ptx::tensor_map_2d(64, 64, 64, 2, 64, 64);
  EXPECT_THROW(rl::ptx::encode_tensor_map_2d(p, rl::ptx::TensorMapElement::bf16, nullptr),
               std::runtime_error);
}

}  // namespace
