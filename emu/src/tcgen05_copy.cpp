// tcgen05.cp: shared memory -> tensor memory, asynchronous (performed at the
// issuing thread's commit).  PTX ISA 9.7.16.9.2 "tcgen05.cp", 9.7.16.2.3
// "Data Movement Shape" (.128x256b, .4x256b, .128x128b, .64x128b, .32x128b),
// 9.7.16.4.1 "Shared memory descriptor" for the source.
//
// The source is a K-major matrix of `rows` rows of `bits / 8` bytes in the
// canonical layout the descriptor gives (the same decoding as tcgen05.mma's
// operands, with byte-sized elements: rl/emu/tcgen05_mma.hpp operand_address).
// Row i lands in lane lane_of(taddr) + i; its bytes fill consecutive columns
// from column_of(taddr), four to a cell, the lowest address in the lowest
// byte.  .32x128b.warpx4 writes the 32 rows to each lane quarter: row i to
// lanes i, 32 + i, 64 + i and 96 + i.  The .64x128b.warpx2 multicasts are not
// emulated (refused).
#include <stdexcept>
#include <string>

#include "block_state.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/tcgen05_mma.hpp"
#include "tcgen05_state.hpp"

namespace rl::emu::tcgen05 {
namespace {

struct CopyForm {
  const char* instruction;
  unsigned rows;
  unsigned bytes;   // per row
  unsigned copies;  // lane quarters written (warpx4: 4)
};

CopyForm form_of(CopyShape shape) {
  switch (shape) {
    case CopyShape::s128x256b:
      return {"tcgen05.cp.cta_group::1.128x256b", 128, 32, 1};
    case CopyShape::s4x256b:
      return {"tcgen05.cp.cta_group::1.4x256b", 4, 32, 1};
    case CopyShape::s128x128b:
      return {"tcgen05.cp.cta_group::1.128x128b", 128, 16, 1};
    case CopyShape::s32x128b_warpx4:
      return {"tcgen05.cp.cta_group::1.32x128b.warpx4", 32, 16, 4};
    case CopyShape::s64x128b_warpx2_02_13:
      return {"tcgen05.cp.cta_group::1.64x128b.warpx2::02_13", 64, 16, 0};
    case CopyShape::s64x128b_warpx2_01_23:
      return {"tcgen05.cp.cta_group::1.64x128b.warpx2::01_23", 64, 16, 0};
  }
  return {"tcgen05.cp", 0, 0, 0};
}

}  // namespace

void cp(CopyShape shape, std::uint32_t taddr, std::uint64_t s_desc) {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  const CopyForm f = form_of(shape);
  require_tcgen05(f.instruction);
  if (f.copies == 0)
    internal::fail(std::string(f.instruction) +
                   ": the .warpx2 multicasts are not emulated (use .128x128b, .128x256b, "
                   ".4x256b or .32x128b.warpx4)");
  SmemDescriptor d{};
  try {
    d = decode_smem_descriptor(s_desc, "s-desc");
    (void)operand_address(d, false, 8, 0, 0);  // refuses the modes not emulated, at issue
  } catch (const std::invalid_argument& e) {
    // The decoder speaks for tcgen05.mma; the descriptor is this cp's.
    std::string why = e.what();
    if (why.rfind("tcgen05.mma: ", 0) == 0) why.erase(0, 13);
    internal::fail(std::string(f.instruction) + ": " + why);
  }
  if (f.copies == 4 && lane_of(taddr) != 0)
    internal::fail(std::string(f.instruction) + ": taddr's lane must be 0 (the copy fills " +
                   "lanes i, 32 + i, 64 + i and 96 + i); it is " + std::to_string(lane_of(taddr)));
  const TmemRange writes{taddr, f.copies == 4 ? kLanes : f.rows, f.bytes / 4};
  // The source is read at the commit (the latest legal moment): shared memory
  // overwritten before it is copied as overwritten.
  enqueue_async(f.instruction, writes, [f, d, writes] {
    std::uint32_t* cells = tmem_cells(writes, f.instruction);
    for (unsigned row = 0; row < f.rows; ++row)
      for (unsigned col = 0; col < f.bytes / 4; ++col) {
        std::uint32_t word = 0;
        for (unsigned i = 0; i < 4; ++i)
          word |=
              std::uint32_t{*hopper::shared_pointer(operand_address(d, false, 8, row, 4 * col + i))}
              << (8 * i);
        for (unsigned q = 0; q < f.copies; ++q)
          cells[std::size_t{32 * q + row} * kColumns + col] = word;
      }
  });
}

}  // namespace rl::emu::tcgen05
