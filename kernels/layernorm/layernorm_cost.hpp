// LayerNorm cost model and shapes: FLOPs, bytes_min, the DRAM traffic of a
// rung that sweeps its row several times (judged on an assumed machine), and
// the shapes of each size preset.
#pragma once

#include "rl/registry.hpp"
#include "rl/roofline/cost.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rl::layernorm {

// ---------------------------------------------------------------- cost model
//
// FLOPs per row, the arithmetic of the formula as written (sqrt counts 1):
//   mean: C adds + 1 div;  var: C x (sub, mul, add) + 1 div;
//   rstd: add eps, sqrt, reciprocal;  y: C x (sub, mul, mul, add)
//   = 8C + 5.
//
// bytes_min: x read once, y written once, weight and bias read once, mean and
// rstd written once.
//
// bytes_model: what each rung moves from DRAM.  A rung that reads its row
// several times gets the re-reads from cache only while the rows in flight
// fit there.  Assumed machine for that judgement (the cost model must not
// depend on the GPU that happens to run it): an H100 SXM, 132 SMs x 2048
// resident threads, 50 MB of L2 (NVIDIA H100 Tensor Core GPU Architecture
// whitepaper, datasheet figures).  Weight and bias are shared by all rows and
// stay in L2: counted once.
inline constexpr double kAssumedResidentThreads = 132.0 * 2048.0;
inline constexpr double kAssumedCacheBytes = 50e6;

struct Dims {
  double rows;
  double C;
  double element_bytes;
};

inline Dims dims(const Shape& shape, std::size_t element_bytes) {
  return {static_cast<double>(shape.at("rows")), static_cast<double>(shape.at("C")),
          static_cast<double>(element_bytes)};
}

// DRAM reads of x for a rung that sweeps its row `passes` times with
// `threads_per_row` threads on each row.
inline double x_read_bytes(const Dims& d, int passes, double threads_per_row) {
  const double row_bytes = d.C * d.element_bytes;
  const double rows_in_flight = std::min(d.rows, kAssumedResidentThreads / threads_per_row);
  const bool rereads_hit_cache = rows_in_flight * row_bytes <= kAssumedCacheBytes;
  return (rereads_hit_cache ? 1 : passes) * d.rows * row_bytes;
}

// The compulsory traffic except the reads of x.
inline double bytes_except_x(const Dims& d) {
  return d.rows * d.C * d.element_bytes   // y
         + 2.0 * d.C * d.element_bytes    // weight, bias
         + 2.0 * d.rows * sizeof(float);  // mean, rstd
}

inline roofline::Cost cost(const Dims& d, double bytes_model) {
  return {.flops = d.rows * (8.0 * d.C + 5.0),
          .bytes_min = d.rows * d.C * d.element_bytes + bytes_except_x(d),
          .bytes_model = bytes_model,
          .unit = roofline::ComputeUnit::fp32};
}

// ---------------------------------------------------------------- shapes
//
// small: odd row counts and a C that is not a multiple of the vector width
// (emulator-sized).  large: C in {768, 1024, 4096, 8192, 12288} with enough
// rows for 1 GiB per array (x and y), as the ceilings use: far beyond L2, so
// the timing measures HBM, and the dirty lines the L2 flush leaves behind
// stay a few percent of the traffic.
inline constexpr std::int64_t kLargeArrayBytes = std::int64_t{1} << 30;

inline std::vector<Shape> shapes(SizePreset preset, std::size_t element_bytes,
                                 std::int64_t min_C = 0) {
  std::vector<Shape> out;
  auto add = [&](std::int64_t rows, std::int64_t C) {
    if (C >= min_C) out.push_back(Shape{{{"rows", rows}, {"C", C}}});
  };
  switch (preset) {
    case SizePreset::small:
      add(37, 768);
      add(9, 4100);
      break;
    case SizePreset::medium:
      add(4096, 768);
      add(1024, 4096);
      break;
    case SizePreset::large:
      for (std::int64_t C : {768, 1024, 4096, 8192, 12288}) {
        const std::int64_t row_bytes = C * static_cast<std::int64_t>(element_bytes);
        add((kLargeArrayBytes + row_bytes - 1) / row_bytes, C);
      }
      break;
  }
  return out;
}

}  // namespace rl::layernorm
