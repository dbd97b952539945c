// The SKU datasheet table: what NVIDIA publishes for each GPU, with the
// source of every row, and the derived theoretical peak (SMs x per-SM rate x
// clock) that checks it.
//
// Conventions:
//  - Peaks are DENSE (never the 2:4-sparse marketing figure), SI units:
//    FLOP/s (INT8 in OP/s), B/s.  Datasheets that print "X TFLOPS*" with
//    sparsity are halved, and the row's note says so.
//  - Tensor-core FP16/BF16/FP8/TF32 peaks are the FP32-accumulate rates (what
//    a GEMM with float accumulation reaches).  GeForce parts run those at half
//    the rate of the same-architecture datacenter parts; `geforce_tensor_rate`
//    records it instead of a second per-SM table.
//  - Blackwell datasheets give one "FP8/FP6" figure and one "FP4" figure.
//    The FP8/FP6 figure is the peak of tc.fp8, tc.fp6, tc.mxfp8 and tc.mxfp6
//    (the 8- and 6-bit kinds, unscaled or MX block-scaled); the FP4 figure is
//    the peak of the block-scaled 4-bit kinds tc.nvfp4 and tc.mxfp4 (NVIDIA
//    calls the Blackwell Ultra figure "dense NVFP4").  tc.fp4, unscaled e2m1
//    through kind::f8f6f4, has no published figure and is left unknown.
//  - A missing figure (std::nullopt) means the cited source does not give it;
//    it is never filled in from somewhere else.  A row's SM count and clocks
//    are 0 when its sources do not give them: it then has no derived peaks and
//    never matches a measured device.
#pragma once

#include "rl/roofline/cost.hpp"
#include "rl/roofline/results.hpp"
#include "rl/roofline/topology.hpp"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace rl::roofline {

// Every unit, in enum order (kComputeUnitCount is in cost.hpp).
std::array<ComputeUnit, kComputeUnitCount> all_compute_units();

struct Peaks {  // dense, FLOP/s (OP/s for INT8); indexed by ComputeUnit
  std::array<std::optional<double>, kComputeUnitCount> by_unit{};
  std::optional<double> operator[](ComputeUnit unit) const {
    return by_unit[static_cast<std::size_t>(unit)];
  }
};

// A link as the datasheet rates it.  Datasheets print NVLink, PCIe and C2C
// bandwidth as the total of both directions ("900 GB/s" on H100 SXM is 450
// GB/s each way); the table keeps that bidirectional figure and derives the
// per-direction one, never the other way round.
struct LinkFigure {
  int generation = 0;  // NVLink 4, PCIe 5; 0 for NVLink-C2C (no generations) or unknown
  int lanes = 0;       // NVLink links per GPU, PCIe lanes; 0 = not in the source
  double bidirectional_bytes_per_s = 0;  // both directions together, B/s
  std::string_view source{};             // the document the figure is from
  std::string_view note{};               // where sources disagree, how it was converted
  double per_direction_bytes_per_s() const { return bidirectional_bytes_per_s / 2; }
};

struct Sku {
  std::string_view key;                 // "h100-sxm": what --sku takes
  std::string_view name;                // "NVIDIA H100 SXM5 80GB"
  std::string_view compute_capability;  // "9.0"
  // The GPU die as CUPTI's profiler spells it ("GH100"), what `roofline
  // counters` plans for; the row's comment cites where the name is from.
  // Empty: not known.
  std::string_view chip{};
  int sm_count = 0;            // 0: not in the row's sources
  double boost_clock_mhz = 0;  // 0: not in the row's sources
  // The clock the datasheet's tensor-core figures correspond to.  Equal to the
  // boost clock except where the vendor rates tensor throughput lower
  // (Hopper, Blackwell); `tensor_clock_note` then says why and where from.
  double tensor_clock_mhz = 0;
  std::string_view tensor_clock_note{};
  bool geforce_tensor_rate = false;  // FP32-accumulate tensor ops at half rate
  double memory_gib = 0;             // marketed size ("80 GB" = 80 GiB class)
  double memory_bytes_per_s = 0;     // datasheet bandwidth
  std::optional<double> l2_bytes;
  Peaks datasheet;
  std::string_view source;  // documents every figure of the row comes from
  std::string_view note;    // how figures were converted (sparse halved, per-GPU share)
  // Device-name matching (case-insensitive, whole words): all of these...
  std::array<std::string_view, 3> name_all_of{};
  // ...and none of these.
  std::array<std::string_view, 3> name_none_of{};
  // Links, where the row's datasheet gives them (nullopt: it does not).
  std::optional<LinkFigure> nvlink{};
  std::optional<LinkFigure> pcie{};
  std::optional<LinkFigure> c2c{};  // Grace to GPU (GB200, GB300), CPU die to GPU die (GB10)
  const std::optional<LinkFigure>& link(LinkKind kind) const {
    return kind == LinkKind::nvlink ? nvlink : kind == LinkKind::pcie ? pcie : c2c;
  }
};

std::span<const Sku> sku_table();

// "NVLink 4, 18 links" / "PCIe 5 x16" / "NVLink-C2C": the link a figure rates.
std::string link_name(LinkKind kind, int generation, int lanes);
// "NVLink 4, 18 links: 900 GB/s bidirectional (450 GB/s per direction)".
std::string link_figure_text(LinkKind kind, const LinkFigure& figure);

// By key ("h100-sxm") or full name, case-insensitive; nullptr when unknown.
const Sku* find_sku(std::string_view key_or_name);

// "9.0" -> 90, "12.0" -> 120: compute capability x10, as registry records
// state min_cc; 0 when the text is not "<major>.<minor>".
int compute_capability_x10(std::string_view compute_capability);

// Dense peak per SM per clock (FLOP, FMA = 2) for a compute capability at
// datacenter rates; nullopt when the architecture has no such unit.
std::optional<double> per_sm_per_clock(std::string_view compute_capability, ComputeUnit unit);

// SMs x per-SM rate x clock, with the GeForce tensor halving applied.
std::optional<double> derived_peak(const Sku& sku, ComputeUnit unit, double clock_mhz);
// At the clock the datasheet uses for that unit (boost, or tensor clock).
std::optional<double> derived_peak_at_datasheet_clock(const Sku& sku, ComputeUnit unit);
// For a measured device: its SM count and compute capability, at an observed
// clock; GeForce halving taken from the matched row when there is one.
std::optional<double> derived_peak_for_device(const DeviceInfo& device, const Sku* matched,
                                              ComputeUnit unit, double clock_mhz);

struct SkuMatch {
  const Sku* sku = nullptr;  // nullptr: unknown device (never a guess)
  std::string reason;        // why it matched, or why nothing did
};
// A row matches when its name words are in the device name, the SM count is
// equal, the compute capability is equal and the memory is within 10% of the
// marketed size (drivers report less than the marketed figure).  Exactly one
// row must match.
SkuMatch match_sku(const DeviceInfo& device);

// The datasheet as ceilings (method "datasheet: <source>"): one memory
// ceiling "hbm.datasheet" and one compute ceiling per known unit.  What
// `roofline model --sku` predicts with.
std::vector<Ceiling> datasheet_ceilings(const Sku& sku);

}  // namespace rl::roofline
