// SKU rows: Hopper (H100 SXM/PCIe/NVL, H200 SXM/NVL).  Conventions: sku.hpp
// and sku_rows.hpp.
#include "sku_rows.hpp"

#include <string_view>

namespace rl::roofline::sku_rows {

namespace {
constexpr std::string_view kHopperSxmTensorClock =
    "NVIDIA rates Hopper tensor-core throughput at 1830 MHz, below the 1980 MHz boost used for "
    "FP32/FP64 (H100 architecture whitepaper; 989.4 TFLOPS = 132 SMs x 4096 FLOP/clk x 1830 MHz)";
constexpr std::string_view kHopperNvlTensorClock =
    "tensor figures imply 1545 MHz (835.5 TFLOPS dense BF16 / (132 SMs x 4096 FLOP/clk)): as on "
    "H100 SXM, NVIDIA rates Hopper tensor throughput below the boost clock";
}  // namespace

void add_hopper(std::vector<Sku>& r) {
  const Peaks h100_sxm = tflops({{U::fp64, 33.5},
                                 {U::fp32, 66.9},
                                 {U::fp16, 133.8},
                                 {U::bf16, 133.8},
                                 {U::tc_tf32, 494.7},
                                 {U::tc_fp16, 989.4},
                                 {U::tc_bf16, 989.4},
                                 {U::tc_fp8, 1978.9},
                                 {U::tc_int8, 1978.9}});
  r.push_back({.key = "h100-sxm",
               .name = "NVIDIA H100 SXM5 80GB",
               .compute_capability = "9.0",
               .chip = "GH100",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 132,
               .boost_clock_mhz = 1980,
               .tensor_clock_mhz = 1830,
               .tensor_clock_note = kHopperSxmTensorClock,
               .memory_gib = 80,
               .memory_bytes_per_s = 3.35e12,
               .l2_bytes = 50 * kMiB,
               .datasheet = h100_sxm,
               .source =
                   "NVIDIA H100 Tensor Core GPU Architecture whitepaper, H100 SXM5 dense figures, "
                   "SMs, L2; bandwidth: NVIDIA H100 Tensor Core GPU datasheet (3.35 TB/s)",
               .note = "whitepaper dense figures",
               .name_all_of = {"h100"},
               .name_none_of = {"pcie", "nvl"}});
  r.push_back(
      {.key = "h100-pcie",
       .name = "NVIDIA H100 PCIe 80GB",
       .compute_capability = "9.0",
       .chip = "GH100",  // NVIDIA MIG user guide, supported-GPU table
       .sm_count = 114,
       .boost_clock_mhz = 1755,
       .tensor_clock_mhz = 1620,
       .tensor_clock_note =
           "tensor figures imply 1620 MHz (756.5 TFLOPS dense BF16 / (114 SMs x 4096 "
           "FLOP/clk)): as on H100 SXM, NVIDIA rates Hopper tensor throughput below the "
           "boost clock",
       .memory_gib = 80,
       .memory_bytes_per_s = 2.0e12,
       .l2_bytes = 50 * kMiB,
       .datasheet = tflops({{U::fp64, 26},
                            {U::fp32, 51},
                            {U::tc_tf32, 378},
                            {U::tc_fp16, 756.5},
                            {U::tc_bf16, 756.5},
                            {U::tc_fp8, 1513},
                            {U::tc_int8, 1513}}),
       .source = "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column; SMs and L2: H100 "
                 "architecture whitepaper",
       .note = "the datasheet prints tensor figures with sparsity (756/1513/3026*); halved here",
       .name_all_of = {"h100", "pcie"}});
  const Peaks hopper_nvl = tflops({{U::fp64, 30},
                                   {U::fp32, 60},
                                   {U::tc_tf32, 417.5},
                                   {U::tc_fp16, 835.5},
                                   {U::tc_bf16, 835.5},
                                   {U::tc_fp8, 1670.5},
                                   {U::tc_int8, 1670.5}});
  constexpr std::string_view nvl_note =
      "per-GPU figures; tensor figures printed with sparsity (835/1671/3341*), halved here; "
      "boost clock 1785 MHz is what the FP32/FP64 figures imply at 132 SMs";
  r.push_back({.key = "h100-nvl",
               .name = "NVIDIA H100 NVL 94GB",
               .compute_capability = "9.0",
               .chip = "GH100",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 132,
               .boost_clock_mhz = 1785,
               .tensor_clock_mhz = 1545,
               .tensor_clock_note = kHopperNvlTensorClock,
               .memory_gib = 94,
               .memory_bytes_per_s = 3.9e12,
               .l2_bytes = 50 * kMiB,
               .datasheet = hopper_nvl,
               .source = "NVIDIA H100 Tensor Core GPU datasheet, H100 NVL column",
               .note = nvl_note,
               .name_all_of = {"h100", "nvl"}});
  r.push_back(
      {.key = "h200-sxm",
       .name = "NVIDIA H200 SXM 141GB",
       .compute_capability = "9.0",
       .chip = "GH100",  // NVIDIA MIG user guide, supported-GPU table
       .sm_count = 132,
       .boost_clock_mhz = 1980,
       .tensor_clock_mhz = 1830,
       .tensor_clock_note = kHopperSxmTensorClock,
       .memory_gib = 141,
       .memory_bytes_per_s = 4.8e12,
       .l2_bytes = 50 * kMiB,
       .datasheet = tflops({{U::fp64, 34},
                            {U::fp32, 67},
                            {U::tc_tf32, 494.5},
                            {U::tc_fp16, 989.5},
                            {U::tc_bf16, 989.5},
                            {U::tc_fp8, 1979},
                            {U::tc_int8, 1979}}),
       .source = "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column",
       .note = "the datasheet prints tensor figures with sparsity (989/1979/3958*); halved here",
       .name_all_of = {"h200"},
       .name_none_of = {"nvl"}});
  r.push_back({.key = "h200-nvl",
               .name = "NVIDIA H200 NVL 141GB",
               .compute_capability = "9.0",
               .chip = "GH100",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 132,
               .boost_clock_mhz = 1785,
               .tensor_clock_mhz = 1545,
               .tensor_clock_note = kHopperNvlTensorClock,
               .memory_gib = 141,
               .memory_bytes_per_s = 4.8e12,
               .l2_bytes = 50 * kMiB,
               .datasheet = hopper_nvl,
               .source = "NVIDIA H200 Tensor Core GPU datasheet, H200 NVL column",
               .note = nvl_note,
               .name_all_of = {"h200", "nvl"}});
}

}  // namespace rl::roofline::sku_rows
