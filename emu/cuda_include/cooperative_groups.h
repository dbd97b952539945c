// <cooperative_groups.h> for device code under the emulator (this folder is
// on the include path of emulator targets only; nvcc builds see CUDA's own).
//
// What is here, with CUDA's names, signatures and return types:
//   thread_block (this_thread_block()): sync, thread_rank, size/num_threads,
//     group_index, thread_index, dim_threads/group_dim;
//   thread_block_tile<N> (tiled_partition<N>(block or tile), N = 1..32, a
//     power of two): thread_rank, size/num_threads, meta_group_rank/size,
//     sync, shfl, shfl_up/down/xor, any/all/ballot, match_any/match_all;
//   thread_group (tiled_partition(block or tile, n), n = 1..32 a power of
//     two, checked when called): thread_rank, size/num_threads,
//     meta_group_rank/size, sync;
//   grid_group (this_grid()): the rank and size queries; is_valid() is
//     false (nothing is launched cooperatively here) and sync() does not
//     compile: the emulator's blocks never wait for each other, so a grid
//     barrier would deadlock.  Split the kernel at the barrier instead.
//   cluster_group (this_cluster(), sm_90): sync, barrier_arrive,
//     barrier_wait, block_rank, num_blocks, block_index, dim_blocks,
//     thread_rank, num_threads, dim_threads, map_shared_rank (the cluster
//     emulation of rl/emu/cluster.hpp; not query_shared_rank).
//   The free functions sync(g), thread_rank(g), group_size(g).
// Tile collectives are the warp intrinsics of rl/emu/warp.hpp over the
// tile's lanes (CUDA builds them the same way), so the rendezvous rules, the
// deadlock report and the schedules are those of __shfl_sync & co.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>

#include "rl/emu/arch.hpp"
#include "rl/emu/cluster.hpp"
#include "rl/emu/runtime.hpp"

namespace cooperative_groups {

namespace details {

template <typename T>
inline constexpr bool always_false = false;

// The lanes of the calling thread's tile of `size` threads (a power of two
// <= 32: tiles never straddle warps).
inline unsigned tile_mask(unsigned size) {
  if (size == 32U) return 0xFFFFFFFFU;
  return ((1U << size) - 1U) << (rl::emu::lane_id() & ~(size - 1U));
}

inline bool is_tile_size(unsigned size) {
  return size >= 1U && size <= 32U && (size & (size - 1U)) == 0U;
}

inline unsigned block_threads() {
  return blockDim.x * blockDim.y * blockDim.z;
}

}  // namespace details

class thread_block {
 public:
  static void sync() { __syncthreads(); }
  static unsigned int thread_rank() { return rl::emu::thread_rank(); }
  static unsigned int size() { return details::block_threads(); }
  static unsigned int num_threads() { return details::block_threads(); }
  static dim3 group_index() { return dim3(blockIdx); }
  static dim3 thread_index() { return dim3(threadIdx); }
  static dim3 dim_threads() { return blockDim; }
  static dim3 group_dim() { return blockDim; }
  static bool is_valid() { return true; }
};

inline thread_block this_thread_block() {
  return thread_block{};
}

template <unsigned int Size, typename ParentT = void>
class thread_block_tile {
  static_assert(Size >= 1U && Size <= 32U && (Size & (Size - 1U)) == 0U,
                "thread_block_tile: the size is a power of two from 1 to 32");

 public:
  // A tile of some parent converts to the parent-less tile, as in CUDA.
  template <typename OtherParent>
  thread_block_tile(
      const thread_block_tile<Size, OtherParent>& other)  // NOLINT: implicit as in CUDA
      : meta_rank_(other.meta_group_rank()), meta_size_(other.meta_group_size()) {}

  static unsigned int thread_rank() { return rl::emu::lane_id() & (Size - 1U); }
  static constexpr unsigned int size() { return Size; }
  static constexpr unsigned int num_threads() { return Size; }
  unsigned int meta_group_rank() const { return meta_rank_; }
  unsigned int meta_group_size() const { return meta_size_; }
  static void sync() { __syncwarp(details::tile_mask(Size)); }
  static bool is_valid() { return true; }

