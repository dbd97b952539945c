// What the sm_120a mma.sync tests share: integer matrices, encoded in each
// input format by this file's own encoder, packed into a warp's registers by
// the PTX ISA's fragment formulas written forward (lane and element index to
// row and column, as the ISA states them; the emulator inverts them), and the
// expected D from a plain loop over integers and powers of two.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "rl/emu/mma_sm120.hpp"

namespace sm120_test {

using rl::emu::narrow::Format;
using rl::emu::sm120::Kind;
using rl::emu::sm120::Mma;
using rl::emu::sm120::MmaA;
using rl::emu::sm120::MmaB;
using rl::emu::sm120::MmaCF32;
using rl::emu::sm120::ScaleRegs;
using rl::emu::sm120::ScaleSelector;

// An integer |v| <= 4 in `f` (every input format holds 0, +-1 .. +-4): the
// exponent is floor(log2 |v|), the mantissa the rest in units of the last
// place, the sign above both.
inline std::uint32_t encode_int(Format f, int v) {
  int mantissa_bits = 0, exponent_bits = 0, bias = 0;
  switch (f) {
    case Format::e4m3:
      mantissa_bits = 3, exponent_bits = 4, bias = 7;
      break;
    case Format::e5m2:
      mantissa_bits = 2, exponent_bits = 5, bias = 15;
      break;
    case Format::e3m2:
      mantissa_bits = 2, exponent_bits = 3, bias = 3;
      break;
    case Format::e2m3:
      mantissa_bits = 3, exponent_bits = 2, bias = 1;
      break;
    default:  // e2m1
      mantissa_bits = 1, exponent_bits = 2, bias = 1;
      break;
  }
  if (v == 0) return 0;
  const int magnitude = std::abs(v);
  const int exponent = magnitude >= 4 ? 2 : (magnitude >= 2 ? 1 : 0);
  const int mantissa = ((magnitude << mantissa_bits) >> exponent) - (1 << mantissa_bits);
  const std::uint32_t sign = v < 0 ? 1U : 0U;
  return (sign << (mantissa_bits + exponent_bits)) |
         (static_cast<std::uint32_t>(exponent + bias) << mantissa_bits) |
         static_cast<std::uint32_t>(mantissa);
}

// 2^power as a scale byte.
inline std::uint32_t scale_code(Format scale, int power) {
  return scale == Format::ue8m0 ? static_cast<std::uint32_t>(127 + power)
                                : static_cast<std::uint32_t>(7 + power) << 3U;  // ue4m3
}

inline unsigned k_of(const Mma& op) {
  return rl::emu::sm120::k_of(op.kind);
}

// Dense operands: A is 16 x K, B is K x 8 (K <= 64), C is 16 x 8.
struct Operands {
  int a[16][64] = {};
  int b[64][8] = {};
  float c[16][8] = {};
};

// The element as its K = 32 byte holds it (e3m2/e2m3 in bits 5:0, e2m1 in
// 5:2), with every padding bit set when `dirty` (the instruction ignores them).
inline std::uint32_t in_byte(Format f, int v, bool dirty) {
  const std::uint32_t code = encode_int(f, v);
  switch (f) {
    case Format::e3m2:
    case Format::e2m3:
      return code | (dirty ? 0xC0U : 0U);
    case Format::e2m1:
      return (code << 2U) | (dirty ? 0xC3U : 0U);
    default:
      return code;
  }
}

// PTX "Matrix Fragments for mma.m16n8k32" (8-bit containers) and
// "mma.m16n8k64" (packed e2m1), as written there.
inline void pack(const Mma& op, const Operands& in, MmaA& a, MmaB& b, MmaCF32& c,
                 bool dirty_padding = false) {
  const bool k64 = k_of(op) == 64U;
  for (unsigned lane = 0; lane < 32U; ++lane) {
    const int g = static_cast<int>(lane >> 2U), t = static_cast<int>(lane % 4U);
    for (int r = 0; r < 4; ++r) a[lane][r] = 0;
    b[lane][0] = b[lane][1] = 0;
    if (k64) {
      for (int i = 0; i < 32; ++i) {  // a0..a31, eight per register
        const int row = (i < 8 || (i >= 16 && i < 24)) ? g : g + 8;
        const int col = t * 8 + (i & 0x7) + (i >= 16 ? 32 : 0);
        a[lane][i / 8] |= encode_int(op.a, in.a[row][col]) << (4 * (i % 8));
      }
      for (int i = 0; i < 16; ++i) {  // b0..b15
        const int row = t * 8 + (i & 0x7) + (i >= 8 ? 32 : 0);
        b[lane][i / 8] |= encode_int(op.b, in.b[row][g]) << (4 * (i % 8));
      }
    } else {
      for (int i = 0; i < 16; ++i) {  // a0..a15, four per register
        const int row = ((i < 4) || (i >= 8 && i < 12)) ? g : g + 8;
        const int col = t * 4 + (i & 0x3) + (i >= 8 ? 16 : 0);
        a[lane][i / 4] |= in_byte(op.a, in.a[row][col], dirty_padding) << (8 * (i % 4));
      }
      for (int i = 0; i < 8; ++i) {  // b0..b7
        const int row = t * 4 + (i & 0x3) + (i >= 4 ? 16 : 0);
        b[lane][i / 4] |= in_byte(op.b, in.b[row][g], dirty_padding) << (8 * (i % 4));
      }
    }
    for (int i = 0; i < 4; ++i) c[lane][i] = in.c[g + (i >= 2 ? 8 : 0)][t * 2 + (i & 0x1)];
  }
}

// D(m, n) from the C/D fragment formula.
inline float d_at(const MmaCF32& d, int m, int n) {
  for (unsigned lane = 0; lane < 32U; ++lane)
    for (int i = 0; i < 4; ++i) {
      const int g = static_cast<int>(lane >> 2U), t = static_cast<int>(lane % 4U);
      if (g + (i >= 2 ? 8 : 0) == m && t * 2 + (i & 0x1) == n) return d[lane][i];
    }
  return NAN;
}

// The scale factors per row / column and k-block, as powers of two.
struct ScalePowers {
  int a[16][4] = {};
  int b[8][4] = {};
};

// Scale registers that give `powers` through the selectors: thread-id-a picks
// the lane pair 2 thread-id-a, +1 of each quad ("%laneid % 4 == 0 or 1" for
// 0), whose first lane serves row g and second row g + 8 (CuTe SFALayout);
// thread-id-b picks lane thread-id-b of quad n.  Block j lives in byte
// byte-id + j.  Every byte nothing selects holds `filler`.
inline void pack_scales(const Mma& op, const ScalePowers& powers, ScaleSelector sel_a,
                        ScaleSelector sel_b, std::uint32_t filler, ScaleRegs& sa, ScaleRegs& sb) {
  for (unsigned lane = 0; lane < 32U; ++lane) {
    sa[lane] = sb[lane] = filler * 0x01010101U;
    const unsigned quad = lane >> 2U, in_quad = lane % 4U;
    for (int j = 0; j < op.scale_vec; ++j) {
      const unsigned shift = 8U * (sel_a.byte_id + static_cast<unsigned>(j));
      if (in_quad / 2U == sel_a.thread_id) {
        const unsigned row = quad + 8U * (in_quad % 2U);
        sa[lane] = (sa[lane] & ~(0xFFU << shift)) | scale_code(op.scale, powers.a[row][j]) << shift;
      }
      const unsigned shift_b = 8U * (sel_b.byte_id + static_cast<unsigned>(j));
      if (in_quad == sel_b.thread_id)
        sb[lane] = (sb[lane] & ~(0xFFU << shift_b)) | scale_code(op.scale, powers.b[quad][j])
                                                          << shift_b;
    }
  }
}

// C + sum_k A B (scaled per k-block when `powers` is given), exact in double,
// rounded once to float.
inline float expected(const Mma& op, const Operands& in, int m, int n,
                      const ScalePowers* powers = nullptr) {
  const int k_count = static_cast<int>(k_of(op));
  double sum = in.c[m][n];
  for (int k = 0; k < k_count; ++k) {
    double scale = 1.0;
    if (powers != nullptr) {
      const int j = k / (k_count / op.scale_vec);
      scale = std::ldexp(1.0, powers->a[m][j] + powers->b[n][j]);
    }
    sum += scale * in.a[m][k] * in.b[k][n];
  }
  return static_cast<float>(sum);
}

// Integers in -4..4 with no simple structure, and a C that is not zero.
inline Operands patterned(unsigned k_count, int seed = 0) {
  Operands in;
  for (int m = 0; m < 16; ++m)
    for (int k = 0; k < static_cast<int>(k_count); ++k) in.a[m][k] = (m * 7 + k * 3 + seed) % 9 - 4;
  for (int k = 0; k < static_cast<int>(k_count); ++k)
    for (int n = 0; n < 8; ++n) in.b[k][n] = (k * 5 + n * 11 + 2 * seed) % 9 - 4;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) in.c[m][n] = static_cast<float>(m - 2 * n);
  return in;
}

}  // namespace sm120_test
