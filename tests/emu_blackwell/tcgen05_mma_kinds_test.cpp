// tcgen05.mma's arithmetic for every cta_group::1 kind, against a plain loop
// over k: integer-valued operands (every product and sum exact in f32), A from
// shared memory (no swizzle and 128-byte swizzle) and from tensor memory,
// M = 64 (layout F, both lane alignments) and M = 128, the block-scaled kinds
// with their scale factors read from tensor memory at each scale-factor id.
// Calls rl::emu::tcgen05::perform on plain arrays (the memory the issue binds
// is tensor memory proper; rl/emu/tcgen05.hpp's tests cover it).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rl/ptx_sm100_mma.hpp"
#include "tcgen05_mma_test_support.hpp"

namespace {

using namespace tcgen05_test;
using t5::Element;
using t5::Kind;
using t5::ScaleVec;
namespace ptx = rl::ptx;

struct Case {
  Kind kind = Kind::f16;
  ScaleVec vec = ScaleVec::none;
  Element a = Element::f16, b = Element::f16;
  unsigned m = 128, n = 32;
  bool a_in_tmem = false;
  bool swizzle = false;
  bool accumulate = true;
  unsigned lane0 = 0;  // M = 64: 0 or 16
  bool ue8m0 = true;
  unsigned sfa_id = 0, sfb_id = 0;
  bool saturate = false;
};

ptx::Tcgen05F8F6F4Type f8(Element e) {
  switch (e) {
    case Element::e5m2:
      return ptx::Tcgen05F8F6F4Type::e5m2;
    case Element::e2m3:
      return ptx::Tcgen05F8F6F4Type::e2m3;
    case Element::e3m2:
      return ptx::Tcgen05F8F6F4Type::e3m2;
    case Element::e2m1:
      return ptx::Tcgen05F8F6F4Type::e2m1;
    default:
      return ptx::Tcgen05F8F6F4Type::e4m3;
  }
}

std::uint32_t idesc_of(const Case& c) {
  using I8 = ptx::Tcgen05I8Type;
  switch (c.kind) {
    case Kind::f16:
      return ptx::tcgen05_idesc_f16(
          c.a == Element::bf16 ? ptx::Tcgen05F16Type::bf16 : ptx::Tcgen05F16Type::f16, c.m, c.n);
    case Kind::tf32:
      return ptx::tcgen05_idesc_tf32(c.m, c.n);
    case Kind::f8f6f4:
      return ptx::tcgen05_idesc_f8f6f4(f8(c.a), f8(c.b), c.m, c.n);
    case Kind::i8:
      return ptx::tcgen05_idesc_i8(c.a == Element::s8 ? I8::s8 : I8::u8,
                                   c.b == Element::s8 ? I8::s8 : I8::u8, c.m, c.n, c.saturate);
    case Kind::mxf8f6f4:
      return ptx::tcgen05_idesc_mxf8f6f4(f8(c.a), f8(c.b), c.n, c.sfa_id, c.sfb_id);
    default:
      return ptx::tcgen05_idesc_mxf4(c.n, c.ue8m0, c.sfa_id, c.sfb_id);
  }
}

// Scale codes with small integer values: UE8M0 1, 2, 4, 8; UE4M3 1 .. 8.
std::vector<std::uint32_t> scale_codes(bool ue8m0) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t c = 0; c < 256; ++c) {
    const double v = narrow::to_double(ue8m0 ? narrow::Format::ue8m0 : narrow::Format::ue4m3,
                                       ue8m0 ? c : c & 0x7F);
    if (c < (ue8m0 ? 256U : 128U) && std::isfinite(v) && v >= 1 && v <= 8 && v == std::floor(v))
      out.push_back(c);
  }
  return out;
}

constexpr unsigned kDColumn = 256, kAColumn = 0, kSfaColumn = 16, kSfbColumn = 32;
constexpr std::uint32_t kAStart = 0, kBStart = 32 * 1024;

