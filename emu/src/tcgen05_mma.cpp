// tcgen05.mma performed: operands gathered from shared and tensor memory in
// the layouts of rl/emu/tcgen05_mma.hpp, the scale factors of the
// block-scaled kinds, and the exact arithmetic; the issue binds it to the
// tensor memory and the asynchronous queue of rl/emu/tcgen05.hpp.
#include "rl/emu/tcgen05_mma.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "hopper_operand_hazards.hpp"
#include "rl/emu/counters.hpp"
#include "rl/emu/fp16.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/narrow_float.hpp"

namespace rl::emu::tcgen05 {
namespace {

namespace fp = rl::emu::fp16_detail;

// The value of an element held in the low bits of `raw` (its container read
// little-endian): 16-bit types in 16 bits, tf32 in 32 (the top 19 read, PTX:
// "the lower 13 bits are ignored"), 8-bit types in 8, e2m3 / e3m2 in the low
// 6 bits, e2m1 in the low 4.
double value_of(Element e, std::uint32_t raw) {
  using narrow::Format;
  switch (e) {
    case Element::f16:
      return fp::half_bits_to_float(static_cast<std::uint16_t>(raw));
    case Element::bf16:
      return fp::bfloat16_bits_to_float(static_cast<std::uint16_t>(raw));
    case Element::tf32:
      return std::bit_cast<float>(raw & 0xFFFFE000U);
    case Element::e4m3:
      return narrow::to_double(Format::e4m3, raw & 0xFFU);
    case Element::e5m2:
      return narrow::to_double(Format::e5m2, raw & 0xFFU);
    case Element::e2m3:
      return narrow::to_double(Format::e2m3, raw & 0x3FU);
    case Element::e3m2:
      return narrow::to_double(Format::e3m2, raw & 0x3FU);
    case Element::e2m1:
      return narrow::to_double(Format::e2m1, raw & 0xFU);
    case Element::u8:
      return static_cast<double>(raw & 0xFFU);
    case Element::s8:
      return static_cast<std::int8_t>(raw & 0xFFU);
  }
  return 0.0;
}

bool sub_byte(Element e) {
  return e == Element::e2m3 || e == Element::e3m2 || e == Element::e2m1;
}
bool packed_fp4(Kind kind) {
  return kind == Kind::mxf4 || kind == Kind::mxf4nvf4;
}

// Bits one element takes along K in its container: in shared memory and in
// tensor memory alike, 6- and 4-bit types of kind::f8f6f4 / mxf8f6f4 take a
// byte (9.7.16.10.4); kind::mxf4* packs two e2m1 per byte.
unsigned container_bits(Kind kind, Element e) {
  switch (e) {
    case Element::f16:
    case Element::bf16:
      return 16;
    case Element::tf32:
      return 32;
    case Element::e2m1:
      return packed_fp4(kind) ? 4 : 8;
    default:
      return 8;
  }
}

// Element (mn, k) of an operand in shared memory.
double smem_element(const Memory& mem, Kind kind, Element e, const SmemDescriptor& d, bool mn_major,
                    unsigned mn, unsigned k) {
  const unsigned cb = container_bits(kind, e);
  if (sub_byte(e) && cb == 8) {
    // Padded in shared memory (Figures 202, 203; the b4x16_p64 / b6x16_p32
    // formats tcgen05.cp decompresses): each 16-byte unit along K holds 16
    // elements packed from its first byte (4-bit: 8 bytes then 8 of padding;
    // 6-bit: 12 bytes then 4), element i at bits [w i, w i + w).
    const std::uint32_t unit = operand_address(d, false, 8, mn, k & ~15U);
    const unsigned width = e == Element::e2m1 ? 4 : 6, bit = width * (k % 16);
    const std::uint32_t two =
        mem.read_smem(unit + bit / 8) | (std::uint32_t{mem.read_smem(unit + bit / 8 + 1)} << 8);
    return value_of(e, two >> (bit % 8));
  }
  const std::uint32_t at = operand_address(d, mn_major, cb, mn, k);
  if (cb == 4) return value_of(e, mem.read_smem(at) >> (4 * (k % 2)));
  std::uint32_t raw = 0;
  for (unsigned i = 0; i < cb / 8; ++i) raw |= std::uint32_t{mem.read_smem(at + i)} << (8 * i);
  return value_of(e, raw);
}

// Element (row, k) of A in tensor memory: K packed along the row's lane,
// low bits of each 32-bit cell first (9.7.16.10.4.3, 9.7.16.10.4.5).  In an
// 8-bit container e2m1 sits in bits 2-5 and e2m3 / e3m2 in bits 0-5 (the
// placement the ISA gives for mma.sync's f8f6f4 containers).
double tmem_element(const std::uint32_t* a_cells, unsigned lane_offset, Kind kind, Element e,
                    unsigned k) {
  const unsigned cb = container_bits(kind, e), bit = k * cb;
  const std::uint32_t cell = a_cells[lane_offset * kColumns + bit / 32];
  std::uint32_t raw = cell >> (bit % 32);
  if (e == Element::e2m1 && cb == 8) raw >>= 2;
  return value_of(e, raw);
}

double scale_value(bool ue8m0, std::uint32_t byte) {
  return narrow::to_double(ue8m0 ? narrow::Format::ue8m0 : narrow::Format::ue4m3, byte);
}

std::uint32_t round_to(Accumulator d, double sum) {
  if (d == Accumulator::f16) return fp::float_to_half_bits(fp::double_to_float_round_odd(sum));
  return std::bit_cast<std::uint32_t>(static_cast<float>(sum));
}

double accumulator_value(Accumulator d, std::uint32_t cell) {
  if (d == Accumulator::f16) return fp::half_bits_to_float(static_cast<std::uint16_t>(cell));
  return std::bit_cast<float>(cell);
}

// Shared-memory bytes through the block's window, one translation per 16-byte
// unit (operands are made of whole 16-byte units: the ISA wants every start,
// LBO and SBO 16-byte aligned).
struct SmemReader {
  std::uint32_t unit = 0xFFFFFFFFU;
  const unsigned char* host = nullptr;
  unsigned char operator()(std::uint32_t address) {
    if ((address & ~15U) != unit) {
      unit = address & ~15U;
      host = hopper::shared_pointer(unit);
    }
    return host[address & 15U];
  }
};

unsigned scales_per_k(ScaleVec v) {
  return v == ScaleVec::x4 ? 4 : v == ScaleVec::x2 ? 2 : 1;
}

// rl/emu/counters.hpp: the role of A's and B's element types and D's type;
// mixed FP8/FP6/FP4 operands count under the wider of the two.
const char* tensor_role(const InstrDescriptor& id) {
  const bool f16_d = id.d == Accumulator::f16;
  switch (id.a) {
    case Element::f16:
      return f16_d ? "tensor_fp16_f16" : "tensor_fp16_f32";
    case Element::bf16:
      return "tensor_bf16";
    case Element::tf32:
      return "tensor_tf32";
    case Element::u8:
    case Element::s8:
      return "tensor_int8";
    default:
      break;
  }
  auto narrow_bits = [](Element e) {
    return e == Element::e2m1 ? 4 : e == Element::e2m3 || e == Element::e3m2 ? 6 : 8;
  };
  const int widest = std::max(narrow_bits(id.a), narrow_bits(id.b));
  if (widest == 8) return f16_d ? "tensor_fp8_f16" : "tensor_fp8_f32";
  if (widest == 6 || f16_d) return f16_d ? "tensor_fp6_fp4_f16" : "tensor_fp6_fp4_f32";
  return "tensor_fp4";
}

}  // namespace

MmaRanges ranges(const MmaOp& op, const InstrDescriptor& id) {
  MmaRanges r{};
  const unsigned lanes = id.m == 64 ? 112 : 128;
  r.d = {op.d_tmem, lanes, id.n};
  if (op.a_from_tmem) r.a = {op.a_tmem, lanes, 8};  // K elements always fill 256 bits
  if (block_scaled(op.kind)) {
    r.sfa = {tmem_address(0, column_of(op.sfa_tmem)), kLanes, id.m / 32};
    r.sfb = {tmem_address(0, column_of(op.sfb_tmem)), kLanes, (id.n + 31) / 32};
  }
  return r;
}

InstrDescriptor check(const MmaOp& op) {
  const InstrDescriptor id = decode_instr_descriptor(op.kind, op.scale_vec, op.idesc);
  const std::string name = std::string("tcgen05.mma.") + kind_name(op.kind);
  const unsigned lane0 = lane_of(op.d_tmem);
  if (id.m == 128 && lane0 != 0)
    throw std::invalid_argument(name + ": d-tmem lane " + std::to_string(lane0) +
                                " must be 0 for M = 128 (all 128 lanes, layout D)");
  if (id.m == 64 && lane0 != 0 && lane0 != 16)
    throw std::invalid_argument(name + ": d-tmem lane " + std::to_string(lane0) +
                                " must be 0 or 16 for M = 64 (layout F)");
  if (op.a_from_tmem) {
    if (lane_of(op.a_tmem) != lane0)
      throw std::invalid_argument(name + ": a-tmem lane " + std::to_string(lane_of(op.a_tmem)) +
                                  " must equal d-tmem's lane " + std::to_string(lane0));
    if (id.a_mn_major)
      throw std::invalid_argument(name + ": A in tensor memory is K-major; transpose A is set");
  } else {
    decode_smem_descriptor(op.a_desc, "a-desc");
  }
  decode_smem_descriptor(op.b_desc, "b-desc");
  return id;
}

void perform(const MmaOp& op, const Memory& mem) {
  const InstrDescriptor id = check(op);
  const MmaRanges r = ranges(op, id);
  const unsigned m = id.m, n = id.n, kk = k_of(op.kind);
  const unsigned lane0 = lane_of(op.d_tmem);
  // A (m x K) and B (n x K), decoded once, negations applied.
  std::vector<double> a(static_cast<std::size_t>(m) * kk), b(static_cast<std::size_t>(n) * kk);
  const double sa = id.negate_a ? -1.0 : 1.0, sb = id.negate_b ? -1.0 : 1.0;
  if (op.a_from_tmem) {
    const std::uint32_t* cells = mem.tmem(r.a);
    for (unsigned row = 0; row < m; ++row)
      for (unsigned k = 0; k < kk; ++k)
        a[row * kk + k] =
            sa * tmem_element(cells, row_lane(m, lane0, row) - lane0, op.kind, id.a, k);
  } else {
    const SmemDescriptor da = decode_smem_descriptor(op.a_desc, "a-desc");
    for (unsigned row = 0; row < m; ++row)
      for (unsigned k = 0; k < kk; ++k)
        a[row * kk + k] = sa * smem_element(mem, op.kind, id.a, da, id.a_mn_major, row, k);
  }
  const SmemDescriptor db = decode_smem_descriptor(op.b_desc, "b-desc");
  for (unsigned col = 0; col < n; ++col)
    for (unsigned k = 0; k < kk; ++k)
      b[col * kk + k] = sb * smem_element(mem, op.kind, id.b, db, id.b_mn_major, col, k);
  // Block scales (9.7.16.10.7, CUTLASS tmem_sf_frg): the scale of row m's
  // block j sits in lane m, column sfa + m/32, byte sfa_id + j; column n's in
  // column sfb + n/32, byte sfb_id + j, replicated in each lane quarter at
  // lane 32 q + n%32.  Row m is computed by lane quarter m/32, which reads
  // its own replica.
  const unsigned nsf = block_scaled(op.kind) ? scales_per_k(op.scale_vec) : 0;
  const unsigned block = nsf != 0 ? kk / nsf : kk;
  const std::uint32_t* sfa = nsf != 0 ? mem.tmem(r.sfa) : nullptr;
  const std::uint32_t* sfb = nsf != 0 ? mem.tmem(r.sfb) : nullptr;
  auto byte_of = [](std::uint32_t cell, unsigned byte) { return (cell >> (8 * byte)) & 0xFFU; };
  std::uint32_t* d = mem.tmem(r.d);
  std::vector<double> scale_a(nsf), scale_b(nsf);
  for (unsigned row = 0; row < m; ++row) {
    const unsigned lane = row_lane(m, lane0, row) - lane0;
    const double* ar = &a[row * kk];
    for (unsigned j = 0; j < nsf; ++j)
      scale_a[j] =
          scale_value(id.scale_ue8m0, byte_of(sfa[row * kColumns + row / 32], id.sfa_id + j));
    for (unsigned col = 0; col < n; ++col) {
      std::uint32_t& cell = d[lane * kColumns + col];
      const double* bc = &b[col * kk];
      if (id.d == Accumulator::s32) {
        std::int64_t sum = op.enable_input_d ? static_cast<std::int32_t>(cell) : 0;
        for (unsigned k = 0; k < kk; ++k) sum += static_cast<std::int64_t>(ar[k] * bc[k]);
        if (id.saturate) sum = sum > INT32_MAX ? INT32_MAX : sum < INT32_MIN ? INT32_MIN : sum;
        cell = static_cast<std::uint32_t>(sum);  // modulo 2^32 without saturate
        continue;
      }
      for (unsigned j = 0; j < nsf; ++j)
        scale_b[j] = scale_value(
            id.scale_ue8m0,
            byte_of(sfb[(32 * (row / 32) + col % 32) * kColumns + col / 32], id.sfb_id + j));
      double sum = op.enable_input_d ? accumulator_value(id.d, cell) : 0.0;
      for (unsigned k = 0; k < kk; ++k)
        sum +=
            nsf != 0 ? (ar[k] * scale_a[k / block]) * (bc[k] * scale_b[k / block]) : ar[k] * bc[k];
      cell = round_to(id.d, sum);
    }
  }
}

namespace {

// The 16-byte unit of shared memory element (mn, k) lies in (smem_element's
// addressing; operands are made of whole units, see SmemReader).
std::uint32_t element_unit(Kind kind, Element e, const SmemDescriptor& d, bool mn_major,
                           unsigned mn, unsigned k) {
  const unsigned cb = container_bits(kind, e);
  if (sub_byte(e) && cb == 8) return operand_address(d, false, 8, mn, k & ~15U);
  return operand_address(d, mn_major, cb, mn, k) & ~15U;
}

// The shared units of A (when in shared memory) and B: held from the issue
// to the commit (hopper_operand_hazards.hpp).
void hold_smem_operands(const MmaOp& op, const InstrDescriptor& id) {
  const unsigned kk = k_of(op.kind);
  auto hold = [&](const char* which, std::uint64_t desc, Element e, bool mn_major, unsigned rows) {
    const SmemDescriptor d = decode_smem_descriptor(desc, which);
    hopper::impl::OperandReads reads;
    std::uint32_t last = 0xFFFFFFFFU;
    for (unsigned mn = 0; mn < rows; ++mn)
      for (unsigned k = 0; k < kk; ++k)
        if (const std::uint32_t unit = element_unit(op.kind, e, d, mn_major, mn, k); unit != last) {
          last = unit;
          reads.add(hopper::shared_pointer(unit), 16);
        }
    hopper::impl::hold_tcgen05_reads(std::move(reads));
  };
  if (!op.a_from_tmem) hold("a-desc", op.a_desc, id.a, id.a_mn_major, id.m);
  hold("b-desc", op.b_desc, id.b, id.b_mn_major, id.n);
}

}  // namespace

void mma(const MmaOp& op) {
  require_tcgen05("tcgen05.mma");
  // sm_103a has no integer MMA (ptxas refuses kind::i8 for it).
  if (op.kind == Kind::i8 && compute_capability() == 103)
    throw std::invalid_argument(
        "tcgen05.mma.kind::i8 does not exist on sm_103a (the emulated device is compute "
        "capability 10.3; RL_EMU_CC=100 has it)");
  const InstrDescriptor id = check(op);
  const MmaRanges r = ranges(op, id);
  // Every range is checked against this CTA's allocations now, at issue.
  const char* what = "tcgen05.mma";
  tmem_cells(r.d, what);
  if (r.a.lanes != 0) tmem_cells(r.a, what);
  if (r.sfa.lanes != 0) tmem_cells(r.sfa, what);
  if (r.sfb.lanes != 0) tmem_cells(r.sfb, what);
  count_tensor_ops(tensor_role(id), 2.0 * id.m * id.n * k_of(op.kind));
  hold_smem_operands(op, id);
  enqueue_async(what, r.d, [op] {
    Memory mem;
    mem.tmem = [](TmemRange range) { return tmem_cells(range, "tcgen05.mma"); };
    mem.read_smem = SmemReader{};
    perform(op, mem);
  });
}

}  // namespace rl::emu::tcgen05
