// sm_120a mma.sync semantics (rl/emu/mma_sm120.hpp): which instructions PTX
// has, where each element and scale factor sits in the warp's registers, and
// the whole warp's D.  Plain C++: no runtime, so tests call it with
// hand-built register files.
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rl/emu/mma_sm120.hpp"

namespace rl::emu::sm120 {
namespace {

bool is_f8f6f4_type(Format f) {
  return f == Format::e4m3 || f == Format::e5m2 || f == Format::e3m2 || f == Format::e2m3 ||
         f == Format::e2m1;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::f8f6f4:
      return "kind::f8f6f4";
    case Kind::mxf8f6f4:
      return "kind::mxf8f6f4";
    case Kind::mxf4:
      return "kind::mxf4";
    case Kind::mxf4nvf4:
      return "kind::mxf4nvf4";
  }
  return "kind::?";
}

[[noreturn]] void stop(const Mma& op, const char* why) {
  std::fprintf(stderr, "rl::emu: %s: %s\n", instruction_name(op).c_str(), why);
  std::fflush(stderr);
  std::abort();
}

// The format's code held by one byte of a K = 32 operand: e4m3/e5m2 fill it,
// e3m2/e2m3 sit in bits 5:0 and e2m1 in bits 5:2 (the rest is padding).
std::uint32_t code_in_byte(Format f, std::uint32_t byte) {
  switch (f) {
    case Format::e3m2:
    case Format::e2m3:
      return byte & 0x3FU;
    case Format::e2m1:
      return (byte >> 2U) & 0xFU;
    default:
      return byte & 0xFFU;
  }
}

// Every byte's value for every format, decoded once (narrow::to_double is exact).
using ByteValues = std::array<double, 256>;
const ByteValues& byte_values(Format format) {
  static const std::array<ByteValues, 7> tables = [] {
    std::array<ByteValues, 7> t{};
    for (std::size_t index = 0; index < t.size(); ++index) {
      const auto f = static_cast<Format>(index);
      for (std::uint32_t byte = 0; byte < 256U; ++byte)
        t[index][byte] = narrow::to_double(f, code_in_byte(f, byte));
    }
    return t;
  }();
  return tables[static_cast<std::size_t>(format)];
}

double e2m1_nibble_value(std::uint32_t nibble) {
  static const std::array<double, 16> values = [] {
    std::array<double, 16> v{};
    for (std::uint32_t code = 0; code < 16U; ++code)
      v[code] = narrow::to_double(Format::e2m1, code);
    return v;
  }();
  return values[nibble & 0xFU];
}

struct Slot {
  unsigned lane;
  unsigned reg;
  unsigned shift;  // bit offset of the element in the register
};

// Inverse of the fragment tables (header): which lane, register and bits hold
// A(m, k) and B(k, n).
Slot a_slot(unsigned k_extent, unsigned m, unsigned k) {
  const unsigned row_half = m >> 3U;
  if (k_extent == 64U)  // nibble j of register r: (g + 8 (r & 1), 8t + j + 32 (r >> 1))
    return {4U * (m & 7U) + ((k & 31U) >> 3U), row_half + 2U * (k >> 5U), 4U * (k & 7U)};
  // byte b of register r: (g + 8 (r & 1), 4t + b + 16 (r >> 1))
  return {4U * (m & 7U) + ((k & 15U) >> 2U), row_half + 2U * (k >> 4U), 8U * (k & 3U)};
}

Slot b_slot(unsigned k_extent, unsigned k, unsigned n) {
  if (k_extent == 64U)  // nibble j of register r: (8t + j + 32 r, g)
    return {4U * n + ((k & 31U) >> 3U), k >> 5U, 4U * (k & 7U)};
  // byte b of register r: (4t + b + 16 r, g)
  return {4U * n + ((k & 15U) >> 2U), k >> 4U, 8U * (k & 3U)};
}

double element_value(const Mma& op, Format f, std::uint32_t reg, unsigned shift) {
  if (k_of(op.kind) == 64U) return e2m1_nibble_value(reg >> shift);
  return byte_values(f)[(reg >> shift) & 0xFFU];
}

// C/D: c_i at (g + 8 (i >> 1), 2t + (i & 1)).
constexpr unsigned c_row(unsigned lane, int i) {
  return (lane >> 2U) + 8U * (static_cast<unsigned>(i) >> 1U);
}
constexpr unsigned c_col(unsigned lane, int i) {
  return 2U * (lane & 3U) + (static_cast<unsigned>(i) & 1U);
}

double scale_byte_value(const Mma& op, std::uint32_t reg, unsigned byte) {
  return byte_values(op.scale)[(reg >> (8U * byte)) & 0xFFU];
}

// sums holds C as a dense 16 x 8 tile on entry, C + sum_k (A(m,k) SF_A(m,k))
// (B(k,n) SF_B(n,k)) in double on return.  Every factor and product is exact
// (8-bit significands at most, exponents far inside double's range), so
// scaling the elements first gives the products the instruction defines.
template <typename ScaleA, typename ScaleB>
void warp_result(const Mma& op, const MmaA& a, const MmaB& b, const MmaCF32& c, ScaleA scale_a,
                 ScaleB scale_b, MmaCF32& d) {
  const unsigned k_extent = k_of(op.kind);
  double a_values[16][64];
  double b_values[64][8];
  for (unsigned m = 0; m < 16U; ++m)
    for (unsigned k = 0; k < k_extent; ++k) a_values[m][k] = a_value(op, a, m, k) * scale_a(m, k);
  for (unsigned k = 0; k < k_extent; ++k)
    for (unsigned n = 0; n < 8U; ++n) b_values[k][n] = b_value(op, b, k, n) * scale_b(n, k);
  double sums[16][8];
  for (unsigned lane = 0; lane < kWarpLanes; ++lane)
    for (int i = 0; i < 4; ++i) sums[c_row(lane, i)][c_col(lane, i)] = c[lane][i];
  // k outermost per row: the eight sums of a row are independent chains, each
  // still C + k = 0, 1, ... in order.
  for (unsigned m = 0; m < 16U; ++m)
    for (unsigned k = 0; k < k_extent; ++k)
      for (unsigned n = 0; n < 8U; ++n) sums[m][n] += a_values[m][k] * b_values[k][n];
  for (unsigned lane = 0; lane < kWarpLanes; ++lane)
    for (int i = 0; i < 4; ++i) {
      const double sum = sums[c_row(lane, i)][c_col(lane, i)];
      // after all reads: d may alias c; NaN results are the canonical NaN
      d[lane][i] = std::isnan(sum) ? std::bit_cast<float>(0x7FFFFFFFU) : static_cast<float>(sum);
    }
}

}  // namespace

