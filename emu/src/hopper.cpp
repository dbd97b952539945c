// Hopper emulation: RL_EMU_CC, the shared window, mbarrier, wgmma and TMA
// (see rl/emu/hopper.hpp for the model and the PTX ISA sections).
#include "rl/emu/hopper.hpp"

#include <malloc.h>

#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "internal.hpp"
#include "rl/emu/block.hpp"
#include "rl/emu/fp16.hpp"
#include "rl/emu/launch.hpp"
#include "rl/emu/warp.hpp"

namespace rl::emu::hopper {
namespace {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

// ---- the shared window ------------------------------------------------------

namespace {

constexpr std::uint32_t kSlotBytes = 64 * 1024;
constexpr std::uint32_t kSlotReach = 31 * 1024;  // a static object within this of its anchor

struct Anchor {
  const unsigned char* host;
  std::uint32_t window;
};

// Per host worker: the dynamic shared memory the window was laid out for and
// the static objects' anchors.
struct Window {
  const unsigned char* dynamic = nullptr;
  std::size_t dynamic_bytes = 0;
  std::vector<Anchor> anchors;

  void refresh() {
    const auto* base = static_cast<const unsigned char*>(detail::dynamic_shared_memory());
    // The allocation's usable size (the requested size under ASan): a static
    // __shared__ (a thread_local) is never inside it.
    const std::size_t bytes = malloc_usable_size(const_cast<unsigned char*>(base));
    if (base != dynamic || bytes != dynamic_bytes) {
      dynamic = base;
      dynamic_bytes = bytes;
      anchors.clear();
    }
  }
  std::uint32_t first_slot() const {
    return static_cast<std::uint32_t>((dynamic_bytes + kSlotBytes - 1) / kSlotBytes * kSlotBytes);
  }
};

// This worker's window as the running block last laid it out (the
// scheduler's deadlock report asks outside any thread, where the block's
// dynamic shared memory cannot be asked for).
Window& laid_out_window() {
  thread_local Window w;
  return w;
}

Window& window() {
  const detail::RaceIgnored bookkeeping;
  Window& w = laid_out_window();
  w.refresh();
  return w;
}

std::uint32_t address_in(Window& w, const void* p) {
  const detail::RaceIgnored bookkeeping;  // the worker's window, shared by its fibers
  const auto* host = static_cast<const unsigned char*>(p);
  if (host >= w.dynamic && host < w.dynamic + w.dynamic_bytes)
    return static_cast<std::uint32_t>(host - w.dynamic);
  for (const Anchor& a : w.anchors) {
    const std::ptrdiff_t off = host - a.host;
    if (off > -static_cast<std::ptrdiff_t>(kSlotReach) && off < kSlotReach)
      return static_cast<std::uint32_t>(static_cast<std::int64_t>(a.window) + off);
  }
  // A new slot; the anchor keeps the host address's low 10 bits (swizzle phase).
  const std::uint32_t slot =
      w.first_slot() + static_cast<std::uint32_t>(w.anchors.size()) * kSlotBytes;
  const std::uint32_t window_address =
      slot + kSlotBytes / 2 +
      static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) & 1023U);
  w.anchors.push_back({host, window_address});
  return window_address;
}

}  // namespace

std::uint32_t shared_address(const void* p) {
  return address_in(window(), p);
}

namespace {

// shared_pointer in a window already refreshed (wgmma translates thousands
// of operand addresses per instruction; the refresh asks the allocator).
unsigned char* pointer_in(const Window& w, std::uint32_t window_address) {
  const detail::RaceIgnored bookkeeping;
  // Descriptors keep 18 bits: compare modulo 2^18.
  constexpr std::uint32_t kMask = 0x3FFFF;
  const std::uint32_t a18 = window_address & kMask;
  if (a18 < w.dynamic_bytes) return const_cast<unsigned char*>(w.dynamic) + a18;
  for (const Anchor& a : w.anchors) {
    const auto off = static_cast<std::int32_t>(((a18 - a.window) & kMask) << 14) >> 14;
    if (off > -static_cast<std::int32_t>(kSlotReach) && off < static_cast<std::int32_t>(kSlotReach))
      return const_cast<unsigned char*>(a.host) + off;
  }
  throw std::runtime_error("shared-window address " + hex(window_address) +
                           " names no shared memory this block has taken the address of");
}

}  // namespace