// Runs one case and compares every cell of D with the plain loop.
void run(const Case& c, unsigned seed = 1) {
  SCOPED_TRACE(std::string(t5::kind_name(c.kind)) + " A " + t5::element_name(c.a) + " B " +
               t5::element_name(c.b) + " M " + std::to_string(c.m) + " N " + std::to_string(c.n) +
               (c.a_in_tmem ? " A in tmem" : " A in smem") + (c.swizzle ? " swizzle 128B" : "") +
               " sfa_id " + std::to_string(c.sfa_id) + " sfb_id " + std::to_string(c.sfb_id));
  std::mt19937 rng(seed);
  Machine mc;
  const unsigned kk = t5::k_of(c.kind);
  const Operand a = random_operand(c.a, c.m, kk, rng), b = random_operand(c.b, c.n, kk, rng);
  t5::MmaOp op;
  op.kind = c.kind;
  op.scale_vec = c.vec;
  op.d_tmem = t5::tmem_address(c.lane0, kDColumn);
  op.idesc = idesc_of(c);
  op.enable_input_d = c.accumulate;
  const auto swz = c.swizzle ? ptx::Tcgen05Swizzle::b128 : ptx::Tcgen05Swizzle::none;
  if (c.a_in_tmem) {
    place_tmem_a(mc, a, c.kind, c.a, c.lane0, kAColumn);
    op.a_from_tmem = true;
    op.a_tmem = t5::tmem_address(c.lane0, kAColumn);
  } else {
    const Placed pa = place_k_major(mc, a, c.kind, c.a, kAStart, c.swizzle);
    op.a_desc = ptx::tcgen05_smem_descriptor(kAStart, pa.lbo, pa.sbo, swz);
  }
  const Placed pb = place_k_major(mc, b, c.kind, c.b, kBStart, c.swizzle);
  op.b_desc = ptx::tcgen05_smem_descriptor(kBStart, pb.lbo, pb.sbo, swz);
  // Scale factors: every byte of every scale cell random (so a wrong byte or
  // replica shows), the chosen ones recorded.
  const unsigned nsf = c.vec == ScaleVec::x4   ? 4
                       : c.vec == ScaleVec::x2 ? 2
                       : c.vec == ScaleVec::x1 ? 1
                                               : 0;
  std::vector<double> sfa(c.m * nsf, 1.0), sfb(c.n * nsf, 1.0);
  if (nsf != 0) {
    const std::vector<std::uint32_t> codes = scale_codes(c.ue8m0);
    std::uniform_int_distribution<std::size_t> pick(0, codes.size() - 1);
    const auto fmt = c.ue8m0 ? narrow::Format::ue8m0 : narrow::Format::ue4m3;
    for (unsigned lane = 0; lane < t5::kLanes; ++lane)
      for (unsigned col = 0; col < 8; ++col)
        for (unsigned byte = 0; byte < 4; ++byte) {
          mc.cell(lane, kSfaColumn + col) |= codes[pick(rng)] << (8 * byte);
          mc.cell(lane, kSfbColumn + col) |= codes[pick(rng)] << (8 * byte);
        }
    for (unsigned row = 0; row < c.m; ++row)  // lane row, column row / 32
      for (unsigned j = 0; j < nsf; ++j)
        sfa[row * nsf + j] = narrow::to_double(
            fmt, (mc.cell(row, kSfaColumn + row / 32) >> (8 * (c.sfa_id + j))) & 0xFF);
    // Column n's scales replicated in each lane quarter (lane 32 q + n % 32).
    for (unsigned col = 0; col < c.n; ++col)
      for (unsigned j = 0; j < nsf; ++j) {
        const std::uint32_t byte =
            (mc.cell(col % 32, kSfbColumn + col / 32) >> (8 * (c.sfb_id + j))) & 0xFF;
        sfb[col * nsf + j] = narrow::to_double(fmt, byte);
        for (unsigned q = 1; q < 4; ++q) {
          std::uint32_t& cell = mc.cell(32 * q + col % 32, kSfbColumn + col / 32);
          cell = (cell & ~(0xFFU << (8 * (c.sfb_id + j)))) | (byte << (8 * (c.sfb_id + j)));
        }
      }
    op.sfa_tmem = t5::tmem_address(0, kSfaColumn);
    op.sfb_tmem = t5::tmem_address(0, kSfbColumn);
  }
  // D's previous value: small integers (or NaN when it must be ignored).
  const bool integer = c.kind == Kind::i8;
  auto d_lane = [&](unsigned row) {
    return c.m == 64 ? c.lane0 + 32 * (row / 16) + row % 16 : row;
  };
  std::vector<double> d0(c.m * c.n);
  for (unsigned row = 0; row < c.m; ++row)
    for (unsigned col = 0; col < c.n; ++col) {
      const double v = static_cast<double>(static_cast<int>(rng() % 17) - 8);
      d0[row * c.n + col] = v;
      std::uint32_t cell = integer ? static_cast<std::uint32_t>(static_cast<std::int32_t>(v))
                                   : std::bit_cast<std::uint32_t>(static_cast<float>(v));
      if (!c.accumulate) cell = 0x7FC00001U;  // NaN (or a large s32) that must not count
      mc.cell(d_lane(row), kDColumn + col) = cell;
    }
  t5::perform(op, mc.memory());
  const unsigned block = nsf != 0 ? kk / nsf : kk;
  for (unsigned row = 0; row < c.m; ++row)
    for (unsigned col = 0; col < c.n; ++col) {
      double sum = c.accumulate ? d0[row * c.n + col] : 0.0;
      for (unsigned k = 0; k < kk; ++k)
        sum += a.value[row * kk + k] * (nsf ? sfa[row * nsf + k / block] : 1.0) *
               b.value[col * kk + k] * (nsf ? sfb[col * nsf + k / block] : 1.0);
      const std::uint32_t want = integer
                                     ? static_cast<std::uint32_t>(static_cast<std::int64_t>(sum))
                                     : std::bit_cast<std::uint32_t>(static_cast<float>(sum));
      ASSERT_EQ(mc.cell(d_lane(row), kDColumn + col), want) << "row " << row << " col " << col;
    }
}

