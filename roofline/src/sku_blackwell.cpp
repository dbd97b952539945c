// SKU rows: Blackwell.  The RTX parts (compute capability 12.x) are listed
// after the Ada rows, the datacenter parts (10.x) after Hopper.  Conventions:
// sku.hpp and sku_rows.hpp.
//
// Where the documents found were not NVIDIA's own pages but pages that
// reproduce NVIDIA's figures, `source` names the page that was read and what
// it reproduces.  Figures the sources disagree on are left out, or kept with
// the disagreement in `note`; an SM count or clock no source gives is 0.
#include "sku_rows.hpp"

#include <string_view>

namespace rl::roofline::sku_rows {

namespace {

// The per-GPU columns of NVIDIA's "GB200 NVL72 | HGX B200" specification
// table (tensor figures with sparsity, FP64 and FP32 dense).
constexpr std::string_view kGb200HgxB200Table =
    "NVIDIA GB200 NVL72 / HGX B200 technical specifications, 'Individual Blackwell GPU "
    "Specifications' (per GPU), as reproduced at "
    "https://zdszero.github.io/Computer/Artificial_Intelligence/Hardware.html";

constexpr std::string_view kRtxPro6000Source =
    "RTX PRO 6000 Blackwell figures NVIDIA lists (188 SMs, up to 125 TFLOPS FP32, 4000 AI TOPS, "
    "96 GB GDDR7 at 1792 GB/s, 128 MB L2; the same for the Workstation, Max-Q and Server "
    "editions), as reported at https://ferreiradozezere.net/entretenimento/"
    "a-mansao-na-qual-adele-viveu-nao-e-vendida-por-ser-assombrada/2388/ and "
    "https://overclockers.ru/blog/apprenticebase/amp/213050/"
    "Nvidia-gotovit-professional-nye-videokarty-RTX-Pro-6000-Blackwell-s-96-GB-pamyati-GDDR7 "
    "(188 SMs, 752 tensor cores); NVIDIA's datasheet itself was not in the searched corpus";

constexpr std::string_view kRtxPro6000Note =
    "4000 AI TOPS is FP4 with sparsity: / 2 = 2000 TFLOPS dense, the block-scaled FP4 peak "
    "(tc.nvfp4, tc.mxfp4); no FP8/FP6 or 16-bit tensor figure in these sources; boost clock not "
    "given (0: no derived peaks)";

}  // namespace

void add_blackwell_rtx(std::vector<Sku>& r) {
  r.push_back(
      {.key = "rtx-5090",
       .name = "NVIDIA GeForce RTX 5090",
       .compute_capability = "12.0",
       .chip = "GB202",  // pci.ids: "GB202 [GeForce RTX 5090]"
       .sm_count = 170,
       .boost_clock_mhz = 2407,
       .tensor_clock_mhz = 2407,
       .geforce_tensor_rate = true,
       .memory_gib = 32,
       .memory_bytes_per_s = 1792e9,
       .l2_bytes = 96 * kMiB,
       .datasheet = tflops({{U::fp32, 104.8}, {U::tc_mxfp4, 1676}, {U::tc_nvfp4, 1676}}),
       .source = "NVIDIA RTX Blackwell GPU Architecture whitepaper, GeForce RTX 5090 table (SMs, "
                 "boost clock, FP32, memory, L2); FP4: NVIDIA GeForce RTX 50 Series page, 3352 AI "
                 "TOPS, as cited at "
                 "https://analysis.castromedia.org/analysis/compute/entities/rtx-5090.html",
       .note = "3352 AI TOPS is FP4 with sparsity: / 2 = 1676 TFLOPS dense, the block-scaled "
               "FP4 peak (tc.nvfp4, tc.mxfp4); tensor figures with FP32 accumulate and FP6 not "
               "transcribed: derived peaks only",
       .name_all_of = {"rtx", "5090"}});
  r.push_back({.key = "rtx-pro-6000-ws",
               .name = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
               .compute_capability = "12.0",
               .chip = "GB202",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 188,
               .memory_gib = 96,
               .memory_bytes_per_s = 1792e9,
               .l2_bytes = 128 * kMiB,
               .datasheet = tflops({{U::fp32, 125}, {U::tc_mxfp4, 2000}, {U::tc_nvfp4, 2000}}),
               .source = kRtxPro6000Source,
               .note = kRtxPro6000Note,
               .name_all_of = {"6000", "blackwell", "workstation"},
               .name_none_of = {"max"}});
  r.push_back({.key = "rtx-pro-6000-server",
               .name = "NVIDIA RTX PRO 6000 Blackwell Server Edition",
               .compute_capability = "12.0",
               .chip = "GB202",  // NVIDIA MIG user guide, supported-GPU table
               .sm_count = 188,
               .memory_gib = 96,
               .memory_bytes_per_s = 1792e9,
               .l2_bytes = 128 * kMiB,
               .datasheet = tflops({{U::fp32, 125}, {U::tc_mxfp4, 2000}, {U::tc_nvfp4, 2000}}),
               .source = kRtxPro6000Source,
               .note = kRtxPro6000Note,
               .name_all_of = {"6000", "blackwell", "server"}});
  r.push_back(
      {.key = "dgx-spark",
       .name = "NVIDIA DGX Spark (GB10)",
       .compute_capability = "12.1",
       .chip = "GB20B",  // pci.ids: "GB20B [GB10]"
       .sm_count = 48,
       .memory_gib = 128,
       .memory_bytes_per_s = 273e9,
       .l2_bytes = std::nullopt,
       .datasheet = tflops({{U::tc_mxfp4, 500}, {U::tc_nvfp4, 500}}),
       .source = "NVIDIA DGX Spark: up to 1 petaFLOP FP4 with sparsity, 128 GB LPDDR5X "
                 "(https://dgx-spark.warehack.ing/hardware/, "
                 "https://meterpreter.org/"
                 "a-supercomputer-on-your-desk-nvidia-unveils-the-dgx-spark-ai-superchip); 273 "
                 "GB/s: https://blog.kubesimplify.com/blog/"
                 "day-3-the-dgx-spark-unpacked-gb10-unified-memory-sm-121-and-the-one-reason-"
                 "this-hardware-exists; 48 SMs (6,144 CUDA cores): "
                 "https://raw.githubusercontent.com/Niko1221/Strata/master/docs/"
                 "DGX_SPARK_LINUX.md",
       .note = "1 PFLOP FP4 with sparsity / 2 = 500 TFLOPS dense, the block-scaled FP4 peak "
               "(tc.nvfp4, tc.mxfp4); sources disagree on bandwidth (273 GB/s; 273-301 GB/s in "
               "the Hot Chips report): 273 used; FP32 given only as 'roughly 31 TFLOPS': left "
               "out; boost clock not given (0: no derived peaks)",
       .name_all_of = {"gb10"}});
}

void add_blackwell_datacenter(std::vector<Sku>& r) {
  r.push_back(
      {.key = "b200",
       .name = "NVIDIA B200 180GB",
       .compute_capability = "10.0",
       .chip = "GB100",  // NVIDIA MIG user guide, supported-GPU table
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
                            {U::tc_int8, 4500},
                            {U::tc_fp6, 4500},
                            {U::tc_mxfp8, 4500},
                            {U::tc_mxfp6, 4500},
                            {U::tc_mxfp4, 9000},
                            {U::tc_nvfp4, 9000}}),
       .source = "NVIDIA HGX B200 specifications (nvidia.com/data-center/hgx): 8-GPU figures "
                 "divided by 8; DGX B200 datasheet: 1,440 GB and 64 TB/s HBM3e per 8 GPUs; FP4 "
                 "and FP8/FP6: HGX B200 column of NVIDIA's GB200 NVL72 / HGX B200 technical "
                 "specifications (per GPU), as reproduced at "
                 "https://zdszero.github.io/Computer/Artificial_Intelligence/Hardware.html; dense "
                 "4.5 PFLOPS FP8 and 9 PFLOPS NVFP4: "
                 "https://docs.vultr.com/inference-cookbook/cuda/getting-started/"
                 "hardware-overview",
       .note = "per-GPU = system / 8; tensor figures printed with sparsity, halved; FP4 18 "
               "PFLOPS / 2 = 9 PFLOPS dense (tc.nvfp4, tc.mxfp4); FP8/FP6 9 PFLOPS / 2 = 4.5 "
               "(tc.fp6, tc.mxfp8, tc.mxfp6): the table gives FP6 equal to FP8, not to FP4; "
               "unscaled tc.fp4 has no published figure; sources disagree: the per-GPU table "
               "gives TF32 2.2 PFLOPS sparse (1.1 dense; 1.125 = 18 / 8 / 2 used) and 180 GB at "
               "7.7 TB/s (8 TB/s = 64 / 8 used); L2 size not in these documents (unknown)",
       .name_all_of = {"b200"}});
  r.push_back({.key = "gb200",
               .name = "NVIDIA GB200 (Blackwell GPU of a GB200 superchip)",
               .compute_capability = "10.0",
               .chip = "GB100",  // NVIDIA MIG user guide, supported-GPU table
               .memory_gib = 186,
               .memory_bytes_per_s = 8.0e12,
               .l2_bytes = std::nullopt,
               .datasheet = tflops({{U::fp64, 40},
                                    {U::fp32, 80},
                                    {U::tc_tf32, 1250},
                                    {U::tc_fp16, 2500},
                                    {U::tc_bf16, 2500},
                                    {U::tc_fp8, 5000},
                                    {U::tc_int8, 5000},
                                    {U::tc_fp6, 5000},
                                    {U::tc_mxfp8, 5000},
                                    {U::tc_mxfp6, 5000},
                                    {U::tc_mxfp4, 10000},
                                    {U::tc_nvfp4, 10000}}),
               .source = kGb200HgxB200Table,
               .note =
                   "GB200 NVL72 column, per GPU: FP4 20, FP8/FP6 10, INT8 10 (POPS), FP16/BF16 5, "
                   "TF32 2.5 PFLOPS printed with sparsity (as the HGX B200 column beside it, whose "
                   "18 PFLOPS FP4 is the b200 row's 9 dense), halved; FP32 80 and FP64 40 TFLOPS "
                   "dense; FP6 equal to FP8; unscaled tc.fp4 has no published figure; SM count and "
                   "clocks not in the table (0: no derived peaks, never matched to a device)",
               .name_all_of = {"gb200"}});
  r.push_back(
      {.key = "b300",
       .name = "NVIDIA B300 (HGX B300)",
       .compute_capability = "10.3",
       .chip = "GB110",  // pci.ids: "GB110 [B300 SXM6 AC]"
       .memory_gib = 288,
       .memory_bytes_per_s = 8.0e12,
       .l2_bytes = std::nullopt,
       .datasheet = tflops({{U::fp64, 1.25},
                            {U::fp32, 75},
                            {U::tc_tf32, 1125},
                            {U::tc_fp16, 2250},
                            {U::tc_bf16, 2250},
                            {U::tc_fp8, 4500},
                            {U::tc_fp6, 4500},
                            {U::tc_mxfp8, 4500},
                            {U::tc_mxfp6, 4500},
                            {U::tc_mxfp4, 13125},
                            {U::tc_nvfp4, 13125}}),
       .source = "NVIDIA HGX B300 specifications (8 GPUs: FP8/FP6 72, FP16/BF16 36, TF32 18 "
                 "PFLOPS with sparsity; FP32 600, FP64 10 TFLOPS; up to 2.3 TB), as reproduced "
                 "at https://fibermall.com/blog/?p=17161; per GPU dense FP4 13,125 TFLOPS (18,000 "
                 "sparse): https://glennklockwood.com/garden/processors/B300; dense BF16 2.25 "
                 "PFLOPS 'per the NVIDIA datasheet': "
                 "https://github.com/NVIDIA/cosmos-framework/pull/114; bandwidth 8 TB/s: NVIDIA "
                 "Technical Blog, 'Inside NVIDIA Blackwell Ultra' "
                 "(https://developer.nvidia.com/blog/"
                 "inside-nvidia-blackwell-ultra-the-chip-powering-the-ai-factory-era)",
       .note = "per GPU = HGX figure / 8, tensor figures with sparsity halved; FP6 equal to FP8 "
               "in the HGX table; FP4 dense is not half the sparse figure on Blackwell Ultra: "
               "13,125 TFLOPS dense (tc.nvfp4, tc.mxfp4) as transcribed; sources disagree on "
               "FP4 (14 PFLOPS at https://verda.com/blog/gb300-nvl72-architecture; 15 PFLOPS "
               "dense NVFP4 is the blog's Blackwell Ultra chip, as in GB300) and on INT8 (2 "
               "POPS per 8 GPUs, 0.15 and 4.5 POPS per GPU in the three pages): INT8 left out; "
               "unscaled tc.fp4 has no published figure; memory 2.3 TB / 8 = 288 GB; SM count "
               "and clocks not in these sources (0: no derived peaks, never matched to a "
               "device)",
       .name_all_of = {"b300"}});
  r.push_back(
      {.key = "gb300",
       .name = "NVIDIA GB300 (Blackwell Ultra GPU of a GB300 superchip)",
       .compute_capability = "10.3",
       .chip = "GB110",  // pci.ids: "GB110 [GB300]"
       .memory_gib = 288,
       .memory_bytes_per_s = 8.0e12,
       .l2_bytes = std::nullopt,
       .datasheet = tflops({{U::tc_fp16, 2500},
                            {U::tc_bf16, 2500},
                            {U::tc_fp8, 5000},
                            {U::tc_fp6, 5000},
                            {U::tc_mxfp8, 5000},
                            {U::tc_mxfp6, 5000},
                            {U::tc_mxfp4, 15000},
                            {U::tc_nvfp4, 15000}}),
       .source =
           "NVIDIA Technical Blog, 'Inside NVIDIA Blackwell Ultra: The Chip Powering the AI "
           "Factory Era' (https://developer.nvidia.com/blog/"
           "inside-nvidia-blackwell-ultra-the-chip-powering-the-ai-factory-era): 15 "
           "PFLOPS dense NVFP4, 288 GB HBM3E, 8 TB/s; NVIDIA GB300 NVL72 specifications "
           "(72 GPUs: FP4 1,440 PFLOPS sparse / 1,080 dense, FP8/FP6 720 PFLOPS), as "
           "reproduced at https://vendordeep.com/report/nvidia-launches-blackwell-ultra-gb300; "
           "FP16/BF16 360 PFLOPS sparse per 72 GPUs, as quoted at "
           "https://github.com/allenai/OLMo-core/pull/747",
       .note = "per GPU = rack figure / 72; FP4 1,080 / 72 = 15 PFLOPS dense (tc.nvfp4, "
               "tc.mxfp4), as the blog states; FP8/FP6 720 / 72 / 2 = 5 PFLOPS dense (tc.fp6 "
               "equal to FP8); FP16/BF16 360 / 72 / 2 = 2.5; sources disagree on INT8 (24 POPS "
               "per rack; 0.165 POPS per GPU at https://verda.com/blog/gb300-nvl72-architecture): "
               "left out; TF32, FP32 and FP64 found only in third-party tables: left out; "
               "unscaled tc.fp4 has no published figure; SM count (the blog's 160 is the full "
               "GPU, not the product) and clocks not in these sources (0: no derived peaks, "
               "never matched to a device)",
       .name_all_of = {"gb300"}});
}

}  // namespace rl::roofline::sku_rows