unsigned char* shared_pointer(std::uint32_t window_address) {
  return pointer_in(window(), window_address);
}

// ---- mbarrier -----------------------------------------------------------------

MbarrierState mbarrier_state(std::uint64_t word) {
  const auto tx =
      static_cast<std::int32_t>(static_cast<std::uint32_t>((word >> 42) & 0x1FFFFF) << 11) >> 11;
  return {static_cast<std::uint32_t>(word & 0x1FFFFF),
          static_cast<std::uint32_t>((word >> 21) & 0x1FFFFF), tx,
          static_cast<std::uint32_t>(word >> 63)};
}

std::uint64_t mbarrier_word(const MbarrierState& s) {
  return (std::uint64_t{s.pending} & 0x1FFFFF) | ((std::uint64_t{s.expected} & 0x1FFFFF) << 21) |
         ((std::uint64_t{static_cast<std::uint32_t>(s.tx_count)} & 0x1FFFFF) << 42) |
         (std::uint64_t{s.phase & 1U} << 63);
}

namespace {

std::string barrier_name(const std::uint64_t* bar) {
  return "the mbarrier at shared address " + hex(shared_address(bar));
}

// The same, callable outside a thread (the deadlock report).
std::string laid_out_barrier_name(const std::uint64_t* bar) {
  return "the mbarrier at shared address " + hex(address_in(laid_out_window(), bar));
}

// What a thread sleeping in try_wait waits for, for the deadlock report.
std::string describe_wait(const void* object) {
  const auto* bar = static_cast<const std::uint64_t*>(object);
  const MbarrierState s = mbarrier_state(*bar);
  return laid_out_barrier_name(bar) + " (current phase parity " + std::to_string(s.phase) +
         ", which can never complete: pending arrivals " + std::to_string(s.pending) + " of " +
         std::to_string(s.expected) + ", transaction count " + std::to_string(s.tx_count) +
         " bytes)";
}

MbarrierState checked_state(const std::uint64_t* bar, const char* operation) {
  const MbarrierState s = mbarrier_state(*bar);
  if (s.expected == 0)
    throw std::runtime_error(std::string(operation) + " on " + barrier_name(bar) +
                             ", which was never initialised (mbarrier.init)");
  return s;
}

// A phase completes when no arrival and no transaction byte is pending; the
// next phase starts with the expected count again ("Phase Completion").
void store(std::uint64_t* bar, MbarrierState s) {
  if (s.pending == 0 && s.tx_count == 0) {
    s.phase ^= 1U;
    s.pending = s.expected;
  }
  *bar = mbarrier_word(s);
  detail::wake_waiters(bar);
}

// The tx-count's range (PTX "Contents of the mbarrier object"): 2^20 - 1 each way.
constexpr std::int32_t kTxLimit = (1 << 20) - 1;

void add_tx(std::uint64_t* bar, std::int64_t delta, const char* operation) {
  MbarrierState s = checked_state(bar, operation);
  const std::int64_t tx = s.tx_count + delta;
  if (tx > kTxLimit || tx < -kTxLimit)
    throw std::runtime_error(std::string(operation) + " on " + barrier_name(bar) +
                             ": transaction count " + std::to_string(tx) +
                             " leaves the range +-(2^20 - 1)");
  s.tx_count = static_cast<std::int32_t>(tx);
  store(bar, s);
}

}  // namespace

// racecheck: the mbarrier word is the emulator's bookkeeping; every arrival
// and transaction update releases at the barrier's address and a wait that
// sees its phase complete acquires there (internal.hpp).
void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
  const detail::RaceIgnored bookkeeping;
  detail::race_release(bar);
  if (count < 1 || count > (1U << 20) - 1)
    throw std::runtime_error("mbarrier.init with count " + std::to_string(count) +
                             " (must be 1 .. 2^20 - 1)");
  *bar = mbarrier_word({count, count, 0, 0});
  detail::wake_waiters(bar);
}

void mbarrier_arrive(std::uint64_t* bar) {
  const detail::RaceIgnored bookkeeping;
  detail::race_release(bar);
  MbarrierState s = checked_state(bar, "mbarrier.arrive");
  if (s.pending == 0)
    throw std::runtime_error("mbarrier.arrive on " + barrier_name(bar) +
                             " with no arrival pending in its phase");
  --s.pending;
  store(bar, s);
}

