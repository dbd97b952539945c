// The one cost-model type.  Every kernel variant declares, next to its
// launcher, the work it does (nvbench's "declare the work" idea); the harness
// and the roofline turn it into rates, intensity and % of roof.
//
// Conventions (see shared/docs/architecture.md):
//  - flops: an FMA counts 2; transcendental calls count 1 each; the formula is
//    written next to each op.
//  - bytes_min: compulsory DRAM traffic (each input read once, each output
//    written once).
//  - bytes_model: the traffic this variant is expected to move (extra passes,
//    intermediates written and re-read).  Intensity uses bytes_model.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace rl::roofline {

// The execution unit whose roof bounds a kernel.  The string names are the
// compute-ceiling names of the architecture notes (fp32.fma, tc.bf16, ...).
// New units go at the end: the value indexes the SKU table's peaks.
enum class ComputeUnit {
  fp32,     // FP32 SIMT pipe (FFMA)            -> ceiling "fp32.fma"
  fp64,     // FP64 pipe (DFMA)                 -> "fp64.fma"
  fp16,     // packed half SIMT (HFMA2)         -> "fp16.hfma2"
  bf16,     // packed bf16 SIMT (HFMA2.BF16)    -> "bf16.hfma2"
  tc_tf32,  // tensor core, TF32 inputs         -> "tc.tf32"
  tc_fp16,  // tensor core, FP16 inputs         -> "tc.fp16"
  tc_bf16,  // tensor core, BF16 inputs         -> "tc.bf16"
  tc_fp8,   // tensor core, FP8 inputs          -> "tc.fp8"
  tc_int8,  // tensor core, INT8 inputs         -> "tc.int8"
  // Blackwell: FP6/FP4 inputs without scales (kind::f8f6f4; e2m3/e3m2, e2m1)
  // and the block-scaled formats (an 8-bit scale per block of K elements).
  tc_fp6,    // tensor core, FP6 inputs          -> "tc.fp6"
  tc_fp4,    // tensor core, FP4 inputs          -> "tc.fp4"
  tc_mxfp8,  // MXFP8: e4m3/e5m2, ue8m0 per 32   -> "tc.mxfp8"
  tc_mxfp6,  // MXFP6: e2m3/e3m2, ue8m0 per 32   -> "tc.mxfp6"
  tc_mxfp4,  // MXFP4: e2m1, ue8m0 per 32        -> "tc.mxfp4"
  tc_nvfp4,  // NVFP4: e2m1, ue4m3 per 16        -> "tc.nvfp4"
};
inline constexpr std::size_t kComputeUnitCount = 15;

std::string_view compute_ceiling_name(ComputeUnit unit);               // "fp32.fma", "tc.bf16", ...
std::string_view compute_unit_name(ComputeUnit unit);                  // "fp32", "tc_bf16", ...
std::optional<ComputeUnit> parse_compute_unit(std::string_view name);  // accepts either form

struct Cost {
  double flops = 0;        // floating-point (or integer MAC) operations
  double bytes_min = 0;    // compulsory DRAM bytes
  double bytes_model = 0;  // bytes this variant is expected to move
  ComputeUnit unit = ComputeUnit::fp32;
  // What the counters check (issue 28, docs/counters.md).  Optional: a model
  // declares only what it states exactly for the variant's instructions, and
  // the emulator's exact counts are compared with it in CI.
  // Bytes the variant's global loads / stores request from L2 (every re-read
  // of a tile counted; elements a TMA box leaves out of bounds not counted).
  std::optional<double> bytes_l2_load = {};
  std::optional<double> bytes_l2_store = {};
  // Tensor-core operations issued: 2*m*n*k per MMA instruction, the padded
  // edge tiles included (equals flops where the shape is a tile multiple).
  std::optional<double> tensor_ops = {};
};

}  // namespace rl::roofline
