// tcgen05.mma's instruction descriptor (PTX ISA 9.7.16.4.2): Table 42 for
// kind::tf32 / f16 / f8f6f4 / i8, Table 43 for kind::mxf8f6f4, Table 44 for
// kind::mxf4 / mxf4nvf4; the shapes of Table 39 (cta_group::1, dense), the
// transposes of Tables 51, 52 and 54, the scale vectors of Table 57.
// Cross-checked with CUTLASS cute/arch/mma_sm100_desc.hpp (InstrDescriptor,
// InstrDescriptorBlockScaled).
#include <stdexcept>
#include <string>

#include "rl/emu/tcgen05_mma.hpp"

namespace rl::emu::tcgen05 {
namespace {

[[noreturn]] void invalid(Kind kind, const std::string& field, std::uint32_t value,
                          const std::string& why) {
  throw std::invalid_argument(std::string("tcgen05.mma.") + kind_name(kind) +
                              ": instruction descriptor field " + field + " = " +
                              std::to_string(value) + ": " + why);
}

std::uint32_t bits(std::uint32_t word, unsigned low, unsigned count) {
  return (word >> low) & ((1U << count) - 1U);
}

void reserved(Kind kind, std::uint32_t idesc, unsigned low, unsigned count) {
  if (const std::uint32_t v = bits(idesc, low, count); v != 0)
    invalid(kind,
            count == 1 ? "reserved (bit " + std::to_string(low) + ")"
                       : "reserved (bits " + std::to_string(low) + "-" +
                             std::to_string(low + count - 1) + ")",
            v, "must be 0");
}

// The f8f6f4 type codes (Tables 42, 43): E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5.
Element f8f6f4_type(Kind kind, const char* field, std::uint32_t code) {
  switch (code) {
    case 0:
      return Element::e4m3;
    case 1:
      return Element::e5m2;
    case 3:
      return Element::e2m3;
    case 4:
      return Element::e3m2;
    case 5:
      return Element::e2m1;
    default:
      invalid(kind, field, code, "must be E4M3 = 0, E5M2 = 1, E2M3 = 3, E3M2 = 4 or E2M1 = 5");
  }
}

bool eight_bit(Element e) {
  return e == Element::e4m3 || e == Element::e5m2 || e == Element::u8 || e == Element::s8;
}

// N of Table 39 for cta_group::1 (and Table 52 for an 8-bit transposed B).
void check_n(Kind kind, const InstrDescriptor& d, std::uint32_t field) {
  const unsigned n = d.n;
  bool ok = n >= 8 && n <= 256 && n % 8 == 0;
  std::string rule = "N = 8 .. 256 in steps of 8";
  if (kind == Kind::i8) {
    ok = n == 8 || n == 16 || n == 24 || n == 32 || (n > 32 && n <= 256 && n % 16 == 0);
    rule = "N = 8, 16, 24, 32, then steps of 16 up to 256 (kind::i8)";
  }
  if (ok && d.b_mn_major && eight_bit(d.b) && n % 16 != 0) {
    ok = false;
    rule = "N = 16 .. 256 in steps of 16 for an 8-bit transposed B (Table 52)";
  }
  if (!ok) invalid(kind, "N >> 3 (bits 17-22)", field, "N = " + std::to_string(n) + "; " + rule);
}

InstrDescriptor decode_plain(Kind kind, std::uint32_t idesc) {
  InstrDescriptor d{};
  reserved(kind, idesc, 0, 2);  // sparsity selector: dense only
  if (bits(idesc, 2, 1) != 0)
    invalid(kind, "sparsity (bit 2)", 1, "sparse A is tcgen05.mma.sp, not emulated");
  d.saturate = bits(idesc, 3, 1) != 0;
  if (d.saturate && kind != Kind::i8)
    invalid(kind, "saturate (bit 3)", 1, "only kind::i8 saturates");
  const std::uint32_t dtype = bits(idesc, 4, 2);
  reserved(kind, idesc, 6, 1);
  const std::uint32_t at = bits(idesc, 7, 3), bt = bits(idesc, 10, 3);
  switch (kind) {
    case Kind::tf32:
      if (dtype != 1) invalid(kind, "dtype (bits 4-5)", dtype, "must be F32 = 1");
      if (at != 2) invalid(kind, "atype (bits 7-9)", at, "must be TF32 = 2");
      if (bt != 2) invalid(kind, "btype (bits 10-12)", bt, "must be TF32 = 2");
      d.a = d.b = Element::tf32;
      d.d = Accumulator::f32;
      break;
    case Kind::f16:
      if (dtype > 1) invalid(kind, "dtype (bits 4-5)", dtype, "must be F16 = 0 or F32 = 1");
      if (at > 1) invalid(kind, "atype (bits 7-9)", at, "must be F16 = 0 or BF16 = 1");
      if (bt != at) invalid(kind, "btype (bits 10-12)", bt, "must equal atype");
      if (dtype == 0 && at != 0)
        invalid(kind, "atype (bits 7-9)", at, "an F16 D takes F16 A and B only");
      d.a = d.b = at == 0 ? Element::f16 : Element::bf16;
      d.d = dtype == 0 ? Accumulator::f16 : Accumulator::f32;
      break;
    case Kind::f8f6f4:
      if (dtype > 1) invalid(kind, "dtype (bits 4-5)", dtype, "must be F16 = 0 or F32 = 1");
      d.a = f8f6f4_type(kind, "atype (bits 7-9)", at);
      d.b = f8f6f4_type(kind, "btype (bits 10-12)", bt);
      d.d = dtype == 0 ? Accumulator::f16 : Accumulator::f32;
      break;
    default:  // i8
      if (dtype != 2) invalid(kind, "dtype (bits 4-5)", dtype, "must be S32 = 2");
      if (at > 1) invalid(kind, "atype (bits 7-9)", at, "must be unsigned 8b = 0 or signed 8b = 1");
      if (bt > 1)
        invalid(kind, "btype (bits 10-12)", bt, "must be unsigned 8b = 0 or signed 8b = 1");
      d.a = at == 1 ? Element::s8 : Element::u8;
      d.b = bt == 1 ? Element::s8 : Element::u8;
      d.d = Accumulator::s32;
      break;
  }
  d.negate_a = bits(idesc, 13, 1) != 0;
  d.negate_b = bits(idesc, 14, 1) != 0;
  if (kind == Kind::i8 && (d.negate_a || d.negate_b))
    invalid(kind, d.negate_a ? "negate A (bit 13)" : "negate B (bit 14)", 1,
            "kind::i8 has no negate");
  d.a_mn_major = bits(idesc, 15, 1) != 0;
  d.b_mn_major = bits(idesc, 16, 1) != 0;
  // Table 54: only 8-, 16- and 32-bit types transpose.
  for (const bool a : {true, false}) {
    const Element e = a ? d.a : d.b;
    if ((a ? d.a_mn_major : d.b_mn_major) &&
        (e == Element::e2m3 || e == Element::e3m2 || e == Element::e2m1))
      invalid(kind, a ? "transpose A (bit 15)" : "transpose B (bit 16)", 1,
              std::string("a ") + element_name(e) + " operand is K-major only (Table 54)");
  }
  d.n = bits(idesc, 17, 6) * 8;
  reserved(kind, idesc, 23, 1);
  const std::uint32_t m = bits(idesc, 24, 5);
  if (m != 4 && m != 8)
    invalid(kind, "M >> 4 (bits 24-28)", m, "cta_group::1 has M = 64 (4) or M = 128 (8)");
  d.m = m * 16;
  reserved(kind, idesc, 29, 1);
  if (const std::uint32_t shift = bits(idesc, 30, 2); shift != 0)
    invalid(kind, "maximum shift (bits 30-31)", shift, "exists only for tcgen05.mma.ws");
  check_n(kind, d, bits(idesc, 17, 6));
  return d;
}

InstrDescriptor decode_scaled(Kind kind, ScaleVec vec, std::uint32_t idesc) {
  InstrDescriptor d{};
  d.d = Accumulator::f32;
  reserved(kind, idesc, 0, 2);
  if (bits(idesc, 2, 1) != 0)
    invalid(kind, "sparsity (bit 2)", 1, "sparse A is tcgen05.mma.sp, not emulated");
  reserved(kind, idesc, 3, 1);
  d.sfb_id = bits(idesc, 4, 2);
  reserved(kind, idesc, 6, 1);
  const std::uint32_t at = bits(idesc, 7, 3);
  if (kind == Kind::mxf8f6f4) {
    d.a = f8f6f4_type(kind, "atype (bits 7-9)", at);
    d.b = f8f6f4_type(kind, "btype (bits 10-12)", bits(idesc, 10, 3));
  } else {
    if (at != 1) invalid(kind, "atype (bits 7-9)", at, "must be E2M1 = 1");
    if (const std::uint32_t bt = bits(idesc, 10, 2); bt != 1)
      invalid(kind, "btype (bits 10-11)", bt, "must be E2M1 = 1");
    reserved(kind, idesc, 12, 1);
    d.a = d.b = Element::e2m1;
  }
  d.negate_a = bits(idesc, 13, 1) != 0;
  d.negate_b = bits(idesc, 14, 1) != 0;
  d.a_mn_major = bits(idesc, 15, 1) != 0;
  d.b_mn_major = bits(idesc, 16, 1) != 0;
  if (kind != Kind::mxf8f6f4 && (d.a_mn_major || d.b_mn_major))
    invalid(kind, d.a_mn_major ? "transpose A (bit 15)" : "transpose B (bit 16)", 1,
            "kind::mxf4 and kind::mxf4nvf4 have no transpose (Table 51)");
  for (const bool a : {true, false}) {
    const Element e = a ? d.a : d.b;
    if ((a ? d.a_mn_major : d.b_mn_major) && !eight_bit(e))
      invalid(kind, a ? "transpose A (bit 15)" : "transpose B (bit 16)", 1,
              std::string("a ") + element_name(e) + " operand is K-major only (Table 54)");
  }
  d.n = bits(idesc, 17, 6) * 8;
  d.scale_ue8m0 = bits(idesc, 23, 1) != 0;
  reserved(kind, idesc, 24, 3);
  const std::uint32_t m = bits(idesc, 27, 2);
  if (m != 1) invalid(kind, "M >> 7 (bits 27-28)", m, "cta_group::1 has M = 128 (1) only");
  d.m = 128;
  d.sfa_id = bits(idesc, 29, 2);
  if (const std::uint32_t k96 = bits(idesc, 31, 1); k96 != 0)
    invalid(
        kind, kind == Kind::mxf8f6f4 ? "reserved (bit 31)" : "K dimension (bit 31)", k96,
        kind == Kind::mxf8f6f4 ? "must be 0" : "K = 96 (sm_103a, cta_group::2) is not emulated");
  check_n(kind, d, bits(idesc, 17, 6));
  // Table 57: scale types and vector sizes; the ids the vector size allows.
  const unsigned per_word = vec == ScaleVec::x1 ? 1 : vec == ScaleVec::x2 ? 2 : 4;
  if (kind == Kind::mxf8f6f4 && vec != ScaleVec::x1)
    invalid(kind, "scale_vec", static_cast<unsigned>(vec), "kind::mxf8f6f4 takes scale_vec::1X");
  if (kind == Kind::mxf4 && vec != ScaleVec::x2)
    invalid(kind, "scale_vec", static_cast<unsigned>(vec), "kind::mxf4 takes scale_vec::2X");
  if (kind == Kind::mxf4nvf4 && vec != ScaleVec::x2 && vec != ScaleVec::x4)
    invalid(kind, "scale_vec", static_cast<unsigned>(vec),
            "kind::mxf4nvf4 takes scale_vec::2X or 4X");
  if (!d.scale_ue8m0 && !(kind == Kind::mxf4nvf4 && vec == ScaleVec::x4))
    invalid(kind, "scale type (bit 23)", 0,
            "UE4M3 scales exist only for kind::mxf4nvf4 with scale_vec::4X; this needs UE8M0 = 1");
  for (const bool a : {true, false}) {
    const unsigned id = a ? d.sfa_id : d.sfb_id;
    if (id % per_word != 0)
      invalid(kind, a ? "scale factor A ID (bits 29-30)" : "scale factor B ID (bits 4-5)", id,
              "must be a multiple of " + std::to_string(per_word) + " with this scale_vec");
  }
  return d;
}

}  // namespace

InstrDescriptor decode_instr_descriptor(Kind kind, ScaleVec scale_vec, std::uint32_t idesc) {
  if (block_scaled(kind)) return decode_scaled(kind, scale_vec, idesc);
  if (scale_vec != ScaleVec::none)
    throw std::invalid_argument(std::string("tcgen05.mma.") + kind_name(kind) +
                                " has no block scaling");
  return decode_plain(kind, idesc);
}

}  // namespace rl::emu::tcgen05
