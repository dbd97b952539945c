// mma.sync emulation: one lane's outputs from the whole warp's fragments
// (the reference form) and all lanes' at once (what the runtime executes,
// once per warp).
// Each accessor below inverts a PTX fragment table (reference sections 1-3):
// it says which lane, register and sub-element holds A(m, k) or B(k, n).
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

#include "rl/emu/fp16.hpp"
#include "rl/emu/ptx_warp.hpp"

namespace rl::emu::ptx {
namespace {

struct Slot {
  unsigned lane;
  unsigned reg;
  unsigned sub;  // 16-bit half (0 = bits 15:0) or byte index, by element width
};

constexpr int k_extent(MmaInput input) {
  switch (input) {
    case MmaInput::tf32:
      return 8;
    case MmaInput::e4m3:
    case MmaInput::e5m2:
      return 32;
    default:
      return 16;
  }
}

// A (16 x K), row-major fragments: m fixes g and the register's row half.
constexpr Slot a_slot(MmaInput input, unsigned m, unsigned k) {
  const unsigned g = m & 7U;
  const unsigned row_half = m >> 3U;
  switch (input) {
    case MmaInput::tf32:  // a0 (g,t) a1 (g+8,t) a2 (g,t+4) a3 (g+8,t+4)
      return {4U * g + (k & 3U), row_half + 2U * (k >> 2U), 0U};
    case MmaInput::e4m3:
    case MmaInput::e5m2:  // reg r: rows g / g+8, k = 4t+byte (+16)
      return {4U * g + ((k & 15U) >> 2U), row_half + 2U * (k >> 4U), k & 3U};
    default:  // f16/bf16: reg r: rows g / g+8, k = 2t+half (+8)
      return {4U * g + ((k & 7U) >> 1U), row_half + 2U * (k >> 3U), k & 1U};
  }
}

// B (K x 8), column fragments: n is g.
constexpr Slot b_slot(MmaInput input, unsigned k, unsigned n) {
  switch (input) {
    case MmaInput::tf32:  // b0 (t,g) b1 (t+4,g)
      return {4U * n + (k & 3U), k >> 2U, 0U};
    case MmaInput::e4m3:
    case MmaInput::e5m2:  // reg r: k = 4t+byte (+16)
      return {4U * n + ((k & 15U) >> 2U), k >> 4U, k & 3U};
    default:  // reg r: k = 2t+half (+8)
      return {4U * n + ((k & 7U) >> 1U), k >> 3U, k & 1U};
  }
}

std::array<float, 256> fp8_table(const fp16_detail::Fp8Format& format) {
  std::array<float, 256> table{};
  for (unsigned bits = 0; bits < 256; ++bits) {
    table[bits] = fp16_detail::fp8_bits_to_float(static_cast<unsigned char>(bits), format);
  }
  return table;
}

const std::array<float, 256> kE4m3Values = fp8_table(fp16_detail::kE4M3);
const std::array<float, 256> kE5m2Values = fp8_table(fp16_detail::kE5M2);

template <MmaInput Input>
double decode_as(std::uint32_t reg, unsigned sub) {
  if constexpr (Input == MmaInput::f16) {
    return fp16_detail::half_bits_to_float(static_cast<std::uint16_t>(reg >> (16U * sub)));
  } else if constexpr (Input == MmaInput::bf16) {
    return fp16_detail::bfloat16_bits_to_float(static_cast<std::uint16_t>(reg >> (16U * sub)));
  } else if constexpr (Input == MmaInput::tf32) {
    return std::bit_cast<float>(reg & 0xFFFFE000U);
  } else if constexpr (Input == MmaInput::e4m3) {
    return kE4m3Values[(reg >> (8U * sub)) & 0xFFU];
  } else {
    return kE5m2Values[(reg >> (8U * sub)) & 0xFFU];
  }
}

double decode(MmaInput input, std::uint32_t reg, unsigned sub) {
  switch (input) {
    case MmaInput::f16:
      return decode_as<MmaInput::f16>(reg, sub);
    case MmaInput::bf16:
      return decode_as<MmaInput::bf16>(reg, sub);
    case MmaInput::tf32:
      return decode_as<MmaInput::tf32>(reg, sub);
    case MmaInput::e4m3:
      return decode_as<MmaInput::e4m3>(reg, sub);
    case MmaInput::e5m2:
      return decode_as<MmaInput::e5m2>(reg, sub);
  }
  return 0.0;
}

std::int32_t s8_of(std::uint32_t reg, unsigned sub) {
  return static_cast<std::int8_t>(static_cast<std::uint8_t>(reg >> (8U * sub)));
}

// C/D: c_i at (g + 8*(i>>1), 2t + (i&1)).
constexpr unsigned c_row(unsigned lane, int i) {
  return (lane >> 2U) + 8U * (static_cast<unsigned>(i) >> 1U);
}
constexpr unsigned c_col(unsigned lane, int i) {
  return 2U * (lane & 3U) + (static_cast<unsigned>(i) & 1U);
}

}  // namespace

void mma_f32_lane(MmaInput input, unsigned lane, const MmaA& a, const MmaB& b, const float (&c)[4],
                  float (&d)[4]) {
  const auto k_count = static_cast<unsigned>(k_extent(input));
  float result[4];
  for (int i = 0; i < 4; ++i) {
    const unsigned m = c_row(lane, i);
    const unsigned n = c_col(lane, i);
    double sum = c[i];
    for (unsigned k = 0; k < k_count; ++k) {
      const Slot as = a_slot(input, m, k);
      const Slot bs = b_slot(input, k, n);
      sum += decode(input, a[as.lane][as.reg], as.sub) * decode(input, b[bs.lane][bs.reg], bs.sub);
    }
    // NaN results are the canonical NaN, as the GPU's fp32 arithmetic gives.
    result[i] = std::isnan(sum) ? std::bit_cast<float>(0x7FFFFFFFU) : static_cast<float>(sum);
  }
  for (int i = 0; i < 4; ++i) {
    d[i] = result[i];  // after all reads: d may alias c
  }
}

// The whole warp at once: each A and B element is decoded once (the per-lane
// form above decodes 2 * 4 * K of them for every lane).  Same products, same
// order, same rounding as mma_f32_lane, so the results are bit-identical.
namespace {

// sums (D as a dense 16 x 8 tile) holds C on entry and C + A*B in double on
// return.
template <MmaInput Input>
void mma_sums(const MmaA& a, const MmaB& b, double (&sums)[16][8]) {
  constexpr auto k_count = static_cast<unsigned>(k_extent(Input));
  double a_values[16][k_count];
  double b_values[k_count][8];
  for (unsigned m = 0; m < 16U; ++m) {
    for (unsigned k = 0; k < k_count; ++k) {
      const Slot as = a_slot(Input, m, k);
      a_values[m][k] = decode_as<Input>(a[as.lane][as.reg], as.sub);
    }
  }
  for (unsigned k = 0; k < k_count; ++k) {
    for (unsigned n = 0; n < 8U; ++n) {
      const Slot bs = b_slot(Input, k, n);
      b_values[k][n] = decode_as<Input>(b[bs.lane][bs.reg], bs.sub);
    }
  }
  // k outermost: the eight sums of a row are independent chains (and
  // vectorise), where one sum after another would wait on each add.  Each
  // sum still starts from C and adds k = 0, 1, ...
  for (unsigned m = 0; m < 16U; ++m) {
    for (unsigned k = 0; k < k_count; ++k) {
      for (unsigned n = 0; n < 8U; ++n) {
        sums[m][n] += a_values[m][k] * b_values[k][n];
      }
    }
  }
}

template <MmaInput Input>
void mma_f32_warp_as(const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  double sums[16][8];
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      sums[c_row(lane, i)][c_col(lane, i)] = c[lane][i];
    }
  }
  mma_sums<Input>(a, b, sums);
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const double sum = sums[c_row(lane, i)][c_col(lane, i)];
      // after all reads: d may alias c
      d[lane][i] = std::isnan(sum) ? std::bit_cast<float>(0x7FFFFFFFU) : static_cast<float>(sum);
    }
  }
}

}  // namespace

