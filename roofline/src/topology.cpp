#include "rl/roofline/topology.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

// nvidia-smi's words for the paths other than NV<n>.
constexpr std::array<std::pair<PeerPath, std::string_view>, 6> kPathWords{{
    {PeerPath::pix, "PIX"},
    {PeerPath::pxb, "PXB"},
    {PeerPath::phb, "PHB"},
    {PeerPath::node, "NODE"},
    {PeerPath::sys, "SYS"},
    {PeerPath::emulated, "emulated"},
}};

}  // namespace

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink:
      return "NVLink";
    case LinkKind::pcie:
      return "PCIe";
    case LinkKind::c2c:
      return "NVLink-C2C";
  }
  return "";
}

std::string_view to_string(TopologySource source) {
  switch (source) {
    case TopologySource::nvml:
      return "nvml";
    case TopologySource::emulator:
      return "emulator";
    case TopologySource::unavailable:
      return "unavailable";
  }
  return "";
}

std::optional<TopologySource> parse_topology_source(std::string_view text) {
  for (auto s : {TopologySource::nvml, TopologySource::emulator, TopologySource::unavailable})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

const TopologyPair* Topology::pair(int a, int b) const {
  if (a > b) std::swap(a, b);
  for (const auto& p : pairs)
    if (p.a == a && p.b == b) return &p;
  return nullptr;
}

const TopologyDevice* Topology::device(int index) const {
  for (const auto& d : devices)
    if (d.index == index) return &d;
  return nullptr;
}

std::string path_text(const TopologyPair& pair) {
  if (pair.path == PeerPath::nvlink) return fmt::format("NV{}", pair.nvlink_count);
  for (const auto& [path, word] : kPathWords)
    if (path == pair.path) return std::string(word);
  return "?";
}

bool parse_path_text(std::string_view text, TopologyPair& pair) {
  for (const auto& [path, word] : kPathWords)
    if (text == word) {
      pair.path = path;
      return true;
    }
  if (!text.starts_with("NV") || text.size() == 2) return false;
  int count = 0;
  const char* first = text.data() + 2;
  const char* last = text.data() + text.size();
  auto [end, error] = std::from_chars(first, last, count);
  if (error != std::errc() || end != last || count <= 0) return false;
  pair.path = PeerPath::nvlink;
  pair.nvlink_count = count;
  return true;
}

Topology emulated_topology(int device_count, std::string_view device_name) {
  Topology t;
  t.source = TopologySource::emulator;
  t.note = "CPU emulator: the devices share host memory; no PCIe, NVLink or NUMA placement";
  for (int i = 0; i < device_count; ++i)
    t.devices.push_back({.index = i, .name = std::string(device_name)});
  for (int a = 0; a < device_count; ++a)
    for (int b = a + 1; b < device_count; ++b)
      t.pairs.push_back({.a = a, .b = b, .path = PeerPath::emulated});
  return t;
}

std::string topology_matrix_text(const Topology& t) {
  constexpr int kCell = 9;  // "emulated" and a space
  std::string out = fmt::format("{:<{}}", "", kCell);
  for (const auto& d : t.devices)
    out += fmt::format("{:<{}}", fmt::format("GPU{}", d.index), kCell);
  out += "NUMA Affinity\n";
  for (const auto& row : t.devices) {
    out += fmt::format("{:<{}}", fmt::format("GPU{}", row.index), kCell);
    for (const auto& column : t.devices) {
      std::string cell = "X";
      if (row.index != column.index) {
        const TopologyPair* p = t.pair(row.index, column.index);
        cell = p ? path_text(*p) : "?";
      }
      out += fmt::format("{:<{}}", cell, kCell);
    }
    out += row.numa_node ? fmt::format("{}", *row.numa_node) : std::string("N/A");
    out += "\n";
  }
  return out;
}

}  // namespace rl::roofline
