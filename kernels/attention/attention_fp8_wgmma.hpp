// The e4m3 wgmmas of attention_wgmma_fp8_sm90a.cu (sm_90a; device code):
// S = Q·Kᵀ as m64n128k32 with both operands in shared memory, and O += P·V
// as m64nDk32 (D = 64 or 128) with A = P from registers.  rl/ptx.hpp has
// only the m64n256k32 shared-memory form (the GEMM's); these three belong
// beside it in rl/ptx_sm90_wgmma.hpp and live here until they move (this
// helper does not own that file).  Same contract as rl::ptx's wrappers:
// inline PTX on sm_90a, the emulator's wgmma (exact products, summed in
// double, rounded once) under RL_EMULATE, a trap elsewhere.
//
// The fp8 A fragment from registers ("Register Fragments", the m64nNk32
// figure of matrix A; rl/emu/hopper.hpp's a_fragment_row/col): thread t
// holds 16 bytes, four to a register, low byte first; register i holds row
// r + 8 (i % 2) (r = 16 (t / 32) + (t % 32) / 4) and the four k columns
// 4 (t % 4) .. + 3, plus 16 for registers 2 and 3.  No transpose immediates
// exist for 8-bit types: B (K of S, Vᵀ of P·V) is K-major in shared memory.
#pragma once

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

#include <cstdint>

#if defined(RL_EMULATE)
#include "rl/emu/hopper.hpp"
#endif

namespace rl::attention::fp8 {

#if defined(__CUDACC__) || defined(RL_EMULATE)

#if defined(RL_EMULATE)
inline void emulate_e4m3_wgmma(unsigned n, float* d, const std::uint32_t* a_registers,
                               std::uint64_t desc_a, std::uint64_t desc_b, int accumulate) {
  rl::ptx::emu_detail::require_wgmma("wgmma.mma_async.k32.e4m3 (attention)");
  rl::emu::hopper::WgmmaOp op{
      rl::emu::hopper::WgmmaInput::e4m3, n, desc_a, desc_b, accumulate != 0, 1, 1, false, false};
  op.a_registers = a_registers;
  rl::emu::hopper::wgmma(op, d);
}
#endif

#define RL_ATTENTION_FP8_D64_REGS                                                               \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
  "%56, %57, %58, %59, %60, %61, %62, %63}"
#define RL_ATTENTION_FP8_D32_REGS                                                               \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define RL_ATTENTION_FP8_D8(d, i)                                                             \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define RL_ATTENTION_FP8_D32(d)                                                     \
  RL_ATTENTION_FP8_D8(d, 0), RL_ATTENTION_FP8_D8(d, 8), RL_ATTENTION_FP8_D8(d, 16), \
      RL_ATTENTION_FP8_D8(d, 24)

// wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 d, a-desc, b-desc,
// scale-d, 1, 1: S(64 x 128) += Q(64 x 32)·K(128 x 32)ᵀ, both K-major.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3([[maybe_unused]] float (&d)[64],
                                                      [[maybe_unused]] std::uint64_t desc_a,
                                                      [[maybe_unused]] std::uint64_t desc_b,
                                                      [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  emulate_e4m3_wgmma(128, d, nullptr, desc_a, desc_b, accumulate);
#elif defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " RL_ATTENTION_FP8_D64_REGS
      ", %64, %65, p, 1, 1;\n}\n"
      : RL_ATTENTION_FP8_D32(d), RL_ATTENTION_FP8_D32((d + 32))
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
#else
  __trap();
#endif
}

// The same with A from registers (the fragment above), N = 128 or 64:
// O(64 x N) += P(64 x 32)·V(32 x N), B = Vᵀ K-major (N rows of 32 keys).
__device__ __forceinline__ void wgmma_m64n128k32_e4m3_rs(
    [[maybe_unused]] float (&d)[64], [[maybe_unused]] const std::uint32_t (&a)[4],
    [[maybe_unused]] std::uint64_t desc_b, [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  emulate_e4m3_wgmma(128, d, a, 0, desc_b, accumulate);
#elif defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " RL_ATTENTION_FP8_D64_REGS
      ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : RL_ATTENTION_FP8_D32(d), RL_ATTENTION_FP8_D32((d + 32))
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
#else
  __trap();
#endif
}

__device__ __forceinline__ void wgmma_m64n64k32_e4m3_rs(
    [[maybe_unused]] float (&d)[32], [[maybe_unused]] const std::uint32_t (&a)[4],
    [[maybe_unused]] std::uint64_t desc_b, [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  emulate_e4m3_wgmma(64, d, a, 0, desc_b, accumulate);
#elif defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 " RL_ATTENTION_FP8_D32_REGS
      ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : RL_ATTENTION_FP8_D32(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
#else
  __trap();
#endif
}

#undef RL_ATTENTION_FP8_D64_REGS
#undef RL_ATTENTION_FP8_D32_REGS
#undef RL_ATTENTION_FP8_D8
#undef RL_ATTENTION_FP8_D32

#endif  // __CUDACC__ || RL_EMULATE

}  // namespace rl::attention::fp8
