// SKU rows: Turing (T4), Ampere (A100, A10, A10G, RTX 3090) and Ada (L4, L40S,
// RTX 4090).  Conventions: sku.hpp and sku_rows.hpp.
#include "sku_rows.hpp"

#include <string_view>

namespace rl::roofline::sku_rows {

void add_turing_ampere_ada(std::vector<Sku>& r) {
  const Peaks a100 = tflops({{U::fp64, 9.7},
                             {U::fp32, 19.5},
                             {U::fp16, 78},
                             {U::bf16, 39},
                             {U::tc_tf32, 156},
                             {U::tc_fp16, 312},
                             {U::tc_bf16, 312},
                             {U::tc_int8, 624}});
  constexpr std::string_view a100_source =
      "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com, a100 datasheet); NVIDIA A100 Tensor "
      "Core GPU Architecture whitepaper (2020), Table 1: non-tensor FP16/BF16, SMs, L2";
  constexpr std::string_view a100_note = "datasheet dense figures (sparsity figures not used)";
  r.push_back({.key = "a100-sxm4-40gb",
               .name = "NVIDIA A100 SXM4 40GB",
               .compute_capability = "8.0",
               .chip = "GA100",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 108,
               .boost_clock_mhz = 1410,
               .tensor_clock_mhz = 1410,
               .memory_gib = 40,
               .memory_bytes_per_s = 1555e9,
               .l2_bytes = 40 * kMiB,
               .datasheet = a100,
               .source = a100_source,
               .note = a100_note,
               .name_all_of = {"a100"},
               .name_none_of = {"pcie"}});
  r.push_back({.key = "a100-sxm4-80gb",
               .name = "NVIDIA A100 SXM4 80GB",
               .compute_capability = "8.0",
               .chip = "GA100",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 108,
               .boost_clock_mhz = 1410,
               .tensor_clock_mhz = 1410,
               .memory_gib = 80,
               .memory_bytes_per_s = 2039e9,
               .l2_bytes = 40 * kMiB,
               .datasheet = a100,
               .source = a100_source,
               .note = a100_note,
               .name_all_of = {"a100"},
               .name_none_of = {"pcie"}});
  r.push_back({.key = "a100-pcie-40gb",
               .name = "NVIDIA A100 PCIe 40GB",
               .compute_capability = "8.0",
               .chip = "GA100",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 108,
               .boost_clock_mhz = 1410,
               .tensor_clock_mhz = 1410,
               .memory_gib = 40,
               .memory_bytes_per_s = 1555e9,
               .l2_bytes = 40 * kMiB,
               .datasheet = a100,
               .source = a100_source,
               .note = a100_note,
               .name_all_of = {"a100", "pcie"}});
  r.push_back({.key = "a100-pcie-80gb",
               .name = "NVIDIA A100 PCIe 80GB",
               .compute_capability = "8.0",
               .chip = "GA100",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 108,
               .boost_clock_mhz = 1410,
               .tensor_clock_mhz = 1410,
               .memory_gib = 80,
               .memory_bytes_per_s = 1935e9,
               .l2_bytes = 40 * kMiB,
               .datasheet = a100,
               .source = a100_source,
               .note = a100_note,
               .name_all_of = {"a100", "pcie"}});

  r.push_back({.key = "a10",
               .name = "NVIDIA A10",
               .compute_capability = "8.6",
               .chip = "GA102",  // pci.ids: "GA102GL [A10]"
               .sm_count = 72,
               .boost_clock_mhz = 1695,
               .tensor_clock_mhz = 1695,
               .memory_gib = 24,
               .memory_bytes_per_s = 600e9,
               .l2_bytes = 6 * kMiB,
               .datasheet = tflops({{U::fp32, 31.2},
                                    {U::tc_tf32, 62.5},
                                    {U::tc_fp16, 125},
                                    {U::tc_bf16, 125},
                                    {U::tc_int8, 250}}),
               .source =
                   "NVIDIA A10 Tensor Core GPU datasheet (nvidia.com, a10 datasheet); SMs and L2: "
                   "NVIDIA Ampere GA102 GPU Architecture whitepaper",
               .note = "tensor figures: datasheet dense values (the starred sparse ones halved)",
               .name_all_of = {"a10"}});
  r.push_back({.key = "a10g",
               .name = "NVIDIA A10G",
               .compute_capability = "8.6",
               .chip = "GA102",  // pci.ids: "GA102GL [A10G]"
               .sm_count = 80,
               .boost_clock_mhz = 1710,
               .tensor_clock_mhz = 1710,
               .memory_gib = 24,
               .memory_bytes_per_s = 0,
               .l2_bytes = std::nullopt,
               .datasheet = Peaks{},
               .source =
                   "NVIDIA publishes no A10G datasheet (AWS EC2 G5 part); memory size: AWS EC2 "
                   "G5 instance documentation (24 GiB per GPU)",
               .note =  // Not from an NVIDIA document: a real A10G reporting other values stays
               // "unknown" instead of matching a wrong row.
               "no datasheet peaks or bandwidth: derived peaks only; SM count (80) and max SM "
               "clock (1710 MHz) as commonly reported by the driver on G5 instances, not "
               "verified against an NVIDIA document",
               .name_all_of = {"a10g"}});
  r.push_back(
      {.key = "t4",
       .name = "NVIDIA T4",
       .compute_capability = "7.5",
       .chip = "TU104",  // pci.ids: "TU104GL [Tesla T4]"
       .sm_count = 40,
       .boost_clock_mhz = 1590,
       .tensor_clock_mhz = 1590,
       .memory_gib = 16,
       .memory_bytes_per_s = 320e9,
       .l2_bytes = 4 * kMiB,
       .datasheet = tflops({{U::fp32, 8.1}, {U::tc_fp16, 65}, {U::tc_int8, 130}}),
       .source = "NVIDIA T4 Tensor Core GPU datasheet (nvidia.com, t4-tensor-core-datasheet); SMs "
                 "and L2: NVIDIA Turing GPU Architecture whitepaper",
       .note = "mixed-precision FP16/FP32 tensor figure; T4 has no TF32/BF16/FP8",
       .name_all_of = {"t4"}});
  r.push_back(
      {.key = "l4",
       .name = "NVIDIA L4",
       .compute_capability = "8.9",
       .chip = "AD104",  // pci.ids: "AD104GL [L4]"
       .sm_count = 58,
       .boost_clock_mhz = 2040,
       .tensor_clock_mhz = 2040,
       .memory_gib = 24,
       .memory_bytes_per_s = 300e9,
       .l2_bytes = 48 * kMiB,
       .datasheet = tflops({{U::fp32, 30.3},
                            {U::tc_tf32, 60},
                            {U::tc_fp16, 121},
                            {U::tc_bf16, 121},
                            {U::tc_fp8, 242.5},
                            {U::tc_int8, 242.5}}),
       .source = "NVIDIA L4 Tensor Core GPU datasheet (nvidia.com, l4 datasheet); SMs and L2: "
                 "NVIDIA Ada GPU Architecture whitepaper",
       .note = "the datasheet prints tensor figures with sparsity (120/242/485*); halved here",
       .name_all_of = {"l4"}});
  r.push_back({.key = "l40s",
               .name = "NVIDIA L40S",
               .compute_capability = "8.9",
               .chip = "AD102",  // pci.ids: "AD102GL [L40S]"
               .sm_count = 142,
               .boost_clock_mhz = 2520,
               .tensor_clock_mhz = 2520,
               .memory_gib = 48,
               .memory_bytes_per_s = 864e9,
               .l2_bytes = 96 * kMiB,
               .datasheet = tflops({{U::fp32, 91.6},
                                    {U::tc_tf32, 183},
                                    {U::tc_fp16, 362.05},
                                    {U::tc_bf16, 362.05},
                                    {U::tc_fp8, 733},
                                    {U::tc_int8, 733}}),
               .source =
                   "NVIDIA L40S GPU datasheet (nvidia.com, l40s datasheet); SMs and L2: NVIDIA Ada "
                   "GPU Architecture whitepaper",
               .note = "datasheet dense column (the starred sparse column not used)",
               .name_all_of = {"l40s"}});
  r.push_back(
      {.key = "rtx-3090",
       .name = "NVIDIA GeForce RTX 3090",
       .compute_capability = "8.6",
       .chip = "GA102",  // pci.ids: "GA102 [GeForce RTX 3090]"
       .sm_count = 82,
       .boost_clock_mhz = 1695,
       .tensor_clock_mhz = 1695,
       .geforce_tensor_rate = true,
       .memory_gib = 24,
       .memory_bytes_per_s = 936e9,
       .l2_bytes = 6 * kMiB,
       .datasheet = tflops({{U::fp64, 0.556},
                            {U::fp32, 35.6},
                            {U::fp16, 35.6},
                            {U::bf16, 35.6},
                            {U::tc_tf32, 35.6},
                            {U::tc_fp16, 71},
                            {U::tc_bf16, 71},
                            {U::tc_int8, 284}}),
       .source = "NVIDIA Ampere GA102 GPU Architecture whitepaper, GeForce RTX 3090 specification "
                 "table",
       .note = "tensor FP16/BF16 with FP32 accumulate, dense",
       .name_all_of = {"rtx", "3090"},
       .name_none_of = {"ti"}});
  r.push_back(
      {.key = "rtx-4090",
       .name = "NVIDIA GeForce RTX 4090",
       .compute_capability = "8.9",
       .chip = "AD102",  // pci.ids: "AD102 [GeForce RTX 4090]"
       .sm_count = 128,
       .boost_clock_mhz = 2520,
       .tensor_clock_mhz = 2520,
       .geforce_tensor_rate = true,
       .memory_gib = 24,
       .memory_bytes_per_s = 1008e9,
       .l2_bytes = 72 * kMiB,
       .datasheet = tflops({{U::fp64, 1.29},
                            {U::fp32, 82.6},
                            {U::fp16, 82.6},
                            {U::bf16, 82.6},
                            {U::tc_tf32, 82.6},
                            {U::tc_fp16, 165.2},
                            {U::tc_bf16, 165.2},
                            {U::tc_fp8, 330.3},
                            {U::tc_int8, 660.6}}),
       .source = "NVIDIA Ada GPU Architecture whitepaper, Appendix A, GeForce RTX 4090 table",
       .note = "tensor FP16/BF16/FP8 with FP32 accumulate, dense",
       .name_all_of = {"rtx", "4090"},
       .name_none_of = {"ti"}});
}

}  // namespace rl::roofline::sku_rows
