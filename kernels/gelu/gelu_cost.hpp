// GELU cost model and shapes: FLOPs per element of each form, bytes moved
// (a pure stream), and the shapes of each size preset.
#pragma once

#include "gelu/gelu_forms.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/cost.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rl::gelu {

// FLOPs per element: the arithmetic of the formula as written, a
// transcendental call counts 1.
//   tanh: 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3)))
//         x^3 (2 mul), *0.044715, +x, *sqrt(2/pi), tanh, 1+, 0.5*x, *(...)  = 9
//   erf:  0.5*x*(1 + erf(x/sqrt(2)))
//         *(1/sqrt2), erf, 1+, 0.5*x, *(...)                                 = 5
inline constexpr double flops_per_element(Form form) {
  return form == Form::tanh ? 9.0 : 5.0;
}

// bytes_min = n reads + n writes.  Every rung moves exactly that
// (bytes_model = bytes_min): nothing is re-read, nothing is spilled to memory.
inline roofline::Cost cost(Form form, const Shape& shape, std::size_t element_bytes) {
  const auto n = static_cast<double>(shape.at("n"));
  const double bytes = 2.0 * n * static_cast<double>(element_bytes);
  return {.flops = flops_per_element(form) * n,
          .bytes_min = bytes,
          .bytes_model = bytes,
          .unit = roofline::ComputeUnit::fp32};
}

// What the counters check (issue 28, docs/counters.md), for the vector rungs
// (gelu_vec128.cu): each full 16-byte vector is one rl::load128 of x and one
// rl::store128 of y, so where n is a whole number of vectors every element
// goes through them and
//   bytes_l2_load = bytes_l2_store = n sizeof(T).
// Otherwise the last n % (16 / sizeof(T)) elements go through plain scalar
// accesses, which the emulator cannot count: nothing is declared.
inline roofline::Cost declare_vec128_stream(roofline::Cost c, const Shape& shape,
                                            std::size_t element_bytes) {
  const std::int64_t n = shape.at("n");
  if (n % static_cast<std::int64_t>(16 / element_bytes) != 0) return c;
  c.bytes_l2_load = c.bytes_l2_store = static_cast<double>(n) * static_cast<double>(element_bytes);
  return c;
}

inline constexpr std::int64_t kLargeArrayBytes = std::int64_t{1} << 30;

// small: odd, so the vector rungs run their scalar tail (emulator-sized).
// large: 1 GiB per array (x and y), as the ceilings use: far beyond any L2,
// so the timing measures HBM, and the dirty lines the L2 flush leaves (up to
// the L2's size, written back inside the timed kernel) stay a few percent of
// the traffic.
inline std::vector<Shape> shapes(SizePreset preset, std::size_t element_bytes) {
  switch (preset) {
    case SizePreset::small:
      return {Shape{{{"n", 4097}}}};
    case SizePreset::medium:
      return {Shape{{{"n", (std::int64_t{1} << 22) + 3}}}};
    case SizePreset::large:
      return {Shape{{{"n", kLargeArrayBytes / static_cast<std::int64_t>(element_bytes)}}}};
  }
  return {};
}

}  // namespace rl::gelu
