#include "rl/roofline/sku.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

constexpr double kTera = 1e12;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

using U = ComputeUnit;

Peaks tflops(std::initializer_list<std::pair<ComputeUnit, double>> figures) {
  Peaks p;
  for (auto [unit, value] : figures) p.by_unit[static_cast<std::size_t>(unit)] = value * kTera;
  return p;
}

constexpr std::string_view kHopperSxmTensorClock =
    "NVIDIA rates Hopper tensor-core throughput at 1830 MHz, below the 1980 MHz boost used for "
    "FP32/FP64 (H100 architecture whitepaper; 989.4 TFLOPS = 132 SMs x 4096 FLOP/clk x 1830 MHz)";
constexpr std::string_view kHopperNvlTensorClock =
    "tensor figures imply 1545 MHz (835.5 TFLOPS dense BF16 / (132 SMs x 4096 FLOP/clk)): as on "
    "H100 SXM, NVIDIA rates Hopper tensor throughput below the boost clock";

// Every figure below is transcribed from the document named in `source`;
// `note` says how it was converted.  Nothing is interpolated.  One field per
// line, named; a field left out keeps its default (no tensor clock note, not a
// GeForce tensor rate, no excluded name words).
const std::vector<Sku>& table() {
  static const std::vector<Sku> rows = [] {
    std::vector<Sku> r;
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

    r.push_back(
        {.key = "a10",
         .name = "NVIDIA A10",
         .compute_capability = "8.6",
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
         .source = "NVIDIA A10 Tensor Core GPU datasheet (nvidia.com, a10 datasheet); SMs and L2: "
                   "NVIDIA Ampere GA102 GPU Architecture whitepaper",
         .note = "tensor figures: datasheet dense values (the starred sparse ones halved)",
         .name_all_of = {"a10"}});
    r.push_back({.key = "a10g",
                 .name = "NVIDIA A10G",
                 .compute_capability = "8.6",
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
         .sm_count = 40,
         .boost_clock_mhz = 1590,
         .tensor_clock_mhz = 1590,
         .memory_gib = 16,
         .memory_bytes_per_s = 320e9,
         .l2_bytes = 4 * kMiB,
         .datasheet = tflops({{U::fp32, 8.1}, {U::tc_fp16, 65}, {U::tc_int8, 130}}),
         .source =
             "NVIDIA T4 Tensor Core GPU datasheet (nvidia.com, t4-tensor-core-datasheet); SMs "
             "and L2: NVIDIA Turing GPU Architecture whitepaper",
         .note = "mixed-precision FP16/FP32 tensor figure; T4 has no TF32/BF16/FP8",
         .name_all_of = {"t4"}});
    r.push_back(
        {.key = "l4",
         .name = "NVIDIA L4",
         .compute_capability = "8.9",
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
    r.push_back(
        {.key = "l40s",
         .name = "NVIDIA L40S",
         .compute_capability = "8.9",
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
         .source = "NVIDIA L40S GPU datasheet (nvidia.com, l40s datasheet); SMs and L2: NVIDIA Ada "
                   "GPU Architecture whitepaper",
         .note = "datasheet dense column (the starred sparse column not used)",
         .name_all_of = {"l40s"}});
    r.push_back(
        {.key = "rtx-3090",
         .name = "NVIDIA GeForce RTX 3090",
         .compute_capability = "8.6",
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
         .source =
             "NVIDIA Ampere GA102 GPU Architecture whitepaper, GeForce RTX 3090 specification "
             "table",
         .note = "tensor FP16/BF16 with FP32 accumulate, dense",
         .name_all_of = {"rtx", "3090"},
         .name_none_of = {"ti"}});
    r.push_back(
        {.key = "rtx-4090",
         .name = "NVIDIA GeForce RTX 4090",
         .compute_capability = "8.9",
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
    r.push_back(
        {.key = "rtx-5090",
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
         .source = "NVIDIA RTX Blackwell GPU Architecture whitepaper, GeForce RTX 5090 table (SMs, "
                   "boost clock, FP32, memory, L2)",
         .note = "tensor figures with FP32 accumulate not transcribed: derived peaks only",
         .name_all_of = {"rtx", "5090"}});

    const Peaks h100_sxm = tflops({{U::fp64, 33.5},
                                   {U::fp32, 66.9},
                                   {U::fp16, 133.8},
                                   {U::bf16, 133.8},
                                   {U::tc_tf32, 494.7},
                                   {U::tc_fp16, 989.4},
                                   {U::tc_bf16, 989.4},
                                   {U::tc_fp8, 1978.9},
                                   {U::tc_int8, 1978.9}});
    r.push_back(
        {.key = "h100-sxm",
         .name = "NVIDIA H100 SXM5 80GB",
         .compute_capability = "9.0",
         .sm_count = 132,
         .boost_clock_mhz = 1980,
         .tensor_clock_mhz = 1830,
         .tensor_clock_note = kHopperSxmTensorClock,
         .memory_gib = 80,
         .memory_bytes_per_s = 3.35e12,
         .l2_bytes = 50 * kMiB,
         .datasheet = h100_sxm,
         .source = "NVIDIA H100 Tensor Core GPU Architecture whitepaper, H100 SXM5 dense figures, "
                   "SMs, L2; bandwidth: NVIDIA H100 Tensor Core GPU datasheet (3.35 TB/s)",
         .note = "whitepaper dense figures",
         .name_all_of = {"h100"},
         .name_none_of = {"pcie", "nvl"}});
    r.push_back(
        {.key = "h100-pcie",
         .name = "NVIDIA H100 PCIe 80GB",
         .compute_capability = "9.0",
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
    return r;
  }();
  return rows;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::set<std::string> words_of(std::string_view name) {
  std::set<std::string> words;
  std::string word;
  for (char ch : lower(name)) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += ch;
    } else if (!word.empty()) {
      words.insert(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.insert(word);
  return words;
}

bool is_tensor(ComputeUnit unit) {
  return unit == U::tc_tf32 || unit == U::tc_fp16 || unit == U::tc_bf16 || unit == U::tc_fp8 ||
         unit == U::tc_int8;
}

// GeForce parts halve the FP32-accumulate tensor rates, not INT8 (whitepapers
// of GA102, AD102: INT8 matches the datacenter per-SM rate).
bool halved_on_geforce(ComputeUnit unit) {
  return is_tensor(unit) && unit != U::tc_int8;
}

struct ArchRates {
  std::string_view cc;
  // fp32, fp64, fp16, bf16, tc_tf32, tc_fp16, tc_bf16, tc_fp8, tc_int8 (enum order); 0 = none
  std::array<double, kComputeUnitCount> flop_per_clk;
};

// Dense FLOP per SM per clock (FMA = 2) at datacenter rates.  From the
// architecture whitepapers' per-SM unit counts: e.g. sm_80 has 64 FP32 lanes
// (128 FLOP/clk) and a tensor core doing 256 FP16 FMA/clk x 4 per SM (2048).
constexpr std::array<ArchRates, 7> kArchRates{{
    {"7.5", {128, 4, 256, 0, 0, 1024, 0, 0, 2048}},
    {"8.0", {128, 64, 512, 256, 1024, 2048, 2048, 0, 4096}},
    {"8.6", {256, 4, 256, 256, 512, 1024, 1024, 0, 2048}},
    {"8.9", {256, 4, 256, 256, 512, 1024, 1024, 2048, 2048}},
    {"9.0", {256, 128, 512, 512, 2048, 4096, 4096, 8192, 8192}},
    // Blackwell datacenter: non-tensor FP16/BF16 rates are not in the cited
    // documents, so they are left unknown.
    {"10.0", {256, 128, 0, 0, 4096, 8192, 8192, 16384, 16384}},
    {"12.0", {256, 4, 256, 256, 512, 1024, 1024, 2048, 2048}},
}};

}  // namespace

std::array<ComputeUnit, kComputeUnitCount> all_compute_units() {
  return {U::fp32,    U::fp64,    U::fp16,   U::bf16,   U::tc_tf32,
          U::tc_fp16, U::tc_bf16, U::tc_fp8, U::tc_int8};
}

std::span<const Sku> sku_table() {
  return table();
}

const Sku* find_sku(std::string_view key_or_name) {
  std::string wanted = lower(key_or_name);
  for (const auto& sku : table())
    if (lower(sku.key) == wanted || lower(sku.name) == wanted) return &sku;
  return nullptr;
}

std::optional<double> per_sm_per_clock(std::string_view compute_capability, ComputeUnit unit) {
  for (const auto& arch : kArchRates) {
    if (arch.cc != compute_capability) continue;
    double rate = arch.flop_per_clk[static_cast<std::size_t>(unit)];
    if (rate <= 0) return std::nullopt;
    return rate;
  }
  return std::nullopt;
}

namespace {
std::optional<double> derived(std::string_view cc, int sm_count, bool geforce, ComputeUnit unit,
                              double clock_mhz) {
  auto rate = per_sm_per_clock(cc, unit);
  if (!rate || sm_count <= 0 || !(clock_mhz > 0)) return std::nullopt;
  double per_sm = *rate * ((geforce && halved_on_geforce(unit)) ? 0.5 : 1.0);
  return per_sm * sm_count * clock_mhz * 1e6;
}
}  // namespace

std::optional<double> derived_peak(const Sku& sku, ComputeUnit unit, double clock_mhz) {
  return derived(sku.compute_capability, sku.sm_count, sku.geforce_tensor_rate, unit, clock_mhz);
}

std::optional<double> derived_peak_at_datasheet_clock(const Sku& sku, ComputeUnit unit) {
  return derived_peak(sku, unit, is_tensor(unit) ? sku.tensor_clock_mhz : sku.boost_clock_mhz);
}

std::optional<double> derived_peak_for_device(const DeviceInfo& device, const Sku* matched,
                                              ComputeUnit unit, double clock_mhz) {
  bool geforce = matched ? matched->geforce_tensor_rate : words_of(device.name).contains("geforce");
  return derived(device.compute_capability, device.sm_count, geforce, unit, clock_mhz);
}

SkuMatch match_sku(const DeviceInfo& device) {
  auto words = words_of(device.name);
  std::vector<const Sku*> by_name;
  for (const auto& sku : table()) {
    bool ok = true;
    for (auto w : sku.name_all_of)
      if (!w.empty() && !words.contains(std::string(w))) ok = false;
    for (auto w : sku.name_none_of)
      if (!w.empty() && words.contains(std::string(w))) ok = false;
    if (ok) by_name.push_back(&sku);
  }
  if (by_name.empty())
    return {nullptr, fmt::format("no SKU row matches the name \"{}\"", device.name)};

  double memory_gib = static_cast<double>(device.memory_bytes) / kGiB;
  std::vector<const Sku*> matches;
  std::string rejected;
  for (const Sku* sku : by_name) {
    bool sm_ok = sku->sm_count == device.sm_count;
    bool cc_ok = sku->compute_capability == device.compute_capability;
    bool memory_ok = std::abs(memory_gib - sku->memory_gib) <= 0.10 * sku->memory_gib;
    if (sm_ok && cc_ok && memory_ok) {
      matches.push_back(sku);
    } else {
      rejected += fmt::format("{}{} (needs {} SMs, cc {}, ~{} GiB)", rejected.empty() ? "" : ", ",
                              sku->key, sku->sm_count, sku->compute_capability, sku->memory_gib);
    }
  }
  if (matches.size() == 1)
    return {matches.front(),
            fmt::format("matched {} by name, {} SMs, cc {} and {:.1f} GiB", matches.front()->key,
                        device.sm_count, device.compute_capability, memory_gib)};
  if (matches.empty())
    return {nullptr, fmt::format("\"{}\" ({} SMs, cc {}, {:.1f} GiB) matches no row by SM count, "
                                 "compute capability and memory: {}",
                                 device.name, device.sm_count, device.compute_capability,
                                 memory_gib, rejected)};
  std::string names;
  for (const Sku* sku : matches) names += fmt::format("{}{}", names.empty() ? "" : ", ", sku->key);
  return {nullptr, fmt::format("\"{}\" is ambiguous between {}; pass --sku", device.name, names)};
}

std::vector<Ceiling> datasheet_ceilings(const Sku& sku) {
  std::vector<Ceiling> out;
  std::string method = fmt::format("datasheet: {}", sku.source);
  if (sku.memory_bytes_per_s > 0) {
    Ceiling c;
    c.name = "hbm.datasheet";
    c.kind = "memory";
    c.value = sku.memory_bytes_per_s;
    c.unit = "B/s";
    c.method = method;
    c.datasheet = sku.memory_bytes_per_s;
    out.push_back(std::move(c));
  }
  for (ComputeUnit unit : all_compute_units()) {
    auto peak = sku.datasheet[unit];
    if (!peak) continue;
    Ceiling c;
    c.name = std::string(compute_ceiling_name(unit));
    c.kind = "compute";
    c.value = *peak;
    c.unit = "FLOP/s";
    c.method = method;
    c.datasheet = *peak;
    c.derived_peak = derived_peak_at_datasheet_clock(sku, unit);
    out.push_back(std::move(c));
  }
  return out;
}

int compute_capability_x10(std::string_view cc) {
  const auto dot = cc.find('.');
  int major = 0, minor = 0;
  if (dot == std::string_view::npos ||
      std::from_chars(cc.data(), cc.data() + dot, major).ec != std::errc{} ||
      std::from_chars(cc.data() + dot + 1, cc.data() + cc.size(), minor).ec != std::errc{})
    return 0;
  return major * 10 + minor;
}

}  // namespace rl::roofline
