// ldmatrix, cp.async (reference sections 4 and 5) and streaming 128-bit
// global accesses.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "internal.hpp"
#include "rl/emu/ptx_warp.hpp"

// The runtime's (current_thread.cpp), declared weak: the per-warp semantics here
// are also linked without the runtime (tests/emu_ptx's math library), and
// then there is no kernel to fail.
namespace rl::emu::detail {
[[gnu::weak]] bool in_kernel();
[[gnu::weak]] void fail_current_thread(cudaError_t error, std::string message);
}  // namespace rl::emu::detail
// counters.cpp's hooks (rl/emu/counters.hpp), weak for the same reason.
namespace rl::emu {
[[gnu::weak]] void count_global_load(std::size_t bytes);
[[gnu::weak]] void count_global_store(std::size_t bytes);
}  // namespace rl::emu
// hopper_operand_hazards.cpp's check (its header), weak for the same reason.
namespace rl::emu::hopper::impl {
[[gnu::weak]] void check_shared_write(const unsigned char* host, std::size_t bytes,
                                      const char* writer, std::uint32_t window);
}  // namespace rl::emu::hopper::impl

namespace rl::emu::ptx {
namespace {

std::uint16_t row_element(const void* row, unsigned column) {
  std::uint16_t value = 0;
  std::memcpy(&value, static_cast<const unsigned char*>(row) + 2U * column, sizeof value);
  return value;
}

}  // namespace

void incomplete_warp(const char* instruction, unsigned participants) {
  std::fprintf(stderr,
               "rl::emu: %s executed by an incomplete warp (lanes present: 0x%08x); .sync.aligned "
               "instructions need all 32 lanes\n",
               instruction, participants);
  std::abort();
}

// In a kernel the launch fails with cudaErrorMisalignedAddress, naming the
// kernel, block and thread (for a warp-wide instruction: the lane that
// completed it); outside one (unit tests of the per-warp semantics) the
// process stops.
void misaligned_address(const char* instruction, const void* address, unsigned alignment) {
  char message[160];
  std::snprintf(message, sizeof message, "misaligned address: %s address %p is not %u-byte aligned",
                instruction, address, alignment);
  if (detail::in_kernel != nullptr && detail::in_kernel())
    detail::fail_current_thread(cudaErrorMisalignedAddress, message);
  std::fprintf(stderr, "rl::emu: %s\n", message);
  std::abort();
}

namespace {

bool aligned(const void* address, unsigned alignment) {
  return reinterpret_cast<std::uintptr_t>(address) % alignment == 0U;
}

}  // namespace

namespace {

// PTX: every row address of the matrices in use is 16-byte aligned.
void check_rows(unsigned matrices, const void* const (&rows)[kWarpLanes]) {
  for (unsigned r = 0; r < 8U * matrices; ++r) {
    if (!aligned(rows[r], 16U)) {
      misaligned_address("ldmatrix row", rows[r], 16U);
    }
  }
}

void lane_registers(unsigned lane, unsigned matrices, bool trans,
                    const void* const (&rows)[kWarpLanes], std::uint32_t* out) {
  // Non-transposed: M_j[L/4][2(L%4) + h]; transposed: M_j[2(L%4) + h][L/4].
  const unsigned group = lane >> 2U;
  const unsigned pair = 2U * (lane & 3U);
  for (unsigned j = 0; j < matrices; ++j) {
    const void* const* matrix = &rows[8U * j];
    std::uint16_t low = 0;
    std::uint16_t high = 0;
    if (trans) {
      low = row_element(matrix[pair], group);
      high = row_element(matrix[pair + 1U], group);
    } else {
      low = row_element(matrix[group], pair);
      high = row_element(matrix[group], pair + 1U);
    }
    out[j] = static_cast<std::uint32_t>(low) | (static_cast<std::uint32_t>(high) << 16U);
  }
}

}  // namespace

void ldmatrix_lane(unsigned lane, int matrices, bool trans, const void* const (&rows)[kWarpLanes],
                   std::uint32_t* out) {
  check_rows(static_cast<unsigned>(matrices), rows);
  lane_registers(lane, static_cast<unsigned>(matrices), trans, rows, out);
}

// All lanes at once: the row addresses are checked once per warp, not once
// per lane.
void ldmatrix_warp(int matrices, bool trans, const void* const (&rows)[kWarpLanes],
                   std::uint32_t (&out)[kWarpLanes][4]) {
  check_rows(static_cast<unsigned>(matrices), rows);
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    lane_registers(lane, static_cast<unsigned>(matrices), trans, rows, out[lane]);
  }
}

void load_streaming_v4(const void* address, std::uint32_t (&out)[4]) {
  if (!aligned(address, 16U)) {
    misaligned_address("ld.global.cs.nc.v4.b32", address, 16U);
  }
  std::memcpy(out, address, sizeof out);
  if (count_global_load != nullptr) count_global_load(sizeof out);
}

void store_streaming_v4(void* address, const std::uint32_t (&in)[4]) {
  if (!aligned(address, 16U)) {
    misaligned_address("st.global.cs.v4.b32", address, 16U);
  }
  std::memcpy(address, in, sizeof in);
  if (count_global_store != nullptr) count_global_store(sizeof in);
}

void CpAsyncQueue::issue(void* dst, const void* src, unsigned cp_size, unsigned src_bytes) {
  if (!aligned(dst, cp_size)) {
    misaligned_address("cp.async destination", dst, cp_size);
  }
  if (src_bytes != 0U && !aligned(src, cp_size)) {
    misaligned_address("cp.async source", src, cp_size);
  }
  // The copy may land any time from here on: not into an in-flight wgmma's
  // operands (hopper_operand_hazards.hpp).
  if (hopper::impl::check_shared_write != nullptr)
    hopper::impl::check_shared_write(static_cast<const unsigned char*>(dst), cp_size, "cp.async",
                                     0xFFFFFFFFU);  // kUnknownWindow
  open_.push_back(Copy{dst, src, cp_size, src_bytes});
  // Counted at issue, src-size bytes (the zero fill reads nothing): the GPU
  // reads them even if no wait ever covers the copy.
  if (count_global_load != nullptr) count_global_load(src_bytes);
}

void CpAsyncQueue::commit() {
  committed_.push_back(std::move(open_));
  open_.clear();
}

void CpAsyncQueue::wait_group(unsigned newest_pending) {
  while (committed_.size() > newest_pending) {
    for (const Copy& copy : committed_.front()) {
      auto* dst = static_cast<unsigned char*>(copy.dst);
      if (copy.src_bytes != 0U) {
        std::memcpy(dst, copy.src, copy.src_bytes);
      }
      std::memset(dst + copy.src_bytes, 0, copy.cp_size - copy.src_bytes);
    }
    committed_.pop_front();
  }
}

void CpAsyncQueue::wait_all() {
  commit();
  wait_group(0);
}

}  // namespace rl::emu::ptx
