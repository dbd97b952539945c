// Warp-level primitives of the emulator and CUDA's warp intrinsics built on
// them (shuffle, vote, reduce, match, __syncwarp, __activemask).
//
// Every warp collective is a rendezvous: each non-exited lane named in `mask`
// posts a pointer to a small record on its own fiber stack and blocks; the
// lane that completes the set runs the exchange over all posted records (the
// other lanes are suspended, so their records are alive) and all of them go
// on.  Lanes must reach the same intrinsic with the same mask (CUDA's rule);
// a mismatch that can never complete is reported as a deadlock.  Semantics
// follow ptx-emulation-reference.md section 6: a shuffle from a lane that has
// exited or is not in the mask returns the caller's own value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "rl/emu/types.hpp"

namespace rl::emu {

// Linear index of the running CUDA thread within its block.
inline unsigned thread_rank() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

// %laneid: thread_rank() % 32.
inline unsigned lane_id() {
  return thread_rank() & 31u;
}

// Rendezvous of the full warp for .sync.aligned warp instructions (mma,
// ldmatrix, wmma): every non-exited lane of the calling thread's warp calls it
// with `bytes` bytes of its own data; on return all[L*bytes .. L*bytes+bytes)
// holds lane L's data for every lane L of the warp (zero-filled for
// exited/absent lanes).  Returns the mask of lanes that took part.  Every
// lane passes the same `bytes` (the .aligned rule: one instruction per warp).
unsigned warp_allgather(const void* mine, void* all, std::size_t bytes);

// Per-CUDA-thread storage for emulation state that belongs to one thread
// (e.g. queued cp.async copies).  Every thread starts with {nullptr, nullptr};
// when the thread exits, `cleanup(ptr)` is called if set.  One slot per user:
// kCpAsyncSlot (rl/ptx.hpp's cp.async queue), kHopperSlot (the Hopper
// emulation's pending wgmma and bulk-copy groups) and kTcgen05Slot (tcgen05's
// queue and the CTA's tensor memory, checked when its last thread exits), so a
// kernel may use all of them.
struct ThreadSlot {
  void* ptr = nullptr;
  void (*cleanup)(void*) = nullptr;
};
inline constexpr unsigned kCpAsyncSlot = 0;
inline constexpr unsigned kHopperSlot = 1;
inline constexpr unsigned kTcgen05Slot = 2;
inline constexpr unsigned kThreadSlots = 3;
ThreadSlot& thread_slot(unsigned which = kCpAsyncSlot);

namespace detail {

// Completes a collective: posts[L] is lane L's record for every L in
// `participants`.
using CollectiveFn = void (*)(void* const* posts, unsigned participants);

// Blocks until every non-exited lane in `mask` has posted for the same `fn`
// and `mask`; one of them runs `fn`.  Returns the participating lanes.
unsigned warp_collective(unsigned mask, CollectiveFn fn, void* post);

// __activemask(): the lanes of this warp that reach this call before any lane
// of the warp blocks elsewhere or exits (a soft rendezvous, see the reference).
unsigned active_mask();

template <typename T>
struct ShflPost {
  T value;
  T result;
  unsigned source;
};

template <typename T>
void shfl_exchange(void* const* posts, unsigned participants) {
  for (unsigned m = participants; m != 0; m &= m - 1) {
    auto* p = static_cast<ShflPost<T>*>(posts[__builtin_ctz(m)]);
    if (p->source < 32 && ((participants >> p->source) & 1u) != 0)
      p->result = static_cast<ShflPost<T>*>(posts[p->source])->value;
  }
}

template <typename T>
T shfl_from(unsigned mask, T value, unsigned source_lane) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16,
                "shuffled values are trivially copyable and at most 16 bytes");
  ShflPost<T> post{value, value, source_lane};
  warp_collective(mask, &shfl_exchange<T>, &post);
  return post.result;
}

inline unsigned segment_base(unsigned lane, int width) {
  return lane & ~(static_cast<unsigned>(width) - 1u);
}

template <typename T>
struct ReducePost {
  T value;
  T result;
};

template <typename T, typename Op>
void reduce_exchange(void* const* posts, unsigned participants) {
  T acc = static_cast<ReducePost<T>*>(posts[__builtin_ctz(participants)])->value;
  for (unsigned m = participants & (participants - 1); m != 0; m &= m - 1)
    acc = Op{}(acc, static_cast<ReducePost<T>*>(posts[__builtin_ctz(m)])->value);
  for (unsigned m = participants; m != 0; m &= m - 1)
    static_cast<ReducePost<T>*>(posts[__builtin_ctz(m)])->result = acc;
}

template <typename T, typename Op>
T warp_reduce(unsigned mask, T value) {
  ReducePost<T> post{value, value};
  warp_collective(mask, &reduce_exchange<T, Op>, &post);
  return post.result;
}

struct WrapAdd {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(static_cast<unsigned>(a) + static_cast<unsigned>(b));
  }
};
struct Min {
  template <typename T>
  T operator()(T a, T b) const {
    return b < a ? b : a;
  }
};
struct Max {
  template <typename T>
  T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};
struct And {
  unsigned operator()(unsigned a, unsigned b) const { return a & b; }
};
struct Or {
  unsigned operator()(unsigned a, unsigned b) const { return a | b; }
};
struct Xor {
  unsigned operator()(unsigned a, unsigned b) const { return a ^ b; }
};

struct BallotPost {
  unsigned bit;
  unsigned result;
  unsigned participants;
};
void ballot_exchange(void* const* posts, unsigned participants);