std::string instruction_name(const Mma& op) {
  std::string name =
      "mma.sync.aligned.m16n8k" + std::to_string(k_of(op.kind)) + ".row.col." + kind_name(op.kind);
  if (block_scaled(op.kind))
    name += ".block_scale.scale_vec::" + std::to_string(op.scale_vec) + "X";
  name += std::string(".f32.") + narrow::name_of(op.a) + "." + narrow::name_of(op.b) + ".f32";
  if (block_scaled(op.kind)) name += std::string(".") + narrow::name_of(op.scale);
  return name;
}

const char* invalid_reason(const Mma& op) {
  switch (op.kind) {
    case Kind::f8f6f4:
      if (!is_f8f6f4_type(op.a) || !is_f8f6f4_type(op.b))
        return "A and B must be e4m3, e5m2, e3m2, e2m3 or e2m1";
      return op.scale_vec == 0 ? nullptr : "kind::f8f6f4 has no block scale";
    case Kind::mxf8f6f4:
      if (!is_f8f6f4_type(op.a) || !is_f8f6f4_type(op.b))
        return "A and B must be e4m3, e5m2, e3m2, e2m3 or e2m1";
      return op.scale == Format::ue8m0 && op.scale_vec == 1
                 ? nullptr
                 : "kind::mxf8f6f4 takes ue8m0 scales with scale_vec::1X (PTX Table 36)";
    case Kind::mxf4:
    case Kind::mxf4nvf4:
      if (op.a != Format::e2m1 || op.b != Format::e2m1) return "A and B must be e2m1";
      if (op.scale == Format::ue8m0 && op.scale_vec == 2) return nullptr;
      if (op.kind == Kind::mxf4)
        return "kind::mxf4 takes ue8m0 scales with scale_vec::2X (PTX Table 36)";
      // ue8m0 with 4X came with PTX ISA 9.1.
      if ((op.scale == Format::ue4m3 || op.scale == Format::ue8m0) && op.scale_vec == 4)
        return nullptr;
      return "kind::mxf4nvf4 takes ue8m0 scales with scale_vec::2X or 4X, or ue4m3 with 4X "
             "(PTX Table 36)";
  }
  return "unknown kind";
}

