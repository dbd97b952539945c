// The SKU table's link figures (issue 29): NVLink, PCIe and NVLink-C2C per
// row, each with the document it is transcribed from.  Kept apart from the
// compute rows (sku_*.cpp) because their sources differ: the interconnect
// line of a datasheet, an architecture whitepaper for the link count.
//
// Every figure is the datasheet's, bidirectional (both directions together),
// as NVIDIA prints it; LinkFigure::per_direction_bytes_per_s halves it.  A
// row the datasheets give no link figure for has none (A10G, the GeForce and
// RTX PRO parts' bandwidth), never one filled in from a sibling.
#include "sku_rows.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace rl::roofline::sku_rows {

namespace {

constexpr double kGB = 1e9;

// PCIe figures as the datasheets print them (x16, both directions).  Tables
// elsewhere often print the per-direction figure (x16 Gen5: 64 GB/s), which
// reads as a disagreement; the note says so.
constexpr LinkFigure pcie(int generation, double gb_per_s, std::string_view source) {
  return {.generation = generation,
          .lanes = 16,
          .bidirectional_bytes_per_s = gb_per_s * kGB,
          .source = source,
          .note = "Third-party tables often print x16 PCIe per direction, half this figure"};
}

constexpr std::string_view kA100Datasheet =
    "NVIDIA A100 Tensor Core GPU datasheet, interconnect line (NVLink 600GB/s, PCIe Gen4 "
    "64GB/s); 12 third-generation links: NVIDIA A100 architecture whitepaper";
constexpr std::string_view kH100Datasheet =
    "NVIDIA H100 Tensor Core GPU datasheet, interconnect line; 18 fourth-generation links "
    "(50 GB/s each): NVIDIA H100 architecture whitepaper";
constexpr std::string_view kH200Datasheet =
    "NVIDIA H200 Tensor Core GPU datasheet, interconnect line";
constexpr std::string_view kNvlink5 =
    "fifth-generation NVLink, 18 links, 1.8 TB/s GPU-to-GPU: NVIDIA Blackwell architecture "
    "technical brief and the HGX/NVL72 specifications";
constexpr std::string_view kGraceC2c =
    "NVIDIA GB200 NVL72 / GB300 NVL72 specifications: NVLink-C2C 900 GB/s bidirectional";
constexpr std::string_view kGraceC2cNote =
    "The specification gives the Grace CPU's NVLink-C2C figure per Superchip (one Grace, two "
    "GPUs); how it divides between the two GPUs it does not say";

Sku& row(std::vector<Sku>& rows, std::string_view key) {
  for (auto& sku : rows)
    if (sku.key == key) return sku;
  throw std::logic_error("sku_links: no row " + std::string(key));
}

}  // namespace

