// wgmma.mma_async on the emulator: descriptors and operand addresses,
// operand decoding, the per-warp computation, and the groups whose wait hands
// the accumulators over (rl/emu/hopper.hpp).
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "hopper_async_state.hpp"
#include "hopper_operand_hazards.hpp"
#include "hopper_shared_window.hpp"
#include "internal.hpp"
#include "rl/emu/block.hpp"
#include "rl/emu/counters.hpp"
#include "rl/emu/fp16.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/warp.hpp"

namespace rl::emu::hopper {

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

// rl/emu/counters.hpp: wgmma's accumulators are f32 (s32 for s8).
const char* tensor_role(WgmmaInput in) {
  switch (in) {
    case WgmmaInput::f16:
      return "tensor_fp16_f32";
    case WgmmaInput::bf16:
      return "tensor_bf16";
    case WgmmaInput::tf32:
      return "tensor_tf32";
    case WgmmaInput::e4m3:
    case WgmmaInput::e5m2:
      return "tensor_fp8_f32";
    case WgmmaInput::s8:
      break;
  }
  return "tensor_int8";
}

using impl::AsyncState;
using impl::PendingWgmma;

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
  const impl::Window& w = impl::window();
  // This warp's 16 rows of A and all of B, decoded once.
  std::vector<double> a(16 * kk), b(static_cast<std::size_t>(kk) * n);
  // The shared bytes read, held until the group retires: this warp's rows
  // of A, and B once per warpgroup (every warp reads the same B).
  impl::OperandReads a_reads, b_reads;
  const bool holds_b = warp == 0;
  const impl::Warpgroup warpgroup = impl::running_warpgroup();
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
      for (unsigned k = 0; k < kk; ++k) {
        const unsigned char* p =
            impl::pointer_in(w, operand_address(da, op.trans_a, eb, 16 * warp + r, k));
        a_reads.add(p, eb);
        a[r * kk + k] = op.scale_a * decode(op.input, p);
      }
  }
  for (unsigned c = 0; c < n; ++c)
    for (unsigned k = 0; k < kk; ++k) {
      const unsigned char* p = impl::pointer_in(w, operand_address(db, op.trans_b, eb, c, k));
      if (holds_b) b_reads.add(p, eb);
      b[c * kk + k] = op.scale_b * decode(op.input, p);
    }
  const AsyncState& first = *static_cast<WgmmaPost*>(posts[0])->state;
  if (!a_reads.runs.empty()) impl::hold_wgmma_reads(first.wgmma_commits, std::move(a_reads));
  if (!b_reads.runs.empty()) impl::hold_wgmma_reads(first.wgmma_commits, std::move(b_reads));
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
    post.state->wgmma_block = warpgroup.block;
    post.state->wgmma_warpgroup = warpgroup.index;
    auto* regs = static_cast<std::uint32_t*>(post.d);
    for (unsigned i = 0; i < n / 2; ++i) regs[i] = kAccumulatorPoison;
  }
  // This warp's quarter of the warpgroup's 2 * 64 * N * K.
  count_tensor_ops(tensor_role(op.input), 2.0 * 16 * n * kk);
}

}  // namespace

void wgmma(const WgmmaOp& op, void* d) {
  if (op.n < 8 || op.n > 256 || op.n % 8 != 0)
    throw std::invalid_argument("wgmma: N must be 8 .. 256 in steps of 8");
  if ((op.trans_a || op.trans_b) && element_bytes(op.input) != 2)
    throw std::invalid_argument("wgmma: imm-trans exists only for f16/bf16");
  if (op.a_registers != nullptr && op.trans_a)
    throw std::invalid_argument("wgmma: A from registers has no imm-trans-a");
  WgmmaPost post{&op, d, &impl::async_state()};
  detail::warp_collective(0xFFFFFFFFU, &wgmma_exchange, &post);
}

void wgmma_commit_group() {
  AsyncState& s = impl::async_state();
  impl::close_group(s.wgmma_open, s.wgmma_groups);
  ++s.wgmma_commits;
}

void wgmma_wait_group(unsigned n) {
  AsyncState& s = impl::async_state();
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
  // Groups numbered below commits - n have completed, with their operand reads.
  if (s.wgmma_block != nullptr && s.wgmma_commits > n)
    impl::retire_wgmma_reads(s.wgmma_block, s.wgmma_warpgroup, s.wgmma_commits - n);
}

}  // namespace rl::emu::hopper
