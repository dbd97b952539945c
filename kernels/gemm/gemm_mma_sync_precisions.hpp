// The mma.sync rung's precisions (gemm_mma_sync_multistage.cu): per input
// type, its storage type, mma k depth, B's swizzle, the mma instruction, and
// whether its inputs are rounded to tf32 first.
#pragma once

#include "gemm/gemm_storage.hpp"  // the storage types, __nv_fp8_e4m3 included
#include "gemm/gemm_swizzle.hpp"
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

#include <cstdint>

namespace rl::gemm {

// kRoundToTf32: the fp32 inputs are rounded to tf32 once, in shared memory,
// when their stage has landed (round_own_chunks_to_tf32,
// gemm_mma_sync_staging.hpp).
struct MmaTf32 {
  using Storage = float;
  static constexpr int kMmaK = 8;
  static constexpr Swizzle kBSwizzle = Swizzle::tf32_b;
  static constexpr bool kRoundToTf32 = true;
  static __device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    ptx::mma_m16n8k8_tf32_f32(d, a, b, d);
  }
};
struct MmaF16 {
  using Storage = __half;
  static constexpr int kMmaK = 16;
  static constexpr Swizzle kBSwizzle = Swizzle::rows8;
  static constexpr bool kRoundToTf32 = false;
  static __device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    ptx::mma_m16n8k16_f16_f32(d, a, b, d);
  }
};
struct MmaBf16 {
  using Storage = __nv_bfloat16;
  static constexpr int kMmaK = 16;
  static constexpr Swizzle kBSwizzle = Swizzle::rows8;
  static constexpr bool kRoundToTf32 = false;
  static __device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    ptx::mma_m16n8k16_bf16_f32(d, a, b, d);
  }
};
struct MmaE4m3 {
  using Storage = __nv_fp8_e4m3;
  static constexpr int kMmaK = 32;
  static constexpr Swizzle kBSwizzle = Swizzle::fp8_b;
  static constexpr bool kRoundToTf32 = false;
  static __device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
    ptx::mma_m16n8k32_e4m3_f32(d, a, b, d);
  }
};

}  // namespace rl::gemm
