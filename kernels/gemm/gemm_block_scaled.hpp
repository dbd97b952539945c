// Block-scaled GEMM (MXFP8): what its launchers take and where its scale
// factors live.  C = (A . scale_A)(B . scale_B): e4m3 A (M x K) and B, one
// ue8m0 scale (a power of two, 2^(byte - 127)) per 32 consecutive K-elements
// of each row of A and of each column of B, fp32 C.
//
// The scale tensors are laid out as cuBLASLt's VEC32_UE8M0 scale mode wants
// them (the cuBLAS docs, "1D Block Scaling Factors Layout"), and as
// tcgen05.cp .32x128b.warpx4 copies them into tensor memory for a
// block-scaled tcgen05.mma: atoms of 128 rows x 4 k-blocks, 512 bytes each,
// row r's scale of k-block j at byte (r % 32) * 16 + (r % 128) / 32 * 4 + j % 4
// of its atom; atoms row-major over (row / 128, j / 4).  So one 128-wide
// k-tile of a 128-row tile is one contiguous atom.  Rows past the matrix and
// k-blocks past K pad the atoms (their scales multiply zeros).
#pragma once

#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_pipeline_fault.hpp"
#include "rl/cuda.hpp"

#include <cstdint>
#include <functional>

#if !defined(RL_EMULATE)
#include <cuda_fp8.h>  // __nv_fp8_e4m3 (the emulator's rl/emu/fp16.hpp has it)
#endif

namespace rl::gemm {

constexpr int kScaleBlock = 32;  // K-elements per scale (MX)
constexpr int kScaleAtomRows = 128, kScaleAtomBlocks = 4;
constexpr int kScaleAtomBytes = kScaleAtomRows * kScaleAtomBlocks;  // 512

// Atoms along K of a matrix with K columns (k-blocks rounded up to 4).
__host__ __device__ constexpr std::int64_t scale_atoms_k(std::int64_t K) {
  return (K + kScaleBlock * kScaleAtomBlocks - 1) / (kScaleBlock * kScaleAtomBlocks);
}
// Bytes of the scale tensor of a rows x K matrix.
__host__ __device__ constexpr std::int64_t scale_tensor_bytes(std::int64_t rows, std::int64_t K) {
  return (rows + kScaleAtomRows - 1) / kScaleAtomRows * scale_atoms_k(K) * kScaleAtomBytes;
}
// Where row `row`'s scale of k-block `block` is.
__host__ __device__ constexpr std::int64_t scale_offset(std::int64_t row, std::int64_t block,
                                                        std::int64_t K) {
  return (row / kScaleAtomRows * scale_atoms_k(K) + block / kScaleAtomBlocks) * kScaleAtomBytes +
         row % 32 * 16 + row % kScaleAtomRows / 32 * 4 + block % kScaleAtomBlocks;
}

// The unscaled GEMM's arguments (gemm_launch.hpp) with e4m3 A and B and B
// stored N x K (Bᵀ, row pitch ldb: both operands K-major, as every MX GEMM
// takes them), plus the scale tensors.  K is the problem's; A's and B's rows
// are padded with zeros to a multiple of 32 (lda, ldb >= that), so a
// launcher that needs whole k-blocks (cuBLASLt) may multiply K rounded up to
// 32 and gets the same C.
struct ScaledArgs {
  Args<__nv_fp8_e4m3> gemm;
  const std::uint8_t* scale_a;  // M x ceil(K / 32) ue8m0, the layout above
  const std::uint8_t* scale_b;  // N x ceil(K / 32) ue8m0
};

using ScaledLauncher = std::function<void(const ScaledArgs&, cudaStream_t)>;

#if defined(RL_EMULATE)
namespace faults {
// gemm_tcgen05_mxfp8 with a pipeline bug (gemm_pipeline_fault.hpp) built into
// its MMA thread, for the negative tests of its validation (RL_EMU_CC=100).
ScaledLauncher tcgen05_mxfp8(PipelineFault fault);
}  // namespace faults
#endif

}  // namespace rl::gemm
