// tcgen05.mma's descriptors: the shared-memory descriptor (PTX ISA 9.7.16.4.1,
// Table 40), the instruction descriptor (9.7.16.4.2, Tables 42-44) checked
// against the shapes of Table 39 and the transposes of Tables 51 and 54, and
// the canonical shared-memory layouts (9.7.16.3.3).  See rl/emu/tcgen05_mma.hpp.
#include <stdexcept>
#include <string>

#include "rl/emu/tcgen05_mma.hpp"

namespace rl::emu::tcgen05 {
namespace {

[[noreturn]] void invalid(const char* descriptor, const std::string& field, std::uint64_t value,
                          const std::string& why) {
  throw std::invalid_argument(std::string("tcgen05.mma: ") + descriptor + " field " + field +
                              " = " + std::to_string(value) + ": " + why);
}

std::uint32_t bits(std::uint64_t word, unsigned low, unsigned count) {
  return static_cast<std::uint32_t>((word >> low) & ((std::uint64_t{1} << count) - 1U));
}

}  // namespace

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::f16:
      return "kind::f16";
    case Kind::tf32:
      return "kind::tf32";
    case Kind::f8f6f4:
      return "kind::f8f6f4";
    case Kind::i8:
      return "kind::i8";
    case Kind::mxf8f6f4:
      return "kind::mxf8f6f4";
    case Kind::mxf4:
      return "kind::mxf4";
    case Kind::mxf4nvf4:
      return "kind::mxf4nvf4";
  }
  return "kind::?";
}

const char* element_name(Element e) {
  static constexpr const char* kNames[] = {"f16",  "bf16", "tf32", "e4m3", "e5m2",
                                           "e2m3", "e3m2", "e2m1", "u8",   "s8"};
  return kNames[static_cast<unsigned>(e)];
}

bool block_scaled(Kind kind) {
  return kind == Kind::mxf8f6f4 || kind == Kind::mxf4 || kind == Kind::mxf4nvf4;
}

unsigned k_of(Kind kind) {
  switch (kind) {
    case Kind::f16:
      return 16;
    case Kind::tf32:
      return 8;
    case Kind::mxf4:
    case Kind::mxf4nvf4:
      return 64;
    default:
      return 32;
  }
}

// ---- shared memory descriptor --------------------------------------------------

SmemDescriptor decode_smem_descriptor(std::uint64_t desc, const char* which) {
  const std::string name = std::string("shared memory descriptor ") + which;
  if (bits(desc, 14, 2) != 0)
    invalid(name.c_str(), "reserved (bits 14-15)", bits(desc, 14, 2), "must be 0");
  if (bits(desc, 30, 2) != 0)
    invalid(name.c_str(), "reserved (bits 30-31)", bits(desc, 30, 2), "must be 0");
  if (bits(desc, 46, 3) != 1)
    invalid(name.c_str(), "version (bits 46-48)", bits(desc, 46, 3), "must be the constant 0b001");
  if (bits(desc, 53, 8) != 0)
    invalid(name.c_str(), "fixed constant (bits 53-60)", bits(desc, 53, 8), "must be 0");
  const std::uint32_t mode = bits(desc, 61, 3);
  unsigned swizzle = 0;
  switch (mode) {
    case 0:
      swizzle = 0;
      break;
    case 1:
    case 2:
      swizzle = 128;
      break;
    case 4:
      swizzle = 64;
      break;
    case 6:
      swizzle = 32;
      break;
    default:
      invalid(name.c_str(), "swizzling mode (bits 61-63)", mode,
              "must be 0 (none), 1 (128B, 32B atoms), 2 (128B), 4 (64B) or 6 (32B)");
  }
  return {bits(desc, 0, 14) << 4,
          bits(desc, 16, 14) << 4,
          bits(desc, 32, 14) << 4,
          bits(desc, 49, 3),
          bits(desc, 52, 1) != 0,
          swizzle,
          mode == 1};
}

std::uint32_t operand_address(const SmemDescriptor& d, bool mn_major, unsigned bits_per_k,
                              unsigned mn, unsigned k) {
  if (d.base_offset != 0)
    throw std::invalid_argument("tcgen05.mma: shared memory descriptor base offset " +
                                std::to_string(d.base_offset) +
                                " is not emulated (patterns must start on their repeat)");
  if (d.swizzle_atom_32b)
    throw std::invalid_argument(
        "tcgen05.mma: 128-byte swizzling with 32-byte atomicity (mode 1) is not emulated");
  if (d.lbo_absolute)
    throw std::invalid_argument(
        "tcgen05.mma: the absolute leading-dimension address mode (bit 52) is not emulated");
  const unsigned kb = k * bits_per_k / 8;  // byte offset along K
  const unsigned w = d.swizzle_bytes;
  std::uint32_t a = 0;
  if (!mn_major) {
    // ((8,m),(T,2k)): 8 rows of 16-byte core matrices; rows SBO apart per 8;
    // without swizzle K continues LBO further per 16 bytes, swizzled rows
    // are `w` bytes long.
    if (w == 0)
      a = d.start + (mn / 8) * d.sbo + (kb / 16) * d.lbo + (mn % 8) * 16 + kb % 16;
    else
      a = d.start + (mn / 8) * d.sbo + (mn % 8) * w + (kb / w) * d.lbo + kb % w;
  } else {
    const unsigned mb = mn * bits_per_k / 8;
    if (w == 0)  // ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
      a = d.start + (mb / 16) * d.sbo + mb % 16 + (k % 8) * 16 + (k / 8) * d.lbo;
    else  // ((T,w/16,m),(8,k)):((1,T,LBO),(w/16 T,SBO))
      a = d.start + (mb / w) * d.lbo + mb % w + (k % 8) * w + (k / 8) * d.sbo;
  }
  // Swizzle<B,4,3> on the absolute address: bits [4, 4+B) ^= bits [7, 7+B).
  const unsigned b = w == 128 ? 3 : w == 64 ? 2 : w == 32 ? 1 : 0;
  return a ^ (((a >> 7) & ((1U << b) - 1U)) << 4);
}

unsigned row_lane(unsigned m_rows, unsigned lane0, unsigned row) {
  if (m_rows == 64) return lane0 + 32 * (row / 16) + row % 16;
  return lane0 + row;
}

}  // namespace rl::emu::tcgen05