const char* invalid_selectors(const Mma& op, ScaleSelector a, ScaleSelector b) {
  if (a.thread_id > 1U) return "thread-id-a must be 0 or 1 (PTX Table 37)";
  if (b.thread_id > 3U) return "thread-id-b must be 0..3 (PTX Table 37)";
  for (const std::uint16_t byte_id : {a.byte_id, b.byte_id}) {
    const bool ok = op.scale_vec == 1   ? byte_id <= 3U
                    : op.scale_vec == 2 ? (byte_id == 0U || byte_id == 2U)
                                        : byte_id == 0U;
    if (!ok)
      return op.scale_vec == 1   ? "byte-id must be 0..3 with scale_vec::1X (PTX Table 37)"
             : op.scale_vec == 2 ? "byte-id must be 0 or 2 with scale_vec::2X (PTX Table 37)"
                                 : "byte-id must be 0 with scale_vec::4X (PTX Table 37)";
  }
  return nullptr;
}

double a_value(const Mma& op, const MmaA& a, unsigned m, unsigned k) {
  const Slot s = a_slot(k_of(op.kind), m, k);
  return element_value(op, op.a, a[s.lane][s.reg], s.shift);
}

double b_value(const Mma& op, const MmaB& b, unsigned k, unsigned n) {
  const Slot s = b_slot(k_of(op.kind), k, n);
  return element_value(op, op.b, b[s.lane][s.reg], s.shift);
}

double scale_a_value(const Mma& op, const ScaleRegs& regs, ScaleSelector sel, unsigned m,
                     unsigned block) {
  const unsigned lane = 4U * (m & 7U) + 2U * sel.thread_id + (m >> 3U);
  return scale_byte_value(op, regs[lane], sel.byte_id + block);
}

double scale_b_value(const Mma& op, const ScaleRegs& regs, ScaleSelector sel, unsigned n,
                     unsigned block) {
  return scale_byte_value(op, regs[4U * n + sel.thread_id], sel.byte_id + block);
}

void mma_warp(const Mma& op, const MmaA& a, const MmaB& b, const MmaCF32& c, MmaCF32& d) {
  if (const char* why = invalid_reason(op)) stop(op, why);
  if (block_scaled(op.kind)) stop(op, "a block-scaled kind needs its scale operands");
  const auto unscaled = [](unsigned, unsigned) { return 1.0; };
  warp_result(op, a, b, c, unscaled, unscaled, d);
}

void mma_block_scaled_warp(const Mma& op, const MmaA& a, const MmaB& b, const MmaCF32& c,
                           const ScaleRegs& scale_a, ScaleSelector sel_a, const ScaleRegs& scale_b,
                           ScaleSelector sel_b, MmaCF32& d) {
  if (const char* why = invalid_reason(op)) stop(op, why);
  if (!block_scaled(op.kind)) stop(op, "kind::f8f6f4 takes no scale operands");
  if (const char* why = invalid_selectors(op, sel_a, sel_b)) stop(op, why);
  // Each k-block's scale factors, read once: [row or column][block].
  const unsigned blocks = static_cast<unsigned>(op.scale_vec);
  const unsigned block_k = k_of(op.kind) / blocks;
  double sf_a[16][4];
  double sf_b[8][4];
  for (unsigned j = 0; j < blocks; ++j) {
    for (unsigned m = 0; m < 16U; ++m) sf_a[m][j] = scale_a_value(op, scale_a, sel_a, m, j);
    for (unsigned n = 0; n < 8U; ++n) sf_b[n][j] = scale_b_value(op, scale_b, sel_b, n, j);
  }
  warp_result(
      op, a, b, c, [&](unsigned m, unsigned k) { return sf_a[m][k / block_k]; },
      [&](unsigned n, unsigned k) { return sf_b[n][k / block_k]; }, d);
}

}  // namespace rl::emu::sm120