void mbarrier_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  const detail::RaceIgnored bookkeeping;
  detail::race_release(bar);
  add_tx(bar, bytes, "mbarrier.expect_tx");
}

void mbarrier_complete_tx(std::uint64_t* bar, std::uint32_t bytes) {
  const detail::RaceIgnored bookkeeping;
  detail::race_release(bar);
  add_tx(bar, -static_cast<std::int64_t>(bytes), "mbarrier complete_tx");
}

bool mbarrier_test_wait_parity(const std::uint64_t* bar, std::uint32_t parity) {
  const detail::RaceIgnored bookkeeping;
  const bool complete = checked_state(bar, "mbarrier.test_wait").phase != (parity & 1U);
  if (complete) detail::race_acquire(bar);
  return complete;
}

bool mbarrier_try_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  const detail::RaceIgnored bookkeeping;
  if (mbarrier_test_wait_parity(bar, parity)) return true;
  detail::wait_on(bar, &describe_wait);
  return mbarrier_test_wait_parity(bar, parity);
}

// ---- wgmma -------------------------------------------------------------------

Descriptor decode_descriptor(std::uint64_t desc) {
  static constexpr unsigned kSwizzle[4] = {0, 128, 64, 32};
  return {static_cast<std::uint32_t>(desc & 0x3FFF) << 4,
          static_cast<std::uint32_t>((desc >> 16) & 0x3FFF) << 4,
          static_cast<std::uint32_t>((desc >> 32) & 0x3FFF) << 4,
          static_cast<std::uint32_t>((desc >> 49) & 7), kSwizzle[(desc >> 62) & 3]};
}

std::uint32_t operand_address(const Descriptor& d, bool mn_major, unsigned element_bytes,
                              unsigned mn, unsigned k) {
  if (d.base_offset != 0)
    throw std::invalid_argument("wgmma descriptor base offset " + std::to_string(d.base_offset) +
                                " is not emulated (patterns must start on their repeat)");
  const unsigned kb = k * element_bytes;
  std::uint32_t a = 0;
  if (!mn_major) {
    if (d.swizzle_bytes == 0) {
      // 8 x 16-byte core matrices: LBO apart along K, SBO apart along M/N.
      a = d.start + (mn / 8) * d.sbo + (kb / 16) * d.lbo + (mn % 8) * 16 + kb % 16;
    } else {
      // Rows of swizzle_bytes along K, 8-row groups SBO apart; K past one row
      // continues LBO further (unused by one wgmma's K inside a 128-byte row).
      const unsigned w = d.swizzle_bytes;
      a = d.start + (mn / 8) * d.sbo + (mn % 8) * w + (kb / w) * d.lbo + kb % w;
    }
  } else {
    if (d.swizzle_bytes == 0)
      throw std::invalid_argument("wgmma MN-major operand without swizzle is not emulated");
    // Rows of swizzle_bytes along MN, one per k; 8 k-rows form an atom, SBO
    // apart along K; MN past one row continues LBO further.
    const unsigned w = d.swizzle_bytes;
    const unsigned mb = mn * element_bytes;
    a = d.start + (mb / w) * d.lbo + mb % w + (k % 8) * w + (k / 8) * d.sbo;
  }
  // The XOR on address bits (Swizzle<B,4,3>): bits [4, 4+B) ^= bits [7, 7+B).
  const unsigned bits = d.swizzle_bytes == 128  ? 3
                        : d.swizzle_bytes == 64 ? 2
                        : d.swizzle_bytes == 32 ? 1
                                                : 0;
  const std::uint32_t mask = (1U << bits) - 1U;
  return a ^ (((a >> 7) & mask) << 4);
}