void mma_f32_warp(MmaInput input, const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  switch (input) {
    case MmaInput::f16:
      return mma_f32_warp_as<MmaInput::f16>(a, b, c, d);
    case MmaInput::bf16:
      return mma_f32_warp_as<MmaInput::bf16>(a, b, c, d);
    case MmaInput::tf32:
      return mma_f32_warp_as<MmaInput::tf32>(a, b, c, d);
    case MmaInput::e4m3:
      return mma_f32_warp_as<MmaInput::e4m3>(a, b, c, d);
    case MmaInput::e5m2:
      return mma_f32_warp_as<MmaInput::e5m2>(a, b, c, d);
  }
}

// f16 accumulators: c_i is half i & 1 of register i >> 1.  The sum is the
// same double as for f32 accumulators, rounded once to f16 (round to
// nearest even; through round-to-odd float, so no double rounding).
void mma_m16n8k16_f16_f16_warp(const MmaA& a, const MmaB& b, const MmaCF16& c, MmaCF16& d) {
  double sums[16][8];
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const auto bits = static_cast<std::uint16_t>(c[lane][i >> 1] >> (16U * (i & 1)));
      sums[c_row(lane, i)][c_col(lane, i)] = fp16_detail::half_bits_to_float(bits);
    }
  }
  mma_sums<MmaInput::f16>(a, b, sums);
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    std::uint32_t packed[2] = {0U, 0U};
    for (int i = 0; i < 4; ++i) {
      const double sum = sums[c_row(lane, i)][c_col(lane, i)];
      const std::uint16_t bits =
          fp16_detail::float_to_half_bits(fp16_detail::double_to_float_round_odd(sum));
      packed[i >> 1] |= static_cast<std::uint32_t>(bits) << (16U * (i & 1));
    }
    d[lane][0] = packed[0];  // after all reads: d may alias c
    d[lane][1] = packed[1];
  }
}