TEST(Tcgen05MmaKinds, f16_and_bf16_every_m_and_a_source) {
  for (const Element e : {Element::f16, Element::bf16})
    for (const unsigned m : {64U, 128U})
      for (const bool tmem : {false, true})
        for (const bool swizzle : {false, true}) {
          Case c{Kind::f16, ScaleVec::none, e, e, m, 48, tmem, swizzle};
          run(c);
        }
  Case lane16{Kind::f16, ScaleVec::none, Element::f16, Element::f16, 64, 24, true};
  lane16.lane0 = 16;
  run(lane16);
  lane16.a_in_tmem = false;
  run(lane16);
}

TEST(Tcgen05MmaKinds, tf32_reads_the_top_19_bits) {
  for (const bool tmem : {false, true})
    run({Kind::tf32, ScaleVec::none, Element::tf32, Element::tf32, 128, 64, tmem, true});
  run({Kind::tf32, ScaleVec::none, Element::tf32, Element::tf32, 64, 256, false, false});
}

TEST(Tcgen05MmaKinds, f8f6f4_every_a_b_type_pair) {
  const Element types[] = {Element::e4m3, Element::e5m2, Element::e2m3, Element::e3m2,
                           Element::e2m1};
  for (const Element a : types)
    for (const Element b : types) {
      run({Kind::f8f6f4, ScaleVec::none, a, b, 128, 16, false, true});
      run({Kind::f8f6f4, ScaleVec::none, a, b, 64, 8, true, false});
    }
}

TEST(Tcgen05MmaKinds, i8_signed_and_unsigned_pairs) {
  for (const Element a : {Element::u8, Element::s8})
    for (const Element b : {Element::u8, Element::s8}) {
      run({Kind::i8, ScaleVec::none, a, b, 128, 32, false, true});
      run({Kind::i8, ScaleVec::none, a, b, 64, 48, true, false});
    }
}

TEST(Tcgen05MmaKinds, enable_input_d_false_ignores_the_old_d) {
  for (const Kind k : {Kind::f16, Kind::i8}) {
    const Element e = k == Kind::f16 ? Element::bf16 : Element::s8;
    Case c{k, ScaleVec::none, e, e, 128, 16};
    c.accumulate = false;
    run(c);
  }
}

TEST(Tcgen05MmaKinds, mxf8f6f4_scales_each_32_wide_block_by_the_chosen_byte) {
  const Element types[] = {Element::e4m3, Element::e5m2, Element::e2m3, Element::e3m2,
                           Element::e2m1};
  unsigned id = 0;
  for (const Element a : types)
    for (const Element b : types) {
      Case c{Kind::mxf8f6f4, ScaleVec::x1, a, b, 128, 40, (id % 3) == 0, (id % 2) == 0};
      c.sfa_id = id % 4;
      c.sfb_id = (id / 4) % 4;
      run(c, 7 + id++);
    }
}

