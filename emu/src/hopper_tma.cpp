// TMA and bulk copies on the emulator: cuTensorMapEncodeTiled, the boxes of
// cp.async.bulk.tensor, plain cp.async.bulk, and the bulk async-groups whose
// wait performs the stores (rl/emu/hopper.hpp).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "clusters.hpp"
#include "hopper_async_state.hpp"
#include "hopper_operand_hazards.hpp"
#include "hopper_shared_window.hpp"
#include "rl/emu/counters.hpp"
#include "rl/emu/hopper.hpp"

namespace rl::emu::hopper {

using impl::AsyncState;
using impl::BulkStore;

namespace {

constexpr std::uint64_t kMapMagic = 0x52'4C'54'4D'41'50'01'00ULL;  // "RLTMAP", version 1

// The layout of TensorMap::words.
struct MapFields {
  std::uint64_t magic;
  std::uint64_t address;
  std::uint64_t dim[5];
  std::uint64_t stride[4];  // bytes, dimensions 1..4
  std::uint16_t box[5];
  std::uint8_t element_stride[5];
  std::uint8_t rank, element_bytes, swizzle, fill;
};
static_assert(sizeof(MapFields) <= sizeof(TensorMap));

unsigned bytes_of(TmaDataType t) {
  switch (t) {
    case TmaDataType::uint8:
      return 1;
    case TmaDataType::uint16:
    case TmaDataType::float16:
    case TmaDataType::bfloat16:
      return 2;
    case TmaDataType::uint64:
    case TmaDataType::int64:
    case TmaDataType::float64:
      return 8;
    default:
      return 4;
  }
}

}  // namespace

int encode_tensor_map_tiled(TensorMap* map, TmaDataType type, std::uint32_t rank,
                            const void* global_address, const std::uint64_t* global_dim,
                            const std::uint64_t* global_strides, const std::uint32_t* box_dim,
                            const std::uint32_t* element_strides, TmaInterleave interleave,
                            TmaSwizzle swizzle, TmaOobFill fill, const char** why) {
  auto fail = [why](const char* reason) {
    if (why != nullptr) *why = reason;
    return 1;  // CUDA_ERROR_INVALID_VALUE
  };
  if (map == nullptr) return fail("tensorMap is null");
  if (static_cast<std::uint32_t>(type) > 12) return fail("unknown tensorDataType");
  if (rank < 1 || rank > 5) return fail("tensorRank must be 1 .. 5");
  if (interleave != TmaInterleave::none)
    return fail("interleaved layouts are not emulated (CU_TENSOR_MAP_INTERLEAVE_NONE only)");
  if ((reinterpret_cast<std::uintptr_t>(global_address) & 15U) != 0)
    return fail("globalAddress must be 16-byte aligned");
  const unsigned eb = bytes_of(type);
  for (std::uint32_t i = 0; i < rank; ++i) {
    if (global_dim[i] < 1 || global_dim[i] > (std::uint64_t{1} << 32))
      return fail("globalDim[i] must be 1 .. 2^32");
    if (box_dim[i] < 1 || box_dim[i] > 256) return fail("boxDim[i] must be 1 .. 256");
    if (element_strides[i] < 1 || element_strides[i] > 8)
      return fail("elementStrides[i] must be 1 .. 8");
  }
  for (std::uint32_t i = 0; i + 1 < rank; ++i) {
    if (global_strides[i] % 16 != 0) return fail("globalStrides[i] must be a multiple of 16");
    if (global_strides[i] >= (std::uint64_t{1} << 40))
      return fail("globalStrides[i] must be < 2^40");
  }
  const std::uint64_t inner_bytes = std::uint64_t{box_dim[0]} * eb;
  if (inner_bytes % 16 != 0) return fail("boxDim[0] * elementSize must be a multiple of 16 bytes");
  static constexpr std::uint64_t kSpan[4] = {0, 32, 64, 128};
  const auto sw = static_cast<std::uint32_t>(swizzle);
  if (sw > 3) return fail("unknown swizzle");
  if (sw != 0 && inner_bytes > kSpan[sw])
    return fail("boxDim[0] * elementSize must not exceed the swizzle span (32, 64 or 128 bytes)");
  if (fill != TmaOobFill::zeros)
    return fail("only CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (zeros) is emulated");
  MapFields f{};
  f.magic = kMapMagic;
  f.address = reinterpret_cast<std::uintptr_t>(global_address);
  for (std::uint32_t i = 0; i < rank; ++i) {
    f.dim[i] = global_dim[i];
    f.box[i] = static_cast<std::uint16_t>(box_dim[i]);
    f.element_stride[i] = static_cast<std::uint8_t>(element_strides[i]);
    if (i > 0) f.stride[i - 1] = global_strides[i - 1];
  }
  f.rank = static_cast<std::uint8_t>(rank);
  f.element_bytes = static_cast<std::uint8_t>(eb);
  f.swizzle = static_cast<std::uint8_t>(sw);
  f.fill = static_cast<std::uint8_t>(fill);
  *map = TensorMap{};
  std::memcpy(map->words, &f, sizeof f);
  return 0;
}

namespace {

MapFields checked_map(const TensorMap& map, std::uint32_t rank) {
  MapFields f{};
  std::memcpy(&f, map.words, sizeof f);
  if (f.magic != kMapMagic)
    throw std::runtime_error(
        "cp.async.bulk.tensor: the tensor map was not made by "
        "cuTensorMapEncodeTiled (emulated)");
  if (rank != f.rank)
    throw std::runtime_error("cp.async.bulk.tensor." + std::to_string(rank) +
                             "d with a tensor map of rank " + std::to_string(f.rank));
  return f;
}

// Visits every element of the box at coords: its place in shared memory
// (the box lies densely from `shared`, whose window address is `window`,
// then the map's swizzle XORs the absolute address) and, when it lies inside
// the tensor, its place in global memory (nullptr outside).  Returns the
// box's bytes.
template <typename Visit>
std::uint64_t for_each_box_element(const MapFields& f, const std::int32_t* coords,
                                   unsigned char* shared, std::uint32_t window, Visit visit) {
  // Elements per box dimension: ceil(box / elementStride), every stride-th one.
  std::uint64_t count[5] = {1, 1, 1, 1, 1};
  std::uint64_t total = 1;
  for (std::uint32_t i = 0; i < f.rank; ++i) {
    count[i] = (f.box[i] + f.element_stride[i] - 1U) / f.element_stride[i];
    total *= count[i];
  }
  const unsigned eb = f.element_bytes;
  const std::uint32_t mask = (1U << f.swizzle) - 1U;  // swizzle 1: 32B, 2: 64B, 3: 128B
  auto* global = reinterpret_cast<unsigned char*>(f.address);
  for (std::uint64_t e = 0; e < total; ++e) {
    std::uint64_t rest = e, offset = 0;
    bool inside = true;
    for (std::uint32_t i = 0; i < f.rank; ++i) {
      const std::uint64_t j = rest % count[i];
      rest /= count[i];
      const std::int64_t c =
          std::int64_t{coords[i]} + static_cast<std::int64_t>(j * f.element_stride[i]);
      if (c < 0 || static_cast<std::uint64_t>(c) >= f.dim[i])
        inside = false;
      else
        offset += static_cast<std::uint64_t>(c) * (i == 0 ? eb : f.stride[i - 1]);
    }
    const std::uint32_t a = window + static_cast<std::uint32_t>(e * eb);
    const std::uint32_t swizzled = a ^ (((a >> 7) & mask) << 4);
    visit(shared + (swizzled - window), inside ? global + offset : nullptr);
  }
  return total * eb;
}

}  // namespace

namespace impl {

void perform(const BulkStore& copy) {
  if (!copy.tensor) {
    std::memcpy(copy.dst, copy.src, copy.bytes);
    count_global_store(copy.bytes);
    return;
  }
  MapFields f{};
  std::memcpy(&f, copy.map.words, sizeof f);
  const unsigned eb = f.element_bytes;
  std::uint64_t written = 0;  // the box's in-bounds part (rl/emu/counters.hpp)
  for_each_box_element(f, copy.coords, const_cast<unsigned char*>(copy.src), copy.src_window,
                       [eb, &written](const unsigned char* from, unsigned char* to) {
                         if (to == nullptr) return;
                         std::memcpy(to, from, eb);
                         written += eb;
                       });
  count_global_store(written);
}

}  // namespace impl

namespace {

void check_bulk(const void* shared, const void* global, std::uint32_t bytes,
                const char* instruction) {
  if (bytes == 0 || bytes % 16 != 0)
    throw std::runtime_error(std::string(instruction) + ": size " + std::to_string(bytes) +
                             " is not a positive multiple of 16 bytes");
  if ((reinterpret_cast<std::uintptr_t>(shared) | reinterpret_cast<std::uintptr_t>(global)) % 16)
    throw std::runtime_error(std::string(instruction) + ": addresses must be 16-byte aligned");
}

// The test instrumentation's log (record_tma_loads).  `on` is read relaxed and
// the mutex taken only while recording: a lock on every load would order the
// loading threads for racecheck (TSan) and hide their races.
struct TmaLoadLog {
  std::mutex mutex;
  std::atomic<bool> on = false;
  std::vector<TmaLoadRecord> records;
};
TmaLoadLog& tma_load_log() {
  static TmaLoadLog log;
  return log;
}

}  // namespace

void record_tma_loads(bool on) {
  TmaLoadLog& log = tma_load_log();
  const std::lock_guard<std::mutex> lock(log.mutex);
  log.on.store(on, std::memory_order_relaxed);
  if (on) log.records.clear();
}

std::vector<TmaLoadRecord> recorded_tma_loads() {
  TmaLoadLog& log = tma_load_log();
  const std::lock_guard<std::mutex> lock(log.mutex);
  return log.records;
}

void tma_load(void* dst, const TensorMap& map, const std::int32_t* coords, std::uint32_t rank,
              std::uint64_t* bar) {
  // The .shared::cta forms' operands: the running CTA's own memory.
  detail::require_own_cta(dst, "cp.async.bulk.tensor's destination");
  detail::require_own_cta(bar, "cp.async.bulk.tensor's mbarrier");
  count_global_load(impl::tma_load_at(dst, shared_address(dst), map, coords, rank, bar));
}

std::uint64_t impl::tma_load_at(void* dst, std::uint32_t dst_window, const TensorMap& map,
                                const std::int32_t* coords, std::uint32_t rank,
                                std::uint64_t* bar) {
  const MapFields f = checked_map(map, rank);
  if (TmaLoadLog& log = tma_load_log(); log.on.load(std::memory_order_relaxed)) {
    TmaLoadRecord r{reinterpret_cast<const void*>(f.address), {}, rank};
    for (std::uint32_t i = 0; i < rank && i < 5; ++i) r.coords[i] = coords[i];
    const std::lock_guard<std::mutex> lock(log.mutex);
    log.records.push_back(r);
  }
  const unsigned eb = f.element_bytes;
  std::uint64_t read = 0;
  const std::uint64_t bytes =
      for_each_box_element(f, coords, static_cast<unsigned char*>(dst), dst_window,
                           [eb, &read](unsigned char* to, const unsigned char* from) {
                             if (from != nullptr) {
                               std::memcpy(to, from, eb);
                               read += eb;
                             } else {
                               std::memset(to, 0, eb);
                             }
                           });
  // Checked once the box is written, before its bytes complete: the launch
  // fails either way, and the box's extent is known only now.
  impl::check_box_write(static_cast<const unsigned char*>(dst), dst_window, bytes,
                        (1U << f.swizzle) - 1U, "cp.async.bulk.tensor");
  mbarrier_complete_tx(bar, static_cast<std::uint32_t>(bytes));
  return read;
}

void tma_store(const TensorMap& map, const std::int32_t* coords, std::uint32_t rank,
               const void* src) {
  checked_map(map, rank);
  BulkStore copy;
  copy.tensor = true;
  copy.src = static_cast<const unsigned char*>(src);
  copy.map = map;
  std::memcpy(copy.coords, coords, rank * sizeof *coords);
  copy.src_window = shared_address(src);
  impl::async_state().bulk_open.push_back(copy);
}

void bulk_load(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
  check_bulk(dst, src, bytes, "cp.async.bulk.shared::cluster.global");
  impl::check_shared_write(static_cast<const unsigned char*>(dst), bytes,
                           "cp.async.bulk.shared::cluster.global");
  std::memcpy(dst, src, bytes);
  count_global_load(bytes);
  mbarrier_complete_tx(bar, bytes);
}

void bulk_store(void* dst, const void* src, std::uint32_t bytes) {
  check_bulk(src, dst, bytes, "cp.async.bulk.global.shared::cta");
  BulkStore copy;
  copy.dst = dst;
  copy.src = static_cast<const unsigned char*>(src);
  copy.bytes = bytes;
  impl::async_state().bulk_open.push_back(copy);
}

void bulk_commit_group() {
  AsyncState& s = impl::async_state();
  impl::close_group(s.bulk_open, s.bulk_groups);
}

void bulk_wait_group(unsigned n) {
  AsyncState& s = impl::async_state();
  while (s.bulk_groups.size() > n) {
    for (const BulkStore& copy : s.bulk_groups.front()) impl::perform(copy);
    s.bulk_groups.erase(s.bulk_groups.begin());
  }
}

}  // namespace rl::emu::hopper
