// context.topology in results.json (internal): its writer and reader, kept
// beside each other so the two spell every key the same way.  The schema is
// documented in docs/results.md and results/schema-v1.json.
#pragma once

#include "results_json_names.hpp"
#include "results_json_reader.hpp"
#include "results_json_values.hpp"

#include "rl/roofline/topology.hpp"

#include <limits>

namespace rl::roofline::results_json {

template <class J>
J pcie_json(const PcieLink& link) {
  J j = J::object();
  j["generation"] = link.generation;
  j["width"] = link.width;
  return j;
}

template <class J>
J topology_json(const Topology& t) {
  J devices = J::array();
  for (const auto& d : t.devices) {
    J device = J::object();
    device["index"] = d.index;
    device["name"] = d.name;
    device["pci_bus_id"] = d.pci_bus_id;
    device["numa_node"] = d.numa_node ? J(*d.numa_node) : J(nullptr);
    device["pcie_current"] = pcie_json<J>(d.pcie_current);
    device["pcie_max"] = pcie_json<J>(d.pcie_max);
    devices.push_back(std::move(device));
  }
  J pairs = J::array();
  for (const auto& p : t.pairs)
    pairs.push_back(J{{"a", p.a},
                      {"b", p.b},
                      {"path", path_text(p)},
                      {"nvlink_count", p.nvlink_count},
                      {"nvlink_generation", p.nvlink_generation}});
  J j = J::object();
  j["source"] = std::string(to_string(t.source));
  j["note"] = t.note;
  j["devices"] = std::move(devices);
  j["pairs"] = std::move(pairs);
  return j;
}

template <class J>
PcieLink read_pcie(const Reader<J>& parent, std::string_view key) {
  PcieLink link;
  const J* value = parent.find(key);
  if (value == nullptr || value->is_null()) return link;
  const Reader<J> r = parent.object(key);
  link.generation = static_cast<int>(r.integer_or("generation", 0, 0, 64));
  link.width = static_cast<int>(r.integer_or("width", 0, 0, 1024));
  return link;
}

template <class J>
Topology read_topology(const Reader<J>& r) {
  constexpr std::int64_t kMaxIndex = std::numeric_limits<int>::max();
  Topology t;
  const std::string source = r.string("source");
  auto parsed = parse_topology_source(source);
  if (!parsed)
    require_one_of(child(r.pointer(), "source"), source,
                   std::array<std::string_view, 3>{"nvml", "emulator", "unavailable"});
  t.source = parsed.value_or(TopologySource::unavailable);
  t.note = r.optional_string("note");
  const J& devices = array_at(r, "devices");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Reader<J> d(devices[i], child(child(r.pointer(), "devices"), i));
    TopologyDevice device;
    device.index = static_cast<int>(d.integer("index", 0, kMaxIndex));
    device.name = d.optional_string("name");
    device.pci_bus_id = d.optional_string("pci_bus_id");
    if (const J* numa = d.find("numa_node"); numa != nullptr && !numa->is_null())
      device.numa_node = static_cast<int>(d.integer("numa_node", 0, kMaxIndex));
    device.pcie_current = read_pcie(d, "pcie_current");
    device.pcie_max = read_pcie(d, "pcie_max");
    t.devices.push_back(std::move(device));
  }
  const J& pairs = array_at(r, "pairs");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Reader<J> p(pairs[i], child(child(r.pointer(), "pairs"), i));
    TopologyPair pair;
    pair.a = static_cast<int>(p.integer("a", 0, kMaxIndex));
    pair.b = static_cast<int>(p.integer("b", 0, kMaxIndex));
    if (pair.a >= pair.b) fail(p.pointer(), "a pair names two devices, the lower index first");
    const std::string path = p.string("path");
    if (!parse_path_text(path, pair))
      fail(child(p.pointer(), "path"),
           fmt::format("\"{}\" is not NV<n>, PIX, PXB, PHB, NODE, SYS or emulated", path));
    const int count = static_cast<int>(p.integer_or("nvlink_count", 0, 0, 1024));
    // NV<n> states the count twice; a file where they differ is corrupt.
    if (pair.path == PeerPath::nvlink && count != pair.nvlink_count)
      fail(child(p.pointer(), "nvlink_count"),
           fmt::format("{} disagrees with path \"{}\"", count, path));
    pair.nvlink_count = count;
    pair.nvlink_generation = static_cast<int>(p.integer_or("nvlink_generation", 0, 0, 64));
    t.pairs.push_back(pair);
  }
  return t;
}

}  // namespace rl::roofline::results_json
