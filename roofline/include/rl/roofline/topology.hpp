// The node's topology (issue 29): which devices a run saw and how each pair of
// them is connected, as results.json's `context.topology` carries it.  Plain
// C++: the CUDA backend fills it from NVML (bench/src/nvml.cpp), the emulator
// backend writes an emulated one, and the node report reads it on any machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline {

// How two GPUs reach each other, in the words of `nvidia-smi topo -m`'s legend:
//   nvlink  NV<n>: a bonded set of n NVLinks (directly or through NVSwitch)
//   pix     at most one PCIe bridge
//   pxb     several PCIe bridges, no host bridge
//   phb     a PCIe host bridge (typically the CPU)
//   node    PCIe and the interconnect between host bridges of one NUMA node
//   sys     PCIe and the interconnect between NUMA nodes (QPI/UPI, Infinity Fabric)
// plus `emulated`: the CPU emulator's devices, which share host memory.
enum class PeerPath { nvlink, pix, pxb, phb, node, sys, emulated };

// The kind of a link a datasheet rates: the SKU table's figures and the node
// report's verdicts are per kind.
enum class LinkKind { nvlink, pcie, c2c };
std::string_view to_string(LinkKind kind);  // "NVLink" | "PCIe" | "NVLink-C2C"

// Where `context.topology` came from.
enum class TopologySource { nvml, emulator, unavailable };
std::string_view to_string(TopologySource source);  // "nvml" | "emulator" | "unavailable"
std::optional<TopologySource> parse_topology_source(std::string_view text);

struct PcieLink {  // 0 = unknown
  int generation = 0;
  int width = 0;  // lanes
};

struct TopologyDevice {
  int index = 0;                   // the CUDA device index: what records' src/dst/device name
  std::string name{};              // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id{};        // NVML's spelling, "00000000:18:00.0"; "" unknown
  std::optional<int> numa_node{};  // the host NUMA node the device is closest to
  PcieLink pcie_current{}, pcie_max{};
};

// One unordered pair (a < b).
struct TopologyPair {
  int a = 0, b = 0;
  PeerPath path = PeerPath::sys;
  int nvlink_count = 0;       // NVLinks bonded between the two (NV<n>); 0 without NVLink
  int nvlink_generation = 0;  // NVLink 4 on Hopper; 0 without NVLink or unknown
};

struct Topology {
  TopologySource source = TopologySource::unavailable;
  std::string note;                     // why it is unavailable, or what the source could not say
  std::vector<TopologyDevice> devices;  // in index order
  std::vector<TopologyPair> pairs;      // one per unordered pair the source knew

  // The pair joining devices a and b (either order); nullptr when unknown.
  const TopologyPair* pair(int a, int b) const;
  const TopologyDevice* device(int index) const;
};

// The path as `nvidia-smi topo -m` prints it: "NV18", "PIX", ..., "SYS",
// and "emulated" for an emulated pair.
std::string path_text(const TopologyPair& pair);
// The inverse: sets path and, for "NV<n>", nvlink_count; false for any other text.
bool parse_path_text(std::string_view text, TopologyPair& pair);

// What the emulator reports for `device_count` devices named `device_name`:
// every pair `emulated`, no PCI bus, no NUMA node, no PCIe link.
Topology emulated_topology(int device_count, std::string_view device_name);

// The matrix as `nvidia-smi topo -m` shows it: a header of GPU0..GPUn-1, one
// row per device with "X" on the diagonal, the path of each pair, then the
// device's NUMA node; pairs the topology does not know print "?".
std::string topology_matrix_text(const Topology& topology);

}  // namespace rl::roofline
