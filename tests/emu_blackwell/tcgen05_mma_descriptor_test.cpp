// tcgen05.mma's descriptors against the PTX ISA's tables: the shared-memory
// descriptor (Table 40) with its version bits and 3-bit swizzle modes, the
// instruction descriptors (Tables 42-44) as rl/ptx_sm100_mma.hpp encodes them,
// operand addresses computed by hand from the canonical layouts (9.7.16.3.3),
// an MN-major B placed by an independent writer, and every refusal: a field
// out of range names the descriptor, the field with its bits and its value.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "rl/ptx_sm100_mma.hpp"
#include "tcgen05_mma_test_support.hpp"

namespace {

using namespace tcgen05_test;
using t5::Element;
using t5::Kind;
using t5::ScaleVec;
namespace ptx = rl::ptx;

// The message of what `f` throws (std::invalid_argument), or "" if nothing.
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Tcgen05Descriptor, smem_descriptor_round_trips_and_names_bad_fields) {
  const std::uint64_t desc =
      ptx::tcgen05_smem_descriptor(0x12340, 0x2000, 0x400, ptx::Tcgen05Swizzle::b64);
  const t5::SmemDescriptor d = t5::decode_smem_descriptor(desc, "b-desc");
  EXPECT_EQ(d.start, 0x12340u);
  EXPECT_EQ(d.lbo, 0x2000u);
  EXPECT_EQ(d.sbo, 0x400u);
  EXPECT_EQ(d.swizzle_bytes, 64u);
  EXPECT_EQ(d.base_offset, 0u);
  EXPECT_FALSE(d.lbo_absolute);
  EXPECT_EQ(t5::decode_smem_descriptor(
                ptx::tcgen05_smem_descriptor(0, 0, 0, ptx::Tcgen05Swizzle::b32), "x")
                .swizzle_bytes,
            32u);
  EXPECT_EQ(t5::decode_smem_descriptor(
                ptx::tcgen05_smem_descriptor(0, 0, 0, ptx::Tcgen05Swizzle::b128), "x")
                .swizzle_bytes,
            128u);
  // A wgmma descriptor (no version bits) is refused, naming the field.
  EXPECT_EQ(refusal([&] { t5::decode_smem_descriptor(desc & ~(7ULL << 46), "a-desc"); }),
            "tcgen05.mma: shared memory descriptor a-desc field version (bits 46-48) = 0: must be "
            "the constant 0b001");
  const std::string mode3 =
      refusal([&] { t5::decode_smem_descriptor((desc & ~(7ULL << 61)) | (3ULL << 61), "b-desc"); });
  EXPECT_NE(mode3.find("swizzling mode (bits 61-63) = 3"), std::string::npos) << mode3;
  EXPECT_NE(refusal([&] {
              t5::decode_smem_descriptor(desc | (1ULL << 55), "b-desc");
            }).find("fixed constant (bits 53-60) = 4"),
            std::string::npos);
}

TEST(Tcgen05Descriptor, operand_addresses_by_hand) {
  // K-major, no swizzle, LBO 128, SBO 256, 2-byte elements: 8 x 16-byte core matrices.
  const t5::SmemDescriptor none{0x400, 128, 256, 0, false, 0, false};
  EXPECT_EQ(t5::operand_address(none, false, 16, 3, 9), 0x400u + 128 + 48 + 2);
  EXPECT_EQ(t5::operand_address(none, false, 16, 9, 0), 0x400u + 256 + 16);
  // K-major, 128-byte swizzle: row 5, k 9 (byte 18, chunk 1 ^ 5 = 4).
  const t5::SmemDescriptor sw128{0x2000, 16, 1024, 0, false, 128, false};
  EXPECT_EQ(t5::operand_address(sw128, false, 16, 5, 9), 0x2000u + 640 + 66);
  // 64-byte swizzle: rows of 64 bytes, bits [4,6) ^= bits [7,9): row 3 (linear
  // 192: bit 7 set -> chunk ^ 1), byte 20 (chunk 1) -> chunk 0: 192 + 4.
  const t5::SmemDescriptor sw64{0x1000, 16, 512, 0, false, 64, false};
  EXPECT_EQ(t5::operand_address(sw64, false, 8, 3, 20), 0x1000u + 192 + 4);
  // 32-byte swizzle: rows of 32 bytes; row 4 (linear 128: bit 7) chunk 0 -> 1.
  const t5::SmemDescriptor sw32{0x800, 16, 256, 0, false, 32, false};
  EXPECT_EQ(t5::operand_address(sw32, false, 8, 4, 3), 0x800u + 128 + 16 + 3);
  // Packed 4-bit (kind::mxf4): k 37 is in byte 18 (its high nibble).
  EXPECT_EQ(t5::operand_address(none, false, 4, 0, 37), 0x400u + 128 + 2);
  // MN-major, no swizzle ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)): f16 n 11, k 9:
  // MN byte 22 -> 16-byte block 1 (SBO) + 6; k 9 -> row 1 of k block 1 (LBO).
  EXPECT_EQ(t5::operand_address(none, true, 16, 11, 9), 0x400u + 256 + 6 + 16 + 128);
  // MN-major, 128-byte swizzle: f16 n 70 (byte 140: block 1 via LBO, byte 12),
  // k 10 (row 2 of k block 1 via SBO): 0x2000 + 16 + 12 + 256 + 1024, then
  // chunk 0 ^ 2 (row bits of the absolute address) -> + 32.
  EXPECT_EQ(t5::operand_address(sw128, true, 16, 70, 10),
            (0x2000u + 16 + 1024 + 256 + 12) ^ (2u << 4));
  // Not emulated: base offset, 32-byte atomicity, absolute LBO.
  EXPECT_NE(refusal([] {
              t5::operand_address({0, 0, 0, 3, false, 128, false}, false, 16, 0, 0);
            }),
            "");
  EXPECT_NE(refusal([] {
              t5::operand_address({0, 0, 0, 0, false, 128, true}, true, 32, 0, 0);
            }),
            "");
  EXPECT_NE(refusal([] {
              t5::operand_address({0, 0, 0, 0, true, 128, false}, false, 8, 0, 0);
            }),
            "");
}

