// Attention forward, O = softmax(Q·Kᵀ/√d + mask)·V: the problem every
// variant solves, its shapes and the compute unit a storage type is charged to.
//
// Q, K, V and O are tensors of one storage type T (float, __nv_bfloat16 or
// __half; every variant computes in fp32 and stores O as T) laid out
// [B, H, N, d] (contiguous): head (b, h) is an N×d row-major matrix at offset
// (b·H + h)·N·d.  With the causal mask, query i attends to keys j <= i only.
//
// The variants, in ladder order, are listed in README.md here.  A variant is
// one record: make_record<T>(RecordSpec<T>{...}) (attention_workload.hpp)
// with its launcher (a function of Args<T>, attention_launch.hpp), its cost
// model (attention_cost.hpp) and its error model (attention_error_model.hpp);
// the workload, the float64 reference (attention_reference.hpp), the
// tolerance and the memory footprint follow from those.
#pragma once

#include "rl/cuda.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/cost.hpp"

#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace rl::attention {

// ---------------------------------------------------------------- shape

struct Dims {
  std::int64_t B, H, N, d;
  bool causal;

  std::int64_t heads() const { return B * H; }
  std::int64_t tensor_elements() const { return B * H * N * d; }  // one of Q, K, V, O
  std::int64_t score_elements() const { return B * H * N * N; }   // S or P
};

inline Dims dims(const Shape& shape) {
  const Dims p{shape.at("B"), shape.at("H"), shape.at("N"), shape.at("d"), shape.at("causal") != 0};
  if (p.B < 1 || p.H < 1 || p.N < 1 || p.d < 1 || shape.at("causal") < 0 || shape.at("causal") > 1)
    throw std::invalid_argument("attention: B, H, N, d must be >= 1 and causal 0 or 1, got " +
                                shape.to_string());
  return p;
}

inline Shape shape_of(std::int64_t B, std::int64_t H, std::int64_t N, std::int64_t d, bool causal) {
  return Shape{{{"B", B}, {"H", H}, {"N", N}, {"d", d}, {"causal", causal ? 1 : 0}}};
}

// small: the emulator's main-job cases (a few seconds in all): a block-sized
// N with and without the mask, an N one past a tile (ragged last tiles), and
// the 128 head dim.
// medium: a quick GPU look, one head dim each way.
// large: the FlashAttention papers' convention, B·N = 16k tokens and
// H·d = 2048, d in {64, 128}, N from 512 to 16k, causal and not.
inline std::vector<Shape> shapes(SizePreset preset) {
  std::vector<Shape> out;
  switch (preset) {
    case SizePreset::small:
      out = {shape_of(1, 2, 64, 64, false), shape_of(1, 2, 64, 64, true),
             shape_of(1, 2, 129, 64, true), shape_of(1, 1, 65, 128, false)};
      break;
    case SizePreset::medium:
      out = {shape_of(4, 16, 1024, 64, false), shape_of(4, 16, 1024, 64, true),
             shape_of(4, 8, 1024, 128, true)};
      break;
    case SizePreset::large:
      for (const std::int64_t d : {64, 128})
        for (const std::int64_t N : {512, 1024, 2048, 4096, 8192, 16384})
          for (const bool causal : {false, true})
            out.push_back(shape_of(16384 / N, 2048 / d, N, d, causal));
      break;
  }
  return out;
}

// ---------------------------------------------------------------- storage types
//
// The compute unit a variant in storage type T is charged to, by default: the
// FP32 pipe for fp32, the tensor cores for bf16 and fp16 (what the flash
// kernel and the libraries run on).
template <typename T>
constexpr roofline::ComputeUnit default_compute_unit() {
  if constexpr (std::is_same_v<T, float>)
    return roofline::ComputeUnit::fp32;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return roofline::ComputeUnit::tc_bf16;
  else
    return roofline::ComputeUnit::tc_fp16;
}

}  // namespace rl::attention