TEST(Tcgen05MmaKinds, mxf4_and_mxf4nvf4_with_every_scale_vector) {
  for (const unsigned id : {0U, 2U}) {
    Case mx{Kind::mxf4, ScaleVec::x2, Element::e2m1, Element::e2m1, 128, 64, false, true};
    mx.sfa_id = id;
    mx.sfb_id = 2 - id;
    run(mx);
    Case nv2 = mx;
    nv2.kind = Kind::mxf4nvf4;
    nv2.a_in_tmem = true;
    run(nv2);
  }
  for (const bool ue8m0 : {true, false}) {
    Case nv4{Kind::mxf4nvf4, ScaleVec::x4, Element::e2m1, Element::e2m1, 128, 256, false, false};
    nv4.ue8m0 = ue8m0;
    run(nv4);
    nv4.a_in_tmem = true;
    run(nv4, 3);
  }
}

TEST(Tcgen05MmaKinds, i8_wraps_modulo_2_32_unless_saturate) {
  Machine mc;
  // A and B all 1 (u8), K = 32: D = old D + 32.  Old D = INT32_MAX - 10.
  for (const bool saturate : {false, true}) {
    Operand ones{128, 32, std::vector<std::uint32_t>(128 * 32, 1),
                 std::vector<double>(128 * 32, 1.0)};
    Operand b_ones{8, 32, std::vector<std::uint32_t>(8 * 32, 1), std::vector<double>(8 * 32, 1.0)};
    const Placed pa = place_k_major(mc, ones, Kind::i8, Element::u8, kAStart, false);
    const Placed pb = place_k_major(mc, b_ones, Kind::i8, Element::u8, kBStart, false);
    t5::MmaOp op;
    op.kind = Kind::i8;
    op.d_tmem = t5::tmem_address(0, kDColumn);
    op.a_desc = ptx::tcgen05_smem_descriptor(kAStart, pa.lbo, pa.sbo, ptx::Tcgen05Swizzle::none);
    op.b_desc = ptx::tcgen05_smem_descriptor(kBStart, pb.lbo, pb.sbo, ptx::Tcgen05Swizzle::none);
    op.idesc =
        ptx::tcgen05_idesc_i8(ptx::Tcgen05I8Type::u8, ptx::Tcgen05I8Type::u8, 128, 8, saturate);
    op.enable_input_d = true;
    for (unsigned lane = 0; lane < 128; ++lane)
      for (unsigned col = 0; col < 8; ++col) mc.cell(lane, kDColumn + col) = 0x7FFFFFF5U;
    t5::perform(op, mc.memory());
    const std::uint32_t want = saturate ? 0x7FFFFFFFU : 0x80000015U;
    EXPECT_EQ(mc.cell(5, kDColumn + 3), want);
    EXPECT_EQ(mc.cell(127, kDColumn + 7), want);
  }
}

TEST(Tcgen05MmaKinds, negate_a_and_b_and_an_f16_accumulator) {
  Machine mc;
  Operand a{64, 16, std::vector<std::uint32_t>(64 * 16, 0x4000), std::vector<double>(64 * 16, 2.0)};
  Operand b{8, 16, std::vector<std::uint32_t>(8 * 16, 0x4200), std::vector<double>(8 * 16, 3.0)};
  const Placed pa = place_k_major(mc, a, Kind::f16, Element::f16, kAStart, true);
  const Placed pb = place_k_major(mc, b, Kind::f16, Element::f16, kBStart, true);
  t5::MmaOp op;
  op.kind = Kind::f16;
  op.d_tmem = t5::tmem_address(0, kDColumn);
  op.a_desc = ptx::tcgen05_smem_descriptor(kAStart, pa.lbo, pa.sbo, ptx::Tcgen05Swizzle::b128);
  op.b_desc = ptx::tcgen05_smem_descriptor(kBStart, pb.lbo, pb.sbo, ptx::Tcgen05Swizzle::b128);
  // f16 D, A negated: D = 1 - 16 * 6 = -95 (0xD5F0 as f16), in the low half of the cell.
  op.idesc =
      ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::f16, 64, 8, false, false, true) | (1U << 13);
  op.enable_input_d = true;
  mc.cell(33, kDColumn + 2) = 0xABCD3C00U;  // f16 1.0 low, garbage high
  t5::perform(op, mc.memory());
  EXPECT_EQ(mc.cell(33, kDColumn + 2), 0x0000D5F0U);  // row 17 of M = 64 is lane 33
  op.idesc |= 1U << 14;                               // negate B too: +96 + (-95)
  t5::perform(op, mc.memory());
  EXPECT_EQ(mc.cell(33, kDColumn + 2), 0x00003C00U);
}

}  // namespace