TEST(Tcgen05Descriptor, instruction_descriptors_decode_as_encoded) {
  const t5::InstrDescriptor f16 = t5::decode_instr_descriptor(
      Kind::f16, ScaleVec::none,
      ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::bf16, 128, 256, true, false));
  EXPECT_EQ(f16.m, 128u);
  EXPECT_EQ(f16.n, 256u);
  EXPECT_EQ(f16.a, Element::bf16);
  EXPECT_TRUE(f16.a_mn_major);
  EXPECT_FALSE(f16.b_mn_major);
  EXPECT_EQ(f16.d, t5::Accumulator::f32);
  const t5::InstrDescriptor f8 = t5::decode_instr_descriptor(
      Kind::f8f6f4, ScaleVec::none,
      ptx::tcgen05_idesc_f8f6f4(ptx::Tcgen05F8F6F4Type::e3m2, ptx::Tcgen05F8F6F4Type::e2m1, 64, 8));
  EXPECT_EQ(f8.a, Element::e3m2);
  EXPECT_EQ(f8.b, Element::e2m1);
  EXPECT_EQ(f8.m, 64u);
  const t5::InstrDescriptor mx = t5::decode_instr_descriptor(
      Kind::mxf8f6f4, ScaleVec::x1,
      ptx::tcgen05_idesc_mxf8f6f4(ptx::Tcgen05F8F6F4Type::e5m2, ptx::Tcgen05F8F6F4Type::e2m3, 120,
                                  3, 1));
  EXPECT_EQ(mx.n, 120u);
  EXPECT_EQ(mx.sfa_id, 3u);
  EXPECT_EQ(mx.sfb_id, 1u);
  EXPECT_TRUE(mx.scale_ue8m0);
  const t5::InstrDescriptor nv = t5::decode_instr_descriptor(Kind::mxf4nvf4, ScaleVec::x4,
                                                             ptx::tcgen05_idesc_mxf4(256, false));
  EXPECT_FALSE(nv.scale_ue8m0);
  EXPECT_EQ(nv.a, Element::e2m1);
  const t5::InstrDescriptor i8 = t5::decode_instr_descriptor(
      Kind::i8, ScaleVec::none,
      ptx::tcgen05_idesc_i8(ptx::Tcgen05I8Type::s8, ptx::Tcgen05I8Type::u8, 128, 48, true));
  EXPECT_EQ(i8.a, Element::s8);
  EXPECT_EQ(i8.b, Element::u8);
  EXPECT_TRUE(i8.saturate);
  EXPECT_EQ(i8.d, t5::Accumulator::s32);
}