namespace {

unsigned element_bytes(WgmmaInput in) {
  switch (in) {
    case WgmmaInput::f16:
    case WgmmaInput::bf16:
      return 2;
    case WgmmaInput::tf32:
      return 4;
    default:
      return 1;
  }
}

unsigned k_of(WgmmaInput in) {
  return 32 / element_bytes(in);
}

double decode(WgmmaInput in, const unsigned char* p) {
  static const std::array<float, 256> kE4m3 = [] {
    std::array<float, 256> t{};
    for (unsigned b = 0; b < 256; ++b)
      t[b] = fp16_detail::fp8_bits_to_float(static_cast<unsigned char>(b), fp16_detail::kE4M3);
    return t;
  }();
  static const std::array<float, 256> kE5m2 = [] {
    std::array<float, 256> t{};
    for (unsigned b = 0; b < 256; ++b)
      t[b] = fp16_detail::fp8_bits_to_float(static_cast<unsigned char>(b), fp16_detail::kE5M2);
    return t;
  }();
  std::uint16_t h = 0;
  std::uint32_t u = 0;
  switch (in) {
    case WgmmaInput::f16:
      std::memcpy(&h, p, 2);
      return fp16_detail::half_bits_to_float(h);
    case WgmmaInput::bf16:
      std::memcpy(&h, p, 2);
      return fp16_detail::bfloat16_bits_to_float(h);
    case WgmmaInput::tf32:
      // The tensor core reads the top 19 bits (PTX: "tf32 ... lower 13 bits ignored").
      std::memcpy(&u, p, 4);
      return std::bit_cast<float>(u & 0xFFFFE000U);
    case WgmmaInput::e4m3:
      return kE4m3[*p];
    case WgmmaInput::e5m2:
      return kE5m2[*p];
    case WgmmaInput::s8:
      return static_cast<std::int8_t>(*p);
  }
  return 0.0;
}

// ---- per-thread asynchronous state ------------------------------------------

struct PendingWgmma {
  void* d;                            // the thread's accumulator registers
  std::vector<std::uint32_t> result;  // what the wait will write there
};

// A bulk copy shared -> global, performed at the wait that covers it.
struct BulkStore {
  bool tensor = false;
  // plain (cp.async.bulk): bytes from src to dst
  void* dst = nullptr;
  const unsigned char* src = nullptr;
  std::uint32_t bytes = 0;
  // tensor (cp.async.bulk.tensor): the box at coords of map, read at src
  // (window address src_window, for the swizzle)
  TensorMap map{};
  std::int32_t coords[5] = {};
  std::uint32_t src_window = 0;
};

void perform(const BulkStore& copy);

struct AsyncState {
  std::vector<PendingWgmma> wgmma_open;                 // issued since the last commit_group
  std::vector<std::vector<PendingWgmma>> wgmma_groups;  // committed, oldest first
  std::vector<BulkStore> bulk_open;
  std::vector<std::vector<BulkStore>> bulk_groups;