void mma_m16n8k32_s8_s32_lane(unsigned lane, const MmaA& a, const MmaB& b,
                              const std::int32_t (&c)[4], std::int32_t (&d)[4]) {
  std::int32_t result[4];
  for (int i = 0; i < 4; ++i) {
    const unsigned m = c_row(lane, i);
    const unsigned n = c_col(lane, i);
    auto sum = static_cast<std::uint32_t>(c[i]);  // unsigned: wraps without UB
    for (unsigned k = 0; k < 32; ++k) {
      const Slot as = a_slot(MmaInput::e4m3, m, k);  // s8 shares the 8-bit layout
      const Slot bs = b_slot(MmaInput::e4m3, k, n);
      sum += static_cast<std::uint32_t>(s8_of(a[as.lane][as.reg], as.sub) *
                                        s8_of(b[bs.lane][bs.reg], bs.sub));
    }
    result[i] = static_cast<std::int32_t>(sum);
  }
  for (int i = 0; i < 4; ++i) {
    d[i] = result[i];
  }
}

// Decodes each byte once; wrapping sums do not depend on the order.
void mma_m16n8k32_s8_s32_warp(const MmaA& a, const MmaB& b, const MmaCS32& c, MmaCS32& d) {
  std::int32_t a_values[16][32];
  std::int32_t b_values[32][8];
  for (unsigned m = 0; m < 16U; ++m) {
    for (unsigned k = 0; k < 32U; ++k) {
      const Slot as = a_slot(MmaInput::e4m3, m, k);
      a_values[m][k] = s8_of(a[as.lane][as.reg], as.sub);
    }
  }
  for (unsigned k = 0; k < 32U; ++k) {
    for (unsigned n = 0; n < 8U; ++n) {
      const Slot bs = b_slot(MmaInput::e4m3, k, n);
      b_values[k][n] = s8_of(b[bs.lane][bs.reg], bs.sub);
    }
  }
  MmaCS32 result;
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const unsigned m = c_row(lane, i);
      const unsigned n = c_col(lane, i);
      auto sum = static_cast<std::uint32_t>(c[lane][i]);
      for (unsigned k = 0; k < 32U; ++k) {
        sum += static_cast<std::uint32_t>(a_values[m][k] * b_values[k][n]);
      }
      result[lane][i] = static_cast<std::int32_t>(sum);
    }
  }
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      d[lane][i] = result[lane][i];
    }
  }
}

}  // namespace rl::emu::ptx