void add_links(std::vector<Sku>& r) {
  for (auto key : {"a100-sxm4-40gb", "a100-sxm4-80gb"}) {
    row(r, key).nvlink = {.generation = 3,
                          .lanes = 12,
                          .bidirectional_bytes_per_s = 600 * kGB,
                          .source = kA100Datasheet};
    row(r, key).pcie = pcie(4, 64, kA100Datasheet);
  }
  for (auto key : {"a100-pcie-40gb", "a100-pcie-80gb"}) {
    row(r, key).nvlink = {.generation = 3,
                          .lanes = 12,
                          .bidirectional_bytes_per_s = 600 * kGB,
                          .source = kA100Datasheet,
                          .note = "Through NVLink bridges, two GPUs only"};
    row(r, key).pcie = pcie(4, 64, kA100Datasheet);
  }
  row(r, "a10").pcie = pcie(4, 64, "NVIDIA A10 Tensor Core GPU datasheet (PCIe Gen4 64GB/s)");
  row(r, "t4").pcie = pcie(3, 32, "NVIDIA T4 datasheet (x16 PCIe Gen3, 32 GB/s interconnect)");
  row(r, "l4").pcie = pcie(4, 64, "NVIDIA L4 Tensor Core GPU datasheet (PCIe Gen4 x16 64GB/s)");
  row(r, "l40s").pcie = pcie(4, 64, "NVIDIA L40S datasheet (PCIe Gen4 x16: 64GB/s bidirectional)");
  row(r, "rtx-3090").nvlink = {
      .generation = 3,
      .lanes = 4,
      .bidirectional_bytes_per_s = 112.5 * kGB,
      .source =
          "NVIDIA Ampere GA102 GPU architecture whitepaper: four x4 third-generation "
          "links, 14.0625 GB/s each way each, 112.5 GB/s total between two GPUs",
      .note = "An NVLink bridge between two cards"};

  row(r, "h100-sxm").nvlink = {.generation = 4,
                               .lanes = 18,
                               .bidirectional_bytes_per_s = 900 * kGB,
                               .source = kH100Datasheet};
  row(r, "h100-sxm").pcie = pcie(5, 128, kH100Datasheet);
  for (auto key : {"h100-pcie", "h100-nvl"}) {
    row(r, key).nvlink = {.generation = 4,
                          .bidirectional_bytes_per_s = 600 * kGB,
                          .source = kH100Datasheet,
                          .note = "Through NVLink bridges; the datasheet gives no link count"};
    row(r, key).pcie = pcie(5, 128, kH100Datasheet);
  }
  row(r, "h200-sxm").nvlink = {.generation = 4,
                               .lanes = 18,
                               .bidirectional_bytes_per_s = 900 * kGB,
                               .source = kH200Datasheet};
  row(r, "h200-sxm").pcie = pcie(5, 128, kH200Datasheet);
  row(r, "h200-nvl").nvlink = {
      .generation = 4,
      .bidirectional_bytes_per_s = 900 * kGB,
      .source = kH200Datasheet,
      .note = "2- or 4-way NVLink bridge, 900GB/s per GPU; no link count given"};
  row(r, "h200-nvl").pcie = pcie(5, 128, kH200Datasheet);

  for (auto key : {"b200", "gb200", "b300", "gb300"})
    row(r, key).nvlink = {
        .generation = 5, .lanes = 18, .bidirectional_bytes_per_s = 1800 * kGB, .source = kNvlink5};
  for (auto key : {"gb200", "gb300"})
    row(r, key).c2c = {
        .bidirectional_bytes_per_s = 900 * kGB, .source = kGraceC2c, .note = kGraceC2cNote};
  row(r, "dgx-spark").c2c = {
      .bidirectional_bytes_per_s = 600 * kGB,
      .source =
          "GB10 at Hot Chips 2025 (NVIDIA's presentation as reported by The Register): "
          "NVLink-C2C between the CPU and GPU dies, 600GB/s bidirectional",
      .note =
          "Sources disagree: 600GB/s (Hot Chips, as reported); '5x the bandwidth of PCIe "
          "Gen 5' (NVIDIA's wording as third-party pages quote it, no figure); 252 GB/s (a "
          "third-party guide)"};
}

}  // namespace rl::roofline::sku_rows

namespace rl::roofline {

std::string link_name(LinkKind kind, int generation, int lanes) {
  std::string name(to_string(kind));
  if (generation > 0) name += fmt::format(" {}", generation);
  if (lanes > 0)
    name += kind == LinkKind::pcie ? fmt::format(" x{}", lanes)
                                   : fmt::format(", {} link{}", lanes, lanes == 1 ? "" : "s");
  return name;
}

std::string link_figure_text(LinkKind kind, const LinkFigure& f) {
  return fmt::format("{}: {:g} GB/s bidirectional ({:g} GB/s per direction)",
                     link_name(kind, f.generation, f.lanes), f.bidirectional_bytes_per_s / 1e9,
                     f.per_direction_bytes_per_s() / 1e9);
}

}  // namespace rl::roofline