TEST(Tcgen05Descriptor, fields_out_of_range_are_refused_by_name_and_value) {
  const std::uint32_t f16 = ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::f16, 128, 64);
  auto plain = [](Kind k, std::uint32_t idesc) {
    return refusal([&] { t5::decode_instr_descriptor(k, ScaleVec::none, idesc); });
  };
  auto scaled = [](Kind k, ScaleVec v, std::uint32_t idesc) {
    return refusal([&] { t5::decode_instr_descriptor(k, v, idesc); });
  };
  EXPECT_EQ(plain(Kind::f16, (f16 & ~(31U << 24)) | (6U << 24)),
            "tcgen05.mma.kind::f16: instruction descriptor field M >> 4 (bits 24-28) = 6: "
            "cta_group::1 has M = 64 (4) or M = 128 (8)");
  EXPECT_NE(plain(Kind::f16, f16 & ~(63U << 17)).find("N >> 3 (bits 17-22) = 0"),
            std::string::npos);
  EXPECT_NE(plain(Kind::f16, f16 | (40U << 17)).find("N = 8 .. 256"), std::string::npos);
  EXPECT_NE(plain(Kind::f16, f16 | 4U).find("sparsity (bit 2) = 1"), std::string::npos);
  EXPECT_NE(plain(Kind::f16, f16 | (1U << 30)).find("maximum shift (bits 30-31) = 1"),
            std::string::npos);
  EXPECT_NE(plain(Kind::f16, f16 | (1U << 23)).find("reserved (bit 23) = 1"), std::string::npos);
  EXPECT_NE(plain(Kind::tf32, f16).find("atype (bits 7-9) = 0"), std::string::npos);
  EXPECT_NE(plain(Kind::f8f6f4, ptx::tcgen05_idesc_f8f6f4(ptx::Tcgen05F8F6F4Type::e4m3,
                                                          ptx::Tcgen05F8F6F4Type::e4m3, 128, 64) |
                                    (2U << 7))
                .find("atype (bits 7-9) = 2"),
            std::string::npos);
  EXPECT_NE(
      plain(Kind::f8f6f4, ptx::tcgen05_idesc_f8f6f4(ptx::Tcgen05F8F6F4Type::e2m1,
                                                    ptx::Tcgen05F8F6F4Type::e4m3, 128, 64, true))
          .find("transpose A (bit 15) = 1"),
      std::string::npos);
  const std::uint32_t i8 =
      ptx::tcgen05_idesc_i8(ptx::Tcgen05I8Type::s8, ptx::Tcgen05I8Type::s8, 128, 40);
  EXPECT_NE(plain(Kind::i8, i8).find("N = 40"), std::string::npos);
  EXPECT_NE(plain(Kind::i8,
                  ptx::tcgen05_idesc_i8(ptx::Tcgen05I8Type::s8, ptx::Tcgen05I8Type::s8, 128, 64) |
                      (1U << 13))
                .find("negate A (bit 13) = 1"),
            std::string::npos);
  EXPECT_NE(plain(Kind::f16, f16 | (1U << 3)).find("saturate (bit 3) = 1"), std::string::npos);
  // Block-scaled: M = 128 only, the scale type and ids the scale vector allows.
  EXPECT_NE(scaled(Kind::mxf8f6f4, ScaleVec::x1,
                   ptx::tcgen05_idesc_mxf8f6f4(ptx::Tcgen05F8F6F4Type::e4m3,
                                               ptx::Tcgen05F8F6F4Type::e4m3, 64) &
                       ~(3U << 27))
                .find("M >> 7 (bits 27-28) = 0"),
            std::string::npos);
  EXPECT_NE(scaled(Kind::mxf4, ScaleVec::x2, ptx::tcgen05_idesc_mxf4(64, false))
                .find("scale type (bit 23) = 0"),
            std::string::npos);
  EXPECT_NE(scaled(Kind::mxf4nvf4, ScaleVec::x2, ptx::tcgen05_idesc_mxf4(64, true, 1, 0))
                .find("scale factor A ID (bits 29-30) = 1"),
            std::string::npos);
  EXPECT_NE(scaled(Kind::mxf4nvf4, ScaleVec::x4, ptx::tcgen05_idesc_mxf4(64, true, 0, 2))
                .find("scale factor B ID (bits 4-5) = 2"),
            std::string::npos);
  EXPECT_NE(scaled(Kind::mxf4, ScaleVec::x2, ptx::tcgen05_idesc_mxf4(64, true) | (1U << 31))
                .find("K dimension (bit 31) = 1"),
            std::string::npos);
  EXPECT_NE(scaled(Kind::mxf4, ScaleVec::x4, ptx::tcgen05_idesc_mxf4(64, true)).find("scale_vec"),
            std::string::npos);
  EXPECT_NE(scaled(Kind::mxf4, ScaleVec::x2, ptx::tcgen05_idesc_mxf4(64, true) | (1U << 15))
                .find("transpose A (bit 15) = 1"),
            std::string::npos);
}

