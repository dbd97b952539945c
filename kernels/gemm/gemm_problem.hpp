// GEMM: the problem every rung solves, its storage types and its shapes.
//
//   C = A * B,   A: M x K, B: K x N, C: M x N, all row-major with leading
//   dimensions lda, ldb, ldc (the BLAS convention; the workload passes
//   lda = K, ldb = N, ldc = N).  Any M, N, K >= 1: every rung handles the
//   tails itself, no padding.  A and B in a storage type T: float (the FP32
//   SIMT rungs, and TF32, whose kernels round fp32 inputs to tf32 as they
//   read them), __half, __nv_bfloat16 or __nv_fp8_e4m3 (tensor-core rungs);
//   C in fp32.
//
// Indices are 32-bit in the kernels: the workload refuses a problem whose A,
// B or C holds 2^31 elements or more (8192^2 is 2^26).
//
// The rungs, in ladder order, are listed in README.md here; the other
// headers: gemm_cost.hpp (the cost model), gemm_exact_check.hpp (validation
// exact by construction on integer inputs), gemm_reference.hpp (the float64
// reference and its error bound, for the timed inputs), gemm_storage.hpp (the
// storage types' conversions, which kernel code includes without this header),
// gemm_launch.hpp (the launcher interface),
// gemm_workload.hpp (the workload and the record builder), gemm_tiles.hpp and
// gemm_swizzle.hpp (device-side tile loaders and shared-memory layouts).
#pragma once

#include "gemm/gemm_storage.hpp"  // the storage types (float, __half, __nv_bfloat16, __nv_fp8_e4m3)
#include "rl/registry.hpp"

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace rl::gemm {

struct Dims {
  std::int64_t M;
  std::int64_t N;
  std::int64_t K;
};

inline Dims dims(const Shape& shape) {
  return {shape.at("M"), shape.at("N"), shape.at("K")};
}

inline Shape make_shape(std::int64_t M, std::int64_t N, std::int64_t K) {
  return Shape{{{"M", M}, {"N", N}, {"K", K}}};
}

// A row of n elements padded to a multiple of `multiple` elements: the
// leading dimension of a rung whose loads need aligned rows (TMA's 16-byte
// pitch; RecordSpec::ld_multiple).
inline std::int64_t padded_ld(std::int64_t n, int multiple) {
  if (multiple < 1) throw std::invalid_argument("gemm: ld_multiple must be >= 1");
  return (n + multiple - 1) / multiple * multiple;
}

// ---------------------------------------------------------------- shapes
//
// small: what the emulator runs in the main job, odd and square.
// medium: a moderate GPU run (seconds), an odd square among them.
// large: square 1024 to 8192, and transformer GEMMs: the GPT-2 MLP (8192
// tokens, 768 -> 3072), the Llama-7B MLP (4096 tokens, 4096 -> 11008) and a
// skinny decode step (16 tokens).  Every rung lists every shape; one that
// cannot run a shape refuses it with the reason (KernelRecord::refuse_shape),
// so the ladder table shows it refused, never silently missing.
inline std::vector<Shape> shapes(SizePreset preset) {
  switch (preset) {
    case SizePreset::small:
      return {make_shape(127, 129, 65), make_shape(256, 256, 256)};
    case SizePreset::medium:
      return {make_shape(1024, 1024, 1024), make_shape(1023, 1025, 1021),
              make_shape(2048, 768, 768)};
    case SizePreset::large: {
      std::vector<Shape> out;
      for (const Dims d : {Dims{1024, 1024, 1024}, Dims{2048, 2048, 2048}, Dims{4096, 4096, 4096},
                           Dims{8192, 8192, 8192}, Dims{8192, 3072, 768}, Dims{4096, 11008, 4096},
                           Dims{16, 4096, 4096}})
        out.push_back(make_shape(d.M, d.N, d.K));
      return out;
    }
  }
  return {};
}

}  // namespace rl::gemm