  template <typename T>
  T shfl(T var, int src_rank) const {
    return __shfl_sync(details::tile_mask(Size), var, src_rank, static_cast<int>(Size));
  }
  template <typename T>
  T shfl_up(T var, unsigned int delta) const {
    return __shfl_up_sync(details::tile_mask(Size), var, delta, static_cast<int>(Size));
  }
  template <typename T>
  T shfl_down(T var, unsigned int delta) const {
    return __shfl_down_sync(details::tile_mask(Size), var, delta, static_cast<int>(Size));
  }
  template <typename T>
  T shfl_xor(T var, unsigned int lane_mask) const {
    return __shfl_xor_sync(details::tile_mask(Size), var, static_cast<int>(lane_mask),
                           static_cast<int>(Size));
  }
  int any(int predicate) const { return __any_sync(details::tile_mask(Size), predicate); }
  int all(int predicate) const { return __all_sync(details::tile_mask(Size), predicate); }
  // Bit r is the tile's thread of rank r (the warp ballot shifted down).
  unsigned int ballot(int predicate) const {
    return __ballot_sync(details::tile_mask(Size), predicate) >> base_lane();
  }
  template <typename T>
  unsigned int match_any(T value) const {
    return __match_any_sync(details::tile_mask(Size), value) >> base_lane();
  }
  template <typename T>
  unsigned int match_all(T value, int& predicate) const {
    return __match_all_sync(details::tile_mask(Size), value, &predicate) >> base_lane();
  }

  // Made by tiled_partition only.
  thread_block_tile(unsigned meta_rank, unsigned meta_size)
      : meta_rank_(meta_rank), meta_size_(meta_size) {}

 private:
  static unsigned base_lane() { return Size == 32U ? 0U : rl::emu::lane_id() & ~(Size - 1U); }

  unsigned meta_rank_;
  unsigned meta_size_;
};

template <unsigned int Size>
thread_block_tile<Size, thread_block> tiled_partition(const thread_block& parent) {
  return {parent.thread_rank() / Size, (parent.size() + Size - 1U) / Size};
}

template <unsigned int Size, unsigned int ParentSize, typename GrandParent>
thread_block_tile<Size, thread_block_tile<ParentSize, GrandParent>> tiled_partition(
    const thread_block_tile<ParentSize, GrandParent>& parent) {
  static_assert(Size <= ParentSize, "tiled_partition: a tile is no larger than its parent");
  return {parent.thread_rank() / Size, ParentSize / Size};
}

// The group tiled_partition(parent, n) returns: a tile whose size is known
// only at run time.
class thread_group {
 public:
  template <unsigned int Size, typename ParentT>
  thread_group(const thread_block_tile<Size, ParentT>& tile)  // NOLINT: implicit as in CUDA
      : size_(Size), meta_rank_(tile.meta_group_rank()), meta_size_(tile.meta_group_size()) {}

  unsigned long long thread_rank() const { return rl::emu::lane_id() & (size_ - 1U); }
  unsigned long long size() const { return size_; }
  unsigned long long num_threads() const { return size_; }
  unsigned int meta_group_rank() const { return meta_rank_; }
  unsigned int meta_group_size() const { return meta_size_; }
  void sync() const { __syncwarp(details::tile_mask(size_)); }
  bool is_valid() const { return true; }

  thread_group(unsigned size, unsigned meta_rank, unsigned meta_size)
      : size_(size), meta_rank_(meta_rank), meta_size_(meta_size) {}

