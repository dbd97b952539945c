// Host-side loops over all cores: drawing a workload's inputs, its float64
// reference and error bounds, and the comparison with the kernel's output.
// At the large preset these are 2^28..2^29 elements, and on one core they took
// 20-70 s per instance on an H200 node whose kernel runs in about 1 ms.
//
// Results never depend on the number of threads: the work is cut into chunks
// of a fixed size, each chunk computes the same values whichever thread runs
// it, and the threads only decide who computes which chunk.  Inputs drawn
// with draw_in_chunks use one SeededRng stream per chunk (stream_seed below).
#pragma once

#include "rl/device_buffer.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace rl {

// More threads than this stop paying: the loops stream a few bytes per
// element through memory.
inline constexpr unsigned kMaxHostThreads = 64;

// RL_HOST_THREADS when set (1 = serial), else the hardware's threads capped at
// kMaxHostThreads.  Read on every call, so a test can change it.
inline unsigned host_threads() {
  if (const char* env = std::getenv("RL_HOST_THREADS"); env != nullptr) {
    const std::string_view text(env);
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value == 0)
      throw std::invalid_argument("RL_HOST_THREADS must be a whole number >= 1, got '" +
                                  std::string(text) + "'");
    return value;
  }
  return std::clamp(std::thread::hardware_concurrency(), 1u, kMaxHostThreads);
}

// Calls fn(begin, end) once for each chunk [k * chunk, min(n, (k + 1) * chunk))
// of [0, n), on up to host_threads() threads (the caller's among them).  fn
// must only write what its chunk owns.  When chunks throw, the exception of
// the lowest-numbered one is rethrown here, as a serial loop would throw it:
// every chunk below it still runs, the chunks above it may be skipped.
template <typename Fn>
void parallel_chunks(std::size_t n, std::size_t chunk, Fn&& fn) {
  if (n == 0) return;
  if (chunk == 0) throw std::invalid_argument("parallel_chunks: chunk must be > 0");
  const std::size_t chunks = (n - 1) / chunk + 1;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failed{chunks};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto work = [&] {
    // Chunks are handed out in order, so once one is past the lowest failure
    // so is every later one.
    for (std::size_t k = next++; k < chunks && k < first_failed; k = next++) {
      try {
        fn(k * chunk, std::min(n, (k + 1) * chunk));
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (k < first_failed) {
          first_failed = k;
          error = std::current_exception();
        }
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(host_threads(), chunks);
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
  }  // the jthreads join here
  if (error) std::rethrow_exception(error);
}

// Elements per chunk for loops whose results do not depend on the chunking
// (the comparison, references computed from stored inputs): enough work per
// chunk to hide the hand-out, small enough to balance the threads.
inline constexpr std::size_t kLoopChunk = std::size_t{1} << 16;

// Elements per SeededRng stream in draw_in_chunks: part of the inputs'
// definition (changing it changes every drawn input), not a tuning knob.
inline constexpr std::size_t kDrawChunk = std::size_t{1} << 16;

// Calls draw(rng, i) for every i in [0, n) in order within each chunk of
// kDrawChunk elements; chunk k draws from
// SeededRng(SeededRng::stream_seed(seed, k)).
template <typename Draw>
void draw_in_chunks(std::size_t n, std::uint64_t seed, Draw&& draw) {
  parallel_chunks(n, kDrawChunk, [&](std::size_t begin, std::size_t end) {
    SeededRng rng(SeededRng::stream_seed(seed, begin / kDrawChunk));
    for (std::size_t i = begin; i < end; ++i) draw(rng, i);
  });
}

}  // namespace rl
