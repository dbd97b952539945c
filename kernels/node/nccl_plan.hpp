// The arithmetic of the NCCL collective records (nccl_collectives.cpp), kept
// free of CUDA and NCCL so a host-only unit test checks it: bus factors, the
// size ladder, how a rank's buffers are laid out, the integer-valued inputs
// and the exact expected outputs.
//
// Sizes follow nccl-tests: `bytes` is its "size", the larger of one rank's
// two buffers (all_gather: the gathered output; reduce_scatter: the input it
// scatters; alltoall: either buffer; all_reduce, broadcast: either).  The
// chunked collectives split it evenly over the ranks.
#pragma once

#include "rl/device_buffer.hpp"  // SeededRng

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rl::nccl {

enum class Collective { all_reduce, all_gather, reduce_scatter, alltoall, broadcast };

inline std::string_view collective_name(Collective op) {
  switch (op) {
    case Collective::all_reduce:
      return "all_reduce";
    case Collective::all_gather:
      return "all_gather";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::alltoall:
      return "alltoall";
    case Collective::broadcast:
      return "broadcast";
  }
  return "?";
}

// nccl-tests' busbw = algbw x this factor (its doc/PERFORMANCE.md): the share
// of the data each rank's link must carry for the collective, whatever the
// algorithm.  all_reduce is a reduce-scatter then an all-gather, 2(n-1)/n;
// each half alone, and alltoall, move (n-1)/n; broadcast's root sends all of
// it, 1.  Fewer than one rank counts as one.
inline double bus_factor(Collective op, int ranks) {
  const double n = ranks < 1 ? 1.0 : static_cast<double>(ranks);
  switch (op) {
    case Collective::all_reduce:
      return 2.0 * (n - 1.0) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::alltoall:
      return (n - 1.0) / n;
    case Collective::broadcast:
      return 1.0;
  }
  return 0.0;
}

// The largest size of each preset: small 1 MiB (a quick pass that still
// shows the latency end), medium 256 MiB, large 1 GiB (well past the size
// where NVLink busbw levels off: 1 GiB per rank is also where nccl-tests
// users usually stop with -e 1G).
inline constexpr std::int64_t kSmallMaxBytes = std::int64_t{1} << 20;
inline constexpr std::int64_t kMediumMaxBytes = std::int64_t{1} << 28;
inline constexpr std::int64_t kLargeMaxBytes = std::int64_t{1} << 30;

// nccl-tests' sweep: 8 B, then x2 up to max_bytes (included when it is on the
// ladder).  8 B is two float32.
inline std::vector<std::int64_t> size_ladder(std::int64_t max_bytes) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t b = 8; b <= max_bytes; b *= 2) sizes.push_back(b);
  return sizes;
}

// One rank's buffers, in float32 elements.  Out of place a rank has an input
// and an output buffer; in place one buffer of `count` elements, the input
// at in_offset and the output at out_offset inside it (nccl-tests' in-place
// layouts: all_gather's input is the rank's own slot of the output,
// reduce_scatter's output the rank's own slot of the input).
struct RankLayout {
  std::size_t count = 0;  // bytes / 4: nccl-tests' size in elements
  std::size_t chunk = 0;  // count / ranks for the chunked collectives, else count
  std::size_t input_elements = 0;
  std::size_t output_elements = 0;
  std::size_t in_offset = 0;   // in place only
  std::size_t out_offset = 0;  // in place only
};

inline bool is_chunked(Collective op) {
  return op == Collective::all_gather || op == Collective::reduce_scatter ||
         op == Collective::alltoall;
}

inline RankLayout rank_layout(Collective op, std::int64_t bytes, int ranks, int rank) {
  RankLayout l;
  l.count = static_cast<std::size_t>(bytes) / sizeof(float);
  l.chunk = is_chunked(op) && ranks > 0 ? l.count / static_cast<std::size_t>(ranks) : l.count;
  l.input_elements = op == Collective::all_gather ? l.chunk : l.count;
  l.output_elements = op == Collective::reduce_scatter ? l.chunk : l.count;
  const std::size_t own_slot = static_cast<std::size_t>(rank) * l.chunk;
  l.in_offset = op == Collective::all_gather ? own_slot : 0;
  l.out_offset = op == Collective::reduce_scatter ? own_slot : 0;
  return l;
}

// Device memory of one rank's buffers (every rank holds the same); NCCL's own
// buffers are not counted (the library sizes them).
inline std::size_t rank_buffer_bytes(Collective op, std::int64_t bytes, bool in_place, int ranks) {
  const RankLayout l = rank_layout(op, bytes, ranks, 0);
  return (in_place ? l.count : l.input_elements + l.output_elements) * sizeof(float);
}

// Why the records cannot take this shape with this many ranks, or nullopt.
inline std::optional<std::string> shape_refusal(Collective op, std::int64_t bytes, bool in_place,
                                                int ranks) {
  const std::string size = "bytes=" + std::to_string(bytes);
  if (bytes <= 0 || bytes % static_cast<std::int64_t>(sizeof(float)) != 0)
    return size + " is not a whole number of float32 elements";
  if (is_chunked(op) && ranks > 1 && (bytes / 4) % ranks != 0)
    return size + " does not split into " + std::to_string(ranks) +
           " equal float32 chunks, one per rank";
  // ncclSend and ncclRecv on one buffer race (a chunk may arrive before the
  // same slot has been sent); nccl-tests runs it but does not check it.
  if (op == Collective::alltoall && in_place)
    return "in-place alltoall: send and receive on one buffer race, so it cannot be checked";
  return std::nullopt;
}

// "2.28.9" from ncclGetVersion's code (NCCL_VERSION: X*1000+Y*100+Z up to
// 2.8, X*10000+Y*100+Z after).
inline std::string version_text(int code) {
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

// Rank `rank`'s input element i: an integer in [-64, 63], so every sum of up
// to 2^17 of them is exact in float32 and the outputs are compared exactly.
// A hash of (seed, rank, i), so a chunk from the wrong rank or the wrong
// offset does not match by accident.
inline float input_value(std::uint64_t seed, int rank, std::size_t i) {
  const std::uint64_t key = seed ^ (static_cast<std::uint64_t>(rank) << 48) ^ i;
  return static_cast<float>(static_cast<int>(SeededRng(key).next_u64() >> 57) - 64);
}

// What rank `rank` must hold at output element j (broadcast's root is rank 0).
inline double expected_output(Collective op, std::uint64_t seed, int ranks, int rank, std::size_t j,
                              const RankLayout& l) {
  double sum = 0;
  switch (op) {
    case Collective::all_reduce:
      for (int r = 0; r < ranks; ++r) sum += input_value(seed, r, j);
      return sum;
    case Collective::reduce_scatter:
      for (int r = 0; r < ranks; ++r)
        sum += input_value(seed, r, static_cast<std::size_t>(rank) * l.chunk + j);
      return sum;
    case Collective::all_gather:  // slot p holds rank p's input
      return input_value(seed, static_cast<int>(j / l.chunk), j % l.chunk);
    case Collective::alltoall:  // slot p holds what rank p sent to this rank
      return input_value(seed, static_cast<int>(j / l.chunk),
                         static_cast<std::size_t>(rank) * l.chunk + j % l.chunk);
    case Collective::broadcast:
      return input_value(seed, 0, j);
  }
  return 0;
}

}  // namespace rl::nccl