  // The newest pending wgmma writing accumulators d, or nullptr.
  const PendingWgmma* newest_for(const void* d) const {
    for (auto it = wgmma_open.rbegin(); it != wgmma_open.rend(); ++it)
      if (it->d == d) return &*it;
    for (auto g = wgmma_groups.rbegin(); g != wgmma_groups.rend(); ++g)
      for (auto it = g->rbegin(); it != g->rend(); ++it)
        if (it->d == d) return &*it;
    return nullptr;
  }
};

// commit_group: what was issued since the last commit becomes the newest group.
template <typename T>
void close_group(std::vector<T>& open, std::vector<std::vector<T>>& groups) {
  groups.push_back(std::move(open));
  open.clear();
}

// The calling CUDA thread's state, in its own runtime slot (fibers share host
// threads, so thread_local would mix CUDA threads).  Bulk stores still
// pending when the thread exits are performed then (the block's shared
// memory is still there); pending wgmma results die with the registers.
AsyncState& async_state() {
  ThreadSlot& slot = thread_slot(kHopperSlot);
  if (slot.ptr == nullptr) {
    slot.ptr = new AsyncState();
    slot.cleanup = [](void* p) {
      auto* state = static_cast<AsyncState*>(p);
      for (const auto& group : state->bulk_groups)
        for (const BulkStore& copy : group) perform(copy);
      for (const BulkStore& copy : state->bulk_open) perform(copy);
      delete state;
    };
  }
  return *static_cast<AsyncState*>(slot.ptr);
}

struct WgmmaPost {
  const WgmmaOp* op;
  void* d;
  AsyncState* state;
};

void wgmma_exchange(void* const* posts, unsigned participants) {
  if (participants != 0xFFFFFFFFU)
    throw std::runtime_error("wgmma.mma_async needs all 32 lanes of every warp of the warpgroup");
  const WgmmaOp& op = *static_cast<WgmmaPost*>(posts[0])->op;
  for (unsigned l = 1; l < 32; ++l) {
    const WgmmaOp& o = *static_cast<WgmmaPost*>(posts[l])->op;
    if ((op.a_registers == nullptr && o.desc_a != op.desc_a) || o.desc_b != op.desc_b ||
        o.n != op.n || o.input != op.input || o.scale_d != op.scale_d ||
        (o.a_registers == nullptr) != (op.a_registers == nullptr))
      throw std::runtime_error("wgmma.mma_async: lanes of one warp pass different operands");
  }
  const unsigned warp = (thread_rank() / 32U) % 4U;
  const unsigned eb = element_bytes(op.input), kk = k_of(op.input), n = op.n;
  const Descriptor da = decode_descriptor(op.desc_a), db = decode_descriptor(op.desc_b);
  const Window& w = window();
  // This warp's 16 rows of A and all of B, decoded once.
  std::vector<double> a(16 * kk), b(static_cast<std::size_t>(kk) * n);
  if (op.a_registers != nullptr) {
    // Each lane's four registers hold 16 / eb elements, low bytes first.
    for (unsigned lane = 0; lane < 32; ++lane) {
      const auto* bytes = reinterpret_cast<const unsigned char*>(
          static_cast<WgmmaPost*>(posts[lane])->op->a_registers);
      const unsigned t = warp * 32 + lane;
      for (unsigned i = 0; i < 16 / eb; ++i)
        a[(a_fragment_row(t, i, eb) - 16 * warp) * kk + a_fragment_col(t, i, eb)] =
            op.scale_a * decode(op.input, bytes + i * eb);
    }
  } else {
    for (unsigned r = 0; r < 16; ++r)
      for (unsigned k = 0; k < kk; ++k)
        a[r * kk + k] =
            op.scale_a *
            decode(op.input, pointer_in(w, operand_address(da, op.trans_a, eb, 16 * warp + r, k)));
  }
  for (unsigned c = 0; c < n; ++c)
    for (unsigned k = 0; k < kk; ++k)
      b[c * kk + k] =
          op.scale_b * decode(op.input, pointer_in(w, operand_address(db, op.trans_b, eb, c, k)));
  const bool integer = op.input == WgmmaInput::s8;
  for (unsigned lane = 0; lane < 32; ++lane) {
    const WgmmaPost& post = *static_cast<WgmmaPost*>(posts[lane]);
    // The accumulators this wgmma starts from: a pending wgmma's result on
    // the same registers (the chain over K), else the registers themselves.
    std::vector<std::uint32_t> c(n / 2);
    if (const PendingWgmma* before = post.state->newest_for(post.d))
      c = before->result;
    else
      std::memcpy(c.data(), post.d, c.size() * 4);
    const unsigned t = warp * 32 + lane;
    for (unsigned i = 0; i < n / 2; ++i) {
      const unsigned r = accumulator_row(t, i) - 16 * warp, col = accumulator_col(t, i);
      const double* ar = &a[r * kk];
      const double* bc = &b[col * kk];
      if (integer) {
        std::uint32_t sum = op.scale_d ? c[i] : 0U;
        for (unsigned k = 0; k < kk; ++k)
          sum += static_cast<std::uint32_t>(static_cast<std::int32_t>(ar[k] * bc[k]));
        c[i] = sum;
      } else {
        double sum = op.scale_d ? std::bit_cast<float>(c[i]) : 0.0;
        for (unsigned k = 0; k < kk; ++k) sum += ar[k] * bc[k];
        c[i] = std::bit_cast<std::uint32_t>(static_cast<float>(sum));
      }
    }
    post.state->wgmma_open.push_back({post.d, std::move(c)});
    auto* regs = static_cast<std::uint32_t*>(post.d);
    for (unsigned i = 0; i < n / 2; ++i) regs[i] = kAccumulatorPoison;
  }
}

}  // namespace

void wgmma(const WgmmaOp& op, void* d) {
  if (op.n < 8 || op.n > 256 || op.n % 8 != 0)
    throw std::invalid_argument("wgmma: N must be 8 .. 256 in steps of 8");
  if ((op.trans_a || op.trans_b) && element_bytes(op.input) != 2)
    throw std::invalid_argument("wgmma: imm-trans exists only for f16/bf16");
  if (op.a_registers != nullptr && op.trans_a)
    throw std::invalid_argument("wgmma: A from registers has no imm-trans-a");
  WgmmaPost post{&op, d, &async_state()};
  detail::warp_collective(0xFFFFFFFFU, &wgmma_exchange, &post);
}

