// sm_120a mma.sync as the runtime executes it: refused unless the emulated
// device is an sm_120a / sm_121a, then one warp rendezvous whose last lane
// computes every lane's D with the whole-warp forms of mma_sm120.cpp.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "internal.hpp"
#include "rl/emu/arch.hpp"
#include "rl/emu/counters.hpp"
#include "rl/emu/mma_sm120.hpp"
#include "rl/emu/warp.hpp"

namespace rl::emu::sm120 {
namespace {

// One line naming where (kernel, block, thread), the instruction and why, then
// the process stops: what a GPU does with an instruction its code lacks is
// not a result a benchmark may report.
[[noreturn]] void stop_here(const Mma& op, const std::string& why) {
  char where[256];
  detail::write_current_thread_label(where, sizeof where);
  std::fprintf(stderr, "rl::emu: %s: %s: %s\n", where, instruction_name(op).c_str(), why.c_str());
  std::fflush(stderr);
  std::abort();
}

void require_sm120a(const Mma& op) {
  if (rl::emu::has_block_scaled_mma_sync()) return;
  const int cc = rl::emu::compute_capability();
  stop_here(op, "sm_120a / sm_121a only, and the emulated device is compute capability " +
                    std::to_string(cc / 10) + "." + std::to_string(cc % 10) +
                    " (RL_EMU_CC=" + std::to_string(cc) +
                    "): run with RL_EMU_CC=120 to emulate an RTX 50 / RTX PRO / GB10");
}

struct Post {
  const Mma* op;
  const std::uint32_t* a;
  const std::uint32_t* b;
  const float* c;
  float* d;
  ScaleOperand scale_a;
  ScaleOperand scale_b;
};

const Post& post_of(void* const* posts, unsigned lane) {
  return *static_cast<const Post*>(posts[lane]);
}

// Lane 0's instruction and selectors, after checking every lane agrees (PTX:
// undefined when they do not).
const Post& agreed(void* const* posts) {
  const Post& first = post_of(posts, 0);
  for (unsigned lane = 1; lane < kWarpLanes; ++lane) {
    const Post& p = post_of(posts, lane);
    if (!(*p.op == *first.op))
      stop_here(*first.op, "lane " + std::to_string(lane) + " executes another mma variant");
    if (!(p.scale_a.selector == first.scale_a.selector) ||
        !(p.scale_b.selector == first.scale_b.selector))
      stop_here(*first.op, "lane " + std::to_string(lane) +
                               " passes other {byte-id, thread-id} selectors than lane 0");
  }
  return first;
}

void gather(void* const* posts, MmaA& a, MmaB& b, MmaCF32& c) {
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    const Post& p = post_of(posts, lane);
    for (int r = 0; r < 4; ++r) {
      a[lane][r] = p.a[r];
      c[lane][r] = p.c[r];
    }
    b[lane][0] = p.b[0];
    b[lane][1] = p.b[1];
  }
}

void scatter(void* const* posts, const MmaCF32& d) {
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    float* out = post_of(posts, lane).d;
    for (int r = 0; r < 4; ++r) out[r] = d[lane][r];
  }
}

// rl/emu/counters.hpp: f32 accumulators; mixed operands count under the
// wider of A and B, the block-scaled kinds under their element types.
const char* tensor_role(const Mma& op) {
  auto bits = [](Format f) {
    return f == Format::e2m1 ? 4 : f == Format::e2m3 || f == Format::e3m2 ? 6 : 8;
  };
  const int widest = std::max(bits(op.a), bits(op.b));
  return widest == 8 ? "tensor_fp8_f32" : widest == 6 ? "tensor_fp6_fp4_f32" : "tensor_fp4";
}

void count_mma(const Mma& op) {
  count_tensor_ops(tensor_role(op), 2.0 * 16 * 8 * k_of(op.kind));
}

void mma_exchange(void* const* posts, unsigned participants) {
  ptx::require_full_warp("mma.sync", participants);
  const Post& first = agreed(posts);
  MmaA a;
  MmaB b;
  MmaCF32 c;
  MmaCF32 d;
  gather(posts, a, b, c);
  mma_warp(*first.op, a, b, c, d);
  scatter(posts, d);
  count_mma(*first.op);
}

void mma_block_scaled_exchange(void* const* posts, unsigned participants) {
  ptx::require_full_warp("mma.sync", participants);
  const Post& first = agreed(posts);
  MmaA a;
  MmaB b;
  MmaCF32 c;
  MmaCF32 d;
  ScaleRegs scale_a;
  ScaleRegs scale_b;
  gather(posts, a, b, c);
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    scale_a[lane] = post_of(posts, lane).scale_a.data;
    scale_b[lane] = post_of(posts, lane).scale_b.data;
  }
  mma_block_scaled_warp(*first.op, a, b, c, scale_a, first.scale_a.selector, scale_b,
                        first.scale_b.selector, d);
  scatter(posts, d);
  count_mma(*first.op);
}

// Before the rendezvous, in the lane's own context: the message names it.
void check_instruction(const Mma& op, bool with_scales) {
  require_sm120a(op);
  if (const char* why = invalid_reason(op)) stop_here(op, why);
  if (block_scaled(op.kind) != with_scales)
    stop_here(op, with_scales ? "kind::f8f6f4 takes no scale operands"
                              : "a block-scaled kind needs its scale operands");
}

}  // namespace

void mma_sync(const Mma& op, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
              const float (&c)[4], float (&d)[4]) {
  check_instruction(op, false);
  Post post{&op, a, b, c, d, {}, {}};
  detail::warp_collective(0xFFFFFFFFU, &mma_exchange, &post);
}

void mma_block_scaled_sync(const Mma& op, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                           const float (&c)[4], ScaleOperand scale_a, ScaleOperand scale_b,
                           float (&d)[4]) {
  check_instruction(op, true);
  if (const char* why = invalid_selectors(op, scale_a.selector, scale_b.selector))
    stop_here(op, why);
  Post post{&op, a, b, c, d, scale_a, scale_b};
  detail::warp_collective(0xFFFFFFFFU, &mma_block_scaled_exchange, &post);
}

}  // namespace rl::emu::sm120
