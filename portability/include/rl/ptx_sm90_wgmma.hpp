// wgmma.mma_async: warpgroup MMA with operands in shared memory (through
// matrix descriptors) or A in registers, its fence, commit and wait.
// sm_90a-only; a part of rl/ptx_sm90.hpp.
#pragma once

#if !defined(RL_PTX_SM90A)
#error "rl/ptx_sm90_wgmma.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>
#include <type_traits>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/hopper.hpp"
#endif

namespace rl::ptx {

// --- wgmma (warpgroup: 4 consecutive warps, 128 threads, warp 0's index a
// multiple of 4; every thread of the warpgroup executes each call) ----------

// wgmma.fence.sync.aligned: orders this warpgroup's prior register accesses
// (the accumulators) before the wgmma.mma_async that follow.  Needed before
// the first wgmma and whenever the accumulators were touched in between.
RL_PTX_FN void wgmma_fence() {
#if defined(RL_EMULATE)
  // Each wgmma reads its registers at issue: nothing to order.
  RL_PTX_REQUIRE_WGMMA("wgmma.fence");
#elif RL_PTX_SM90A
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.commit_group.sync.aligned: closes a group of this warpgroup's
// uncommitted wgmma.mma_async operations.
RL_PTX_FN void wgmma_commit_group() {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.commit_group");
  rl::emu::hopper::wgmma_commit_group();
#elif RL_PTX_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.wait_group.sync.aligned N: waits until at most N groups are pending;
// only then may the accumulators of the completed groups be read and their
// shared-memory operands be overwritten.  The emulator hands the results
// over here: until then the accumulators hold a NaN poison (and writing
// them is reported), so a read before the wait fails validation.
template <int N>
RL_PTX_FN void wgmma_wait_group() {
  static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes an immediate 0..7");
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.wait_group");
  rl::emu::hopper::wgmma_wait_group(N);
#elif RL_PTX_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// A compiler-only fence on the accumulator registers (no instruction): the
// compiler may not move their reads or writes across it, so epilogue reads
// stay after wgmma_wait_group and initialisation stays before wgmma_fence.
template <int N>
RL_PTX_FN void wgmma_fence_operand([[maybe_unused]] float (&d)[N]) {
#if defined(__CUDA_ARCH__) && !defined(RL_EMULATE)
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
#endif
}

// The same for s32 accumulators (integer wgmma).
template <int N>
RL_PTX_FN void wgmma_fence_operand([[maybe_unused]] std::int32_t (&d)[N]) {
#if defined(__CUDA_ARCH__) && !defined(RL_EMULATE)
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(d[i])::"memory");
#endif
}

// The register lists of the m64nNk16 f32 accumulators: thread t of the
// warpgroup holds, in d[4j .. 4j+3] for each 8-column block j,
// (r, 8j + c) (r, 8j + c + 1) (r + 8, 8j + c) (r + 8, 8j + c + 1) with
// r = 16 (t / 32) + (t % 32) / 4 and c = 2 (t % 4) ("Register Fragments").
#define RL_PTX_WGMMA_D64_REGS                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "  \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "  \
  "%56, %57, %58, %59, %60, %61, %62, %63}"
// The asm operands of 8, 64 or 128 accumulators, each through C ("+f" for
// f32, "+r" for s32).
#define RL_PTX_WGMMA_F32(x) "+f"(x)
#define RL_PTX_WGMMA_S32(x) "+r"(x)
#define RL_PTX_WGMMA_D8(C, d, i) \
  C(d[i]), C(d[i + 1]), C(d[i + 2]), C(d[i + 3]), C(d[i + 4]), C(d[i + 5]), C(d[i + 6]), C(d[i + 7])
#define RL_PTX_WGMMA_D64_OF(C, d)                                                      \
  RL_PTX_WGMMA_D8(C, d, 0), RL_PTX_WGMMA_D8(C, d, 8), RL_PTX_WGMMA_D8(C, d, 16),       \
      RL_PTX_WGMMA_D8(C, d, 24), RL_PTX_WGMMA_D8(C, d, 32), RL_PTX_WGMMA_D8(C, d, 40), \
      RL_PTX_WGMMA_D8(C, d, 48), RL_PTX_WGMMA_D8(C, d, 56)
#define RL_PTX_WGMMA_D64(d) RL_PTX_WGMMA_D64_OF(RL_PTX_WGMMA_F32, d)
#define RL_PTX_WGMMA_D128_REGS                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "    \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "     \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "     \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, " \
  "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "     \
  "%124, %125, %126, %127}"
// One m64n256 wgmma with both operands in shared memory, inside a wrapper
// whose parameters are d (128 accumulators), desc_a, desc_b and accumulate:
// the instruction, the constraint of its accumulators (RL_PTX_WGMMA_F32 or
// _S32), the immediate operands after scale-d (", 1, %131" ...) and the
// asm operands those name.
#define RL_PTX_WGMMA_SS_N256(instruction, C, immediates, ...)                   \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n" instruction        \
               " " RL_PTX_WGMMA_D128_REGS ", %128, %129, p" immediates ";\n}\n" \
               : RL_PTX_WGMMA_D64_OF(C, d), RL_PTX_WGMMA_D64_OF(C, (d + 64))    \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate)__VA_OPT__(, ) __VA_ARGS__)

// wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16}
//   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b
// D(64 x N, f32) = A(64 x 16) * B(16 x N) + (accumulate ? D : 0), A and B in
// shared memory through descriptors.  imm-trans-a = 0: A is K-major (a
// row-major M x K tile).  imm-trans-b = TransposeB: 0 for a K-major B (each
// of the N columns contiguous in K), 1 for an N-major B (a row-major K x N
// tile, what a row-major B matrix gives); the transpose exists only for
// 16-bit types.  Asynchronous: issue between wgmma_fence and
// wgmma_commit_group, read d only after wgmma_wait_group.
// T is __nv_bfloat16 or __half.
template <typename T, bool TransposeB>
RL_PTX_FN void wgmma_m64n128k16_f32([[maybe_unused]] float (&d)[64],
                                    [[maybe_unused]] std::uint64_t desc_a,
                                    [[maybe_unused]] std::uint64_t desc_b,
                                    [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n128k16");
  rl::emu::hopper::wgmma({std::is_same_v<T, __half> ? rl::emu::hopper::WgmmaInput::f16
                                                    : rl::emu::hopper::WgmmaInput::bf16,
                          128, desc_a, desc_b, accumulate != 0, 1, 1, false, TransposeB},
                         d);
#elif RL_PTX_SM90A
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " RL_PTX_WGMMA_D64_REGS
        ", %64, %65, p, 1, 1, 0, %67;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransposeB ? 1 : 0));
  } else {
    static_assert(std::is_same_v<T, __half>, "wgmma f16/bf16 only");
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " RL_PTX_WGMMA_D64_REGS
        ", %64, %65, p, 1, 1, 0, %67;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TransposeB ? 1 : 0));
  }
#else
  RL_PTX_UNSUPPORTED();
#endif
}

#if defined(RL_EMULATE)
// The emulation of an m64nNk16 wgmma with A from registers, 16-bit inputs.
template <typename T, bool TransposeB>
inline void emulate_wgmma_rs(unsigned n, float* d, const std::uint32_t (&a)[4],
                             std::uint64_t desc_b, int accumulate) {
  rl::emu::hopper::WgmmaOp op{std::is_same_v<T, __half> ? rl::emu::hopper::WgmmaInput::f16
                                                        : rl::emu::hopper::WgmmaInput::bf16,
                              n,
                              0,
                              desc_b,
                              accumulate != 0,
                              1,
                              1,
                              false,
                              TransposeB};
  op.a_registers = a;
  rl::emu::hopper::wgmma(op, d);
}
#endif

// wgmma.mma_async.sync.aligned.m64n128k16.f32.{bf16,f16}.{bf16,f16} with A
// from registers:
//   d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b
// As above, but thread t of the warpgroup holds its part of the 64 x 16 A
// tile in four registers of two 16-bit elements each (low half first):
// element i (0..7) is A(16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2),
// 2 (t % 4) + i % 2 + 8 (i / 4)) ("Register Fragments", the m64nNk16 figure
// of matrix A; warp w of the warpgroup holds rows 16w .. 16w + 15 in the
// layout of mma.sync m16n8k16's A).  There is no imm-trans-a.  The
// emulator reads the registers at issue; on the GPU they must stay
// unchanged until a wgmma.wait_group covers the wgmma (PTX: undefined).
template <typename T, bool TransposeB>
RL_PTX_FN void wgmma_m64n128k16_f32_rs([[maybe_unused]] float (&d)[64],
                                       [[maybe_unused]] const std::uint32_t (&a)[4],
                                       [[maybe_unused]] std::uint64_t desc_b,
                                       [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n128k16 (A from registers)");
  emulate_wgmma_rs<T, TransposeB>(128, d, a, desc_b, accumulate);
#elif RL_PTX_SM90A
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " RL_PTX_WGMMA_D64_REGS
        ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate),
          "n"(TransposeB ? 1 : 0));
  } else {
    static_assert(std::is_same_v<T, __half>, "wgmma f16/bf16 only");
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " RL_PTX_WGMMA_D64_REGS
        ", {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
        : RL_PTX_WGMMA_D64(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate),
          "n"(TransposeB ? 1 : 0));
  }
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// The same with N = 64 (32 accumulators per thread): attention's O += P·V
// at head dim 64 (attention_wgmma_tma_sm90a.cu), P from registers.
#define RL_PTX_WGMMA_D32_REGS                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
template <typename T, bool TransposeB>
RL_PTX_FN void wgmma_m64n64k16_f32_rs([[maybe_unused]] float (&d)[32],
                                      [[maybe_unused]] const std::uint32_t (&a)[4],
                                      [[maybe_unused]] std::uint64_t desc_b,
                                      [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n64k16 (A from registers)");
  emulate_wgmma_rs<T, TransposeB>(64, d, a, desc_b, accumulate);
#elif RL_PTX_SM90A
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>,
                "wgmma f16/bf16 only");
#define RL_PTX_WGMMA_RS_N64(instruction)                                                           \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" instruction " " RL_PTX_WGMMA_D32_REGS  \
               ", {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"                                   \
               : RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 0), RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 8), \
                 RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 16),                                         \
                 RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 24)                                          \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate),         \
                 "n"(TransposeB ? 1 : 0))
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    RL_PTX_WGMMA_RS_N64("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16");
  else
    RL_PTX_WGMMA_RS_N64("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16");