void wgmma_commit_group() {
  AsyncState& s = async_state();
  close_group(s.wgmma_open, s.wgmma_groups);
}

void wgmma_wait_group(unsigned n) {
  AsyncState& s = async_state();
  while (s.wgmma_groups.size() > n) {
    std::vector<PendingWgmma> group = std::move(s.wgmma_groups.front());
    s.wgmma_groups.erase(s.wgmma_groups.begin());
    for (const PendingWgmma& w : group) {
      const auto* regs = static_cast<const std::uint32_t*>(w.d);
      for (std::size_t i = 0; i < w.result.size(); ++i)
        if (regs[i] != kAccumulatorPoison)
          throw std::runtime_error(
              "thread " + std::to_string(thread_rank()) + " wrote accumulator register " +
              std::to_string(i) +
              " of an in-flight wgmma.mma_async before the wgmma.wait_group that completes it");
    }
    // In issue order, so the last of a chain in the group lands last; a
    // newer pending wgmma on the same registers keeps them in flight.
    for (const PendingWgmma& w : group)
      if (s.newest_for(w.d) == nullptr) std::memcpy(w.d, w.result.data(), w.result.size() * 4);
  }
}

// ---- TMA ---------------------------------------------------------------------

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

void perform(const BulkStore& copy) {
  if (!copy.tensor) {
    std::memcpy(copy.dst, copy.src, copy.bytes);
    return;
  }
  MapFields f{};
  std::memcpy(&f, copy.map.words, sizeof f);
  const unsigned eb = f.element_bytes;
  for_each_box_element(f, copy.coords, const_cast<unsigned char*>(copy.src), copy.src_window,
                       [eb](const unsigned char* from, unsigned char* to) {
                         if (to != nullptr) std::memcpy(to, from, eb);
                       });
}

void check_bulk(const void* shared, const void* global, std::uint32_t bytes,
                const char* instruction) {
  if (bytes == 0 || bytes % 16 != 0)
    throw std::runtime_error(std::string(instruction) + ": size " + std::to_string(bytes) +
                             " is not a positive multiple of 16 bytes");
  if ((reinterpret_cast<std::uintptr_t>(shared) | reinterpret_cast<std::uintptr_t>(global)) % 16)
    throw std::runtime_error(std::string(instruction) + ": addresses must be 16-byte aligned");
}

}  // namespace

void tma_load(void* dst, const TensorMap& map, const std::int32_t* coords, std::uint32_t rank,
              std::uint64_t* bar) {
  const MapFields f = checked_map(map, rank);
  const unsigned eb = f.element_bytes;
  const std::uint64_t bytes =
      for_each_box_element(f, coords, static_cast<unsigned char*>(dst), shared_address(dst),
                           [eb](unsigned char* to, const unsigned char* from) {
                             if (from != nullptr)
                               std::memcpy(to, from, eb);
                             else
                               std::memset(to, 0, eb);
                           });
  mbarrier_complete_tx(bar, static_cast<std::uint32_t>(bytes));
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
  async_state().bulk_open.push_back(copy);
}

void bulk_load(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
  check_bulk(dst, src, bytes, "cp.async.bulk.shared::cluster.global");
  std::memcpy(dst, src, bytes);
  mbarrier_complete_tx(bar, bytes);
}

void bulk_store(void* dst, const void* src, std::uint32_t bytes) {
  check_bulk(src, dst, bytes, "cp.async.bulk.global.shared::cta");
  BulkStore copy;
  copy.dst = dst;
  copy.src = static_cast<const unsigned char*>(src);
  copy.bytes = bytes;
  async_state().bulk_open.push_back(copy);
}

void bulk_commit_group() {
  AsyncState& s = async_state();
  close_group(s.bulk_open, s.bulk_groups);
}

void bulk_wait_group(unsigned n) {
  AsyncState& s = async_state();
  while (s.bulk_groups.size() > n) {
    for (const BulkStore& copy : s.bulk_groups.front()) perform(copy);
    s.bulk_groups.erase(s.bulk_groups.begin());
  }
}

}  // namespace rl::emu::hopper
