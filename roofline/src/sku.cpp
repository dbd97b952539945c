#include "rl/roofline/sku.hpp"

#include "sku_rows.hpp"

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

Peaks sku_rows::tflops(std::initializer_list<std::pair<ComputeUnit, double>> figures) {
  Peaks p;
  for (auto [unit, value] : figures) p.by_unit[static_cast<std::size_t>(unit)] = value * kTera;
  return p;
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

using U = ComputeUnit;

// Listing order: workstation and consumer parts by generation, then the
// datacenter parts by generation.
const std::vector<Sku>& table() {
  static const std::vector<Sku> rows = [] {
    std::vector<Sku> r;
    sku_rows::add_turing_ampere_ada(r);
    sku_rows::add_blackwell_rtx(r);
    sku_rows::add_hopper(r);
    sku_rows::add_blackwell_datacenter(r);
    sku_rows::add_links(r);
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
  switch (unit) {
    case U::fp32:
    case U::fp64:
    case U::fp16:
    case U::bf16:
      return false;
    case U::tc_tf32:
    case U::tc_fp16:
    case U::tc_bf16:
    case U::tc_fp8:
    case U::tc_int8:
    case U::tc_fp6:
    case U::tc_fp4:
    case U::tc_mxfp8:
    case U::tc_mxfp6:
    case U::tc_mxfp4:
    case U::tc_nvfp4:
      return true;
  }
  return false;
}

// GeForce parts halve the FP32-accumulate tensor rates, not INT8 (whitepapers
// of GA102, AD102: INT8 matches the datacenter per-SM rate), and not the
// block-scaled FP4 rate: the RTX 5090's dense FP4 figure (1676 TFLOPS) is
// 4096 FLOP/clk/SM at 170 SMs and 2407 MHz, the 12.0 rate below unhalved.
bool halved_on_geforce(ComputeUnit unit) {
  return is_tensor(unit) && unit != U::tc_int8 && unit != U::tc_mxfp4 && unit != U::tc_nvfp4;
}

struct ArchRates {
  std::string_view cc;
  std::array<double, kComputeUnitCount> flop_per_clk{};  // indexed by ComputeUnit; 0 = none
};

constexpr ArchRates rates_of(std::string_view cc,
                             std::initializer_list<std::pair<ComputeUnit, double>> rates) {
  ArchRates a{cc, {}};
  for (const auto& [unit, rate] : rates) a.flop_per_clk[static_cast<std::size_t>(unit)] = rate;
  return a;
}

// Dense FLOP per SM per clock (FMA = 2) at datacenter rates.  From the
// architecture whitepapers' per-SM unit counts: e.g. sm_80 has 64 FP32 lanes
// (128 FLOP/clk) and a tensor core doing 256 FP16 FMA/clk x 4 per SM (2048).
// A unit left out has no known rate on that architecture.
constexpr std::array<ArchRates, 7> kArchRates{{
    rates_of(
        "7.5",
        {{U::fp32, 128}, {U::fp64, 4}, {U::fp16, 256}, {U::tc_fp16, 1024}, {U::tc_int8, 2048}}),
    rates_of("8.0", {{U::fp32, 128},
                     {U::fp64, 64},
                     {U::fp16, 512},
                     {U::bf16, 256},
                     {U::tc_tf32, 1024},
                     {U::tc_fp16, 2048},
                     {U::tc_bf16, 2048},
                     {U::tc_int8, 4096}}),
    rates_of("8.6", {{U::fp32, 256},
                     {U::fp64, 4},
                     {U::fp16, 256},
                     {U::bf16, 256},
                     {U::tc_tf32, 512},
                     {U::tc_fp16, 1024},
                     {U::tc_bf16, 1024},
                     {U::tc_int8, 2048}}),
    rates_of("8.9", {{U::fp32, 256},
                     {U::fp64, 4},
                     {U::fp16, 256},
                     {U::bf16, 256},
                     {U::tc_tf32, 512},
                     {U::tc_fp16, 1024},
                     {U::tc_bf16, 1024},
                     {U::tc_fp8, 2048},
                     {U::tc_int8, 2048}}),
    rates_of("9.0", {{U::fp32, 256},
                     {U::fp64, 128},
                     {U::fp16, 512},
                     {U::bf16, 512},
                     {U::tc_tf32, 2048},
                     {U::tc_fp16, 4096},
                     {U::tc_bf16, 4096},
                     {U::tc_fp8, 8192},
                     {U::tc_int8, 8192}}),
    // Blackwell datacenter: non-tensor FP16/BF16 rates are not in the cited
    // documents, so they are left unknown.  FP6 and the MX-scaled 8/6-bit
    // kinds at the FP8 rate, MXFP4/NVFP4 at twice it: the B200 datasheet gives
    // one "FP8/FP6" figure and an FP4 figure twice it (sku_blackwell.cpp).
    // Unscaled FP4 (kind::f8f6f4 with e2m1) has no published rate.
    rates_of("10.0", {{U::fp32, 256},
                      {U::fp64, 128},
                      {U::tc_tf32, 4096},
                      {U::tc_fp16, 8192},
                      {U::tc_bf16, 8192},
                      {U::tc_fp8, 16384},
                      {U::tc_int8, 16384},
                      {U::tc_fp6, 16384},
                      {U::tc_mxfp8, 16384},
                      {U::tc_mxfp6, 16384},
                      {U::tc_mxfp4, 32768},
                      {U::tc_nvfp4, 32768}}),
    // Blackwell RTX (GB202): Ada's rates, plus the block-scaled FP4 rate of
    // the RTX 5090's figure.  FP6 and the MX-scaled 8/6-bit kinds have no
    // published figure here.
    rates_of("12.0", {{U::fp32, 256},
                      {U::fp64, 4},
                      {U::fp16, 256},
                      {U::bf16, 256},
                      {U::tc_tf32, 512},
                      {U::tc_fp16, 1024},
                      {U::tc_bf16, 1024},
                      {U::tc_fp8, 2048},
                      {U::tc_int8, 2048},
                      {U::tc_mxfp4, 4096},
                      {U::tc_nvfp4, 4096}}),
}};

}  // namespace

std::array<ComputeUnit, kComputeUnitCount> all_compute_units() {
  std::array<ComputeUnit, kComputeUnitCount> units{};
  for (std::size_t i = 0; i < units.size(); ++i) units[i] = static_cast<ComputeUnit>(i);
  return units;
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
      rejected += fmt::format("{}{} ", rejected.empty() ? "" : ", ", sku->key);
      rejected += sku->sm_count > 0
                      ? fmt::format("(needs {} SMs, cc {}, ~{} GiB)", sku->sm_count,
                                    sku->compute_capability, sku->memory_gib)
                      : std::string("(its SM count is not in its sources: never matched)");
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