#undef RL_PTX_WGMMA_RS_N64
#else
  RL_PTX_UNSUPPORTED();
#endif
}
#undef RL_PTX_WGMMA_D32_REGS

// The same with N = 256 (128 accumulators per thread), what the tensor-core
// ceilings issue: the widest N amortises the A reads over the most columns.
template <typename T, bool TransposeB>
RL_PTX_FN void wgmma_m64n256k16_f32([[maybe_unused]] float (&d)[128],
                                    [[maybe_unused]] std::uint64_t desc_a,
                                    [[maybe_unused]] std::uint64_t desc_b,
                                    [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n256k16");
  rl::emu::hopper::wgmma({std::is_same_v<T, __half> ? rl::emu::hopper::WgmmaInput::f16
                                                    : rl::emu::hopper::WgmmaInput::bf16,
                          256, desc_a, desc_b, accumulate != 0, 1, 1, false, TransposeB},
                         d);
#elif RL_PTX_SM90A
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", RL_PTX_WGMMA_F32,
                         ", 1, 1, 0, %131", "n"(TransposeB ? 1 : 0));
  } else {
    static_assert(std::is_same_v<T, __half>, "wgmma f16/bf16 only");
    RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", RL_PTX_WGMMA_F32,
                         ", 1, 1, 0, %131", "n"(TransposeB ? 1 : 0));
  }
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32
//   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b
// D(64 x 256, f32) = A(64 x 8) * B(8 x 256) + (accumulate ? D : 0), tf32
// operands (32-bit containers; the tensor core reads sign, 8-bit exponent and
// the top 10 mantissa bits).  No transpose immediates: for tf32 both A and B
// must be K-major in shared memory (8 elements = 32 bytes of K per row, two
// core matrices).  imm-scale-b = -1 when NegateB (the products negated).
template <bool NegateB>
RL_PTX_FN void wgmma_m64n256k8_f32_tf32([[maybe_unused]] float (&d)[128],
                                        [[maybe_unused]] std::uint64_t desc_a,
                                        [[maybe_unused]] std::uint64_t desc_b,
                                        [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n256k8.tf32");
  rl::emu::hopper::wgmma({rl::emu::hopper::WgmmaInput::tf32, 256, desc_a, desc_b, accumulate != 0,
                          1, NegateB ? -1 : 1, false, false},
                         d);
#elif RL_PTX_SM90A
  RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", RL_PTX_WGMMA_F32,
                       ", 1, %131", "n"(NegateB ? -1 : 1));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
//   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b
// D(64 x 256, f32) = A(64 x 32) * B(32 x 256) + (accumulate ? D : 0), fp8
// e4m3 operands (1 sign, 4 exponent bits with bias 7, 3 mantissa bits).  As
// for tf32, both operands K-major only (32 bytes of K per row).  Hopper adds
// fp8 products into the f32 accumulator with fewer than 24 mantissa bits
// (DeepSeek-V3 technical report, section 3.3.2).  imm-scale-b = -1 when
// NegateB.
template <bool NegateB>
RL_PTX_FN void wgmma_m64n256k32_f32_e4m3([[maybe_unused]] float (&d)[128],
                                         [[maybe_unused]] std::uint64_t desc_a,
                                         [[maybe_unused]] std::uint64_t desc_b,
                                         [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n256k32.e4m3");
  rl::emu::hopper::wgmma({rl::emu::hopper::WgmmaInput::e4m3, 256, desc_a, desc_b, accumulate != 0,
                          1, NegateB ? -1 : 1, false, false},
                         d);
#elif RL_PTX_SM90A
  RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", RL_PTX_WGMMA_F32,
                       ", 1, %131", "n"(NegateB ? -1 : 1));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// The e4m3 shapes of FP8 attention (attention_wgmma_fp8_sm90a.cu): S = Q·Kᵀ
// as m64n128k32 with both operands in shared memory, and O += P·V as
// m64nNk32 (N = 64 or 128) with A = P from registers.  B is K-major (8-bit
// types have no transpose immediates).  The fp8 A fragment from registers
// ("Register Fragments", the m64nNk32 figure of matrix A): thread t holds 16
// bytes, four to a register, low byte first; register i holds row
// 16 (t / 32) + (t % 32) / 4 + 8 (i % 2) and the four k columns
// 4 (t % 4) .. + 3, plus 16 for registers 2 and 3.  The emulator reads the
// registers at issue; on the GPU they must stay unchanged until a
// wgmma.wait_group covers the wgmma (PTX: undefined).
RL_PTX_FN void wgmma_m64n128k32_f32_e4m3([[maybe_unused]] float (&d)[64],
                                         [[maybe_unused]] std::uint64_t desc_a,
                                         [[maybe_unused]] std::uint64_t desc_b,
                                         [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n128k32.e4m3");
  rl::emu::hopper::wgmma(
      {rl::emu::hopper::WgmmaInput::e4m3, 128, desc_a, desc_b, accumulate != 0, 1, 1, false, false},
      d);
#elif RL_PTX_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " RL_PTX_WGMMA_D64_REGS
      ", %64, %65, p, 1, 1;\n}\n"
      : RL_PTX_WGMMA_D64(d)
      : "l"(desc_a), "l"(desc_b), "r"(accumulate));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

#if defined(RL_EMULATE)
// The emulation of an m64nNk32 e4m3 wgmma with A from registers.
inline void emulate_wgmma_e4m3_rs(unsigned n, float* d, const std::uint32_t (&a)[4],
                                  std::uint64_t desc_b, int accumulate) {
  rl::emu::hopper::WgmmaOp op{
      rl::emu::hopper::WgmmaInput::e4m3, n, 0, desc_b, accumulate != 0, 1, 1, false, false};
  op.a_registers = a;
  rl::emu::hopper::wgmma(op, d);
}
#endif

RL_PTX_FN void wgmma_m64n128k32_f32_e4m3_rs([[maybe_unused]] float (&d)[64],
                                            [[maybe_unused]] const std::uint32_t (&a)[4],
                                            [[maybe_unused]] std::uint64_t desc_b,
                                            [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n128k32.e4m3 (A from registers)");
  emulate_wgmma_e4m3_rs(128, d, a, desc_b, accumulate);
#elif RL_PTX_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " RL_PTX_WGMMA_D64_REGS
      ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
      : RL_PTX_WGMMA_D64(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

RL_PTX_FN void wgmma_m64n64k32_f32_e4m3_rs([[maybe_unused]] float (&d)[32],
                                           [[maybe_unused]] const std::uint32_t (&a)[4],
                                           [[maybe_unused]] std::uint64_t desc_b,
                                           [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n64k32.e4m3 (A from registers)");
  emulate_wgmma_e4m3_rs(64, d, a, desc_b, accumulate);
#elif RL_PTX_SM90A
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
      ", {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
      : RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 0), RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 8),
        RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 16), RL_PTX_WGMMA_D8(RL_PTX_WGMMA_F32, d, 24)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
#else
  RL_PTX_UNSUPPORTED();
#endif
}

// wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 d, a-desc, b-desc, scale-d
// D(64 x 256, s32) = A(64 x 32) * B(32 x 256) + (accumulate ? D : 0), signed
// 8-bit operands, exact 32-bit integer sums (the optional .satfinite, not
// used, would clamp them on overflow).  Integer wgmma has no scale or
// transpose immediates: both operands K-major (32 bytes of K per row).  The
// accumulator fragment layout is that of the f32 one above.
RL_PTX_FN void wgmma_m64n256k32_s32_s8([[maybe_unused]] std::int32_t (&d)[128],
                                       [[maybe_unused]] std::uint64_t desc_a,
                                       [[maybe_unused]] std::uint64_t desc_b,
                                       [[maybe_unused]] int accumulate) {
#if defined(RL_EMULATE)
  RL_PTX_REQUIRE_WGMMA("wgmma.mma_async.m64n256k32.s8");
  rl::emu::hopper::wgmma(
      {rl::emu::hopper::WgmmaInput::s8, 256, desc_a, desc_b, accumulate != 0, 1, 1, false, false},
      d);
#elif RL_PTX_SM90A
  RL_PTX_WGMMA_SS_N256("wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8", RL_PTX_WGMMA_S32, "");
#else
  RL_PTX_UNSUPPORTED();
#endif
}

#undef RL_PTX_WGMMA_D64_REGS
#undef RL_PTX_WGMMA_D64
#undef RL_PTX_WGMMA_D128_REGS
#undef RL_PTX_WGMMA_SS_N256
#undef RL_PTX_WGMMA_D64_OF
#undef RL_PTX_WGMMA_D8
#undef RL_PTX_WGMMA_F32
#undef RL_PTX_WGMMA_S32

}  // namespace rl::ptx