template <typename T>
struct MatchPost {
  T value;
  unsigned result;
  int all_equal;
};

template <typename T>
void match_exchange(void* const* posts, unsigned participants) {
  bool all_equal = true;
  const T first = static_cast<MatchPost<T>*>(posts[__builtin_ctz(participants)])->value;
  for (unsigned m = participants; m != 0; m &= m - 1) {
    auto* p = static_cast<MatchPost<T>*>(posts[__builtin_ctz(m)]);
    all_equal = all_equal && p->value == first;
    p->result = 0;
    for (unsigned n = participants; n != 0; n &= n - 1)
      if (static_cast<MatchPost<T>*>(posts[__builtin_ctz(n)])->value == p->value)
        p->result |= 1u << __builtin_ctz(n);
  }
  for (unsigned m = participants; m != 0; m &= m - 1)
    static_cast<MatchPost<T>*>(posts[__builtin_ctz(m)])->all_equal = all_equal ? 1 : 0;
}

inline void no_exchange(void* const*, unsigned) {}

}  // namespace detail
}  // namespace rl::emu

// ---- CUDA warp intrinsics ---------------------------------------------------

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  rl::emu::detail::warp_collective(mask, &rl::emu::detail::no_exchange, nullptr);
}

inline unsigned __activemask() {
  return rl::emu::detail::active_mask();
}

template <typename T>
T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {
  const unsigned lane = rl::emu::lane_id();
  const unsigned w = static_cast<unsigned>(width);
  return rl::emu::detail::shfl_from(
      mask, var,
      rl::emu::detail::segment_base(lane, width) + (static_cast<unsigned>(src_lane) & (w - 1u)));
}

template <typename T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  const unsigned lane = rl::emu::lane_id();
  const int source = static_cast<int>(lane) - static_cast<int>(delta & 31u);
  const bool outside = source < static_cast<int>(rl::emu::detail::segment_base(lane, width));
  return rl::emu::detail::shfl_from(mask, var, outside ? lane : static_cast<unsigned>(source));
}

template <typename T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  const unsigned lane = rl::emu::lane_id();
  const unsigned source = lane + (delta & 31u);
  const bool outside =
      source > rl::emu::detail::segment_base(lane, width) + static_cast<unsigned>(width) - 1u;
  return rl::emu::detail::shfl_from(mask, var, outside ? lane : source);
}

template <typename T>
T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {
  const unsigned lane = rl::emu::lane_id();
  const unsigned source = lane ^ (static_cast<unsigned>(lane_mask) & 31u);
  const bool outside =
      source > rl::emu::detail::segment_base(lane, width) + static_cast<unsigned>(width) - 1u;
  return rl::emu::detail::shfl_from(mask, var, outside ? lane : source);
}

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  rl::emu::detail::BallotPost post{predicate != 0 ? 1u << rl::emu::lane_id() : 0u, 0u, 0u};
  rl::emu::detail::warp_collective(mask, &rl::emu::detail::ballot_exchange, &post);
  return post.result;
}

inline int __any_sync(unsigned mask, int predicate) {
  return __ballot_sync(mask, predicate) != 0 ? 1 : 0;
}

inline int __all_sync(unsigned mask, int predicate) {
  rl::emu::detail::BallotPost post{predicate != 0 ? 1u << rl::emu::lane_id() : 0u, 0u, 0u};
  rl::emu::detail::warp_collective(mask, &rl::emu::detail::ballot_exchange, &post);
  return post.result == post.participants ? 1 : 0;
}

inline unsigned __reduce_add_sync(unsigned mask, unsigned value) {
  return rl::emu::detail::warp_reduce<unsigned, rl::emu::detail::WrapAdd>(mask, value);
}
inline int __reduce_add_sync(unsigned mask, int value) {
  return rl::emu::detail::warp_reduce<int, rl::emu::detail::WrapAdd>(mask, value);
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned value) {
  return rl::emu::detail::warp_reduce<unsigned, rl::emu::detail::Min>(mask, value);
}
inline int __reduce_min_sync(unsigned mask, int value) {
  return rl::emu::detail::warp_reduce<int, rl::emu::detail::Min>(mask, value);
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  return rl::emu::detail::warp_reduce<unsigned, rl::emu::detail::Max>(mask, value);
}
inline int __reduce_max_sync(unsigned mask, int value) {
  return rl::emu::detail::warp_reduce<int, rl::emu::detail::Max>(mask, value);
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned value) {
  return rl::emu::detail::warp_reduce<unsigned, rl::emu::detail::And>(mask, value);
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned value) {
  return rl::emu::detail::warp_reduce<unsigned, rl::emu::detail::Or>(mask, value);
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned value) {
  return rl::emu::detail::warp_reduce<unsigned, rl::emu::detail::Xor>(mask, value);
}

template <typename T>
unsigned __match_any_sync(unsigned mask, T value) {
  rl::emu::detail::MatchPost<T> post{value, 0u, 0};
  rl::emu::detail::warp_collective(mask, &rl::emu::detail::match_exchange<T>, &post);
  return post.result;
}

template <typename T>
unsigned __match_all_sync(unsigned mask, T value, int* pred) {
  rl::emu::detail::MatchPost<T> post{value, 0u, 0};
  const unsigned participants =
      rl::emu::detail::warp_collective(mask, &rl::emu::detail::match_exchange<T>, &post);
  *pred = post.all_equal;
  return post.all_equal != 0 ? participants : 0u;
}
