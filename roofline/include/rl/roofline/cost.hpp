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

#include <optional>
#include <string>
#include <string_view>

namespace rl::roofline {

// The execution unit whose roof bounds a kernel.  The string names are the
// compute-ceiling names of the architecture notes (fp32.fma, tc.bf16, ...).
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
};

std::string_view compute_ceiling_name(ComputeUnit unit);               // "fp32.fma", "tc.bf16", ...
std::string_view compute_unit_name(ComputeUnit unit);                  // "fp32", "tc_bf16", ...
std::optional<ComputeUnit> parse_compute_unit(std::string_view name);  // accepts either form

struct Cost {
  double flops = 0;        // floating-point (or integer MAC) operations
  double bytes_min = 0;    // compulsory DRAM bytes
  double bytes_model = 0;  // bytes this variant is expected to move
  ComputeUnit unit = ComputeUnit::fp32;
};

}  // namespace rl::roofline
