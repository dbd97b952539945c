// The operands of the narrow-format tcgen05 loops
// (tensor_tcgen05_block_scaled_sm100a.cu), built on the host: the element
// formats, A's and B's small integers packed into the shared-memory tiles
// tcgen05_loop.hpp describes, the scale factors as the .32x128b.warpx4 copies
// read them, and the scaled product in float64 that validation expects.
#pragma once

#include "ceilings/support.hpp"
#include "ceilings/tcgen05_block_scaled.hpp"
#include "ceilings/tcgen05_loop.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rl::ceilings::tcgen05 {

using rl::ptx::Tcgen05F8F6F4Type;

constexpr int kScaleRows = 32, kScaleRowBytes = 16;  // one .32x128b.warpx4 source
constexpr int kATileWords = kTileM * kRowBytes / 4;
constexpr int kBTileWords = kTileN * kRowBytes / 4;
constexpr int kScaleTileWords = kScaleRows * kScaleRowBytes / 4;
constexpr int kOperandWords = kATileWords + kBTileWords + 3 * kScaleTileWords;  // SFA, SFB x 2

enum class ScaleType { none, ue8m0, ue4m3 };

// Per record: the element format (bits, elements per 16-byte unit, the
// encoding of a small integer), K, the scales and the instruction.
struct Format {
  Tcgen05F8F6F4Type type;
  int bits, per_unit;  // e2m1 padded: 4, 16; packed (mxf4*): 4, 32
};
constexpr int mantissa_bits(Tcgen05F8F6F4Type t) {
  return t == Tcgen05F8F6F4Type::e4m3 || t == Tcgen05F8F6F4Type::e2m3 ? 3
         : t == Tcgen05F8F6F4Type::e2m1                               ? 1
                                                                      : 2;
}
constexpr int exponent_bits(Tcgen05F8F6F4Type t) {
  return t == Tcgen05F8F6F4Type::e4m3   ? 4
         : t == Tcgen05F8F6F4Type::e5m2 ? 5
         : t == Tcgen05F8F6F4Type::e3m2 ? 3
                                        : 2;
}
constexpr std::uint32_t encode(Tcgen05F8F6F4Type t, int v) {
  const int e = exponent_bits(t);
  return encode_small_float(v, mantissa_bits(t), e, (1 << (e - 1)) - 1);
}

// The matrices' small integers and the scales' powers of two.
inline int a_value(int row, int k) {
  return (row + 3 * k) % 5 - 2;
}
inline int b_value(int col, int k) {
  return (2 * col + k) % 5 - 2;
}
inline int scale_a_power(int row, int block) {
  return (row + block) % 3 - 1;
}
inline int scale_b_power(int col, int block) {
  return (col + 2 * block) % 3 - 1;
}
inline std::uint32_t scale_byte(ScaleType type, int power) {
  return type == ScaleType::ue8m0 ? static_cast<std::uint32_t>(127 + power)
                                  : static_cast<std::uint32_t>(7 + power) << 3U;  // ue4m3
}
inline std::uint32_t scale_nan(ScaleType type) {
  return type == ScaleType::ue8m0 ? 0xFFU : 0x7FU;
}

// Byte b of row r of an operand tile (tcgen05_loop.hpp's layout).
inline std::size_t tile_byte(int r, int b) {
  return static_cast<std::size_t>((r / 8) * kStrideBytes + (b / 16) * kLeadingBytes + (r % 8) * 16 +
                                  b % 16);
}

// Element k of a row at bit (k % per_unit) * bits of 16-byte unit k / per_unit.
inline void put_element(std::vector<unsigned char>& tile, const Format& f, int r, int k,
                        std::uint32_t code) {
  const int bit = (k % f.per_unit) * f.bits, unit = k / f.per_unit;
  for (int i = 0; i < f.bits; ++i)
    if ((code >> i) & 1U) {
      const int at = bit + i;
      tile[tile_byte(r, 16 * unit + at / 8)] |= static_cast<unsigned char>(1U << (at % 8));
    }
}

// The operand words the kernel copies: A, B, then the scale sources (SFA;
// SFB for columns 0..127; SFB for 128..255), with `fault` applied to the
// scales.
template <typename P>
std::vector<std::uint32_t> pack_operands(Tcgen05ScaleFault fault) {
  std::vector<unsigned char> a(kATileWords * 4, 0), b(kBTileWords * 4, 0);
  for (int r = 0; r < kTileM; ++r)
    for (int k = 0; k < P::kK; ++k)
      put_element(a, P::kFormat, r, k, encode(P::kFormat.type, a_value(r, k)));
  for (int r = 0; r < kTileN; ++r)
    for (int k = 0; k < P::kK; ++k)
      put_element(b, P::kFormat, r, k, encode(P::kFormat.type, b_value(r, k)));
  std::vector<unsigned char> scales(3 * kScaleTileWords * 4, 0);
  if constexpr (P::kScale != ScaleType::none) {
    // Row m = 32 q + i of A: source row i, byte 4 q + j; column n = 32 c + i
    // of B: source c / 4, row i, byte 4 (c % 4) + j.
    auto power = [&](bool is_a, int index, int block) {
      int j = fault == Tcgen05ScaleFault::dropped_block && block == 1 ? 0 : block;
      int p = is_a ? scale_a_power(index, j) : scale_b_power(index, j);
      if (fault == Tcgen05ScaleFault::wrong_scale && is_a && index == 37 && block == 0) p += 1;
      return p;
    };
    for (int source = 0; source < 3; ++source)
      for (int i = 0; i < kScaleRows; ++i)
        for (int byte = 0; byte < kScaleRowBytes; ++byte) {
          const int group = byte / 4, j = byte % 4;
          const bool is_a = source == 0;
          const int index = 32 * (is_a ? group : 4 * (source - 1) + group) + i;
          scales[(source * kScaleRows + i) * kScaleRowBytes + byte] = static_cast<unsigned char>(
              j < P::kScaleVec ? scale_byte(P::kScale, power(is_a, index, j))
                               : scale_nan(P::kScale));
        }
  }
  std::vector<std::uint32_t> words(kOperandWords, 0);
  auto put = [&](const std::vector<unsigned char>& bytes, int word) {
    for (std::size_t i = 0; i < bytes.size(); ++i)
      words[word + i / 4] |= std::uint32_t{bytes[i]} << (8 * (i % 4));
  };
  put(a, 0);
  put(b, kATileWords);
  put(scales, kATileWords + kBTileWords);
  return words;
}

// P = (A * scale_A)(B * scale_B)^T in float64, row-major 128 x 256.
template <typename P>
std::vector<double> scaled_product() {
  std::vector<double> p(static_cast<std::size_t>(kTileM) * kTileN);
  const int block = P::kScaleVec > 0 ? P::kK / P::kScaleVec : P::kK;
  for (int m = 0; m < kTileM; ++m)
    for (int n = 0; n < kTileN; ++n) {
      double sum = 0;
      for (int k = 0; k < P::kK; ++k) {
        double scale = 1;
        if constexpr (P::kScale != ScaleType::none)
          scale = std::ldexp(1.0, scale_a_power(m, k / block) + scale_b_power(n, k / block));
        sum += scale * a_value(m, k) * b_value(n, k);
      }
      p[static_cast<std::size_t>(m) * kTileN + n] = sum;
    }
  return p;
}

}  // namespace rl::ceilings::tcgen05
