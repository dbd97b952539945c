// The node's topology from NVML (issue 29): each CUDA device's PCI bus id,
// NUMA node and PCIe link, and each pair's path as nvidia-smi topo -m names it
// (NV<n> from the NVLinks, else the PCIe level of the common ancestor).
#include "nvml_api.hpp"
#include "rl/bench/nvml.hpp"

#include <algorithm>
#include <bit>
#include <iterator>
#include <string>
#include <vector>

namespace rl::bench {

using namespace nvml_abi;  // the names nvml.h would give (nvml_api.hpp)

namespace {

// nvmlNvlinkVersion_t -> the NVLink generation (1.0 = 1, 2.0 = 2, 2.2 = 3,
// 3.0 = 4, 3.1 = 5, 4.0 = 6, 5.0 = 7 in nvml.h): A100 reports 4 or 5, which
// is NVLink 3, not 4 or 5.  0 for a value this table does not know.
int nvlink_generation(unsigned version) {
  constexpr int kGeneration[] = {0, 1, 2, 2, 3, 3, 4, 5};
  return version < std::size(kGeneration) ? kGeneration[version] : 0;
}

// nvmlGpuTopologyLevel_t -> nvidia-smi's word.  INTERNAL (two GPUs on one
// board, e.g. K80) sits behind the board's own PCIe switch: PIX.
std::optional<roofline::PeerPath> pcie_path(int level) {
  switch (level) {
    case 0:
    case 10:
      return roofline::PeerPath::pix;
    case 20:
      return roofline::PeerPath::pxb;
    case 30:
      return roofline::PeerPath::phb;
    case 40:
      return roofline::PeerPath::node;
    case 50:
      return roofline::PeerPath::sys;
    default:
      return std::nullopt;
  }
}

bool same_pci(const NvmlPciInfo& a, const NvmlPciInfo& b) {
  return a.domain == b.domain && a.bus == b.bus && a.device == b.device;
}

// What NVML says about one device's NVLinks: links per remote bus, links to
// NVSwitches, and the generation of the first active link.
struct DeviceLinks {
  std::vector<NvmlPciInfo> remote;  // one per active link to a GPU (or unknown remote)
  int switch_links = 0;
  int generation = 0;
};

}  // namespace

roofline::Topology Nvml::topology(const std::vector<std::string>& cuda_uuids,
                                  const std::vector<std::string>& names) const {
  const Api& api = *api_;
  roofline::Topology t;
  t.source = roofline::TopologySource::nvml;
  std::vector<std::string> missing;
  auto need = [&](const void* fn, const char* name) {
    if (fn == nullptr && std::find(missing.begin(), missing.end(), name) == missing.end())
      missing.emplace_back(name);
    return fn != nullptr;
  };
  std::vector<NvmlDevice> handles(cuda_uuids.size(), nullptr);
  std::vector<NvmlPciInfo> pci(cuda_uuids.size(), NvmlPciInfo{});
  std::vector<DeviceLinks> links(cuda_uuids.size());
  for (unsigned i = 0; i < cuda_uuids.size(); ++i) {
    roofline::TopologyDevice d;
    d.index = static_cast<int>(i);
    d.name = i < names.size() ? names[i] : "";
    bool found = api.handle_by_uuid != nullptr && !cuda_uuids[i].empty() &&
                 api.handle_by_uuid(cuda_uuids[i].c_str(), &handles[i]) == kNvmlSuccess;
    if (!found) found = api.handle_by_index(i, &handles[i]) == kNvmlSuccess;
    if (!found) {
      t.source = roofline::TopologySource::unavailable;
      t.note = "NVML does not know CUDA device " + std::to_string(i) + " (" + cuda_uuids[i] + ")";
      return t;
    }
    NvmlDevice h = handles[i];
    if (need(reinterpret_cast<const void*>(api.pci_info), "nvmlDeviceGetPciInfo_v3") &&
        api.pci_info(h, &pci[i]) == kNvmlSuccess)
      d.pci_bus_id = pci[i].bus_id;
    unsigned long nodes = 0;
    if (need(reinterpret_cast<const void*>(api.memory_affinity), "nvmlDeviceGetMemoryAffinity") &&
        api.memory_affinity(h, 1, &nodes, kNvmlAffinityScopeNode) == kNvmlSuccess && nodes != 0 &&
        (nodes & (nodes - 1)) == 0)  // exactly one node: the device's (several: none to name)
      d.numa_node = std::countr_zero(nodes);
    auto read = [&](GetUnsignedFn fn, const char* name) {
      unsigned value = 0;
      if (need(reinterpret_cast<const void*>(fn), name) && fn(h, &value) == kNvmlSuccess)
        return static_cast<int>(value);
      return 0;
    };
    d.pcie_current = {read(api.pcie_generation, "nvmlDeviceGetCurrPcieLinkGeneration"),
                      read(api.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth")};
    d.pcie_max = {read(api.pcie_max_generation, "nvmlDeviceGetMaxPcieLinkGeneration"),
                  read(api.pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth")};
    // NVLinks: a device without them answers NOT_SUPPORTED for link 0.
    if (need(reinterpret_cast<const void*>(api.link_state), "nvmlDeviceGetNvLinkState") &&
        need(reinterpret_cast<const void*>(api.link_remote_pci),
             "nvmlDeviceGetNvLinkRemotePciInfo_v2")) {
      // Without these the generation stays unknown, and links into an
      // NVSwitch count as links to no GPU (no NV<n> on HGX): say so.
      need(reinterpret_cast<const void*>(api.link_version), "nvmlDeviceGetNvLinkVersion");
      need(reinterpret_cast<const void*>(api.link_remote_type),
           "nvmlDeviceGetNvLinkRemoteDeviceType");
      for (unsigned link = 0; link < kNvmlNvlinkMaxLinks; ++link) {
        int active = 0;
        if (api.link_state(h, link, &active) != kNvmlSuccess || active == 0) continue;
        unsigned version = 0;
        if (links[i].generation == 0 && api.link_version != nullptr &&
            api.link_version(h, link, &version) == kNvmlSuccess)
          links[i].generation = nvlink_generation(version);
        int type = -1;
        if (api.link_remote_type != nullptr &&
            api.link_remote_type(h, link, &type) == kNvmlSuccess &&
            type == kNvmlNvlinkDeviceTypeSwitch) {
          ++links[i].switch_links;
          continue;
        }
        NvmlPciInfo remote{};
        if (api.link_remote_pci(h, link, &remote) == kNvmlSuccess)
          links[i].remote.push_back(remote);
      }
    }
    t.devices.push_back(std::move(d));
  }
  if (!need(reinterpret_cast<const void*>(api.common_ancestor),
            "nvmlDeviceGetTopologyCommonAncestor")) {
    t.source = roofline::TopologySource::unavailable;
    t.note = "NVML lacks nvmlDeviceGetTopologyCommonAncestor: no path between devices";
    return t;
  }
  for (std::size_t a = 0; a < handles.size(); ++a)
    for (std::size_t b = a + 1; b < handles.size(); ++b) {
      roofline::TopologyPair p{.a = static_cast<int>(a), .b = static_cast<int>(b)};
      // Direct links from a to b, plus the links both have into the NVSwitch
      // fabric (HGX: every GPU reaches every other through all of its links,
      // which nvidia-smi shows as NV18 on H100).
      for (const auto& remote : links[a].remote) p.nvlink_count += same_pci(remote, pci[b]);
      p.nvlink_count += std::min(links[a].switch_links, links[b].switch_links);
      int level = -1;
      if (p.nvlink_count > 0) {
        p.path = roofline::PeerPath::nvlink;
        p.nvlink_generation = links[a].generation;
      } else if (api.common_ancestor(handles[a], handles[b], &level) == kNvmlSuccess &&
                 pcie_path(level)) {
        p.path = *pcie_path(level);
      } else {
        missing.push_back("path GPU" + std::to_string(a) + "-GPU" + std::to_string(b));
        continue;
      }
      t.pairs.push_back(p);
    }
  for (const auto& name : missing) t.note += (t.note.empty() ? "unknown: " : ", ") + name;
  return t;
}

}  // namespace rl::bench
