// What the tcgen05.mma tests share: a plain shared memory and tensor memory
// (rl::emu::tcgen05::Memory over arrays), writers that place an operand in
// the canonical layouts the PTX ISA tabulates (9.7.16.3.3, written here from
// the table, not from the emulator's decoder), values every format can hold
// exactly, and the reference: a plain loop over k.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "rl/emu/narrow_float.hpp"
#include "rl/emu/tcgen05_mma.hpp"

namespace tcgen05_test {

namespace t5 = rl::emu::tcgen05;
namespace narrow = rl::emu::narrow;

struct Machine {
  std::vector<unsigned char> smem = std::vector<unsigned char>(96 * 1024, 0);
  std::vector<std::uint32_t> tmem = std::vector<std::uint32_t>(t5::kLanes * t5::kColumns, 0);

  t5::Memory memory() {
    t5::Memory m;
    m.tmem = [this](t5::TmemRange r) {
      return &tmem[t5::lane_of(r.address) * t5::kColumns + t5::column_of(r.address)];
    };
    m.read_smem = [this](std::uint32_t a) { return smem.at(a); };
    return m;
  }
  std::uint32_t& cell(unsigned lane, unsigned column) { return tmem[lane * t5::kColumns + column]; }
};

// One operand's codes, row-major mn x k, and where they go.
struct Operand {
  unsigned rows = 0, k = 0;
  std::vector<std::uint32_t> code;  // the element's bits (low bits)
  std::vector<double> value;        // what the code means
};

// Codes of `format` (or an integer / 16-bit type) whose values are small
// integers, so every product and sum of a test is exact in float.
inline std::vector<std::uint32_t> integer_codes(t5::Element e) {
  std::vector<std::uint32_t> out;
  auto keep = [&](std::uint32_t code, double v) {
    if (v == std::floor(v) && std::fabs(v) <= 8) out.push_back(code);
  };
  switch (e) {
    case t5::Element::e4m3:
    case t5::Element::e5m2:
    case t5::Element::e2m3:
    case t5::Element::e3m2:
    case t5::Element::e2m1: {
      const narrow::Format f = e == t5::Element::e4m3   ? narrow::Format::e4m3
                               : e == t5::Element::e5m2 ? narrow::Format::e5m2
                               : e == t5::Element::e2m3 ? narrow::Format::e2m3
                               : e == t5::Element::e3m2 ? narrow::Format::e3m2
                                                        : narrow::Format::e2m1;
      for (std::uint32_t c = 0; c < (1U << narrow::bits_of(f)); ++c) {
        const double v = narrow::to_double(f, c);
        if (std::isfinite(v)) keep(c, v);
      }
      break;
    }
    case t5::Element::u8:
      for (std::uint32_t c = 0; c < 256; ++c) keep(c, c);
      break;
    case t5::Element::s8:
      for (std::uint32_t c = 0; c < 256; ++c) keep(c, static_cast<std::int8_t>(c));
      break;
    case t5::Element::f16:  // 1 sign, 5 exponent (bias 15), 10 mantissa
      for (int v = -8; v <= 8; ++v) {
        const float f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        // Exact: small integers are f32 -> f16 by re-biasing the exponent.
        const std::uint32_t sign = (bits >> 16) & 0x8000U;
        const int exp = static_cast<int>((bits >> 23) & 0xFF);
        out.push_back(v == 0 ? 0 : sign | ((exp - 127 + 15) << 10) | ((bits >> 13) & 0x3FF));
      }
      break;
    case t5::Element::bf16:  // the top 16 bits of the f32
      for (int v = -8; v <= 8; ++v) {
        const float f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        out.push_back(bits >> 16);
      }
      break;
    case t5::Element::tf32:  // f32 containers; low 13 bits set: ignored by the MMA
      for (int v = -8; v <= 8; ++v) {
        const float f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        out.push_back(v == 0 ? 0x1234U : bits | 0x1ABCU);
      }
      break;
  }
  return out;
}

inline double reference_value(t5::Element e, std::uint32_t code) {
  switch (e) {
    case t5::Element::u8:
      return code;
    case t5::Element::s8:
      return static_cast<std::int8_t>(code);
    case t5::Element::e4m3:
      return narrow::to_double(narrow::Format::e4m3, code);
    case t5::Element::e5m2:
      return narrow::to_double(narrow::Format::e5m2, code);
    case t5::Element::e2m3:
      return narrow::to_double(narrow::Format::e2m3, code);
    case t5::Element::e3m2:
      return narrow::to_double(narrow::Format::e3m2, code);
    case t5::Element::e2m1:
      return narrow::to_double(narrow::Format::e2m1, code);
    default: {  // 16-bit and tf32: integers built above
      std::uint32_t f32 = e == t5::Element::tf32   ? code & 0xFFFFE000U
                          : e == t5::Element::bf16 ? code << 16
                                                   : 0;
      if (e == t5::Element::f16) {
        if ((code & 0x7FFF) == 0) return 0.0;
        const std::uint32_t sign = (code & 0x8000U) << 16;
        const std::uint32_t exp = ((code >> 10) & 0x1F) - 15 + 127;
        f32 = sign | (exp << 23) | ((code & 0x3FF) << 13);
      }
      float f;
      std::memcpy(&f, &f32, 4);
      return f;
    }
  }
}

inline Operand random_operand(t5::Element e, unsigned rows, unsigned k, std::mt19937& rng) {
  const std::vector<std::uint32_t> codes = integer_codes(e);
  Operand op{rows, k, {}, {}};
  std::uniform_int_distribution<std::size_t> pick(0, codes.size() - 1);
  for (unsigned i = 0; i < rows * k; ++i) {
    op.code.push_back(codes[pick(rng)]);
    op.value.push_back(reference_value(e, op.code.back()));
  }
  return op;
}

// Bits one element takes along K in shared memory for this kind (the 6- and
// 4-bit types of the f8f6f4 kinds are padded to a byte's worth: 16 elements
// per 16 bytes; kind::mxf4* packs e2m1 two per byte).
inline unsigned k_bits(t5::Kind kind, t5::Element e) {
  if (e == t5::Element::f16 || e == t5::Element::bf16) return 16;
  if (e == t5::Element::tf32) return 32;
  if (e == t5::Element::e2m1 && (kind == t5::Kind::mxf4 || kind == t5::Kind::mxf4nvf4)) return 4;
  return 8;
}

// ORs `width` bits of `code` into bytes at bit offset `bit`.
inline void put_bits(unsigned char* bytes, unsigned bit, unsigned width, std::uint32_t code) {
  for (unsigned i = 0; i < width; ++i)
    if ((code >> i) & 1U) bytes[(bit + i) / 8] |= static_cast<unsigned char>(1U << ((bit + i) % 8));
}

// Writes op K-major at window address `start` (1024-aligned) in the
// canonical layout: no swizzle, ((8,m),(T,2k)):((1T,SBO),(1,LBO)) with LBO =
// 128 and SBO = 256 (one instruction's K is 32 bytes: two 8 x 16-byte core
// matrices), row r of core matrix (mn/8, kb/16) at
// start + (mn/8) SBO + (kb/16) LBO + (mn%8) 16; or the 128-byte swizzle,
// rows of 128 bytes, 8-row groups SBO = 1024 apart, 16-byte chunk c of row r
// stored at chunk c ^ (r % 8).  Returns the descriptor's (lbo, sbo).
struct Placed {
  std::uint32_t lbo, sbo;
};
inline Placed place_k_major(Machine& mc, const Operand& op, t5::Kind kind, t5::Element e,
                            std::uint32_t start, bool swizzle128) {
  const unsigned bits = k_bits(kind, e), row_bytes = op.k * bits / 8;
  const bool padded =
      bits == 8 && (e == t5::Element::e2m3 || e == t5::Element::e3m2 || e == t5::Element::e2m1);
  const unsigned width = e == t5::Element::e2m1                             ? 4
                         : e == t5::Element::e2m3 || e == t5::Element::e3m2 ? 6
                                                                            : bits;
  const Placed p =
      swizzle128 ? Placed{16, 1024} : Placed{128, 256};  // rows of 32 bytes: 2 core matrices
  for (unsigned mn = 0; mn < op.rows; ++mn) {
    // This row's bytes, linear along K.
    std::vector<unsigned char> row(row_bytes, 0);
    for (unsigned k = 0; k < op.k; ++k) {
      const std::uint32_t code = op.code[mn * op.k + k];
      if (padded)
        put_bits(&row[(k / 16) * 16], width * (k % 16), width, code);
      else
        put_bits(row.data(), k * bits, bits, code);
    }
    for (unsigned b = 0; b < row_bytes; ++b) {
      std::uint32_t at;
      if (swizzle128) {
        const std::uint32_t linear = start + (mn / 8) * p.sbo + (mn % 8) * 128 + b;
        at = linear ^ (((linear >> 7) & 7U) << 4);
      } else {
        at = start + (mn / 8) * p.sbo + (b / 16) * p.lbo + (mn % 8) * 16 + b % 16;
      }
      mc.smem.at(at) = row[b];
    }
  }
  return p;
}

// Writes op (rows = M) into tensor memory as A: row m in lane m (M = 128) or
// lane 32 (m/16) + m%16 + lane0 (M = 64), K packed from the low bits of
// column `column`; the f8f6f4 kinds' 6- and 4-bit elements in 8-bit
// containers (e2m1 in bits 2-5).
inline void place_tmem_a(Machine& mc, const Operand& op, t5::Kind kind, t5::Element e,
                         unsigned lane0, unsigned column) {
  const unsigned bits = k_bits(kind, e);
  for (unsigned m = 0; m < op.rows; ++m) {
    const unsigned lane = op.rows == 64 ? lane0 + 32 * (m / 16) + m % 16 : m;
    for (unsigned k = 0; k < op.k; ++k) {
      std::uint32_t code = op.code[m * op.k + k];
      if (e == t5::Element::e2m1 && bits == 8) code <<= 2;
      const unsigned bit = k * bits;
      mc.cell(lane, column + bit / 32) |= code << (bit % 32);
    }
  }
}

}  // namespace tcgen05_test
