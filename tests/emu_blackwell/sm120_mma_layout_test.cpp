// Where every element of A and B sits, for the byte layout (m16n8k32) and the
// packed-e2m1 layout (m16n8k64): a product test cannot see a k permutation
// applied to A and B alike (ptx-emulation-reference.md section 2), so each
// element is placed alone.  A one at A(m, k) against a row of ones at B(k, .)
// must light exactly row m of D; a one at B(k, n) against a column of ones
// at A(., k) exactly column n.  A swapped element lights another row, column
// or nothing.
#include <gtest/gtest.h>

#include <string>

#include "sm120_mma_test_support.hpp"

namespace {

using namespace sm120_test;

// D's cells that are not 0 (as "m,n" pairs), for the failure message.
std::string lit_cells(const MmaCF32& d) {
  std::string cells;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      if (d_at(d, m, n) != 0.0F) {
        // appended piece by piece: GCC 12's -Wrestrict misfires on a + chain here
        cells += ' ';
        cells += std::to_string(m);
        cells += ',';
        cells += std::to_string(n);
      }
  return cells;
}

void run(const Mma& op, const Operands& in, MmaCF32& d) {
  MmaA ra;
  MmaB rb;
  MmaCF32 rc;
  pack(op, in, ra, rb, rc);
  if (rl::emu::sm120::block_scaled(op.kind)) {
    ScaleRegs scale{};
    for (std::uint32_t& s : scale) s = scale_code(op.scale, 0) * 0x01010101U;  // all 2^0
    rl::emu::sm120::mma_block_scaled_warp(op, ra, rb, rc, scale, {}, scale, {}, d);
  } else {
    rl::emu::sm120::mma_warp(op, ra, rb, rc, d);
  }
}

void expect_every_element_in_place(const Mma& op) {
  const int k_count = static_cast<int>(k_of(op));
  for (int m = 0; m < 16; ++m)
    for (int k = 0; k < k_count; ++k) {
      Operands in;
      in.a[m][k] = 1;
      for (int n = 0; n < 8; ++n) in.b[k][n] = 1;
      MmaCF32 d;
      run(op, in, d);
      bool exact = true;
      for (int mm = 0; mm < 16; ++mm)
        for (int n = 0; n < 8; ++n) exact = exact && d_at(d, mm, n) == (mm == m ? 1.0F : 0.0F);
      EXPECT_TRUE(exact) << "A(" << m << "," << k << ") lit:" << lit_cells(d);
    }
  for (int k = 0; k < k_count; ++k)
    for (int n = 0; n < 8; ++n) {
      Operands in;
      in.b[k][n] = 1;
      for (int m = 0; m < 16; ++m) in.a[m][k] = 1;
      MmaCF32 d;
      run(op, in, d);
      bool exact = true;
      for (int m = 0; m < 16; ++m)
        for (int nn = 0; nn < 8; ++nn) exact = exact && d_at(d, m, nn) == (nn == n ? 1.0F : 0.0F);
      EXPECT_TRUE(exact) << "B(" << k << "," << n << ") lit:" << lit_cells(d);
    }
}

TEST(Sm120MmaLayout, every_byte_element_of_m16n8k32_sits_where_the_isa_says) {
  expect_every_element_in_place({Kind::f8f6f4, Format::e4m3, Format::e2m1, Format::ue8m0, 0});
  expect_every_element_in_place({Kind::mxf8f6f4, Format::e3m2, Format::e2m3, Format::ue8m0, 1});
}

TEST(Sm120MmaLayout, every_packed_e2m1_element_of_m16n8k64_sits_where_the_isa_says) {
  expect_every_element_in_place({Kind::mxf4, Format::e2m1, Format::e2m1, Format::ue8m0, 2});
  expect_every_element_in_place({Kind::mxf4nvf4, Format::e2m1, Format::e2m1, Format::ue4m3, 4});
}

// The test above can fail: two neighbouring A elements of one lane swapped
// (the first and second byte of register 0 of lane 0, A(0,0) and A(0,1))
// put the one at the wrong k, where B's row of ones is missing.
TEST(Sm120MmaLayout, a_swapped_element_is_caught) {
  const Mma op{Kind::f8f6f4, Format::e4m3, Format::e4m3, Format::ue8m0, 0};
  Operands in;
  in.a[0][0] = 1;
  for (int n = 0; n < 8; ++n) in.b[0][n] = 1;
  MmaA ra;
  MmaB rb;
  MmaCF32 rc;
  MmaCF32 d;
  pack(op, in, ra, rb, rc);
  const std::uint32_t r = ra[0][0];
  ra[0][0] = (r & 0xFFFF0000U) | ((r & 0xFFU) << 8U) | ((r >> 8U) & 0xFFU);
  rl::emu::sm120::mma_warp(op, ra, rb, rc, d);
  EXPECT_EQ(d_at(d, 0, 0), 0.0F);
  EXPECT_EQ(lit_cells(d), "");
}

}  // namespace
