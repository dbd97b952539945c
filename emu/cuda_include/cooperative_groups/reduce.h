// <cooperative_groups/reduce.h> under the emulator: cg::reduce over a
// thread_block_tile with the function objects plus, less, greater, bit_and,
// bit_or, bit_xor (or any binary callable).
//
// One warp rendezvous per call (rl/emu/warp.hpp's collective): the last lane
// of the tile to arrive computes, for every lane, what the butterfly
//   for (offset = Size / 2; offset > 0; offset /= 2)
//     v = op(v, tile.shfl_xor(v, offset));
// gives it, so results are those of that shuffle sequence bit for bit (a
// lane that is absent contributes the partner's own value, as a shuffle from
// it would), independent of the schedule.  For a commutative op every lane
// gets the same value.  CUDA does not specify its combination order, so a
// GPU's float sum may differ in the last bits; integer results are exact.
#pragma once

#include <type_traits>

#include "cooperative_groups.h"

namespace cooperative_groups {

template <typename T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
// less / greater select the minimum / maximum (CUDA's definitions).
template <typename T>
struct less {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <typename T>
struct greater {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <typename T>
struct bit_and {
  T operator()(T a, T b) const { return a & b; }
};
template <typename T>
struct bit_or {
  T operator()(T a, T b) const { return a | b; }
};
template <typename T>
struct bit_xor {
  T operator()(T a, T b) const { return a ^ b; }
};

namespace details {

template <typename T, typename Op>
struct ReducePost {
  T value;
  T result;
  const Op* op;
};

template <unsigned Size, typename T, typename Op>
void tile_reduce_exchange(void* const* posts, unsigned participants) {
  const auto& op = *static_cast<ReducePost<T, Op>*>(posts[__builtin_ctz(participants)])->op;
  // Tiles are contiguous lane ranges; each present tile is reduced on its own.
  for (unsigned base = 0; base < 32U; base += Size) {
    const unsigned lanes = (Size == 32U ? 0xFFFFFFFFU : ((1U << Size) - 1U) << base);
    if ((participants & lanes) == 0U) continue;
    // Absent lanes hold a present lane's value; it is never read as a partner's.
    const T any_value =
        static_cast<ReducePost<T, Op>*>(posts[__builtin_ctz(participants & lanes)])->value;
    T values[Size];
    for (unsigned r = 0; r < Size; ++r) {
      const unsigned lane = base + r;
      values[r] = ((participants >> lane) & 1U) != 0U
                      ? static_cast<ReducePost<T, Op>*>(posts[lane])->value
                      : any_value;
    }
    for (unsigned offset = Size / 2U; offset > 0U; offset /= 2U) {
      T next[Size];
      for (unsigned r = 0; r < Size; ++r) {
        const unsigned partner = r ^ offset;
        const bool present = ((participants >> (base + partner)) & 1U) != 0U;
        next[r] = op(values[r], present ? values[partner] : values[r]);
      }
      for (unsigned r = 0; r < Size; ++r) values[r] = next[r];
    }
    for (unsigned r = 0; r < Size; ++r) {
      const unsigned lane = base + r;
      if (((participants >> lane) & 1U) != 0U)
        static_cast<ReducePost<T, Op>*>(posts[lane])->result = values[r];
    }
  }
}

}  // namespace details

template <unsigned int Size, typename ParentT, typename T, typename Op>
std::remove_cvref_t<T> reduce(const thread_block_tile<Size, ParentT>&, T&& value, Op&& op) {
  using Value = std::remove_cvref_t<T>;
  using Fn = std::remove_cvref_t<Op>;
  static_assert(std::is_trivially_copyable_v<Value>, "cg::reduce: values are trivially copyable");
  details::ReducePost<Value, Fn> post{value, value, &op};
  rl::emu::detail::warp_collective(details::tile_mask(Size),
                                   &details::tile_reduce_exchange<Size, Value, Fn>, &post);
  return post.result;
}

}  // namespace cooperative_groups