 private:
  unsigned size_;
  unsigned meta_rank_;
  unsigned meta_size_;
};

namespace details {
inline void require_tile_size(unsigned size) {
  if (!is_tile_size(size))
    throw std::invalid_argument(
        "cooperative_groups::tiled_partition(parent, n): n must be a power of two from 1 to 32 "
        "(CUDA's native tile sizes)");
}
}  // namespace details

inline thread_group tiled_partition(const thread_block& parent, unsigned int tile_size) {
  details::require_tile_size(tile_size);
  return {tile_size, parent.thread_rank() / tile_size,
          (parent.size() + tile_size - 1U) / tile_size};
}

inline thread_group tiled_partition(const thread_group& parent, unsigned int tile_size) {
  details::require_tile_size(tile_size);
  if (tile_size > parent.size())
    throw std::invalid_argument(
        "cooperative_groups::tiled_partition(parent, n): n is larger than the parent group");
  return {tile_size, static_cast<unsigned>(parent.thread_rank()) / tile_size,
          static_cast<unsigned>(parent.size()) / tile_size};
}

class grid_group {
 public:
  static unsigned long long block_rank() {
    return blockIdx.x + static_cast<unsigned long long>(gridDim.x) *
                            (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
  }
  static unsigned long long num_blocks() {
    return static_cast<unsigned long long>(gridDim.x) * gridDim.y * gridDim.z;
  }
  static unsigned long long thread_rank() {
    return block_rank() * details::block_threads() + rl::emu::thread_rank();
  }
  static unsigned long long size() { return num_blocks() * details::block_threads(); }
  static unsigned long long num_threads() { return size(); }
  static dim3 block_index() { return dim3(blockIdx); }
  static dim3 dim_blocks() { return gridDim; }
  static dim3 group_dim() { return gridDim; }
  static dim3 dim_threads() {
    return dim3(gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z);
  }
  // No kernel is launched cooperatively under the emulator.
  static bool is_valid() { return false; }
  template <typename Never = void>
  static void sync() {
    static_assert(details::always_false<Never>,
                  "cooperative_groups::grid_group::sync() is not emulated: the emulator's blocks "
                  "never wait for each other, so a grid barrier would deadlock; split the kernel "
                  "at the barrier");
  }
};

inline grid_group this_grid() {
  return grid_group{};
}

// The thread block cluster (a launch without a cluster shape: a cluster of
// one block).  sync() is barrier.cluster.arrive.release + wait.acquire.
class cluster_group {
 public:
  static void sync() {
    barrier_arrive();
    barrier_wait();
  }
  static void barrier_arrive() { rl::emu::cluster::barrier_arrive(true); }
  static void barrier_wait() { rl::emu::cluster::barrier_wait(); }
  static unsigned int block_rank() { return rl::emu::cluster::cta_rank(); }
  static unsigned int num_blocks() { return rl::emu::cluster::cta_count(); }
  static dim3 block_index() { return dim3(rl::emu::cluster::cta_id()); }
  static dim3 dim_blocks() { return dim3(rl::emu::cluster::shape()); }
  static unsigned int thread_rank() {
    return block_rank() * details::block_threads() + rl::emu::thread_rank();
  }
  static unsigned int num_threads() { return num_blocks() * details::block_threads(); }
  static unsigned int size() { return num_threads(); }
  static dim3 dim_threads() {
    const dim3 b = dim_blocks();
    return dim3(b.x * blockDim.x, b.y * blockDim.y, b.z * blockDim.z);
  }
  static bool is_valid() { return true; }
  // The same variable of shared memory in block `rank` of the cluster (mapa).
  template <typename T>
  static T* map_shared_rank(T* addr, unsigned int rank) {
    return static_cast<T*>(rl::emu::cluster::map_shared(addr, rank));
  }
};

// CUDA declares it for sm_90 and later only; below that the emulator refuses
// it with one line, as the rl::ptx cluster wrappers refuse their instructions.
inline cluster_group this_cluster() {
  if (!rl::emu::has_tma()) {
    const int cc = rl::emu::compute_capability();
    std::fprintf(stderr,
                 "cooperative_groups::this_cluster() needs compute capability 9.0 or later and "
                 "the emulator runs %d.%d: RL_EMU_CC=90, 100, 103, 120 or 121 emulates a device "
                 "with thread block clusters\n",
                 cc / 10, cc % 10);
    std::fflush(stderr);
    std::abort();
  }
  return cluster_group{};
}

template <typename Group>
void sync(const Group& group) {
  group.sync();
}
template <typename Group>
auto thread_rank(const Group& group) {
  return group.thread_rank();
}
template <typename Group>
auto group_size(const Group& group) {
  return group.size();
}

}  // namespace cooperative_groups
