// SKU rows: Blackwell.  The RTX parts (compute capability 12.x) are listed
// after the Ada rows, the datacenter parts (10.x) after Hopper.  Conventions:
// sku.hpp and sku_rows.hpp.
#include "sku_rows.hpp"

#include <string_view>

namespace rl::roofline::sku_rows {

void add_blackwell_rtx(std::vector<Sku>& r) {
  r.push_back({.key = "rtx-5090",
               .name = "NVIDIA GeForce RTX 5090",
               .compute_capability = "12.0",
               .sm_count = 170,
               .boost_clock_mhz = 2407,
               .tensor_clock_mhz = 2407,
               .geforce_tensor_rate = true,
               .memory_gib = 32,
               .memory_bytes_per_s = 1792e9,
               .l2_bytes = 96 * kMiB,
               .datasheet = tflops({{U::fp32, 104.8}}),
               .source =
                   "NVIDIA RTX Blackwell GPU Architecture whitepaper, GeForce RTX 5090 table (SMs, "
                   "boost clock, FP32, memory, L2)",
               .note = "tensor figures with FP32 accumulate not transcribed: derived peaks only",
               .name_all_of = {"rtx", "5090"}});
}

void add_blackwell_datacenter(std::vector<Sku>& r) {
  r.push_back(
      {.key = "b200",
       .name = "NVIDIA B200 180GB",
       .compute_capability = "10.0",
       .sm_count = 148,
       .boost_clock_mhz = 1980,
       .tensor_clock_mhz = 1860,
       .tensor_clock_note =
           "tensor figures imply 1860 MHz (2.25 PFLOPS dense BF16 / (148 SMs x 8192 "
           "FLOP/clk)); NVIDIA rates Blackwell tensor throughput below the boost clock",
       .memory_gib = 180,
       .memory_bytes_per_s = 8.0e12,
       .l2_bytes = std::nullopt,
       .datasheet = tflops({{U::fp64, 37},
                            {U::fp32, 75},
                            {U::tc_tf32, 1125},
                            {U::tc_fp16, 2250},
                            {U::tc_bf16, 2250},
                            {U::tc_fp8, 4500},
                            {U::tc_int8, 4500}}),
       .source = "NVIDIA HGX B200 specifications (nvidia.com/data-center/hgx): 8-GPU figures "
                 "divided by 8; DGX B200 datasheet: 1,440 GB and 64 TB/s HBM3e per 8 GPUs",
       .note = "per-GPU = system / 8; tensor figures printed with sparsity, halved; L2 size not "
               "in these documents (unknown)",
       .name_all_of = {"b200"}});
}

}  // namespace rl::roofline::sku_rows