TEST(Tcgen05Descriptor, tensor_memory_addresses_are_checked_at_issue) {
  t5::MmaOp op;
  op.kind = Kind::f16;
  op.idesc = ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::f16, 128, 64);
  op.a_desc = op.b_desc = ptx::tcgen05_smem_descriptor(0, 128, 256, ptx::Tcgen05Swizzle::none);
  op.d_tmem = t5::tmem_address(16, 0);
  EXPECT_NE(refusal([&] { t5::check(op); }).find("d-tmem lane 16 must be 0 for M = 128"),
            std::string::npos);
  op.idesc = ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::f16, 64, 64);
  EXPECT_EQ(refusal([&] { t5::check(op); }), "");
  op.d_tmem = t5::tmem_address(8, 0);
  EXPECT_NE(refusal([&] { t5::check(op); }).find("must be 0 or 16 for M = 64"), std::string::npos);
  op.d_tmem = t5::tmem_address(16, 0);
  op.a_from_tmem = true;
  op.a_tmem = t5::tmem_address(0, 64);
  EXPECT_NE(refusal([&] { t5::check(op); }).find("a-tmem lane 0 must equal d-tmem's lane 16"),
            std::string::npos);
  op.a_from_tmem = false;
  op.b_desc = 0;  // a zeroed descriptor: no version bits
  EXPECT_NE(refusal([&] { t5::check(op); }).find("b-desc field version"), std::string::npos);
}

// A device without tcgen05 refuses the instruction before looking at its
// operands (rl/emu/arch.hpp decides): the child process emulates a Hopper.
__global__ void issue_one_mma() {
  if (threadIdx.x == 0) ptx::tcgen05_mma<ptx::Tcgen05Kind::f16>(0, 0, 0, 0, false);
}

TEST(Tcgen05Descriptor, a_device_without_tcgen05_refuses_the_instruction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_CC", "90", 1);
        rl::launch(issue_one_mma, dim3(1), dim3(32), 0, nullptr);
        std::exit(cudaDeviceSynchronize() == cudaSuccess ? 0 : 3);
      },
      testing::ExitedWithCode(3),
      "kernel .*issue_one_mma.* failed in block \\(0,0,0\\): .*tcgen05.mma needs "
      "sm_100a/sm_103a: run with RL_EMU_CC=100 \\(the emulated device is compute capability "
      "9.0\\)");
}

// sm_103a (B300) has no kind::i8: refused there, with the device named.
__global__ void issue_one_i8_mma() {
  if (threadIdx.x == 0) ptx::tcgen05_mma<ptx::Tcgen05Kind::i8>(0, 0, 0, 0, false);
}

TEST(Tcgen05Descriptor, kind_i8_is_refused_on_sm_103a) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("RL_EMU_CC", "103", 1);
        rl::launch(issue_one_i8_mma, dim3(1), dim3(32), 0, nullptr);
        std::exit(cudaDeviceSynchronize() == cudaSuccess ? 0 : 3);
      },
      testing::ExitedWithCode(3),
      "kernel .*issue_one_i8_mma.* failed in block \\(0,0,0\\): .*tcgen05.mma.kind::i8 does not "
      "exist on sm_103a");
}

// B N-major (the transpose bit) in the 128-byte swizzle, written from the
// canonical layout ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)): 64 f16 per 128-byte
// row (one k), 8 k-rows an atom, SBO = 1024 to the next 8 k, LBO = 2048 to
// the next 64 columns.  A transposed or misplaced element changes D.
TEST(Tcgen05Descriptor, n_major_b_matches_the_plain_loop) {
  Machine mc;
  std::mt19937 rng(5);
  const unsigned m = 128, n = 128, kk = 16;
  const Operand a = random_operand(Element::f16, m, kk, rng),
                b = random_operand(Element::f16, n, kk, rng);
  const Placed pa = place_k_major(mc, a, Kind::f16, Element::f16, 0, true);
  const std::uint32_t b_start = 32768;
  for (unsigned col = 0; col < n; ++col)
    for (unsigned k = 0; k < kk; ++k) {
      const std::uint32_t linear =
          b_start + (col * 2 / 128) * 2048 + (col * 2) % 128 + (k % 8) * 128 + (k / 8) * 1024;
      const std::uint32_t at = linear ^ (((linear >> 7) & 7U) << 4);
      const std::uint32_t code = b.code[col * kk + k];
      mc.smem.at(at) = static_cast<unsigned char>(code);
      mc.smem.at(at + 1) = static_cast<unsigned char>(code >> 8);
    }
  t5::MmaOp op;
  op.kind = Kind::f16;
  op.d_tmem = t5::tmem_address(0, 0);
  op.a_desc = ptx::tcgen05_smem_descriptor(0, pa.lbo, pa.sbo, ptx::Tcgen05Swizzle::b128);
  op.b_desc = ptx::tcgen05_smem_descriptor(b_start, 2048, 1024, ptx::Tcgen05Swizzle::b128);
  op.idesc = ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::f16, m, n, false, true);
  t5::perform(op, mc.memory());
  for (unsigned row = 0; row < m; ++row)
    for (unsigned col = 0; col < n; ++col) {
      double sum = 0;
      for (unsigned k = 0; k < kk; ++k) sum += a.value[row * kk + k] * b.value[col * kk + k];
      ASSERT_EQ(std::bit_cast<float>(mc.cell(row, col)), static_cast<float>(sum))
          << row << " " << col;
    }
}

}  // namespace
