// mma.sync and ldmatrix as the runtime executes them: one warp rendezvous,
// and the last lane to arrive computes every lane's destinations with the
// whole-warp forms of ptx_mma.cpp / ptx_memory.cpp (fragments decoded once).
// Kept out of ptx_*.cpp, which also build without the runtime for the tests.
#include <cstdint>

#include "rl/emu/counters.hpp"
#include "rl/emu/ptx_warp.hpp"
#include "rl/emu/warp.hpp"

namespace rl::emu::ptx {
namespace {

template <typename Acc>
struct MmaPost {
  const std::uint32_t* a;
  const std::uint32_t* b;
  const Acc* c;
  Acc* d;
};

template <typename Acc, typename Regs>
void gather(void* const* posts, MmaA& a, MmaB& b, Regs& c) {
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    const auto* p = static_cast<const MmaPost<Acc>*>(posts[lane]);
    for (int r = 0; r < 4; ++r) {
      a[lane][r] = p->a[r];
      c[lane][r] = p->c[r];
    }
    b[lane][0] = p->b[0];
    b[lane][1] = p->b[1];
  }
}

template <typename Acc, typename Regs>
void scatter(void* const* posts, const Regs& d) {
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    Acc* out = static_cast<const MmaPost<Acc>*>(posts[lane])->d;
    for (int r = 0; r < 4; ++r) out[r] = d[lane][r];
  }
}

// rl/emu/counters.hpp: m16n8kK, 2*16*8*K operations per warp instruction.
template <MmaInput Input>
void count_mma_f32() {
  switch (Input) {
    case MmaInput::f16:
      return count_tensor_ops("tensor_fp16_f32", 2.0 * 16 * 8 * 16);
    case MmaInput::bf16:
      return count_tensor_ops("tensor_bf16", 2.0 * 16 * 8 * 16);
    case MmaInput::tf32:
      return count_tensor_ops("tensor_tf32", 2.0 * 16 * 8 * 8);
    case MmaInput::e4m3:
    case MmaInput::e5m2:
      return count_tensor_ops("tensor_fp8_f32", 2.0 * 16 * 8 * 32);
  }
}

// One exchange function per input type: lanes that disagree on the
// instruction never complete one rendezvous (reported as a deadlock).
template <MmaInput Input>
void mma_f32_exchange(void* const* posts, unsigned participants) {
  require_full_warp("mma.sync", participants);
  MmaA a;
  MmaB b;
  MmaCF32 c;
  MmaCF32 d;
  gather<float>(posts, a, b, c);
  mma_f32_warp(Input, a, b, c, d);
  scatter<float>(posts, d);
  count_mma_f32<Input>();
}

void mma_s8_exchange(void* const* posts, unsigned participants) {
  require_full_warp("mma.sync", participants);
  MmaA a;
  MmaB b;
  MmaCS32 c;
  MmaCS32 d;
  gather<std::int32_t>(posts, a, b, c);
  mma_m16n8k32_s8_s32_warp(a, b, c, d);
  scatter<std::int32_t>(posts, d);
  count_tensor_ops("tensor_int8", 2.0 * 16 * 8 * 32);
}

struct MmaF16Post {
  const std::uint32_t* a;
  const std::uint32_t* b;
  const std::uint32_t* c;
  std::uint32_t* d;
};

void mma_f16_exchange(void* const* posts, unsigned participants) {
  require_full_warp("mma.sync", participants);
  MmaA a;
  MmaB b;
  MmaCF16 c;
  MmaCF16 d;
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    const auto* p = static_cast<const MmaF16Post*>(posts[lane]);
    for (int r = 0; r < 4; ++r) a[lane][r] = p->a[r];
    for (int r = 0; r < 2; ++r) {
      b[lane][r] = p->b[r];
      c[lane][r] = p->c[r];
    }
  }
  mma_m16n8k16_f16_f16_warp(a, b, c, d);
  count_tensor_ops("tensor_fp16_f16", 2.0 * 16 * 8 * 16);
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    std::uint32_t* out = static_cast<const MmaF16Post*>(posts[lane])->d;
    out[0] = d[lane][0];
    out[1] = d[lane][1];
  }
}

struct LdmatrixPost {
  const void* row;
  std::uint32_t* out;
};

template <int Matrices, bool Trans>
void ldmatrix_exchange(void* const* posts, unsigned participants) {
  require_full_warp("ldmatrix", participants);
  const void* rows[kWarpLanes];
  for (unsigned lane = 0; lane < kWarpLanes; ++lane)
    rows[lane] = static_cast<const LdmatrixPost*>(posts[lane])->row;
  std::uint32_t out[kWarpLanes][4];
  ldmatrix_warp(Matrices, Trans, rows, out);
  for (unsigned lane = 0; lane < kWarpLanes; ++lane) {
    std::uint32_t* dst = static_cast<const LdmatrixPost*>(posts[lane])->out;
    for (int j = 0; j < Matrices; ++j) dst[j] = out[lane][j];
  }
}

template <int Matrices>
detail::CollectiveFn ldmatrix_fn(bool trans) {
  return trans ? &ldmatrix_exchange<Matrices, true> : &ldmatrix_exchange<Matrices, false>;
}

}  // namespace

void mma_f32_sync(MmaInput input, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                  const float (&c)[4], float (&d)[4]) {
  MmaPost<float> post{a, b, c, d};
  detail::CollectiveFn fn = nullptr;
  switch (input) {
    case MmaInput::f16:
      fn = &mma_f32_exchange<MmaInput::f16>;
      break;
    case MmaInput::bf16:
      fn = &mma_f32_exchange<MmaInput::bf16>;
      break;
    case MmaInput::tf32:
      fn = &mma_f32_exchange<MmaInput::tf32>;
      break;
    case MmaInput::e4m3:
      fn = &mma_f32_exchange<MmaInput::e4m3>;
      break;
    case MmaInput::e5m2:
      fn = &mma_f32_exchange<MmaInput::e5m2>;
      break;
  }
  detail::warp_collective(0xffffffffU, fn, &post);
}

void mma_m16n8k32_s8_s32_sync(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                              const std::int32_t (&c)[4], std::int32_t (&d)[4]) {
  MmaPost<std::int32_t> post{a, b, c, d};
  detail::warp_collective(0xffffffffU, &mma_s8_exchange, &post);
}

void mma_m16n8k16_f16_f16_sync(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                               const std::uint32_t (&c)[2], std::uint32_t (&d)[2]) {
  MmaF16Post post{a, b, c, d};
  detail::warp_collective(0xffffffffU, &mma_f16_exchange, &post);
}

void ldmatrix_sync(int matrices, bool trans, const void* row, std::uint32_t* out) {
  LdmatrixPost post{row, out};
  detail::CollectiveFn fn = matrices == 1   ? ldmatrix_fn<1>(trans)
                            : matrices == 2 ? ldmatrix_fn<2>(trans)
                                            : ldmatrix_fn<4>(trans);
  detail::warp_collective(0xffffffffU, fn, &post);
}

}  // namespace rl::emu::ptx
