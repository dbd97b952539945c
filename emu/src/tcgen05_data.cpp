// tcgen05.ld / tcgen05.st / tcgen05.wait: tensor memory <-> registers, one
// warp at a time.  PTX ISA 9.7.16.2.3 "Data Movement Shape" (and its
// "Matrix fragments for shape ..." figures), 9.7.16.8.1 "Access
// restrictions", 9.7.16.8.3 "tcgen05.ld", 9.7.16.8.4 "tcgen05.st",
// 9.7.16.8.5 "tcgen05.wait".  The fragment maps were read off the ISA's
// figures and cross-checked against CUTLASS include/cute/atom/copy_traits_sm100.hpp
// (the SM100_TMEM_LOAD_{32dp32b,16dp64b,16dp128b,16dp256b,16dp32b} traits).
#include <algorithm>
#include <string>
#include <vector>

#include "block_state.hpp"
#include "rl/emu/warp.hpp"
#include "tcgen05_state.hpp"

namespace rl::emu::tcgen05 {

unsigned registers_per_thread(Shape shape, unsigned num) {
  switch (shape) {
    case Shape::s16x128b:
      return 2 * num;
    case Shape::s16x256b:
      return 4 * num;
    default:
      return num;
  }
}

unsigned fragment_lane(Shape shape, unsigned t, unsigned r) {
  switch (shape) {
    case Shape::s32x32b:
      return t;
    case Shape::s16x64b:
      return t / 4 + 8 * (t % 2);
    case Shape::s16x128b:
      return t / 4 + 8 * (r % 2);
    case Shape::s16x256b:
      return t / 4 + 8 * ((r / 2) % 2);
    case Shape::s16x32bx2:
      return t % 16;
  }
  return 0;
}

unsigned fragment_column(Shape shape, unsigned t, unsigned r, unsigned half_split_offset) {
  switch (shape) {
    case Shape::s32x32b:
      return r;
    case Shape::s16x64b:
      return (t / 2) % 2 + 2 * r;
    case Shape::s16x128b:
      return t % 4 + 4 * (r / 2);
    case Shape::s16x256b:
      return 2 * (t % 4) + r % 2 + 8 * (r / 4);
    case Shape::s16x32bx2:
      return r + (t / 16) * half_split_offset;
  }
  return 0;
}

namespace {

const char* shape_name(Shape shape) {
  switch (shape) {
    case Shape::s32x32b:
      return "32x32b";
    case Shape::s16x64b:
      return "16x64b";
    case Shape::s16x128b:
      return "16x128b";
    case Shape::s16x256b:
      return "16x256b";
    case Shape::s16x32bx2:
      return "16x32bx2";
  }
  return "?";
}

// What one warp's ld or st touches: the lanes and columns from taddr.
TmemRange footprint(Shape shape, unsigned num, std::uint32_t taddr, unsigned half_split_offset) {
  const unsigned lanes = shape == Shape::s32x32b ? 32 : 16;
  unsigned columns = 0;
  const unsigned regs = registers_per_thread(shape, num);
  for (unsigned t = 0; t < 32; ++t)
    for (unsigned r = 0; r < regs; ++r)
      columns = std::max(columns, fragment_column(shape, t, r, half_split_offset) + 1);
  return {taddr, lanes, columns};
}

struct MovePost {
  std::uint32_t taddr;
  Shape shape;
  unsigned num;
  unsigned half_split_offset;
  bool operator==(const MovePost& o) const {
    return taddr == o.taddr && shape == o.shape && num == o.num &&
           half_split_offset == o.half_split_offset;
  }
  // Each lane's own registers (not compared).
  std::uint32_t* load_registers = nullptr;
  const std::uint32_t* store_registers = nullptr;
};

// The checks every ld and st makes; returns the cells at taddr.
std::uint32_t* checked_cells(const MovePost& p, const std::string& instruction) {
  const unsigned num = p.num;
  if (num == 0 || num > 128 || (num & (num - 1)) != 0)
    internal::fail(instruction + ": .num must be .x1 .. .x128, a power of two");
  if (registers_per_thread(p.shape, num) > 128)
    internal::fail(instruction + ": more than 128 registers per thread (PTX ISA 9.7.16.8.3, " +
                   "Table 47)");
  const TmemRange range = footprint(p.shape, num, p.taddr, p.half_split_offset);
  // 9.7.16.8.1: warp w of a warpgroup reaches lanes 32 (w%4) .. 32 (w%4) + 31.
  const unsigned quarter = internal::lane_quarter(), lane = lane_of(p.taddr);
  if (lane < 32 * quarter || lane + range.lanes > 32 * quarter + 32)
    internal::fail(instruction + " by warp " + std::to_string(internal::thread_index() / 32) +
                   " reaches " + internal::describe(range) + ": warp " + std::to_string(quarter) +
                   " of a warpgroup reaches only lanes " + std::to_string(32 * quarter) + ".." +
                   std::to_string(32 * quarter + 31) + " (PTX ISA 9.7.16.8.1 Access restrictions)");
  return tmem_cells(range, instruction.c_str());
}

std::string instruction_name(const char* op, const MovePost& p) {
  return std::string("tcgen05.") + op + ".sync.aligned." + shape_name(p.shape) + ".x" +
         std::to_string(p.num) + ".b32";
}

void ld_exchange(void* const* posts, unsigned participants) {
  const MovePost& p = internal::aligned_post<MovePost>(posts, participants, "tcgen05.ld");
  const std::string instruction = instruction_name("ld", p);
  const std::uint32_t* cells = checked_cells(p, instruction);
  internal::check_not_in_flight(footprint(p.shape, p.num, p.taddr, p.half_split_offset),
                                instruction.c_str());
  const unsigned regs = registers_per_thread(p.shape, p.num);
  const unsigned warp_base = internal::thread_index() & ~31U;
  internal::Cta& c = internal::cta();
  // The registers get their values at wait::ld (poisoned until then) when a
  // thread's exit is seen; otherwise at once, so no pending load can outlive
  // its thread's registers.
  const bool deferred = sees_cta_end();
  for (unsigned t = 0; t < 32; ++t) {
    internal::PendingLoad load{warp_base + t,
                               static_cast<const MovePost*>(posts[t])->load_registers,
                               std::vector<std::uint32_t>(regs)};
    for (unsigned r = 0; r < regs; ++r) {
      load.values[r] = cells[std::size_t{fragment_lane(p.shape, t, r)} * kColumns +
                             fragment_column(p.shape, t, r, p.half_split_offset)];
      load.registers[r] = deferred ? kLoadPoison : load.values[r];
    }
    if (deferred) c.loads.push_back(std::move(load));
  }
}

void st_exchange(void* const* posts, unsigned participants) {
  const MovePost& p = internal::aligned_post<MovePost>(posts, participants, "tcgen05.st");
  const std::string instruction = instruction_name("st", p);
  std::uint32_t* cells = checked_cells(p, instruction);
  const unsigned regs = registers_per_thread(p.shape, p.num);
  for (unsigned t = 0; t < 32; ++t) {
    const std::uint32_t* values = static_cast<const MovePost*>(posts[t])->store_registers;
    for (unsigned r = 0; r < regs; ++r)
      cells[std::size_t{fragment_lane(p.shape, t, r)} * kColumns +
            fragment_column(p.shape, t, r, p.half_split_offset)] = values[r];
  }
}

}  // namespace

void ld(Shape shape, unsigned num, std::uint32_t taddr, std::uint32_t* regs,
        unsigned half_split_offset) {
  require_tcgen05("tcgen05.ld");
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  MovePost post{taddr, shape, num, shape == Shape::s16x32bx2 ? half_split_offset : 0};
  post.load_registers = regs;
  detail::warp_collective(0xFFFFFFFFU, &internal::failing_exchange<&ld_exchange>, &post);
}

void st(Shape shape, unsigned num, std::uint32_t taddr, const std::uint32_t* regs,
        unsigned half_split_offset) {
  require_tcgen05("tcgen05.st");
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  MovePost post{taddr, shape, num, shape == Shape::s16x32bx2 ? half_split_offset : 0};
  post.store_registers = regs;
  detail::warp_collective(0xFFFFFFFFU, &internal::failing_exchange<&st_exchange>, &post);
}

void wait_ld() {
  const detail::RaceIgnored bookkeeping;  // tensor memory is the emulator's
  require_tcgen05("tcgen05.wait::ld");
  internal::Cta& c = internal::cta();
  const unsigned me = internal::thread_index();
  // Oldest first, so a register two loads wrote ends with the younger's value.
  for (const internal::PendingLoad& load : c.loads)
    if (load.thread == me) std::copy(load.values.begin(), load.values.end(), load.registers);
  std::erase_if(c.loads, [me](const internal::PendingLoad& load) { return load.thread == me; });
}

void wait_st() {
  require_tcgen05("tcgen05.wait::st");
}

}  // namespace rl::emu::tcgen05
