// sm_120a mma.sync, every kind and input-type pair, on hand-built register
// files (rl::emu::sm120 directly): D equals C + sum A B over integers, scaled
// by the selected powers of two for the block-scaled kinds, exactly.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sm120_mma_test_support.hpp"

namespace {

using namespace sm120_test;

const Format kTypes[] = {Format::e4m3, Format::e5m2, Format::e3m2, Format::e2m3, Format::e2m1};

void expect_d(const Mma& op, const Operands& in, const MmaCF32& d,
              const ScalePowers* powers = nullptr) {
  int wrong = 0;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      if (d_at(d, m, n) != expected(op, in, m, n, powers) && ++wrong <= 4)
        ADD_FAILURE() << rl::emu::sm120::instruction_name(op) << ": D(" << m << "," << n
                      << ") = " << d_at(d, m, n) << ", expected " << expected(op, in, m, n, powers);
}

std::string pair_name(Format a, Format b) {
  return std::string(rl::emu::narrow::name_of(a)) + "_" + rl::emu::narrow::name_of(b);
}

// Varies by row, column and block, so a scale taken from the wrong one shows.
ScalePowers varied_powers() {
  ScalePowers p;
  for (int j = 0; j < 4; ++j) {
    for (int m = 0; m < 16; ++m) p.a[m][j] = (m + 3 * j) % 5 - 2;
    for (int n = 0; n < 8; ++n) p.b[n][j] = (2 * n + j) % 5 - 2;
  }
  return p;
}

TEST(Sm120MmaF8f6f4, every_type_pair_gives_c_plus_the_integer_product) {
  for (const Format a : kTypes)
    for (const Format b : kTypes) {
      SCOPED_TRACE(pair_name(a, b));
      const Mma op{Kind::f8f6f4, a, b, Format::ue8m0, 0};
      const Operands in = patterned(32);
      MmaA ra;
      MmaB rb;
      MmaCF32 rc;
      MmaCF32 d;
      pack(op, in, ra, rb, rc);
      rl::emu::sm120::mma_warp(op, ra, rb, rc, d);
      expect_d(op, in, d);
    }
}

// The 6-bit types sit in bits 5:0 of their byte and e2m1 in bits 5:2: ones in
// the padding bits change nothing, and e2m1 in bits 3:0 reads as another
// value (the CUTLASS shift by two exists for a reason).
TEST(Sm120MmaF8f6f4, padding_bits_are_ignored_and_e2m1_sits_in_bits_5_to_2) {
  for (const Format f : {Format::e3m2, Format::e2m3, Format::e2m1}) {
    SCOPED_TRACE(rl::emu::narrow::name_of(f));
    const Mma op{Kind::f8f6f4, f, f, Format::ue8m0, 0};
    const Operands in = patterned(32, 1);
    MmaA ra;
    MmaB rb;
    MmaCF32 rc;
    MmaCF32 d;
    pack(op, in, ra, rb, rc, /*dirty_padding=*/true);
    rl::emu::sm120::mma_warp(op, ra, rb, rc, d);
    expect_d(op, in, d);
  }
  const Mma op{Kind::f8f6f4, Format::e2m1, Format::e2m1, Format::ue8m0, 0};
  MmaA ra{};
  const MmaB rb{};
  ra[0][0] = encode_int(Format::e2m1, 1);  // A(0, 0) = 1 in the low nibble: not where e2m1 goes
  EXPECT_EQ(rl::emu::sm120::a_value(op, ra, 0, 0), 0.0);
  ra[0][0] = encode_int(Format::e2m1, 1) << 2U;
  EXPECT_EQ(rl::emu::sm120::a_value(op, ra, 0, 0), 1.0);
  EXPECT_EQ(rl::emu::sm120::b_value(op, rb, 0, 0), 0.0);
}

TEST(Sm120MmaMxf8f6f4, every_type_pair_scales_each_row_and_column_by_its_ue8m0_factor) {
  const ScalePowers powers = varied_powers();
  for (const Format a : kTypes)
    for (const Format b : kTypes) {
      SCOPED_TRACE(pair_name(a, b));
      const Mma op{Kind::mxf8f6f4, a, b, Format::ue8m0, 1};
      const Operands in = patterned(32, 2);
      MmaA ra;
      MmaB rb;
      MmaCF32 rc;
      MmaCF32 d;
      ScaleRegs sa;
      ScaleRegs sb;
      pack(op, in, ra, rb, rc);
      pack_scales(op, powers, {}, {}, 0xFFU, sa, sb);
      rl::emu::sm120::mma_block_scaled_warp(op, ra, rb, rc, sa, {}, sb, {}, d);
      expect_d(op, in, d, &powers);
    }
}

struct K64Case {
  Kind kind;
  Format scale;
  int vec;
};

// mxf4 (2X ue8m0), mxf4nvf4 (2X ue8m0, 4X ue4m3, and 4X ue8m0 from PTX 9.1):
// packed e2m1, K = 64, each 64 / vec-wide k-block scaled by its own factors.
TEST(Sm120MmaE2m1K64, each_kind_and_scale_vector_scales_every_k_block_by_its_own_factor) {
  const ScalePowers powers = varied_powers();
  for (const K64Case& k :
       {K64Case{Kind::mxf4, Format::ue8m0, 2}, K64Case{Kind::mxf4nvf4, Format::ue8m0, 2},
        K64Case{Kind::mxf4nvf4, Format::ue4m3, 4}, K64Case{Kind::mxf4nvf4, Format::ue8m0, 4}}) {
    const Mma op{k.kind, Format::e2m1, Format::e2m1, k.scale, k.vec};
    SCOPED_TRACE(rl::emu::sm120::instruction_name(op));
    const Operands in = patterned(64, 3);
    MmaA ra;
    MmaB rb;
    MmaCF32 rc;
    MmaCF32 d;
    ScaleRegs sa;
    ScaleRegs sb;
    pack(op, in, ra, rb, rc);
    pack_scales(op, powers, {}, {}, k.scale == Format::ue8m0 ? 0xFFU : 0x7FU, sa, sb);
    rl::emu::sm120::mma_block_scaled_warp(op, ra, rb, rc, sa, {}, sb, {}, d);
    expect_d(op, in, d, &powers);
  }
}

// Every valid {byte-id, thread-id} pair of each scale vector size picks its
// own lanes and bytes: the factors sit only there (NaN everywhere else), so
// a selector read from the wrong lane, byte or block gives NaN or the wrong
// power of two.
TEST(Sm120MmaScales, every_valid_selector_reads_its_own_lanes_and_bytes) {
  const ScalePowers powers = varied_powers();
  struct VecCase {
    Kind kind;
    Format scale;
    int vec;
    std::vector<std::uint16_t> byte_ids;
  };
  for (const VecCase& v : {VecCase{Kind::mxf8f6f4, Format::ue8m0, 1, {0, 1, 2, 3}},
                           VecCase{Kind::mxf4, Format::ue8m0, 2, {0, 2}},
                           VecCase{Kind::mxf4nvf4, Format::ue4m3, 4, {0}}}) {
    const Format element = v.kind == Kind::mxf8f6f4 ? Format::e4m3 : Format::e2m1;
    const Mma op{v.kind, element, element, v.scale, v.vec};
    const Operands in = patterned(k_of(op), 4);
    MmaA ra;
    MmaB rb;
    MmaCF32 rc;
    pack(op, in, ra, rb, rc);
    for (const std::uint16_t byte_a : v.byte_ids)
      for (const std::uint16_t byte_b : v.byte_ids)
        for (std::uint16_t thread_a = 0; thread_a < 2; ++thread_a)
          for (std::uint16_t thread_b = 0; thread_b < 4; ++thread_b) {
            const ScaleSelector sel_a{byte_a, thread_a};
            const ScaleSelector sel_b{byte_b, thread_b};
            SCOPED_TRACE(rl::emu::sm120::instruction_name(op) + " a {" + std::to_string(byte_a) +
                         "," + std::to_string(thread_a) + "} b {" + std::to_string(byte_b) + "," +
                         std::to_string(thread_b) + "}");
            ScaleRegs sa;
            ScaleRegs sb;
            pack_scales(op, powers, sel_a, sel_b, v.scale == Format::ue8m0 ? 0xFFU : 0x7FU, sa, sb);
            MmaCF32 d;
            rl::emu::sm120::mma_block_scaled_warp(op, ra, rb, rc, sa, sel_a, sb, sel_b, d);
            expect_d(op, in, d, &powers);
          }
  }
}

// The check can fail: the same scales read with the other thread pair, or
// the two k-blocks' factors swapped in their bytes, give another D.
TEST(Sm120MmaScales, a_wrong_selector_or_swapped_blocks_change_d) {
  const ScalePowers powers = varied_powers();
  ScalePowers swapped = powers;
  for (int m = 0; m < 16; ++m) std::swap(swapped.a[m][0], swapped.a[m][1]);
  const Mma op{Kind::mxf4, Format::e2m1, Format::e2m1, Format::ue8m0, 2};
  const Operands in = patterned(64, 5);
  MmaA ra;
  MmaB rb;
  MmaCF32 rc;
  pack(op, in, ra, rb, rc);
  const auto run = [&](const ScalePowers& p, ScaleSelector read_a) {
    ScaleRegs sa;
    ScaleRegs sb;
    pack_scales(op, p, {0, 1}, {0, 2}, 0x7FU, sa, sb);  // 0x7F: 2^0, a finite filler
    MmaCF32 d;
    rl::emu::sm120::mma_block_scaled_warp(op, ra, rb, rc, sa, read_a, sb, {0, 2}, d);
    return d_at(d, 3, 5);
  };
  const float right = expected(op, in, 3, 5, &powers);
  EXPECT_EQ(run(powers, {0, 1}), right);
  EXPECT_NE(run(powers, {0, 0}), right);   // the other thread pair
  EXPECT_NE(run(swapped, {0, 1}), right);  // block 0 read from block 1's byte
}

// Undefined in PTX, refused here with one line.
TEST(Sm120MmaRules, combinations_outside_table_36_and_selectors_outside_table_37_are_named) {
  using rl::emu::sm120::invalid_reason;
  using rl::emu::sm120::invalid_selectors;
  EXPECT_EQ(invalid_reason({Kind::f8f6f4, Format::e2m1, Format::e4m3, Format::ue8m0, 0}), nullptr);
  EXPECT_NE(invalid_reason({Kind::mxf4, Format::e4m3, Format::e2m1, Format::ue8m0, 2}), nullptr);
  EXPECT_NE(invalid_reason({Kind::mxf4, Format::e2m1, Format::e2m1, Format::ue4m3, 4}), nullptr);
  EXPECT_NE(invalid_reason({Kind::mxf8f6f4, Format::e4m3, Format::e4m3, Format::ue8m0, 2}),
            nullptr);
  EXPECT_NE(invalid_reason({Kind::mxf4nvf4, Format::e2m1, Format::e2m1, Format::ue4m3, 2}),
            nullptr);
  EXPECT_NE(invalid_reason({Kind::f8f6f4, Format::ue8m0, Format::e4m3, Format::ue8m0, 0}), nullptr);
  const Mma x2{Kind::mxf4, Format::e2m1, Format::e2m1, Format::ue8m0, 2};
  EXPECT_EQ(invalid_selectors(x2, {2, 1}, {0, 3}), nullptr);
  EXPECT_NE(invalid_selectors(x2, {1, 0}, {0, 0}), nullptr);  // byte-id 1 with 2X
  EXPECT_NE(invalid_selectors(x2, {0, 2}, {0, 0}), nullptr);  // thread-id-a 2
  EXPECT_NE(invalid_selectors(x2, {0, 0}, {0, 4}), nullptr);  // thread-id-b 4
  const Mma x4{Kind::mxf4nvf4, Format::e2m1, Format::e2m1, Format::ue4m3, 4};
  EXPECT_NE(invalid_selectors(x4, {0, 0}, {2, 0}), nullptr);
  EXPECT_EQ(rl::emu::sm120::instruction_name(x4),
            "mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1."
            "e2m1.f32.ue4m3");
}

TEST(Sm120MmaRulesDeathTest, the_warp_semantics_stop_on_an_invalid_instruction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Mma op{Kind::mxf4, Format::e2m1, Format::e2m1, Format::ue8m0, 2};
  MmaA ra{};
  MmaB rb{};
  MmaCF32 rc{};
  ScaleRegs sa{};
  ScaleRegs sb{};
  EXPECT_DEATH(
      {
        MmaCF32 d;
        rl::emu::sm120::mma_block_scaled_warp(op, ra, rb, rc, sa, {1, 0}, sb, {0, 0}, d);
      },
      "kind::mxf4.*byte-id must be 0 or 2 with scale_vec::2X");
  EXPECT_DEATH(
      {
        MmaCF32 d;
        rl::emu::sm120::mma_warp(op, ra, rb, rc, d);
      },
      "a block-scaled kind needs its scale operands");
}

}  // namespace
