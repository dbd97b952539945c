// The node report's figures (node_report.hpp): copy matrices, latency per hop,
// NCCL curves and one verdict per link type.  The HTML is report_node_html.cpp.
#include "rl/roofline/node_report.hpp"

#include "rl/roofline/analysis.hpp"  // timed
#include "rl/roofline/compare.hpp"   // median

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

constexpr std::string_view kNcclPrefix = "node_nccl_";

// Which record judges a link type: copy engine before SM copies (the copy
// engine is what a framework's peer copy uses), both directions before one.
constexpr std::array<std::string_view, 10> kVerdictPreference{
    "node_peer_ce_bidir", "node_peer_sm_bidir", "node_peer_ce_write",        "node_peer_sm_write",
    "node_peer_ce_read",  "node_peer_sm_read",  "node_bidir_host_ce_pinned", "node_h2d_ce_pinned",
    "node_d2h_ce_pinned", "node_h2d_sm"};

std::optional<std::int64_t> dim(const KernelResult& k, std::string_view name) {
  for (const auto& [key, value] : k.shape)
    if (key == name) return value;
  return std::nullopt;
}

// A host<->device record crosses the device's PCIe link; all-to-one and
// one-to-all cross several links at once and have no single link to judge.
bool host_record(std::string_view name) {
  return name.find("h2d") != std::string_view::npos || name.find("d2h") != std::string_view::npos ||
         name.find("host") != std::string_view::npos;
}

struct Rated {
  std::string link{};
  std::optional<double> bidirectional{};
  std::string group{};  // "" when it is `link`
  int nvlinks = 0;
  int nvlink_generation = 0;
};

// A PCIe link is named by what the card and slot can train to (NVML's max),
// not what it runs at now: an idle GPU drops its link generation, and a GPU
// trained narrower than its siblings must be judged in their group (where it
// is SLOW), not in a group of its own.  The current link when the max is unknown.
PcieLink rated_pcie(const TopologyDevice& d) {
  return d.pcie_max.generation > 0 ? d.pcie_max : d.pcie_current;
}

// The link a GPU<->GPU pair crosses, and the datasheet's bidirectional figure
// for it.  An NV<n> pair gets n of the row's links' share of the figure (all
// 18 through NVSwitch on HGX H100: the full 900 GB/s).
Rated peer_link(const Topology& t, const Sku* sku, int a, int b) {
  const TopologyPair* p = t.pair(a, b);
  if (p == nullptr) return {};
  if (p->path == PeerPath::emulated) return {"emulated", std::nullopt};
  if (p->path == PeerPath::nvlink) {
    const LinkFigure* f = sku && sku->nvlink ? &*sku->nvlink : nullptr;
    const int generation = p->nvlink_generation > 0 ? p->nvlink_generation : f ? f->generation : 0;
    Rated r{link_name(LinkKind::nvlink, generation, p->nvlink_count), std::nullopt,
            link_name(LinkKind::nvlink, generation, 0), p->nvlink_count, generation};
    if (f && (f->lanes == 0 || p->nvlink_count <= f->lanes))
      r.bidirectional = f->bidirectional_bytes_per_s *
                        (f->lanes > 0 ? static_cast<double>(p->nvlink_count) / f->lanes : 1.0);
    return r;
  }
  const TopologyDevice* d = t.device(a);
  const PcieLink link = d ? rated_pcie(*d) : PcieLink{};
  Rated r{link_name(LinkKind::pcie, link.generation, link.width) + " via " + path_text(*p),
          std::nullopt};
  if (sku && sku->pcie) r.bidirectional = sku->pcie->bidirectional_bytes_per_s;
  return r;
}

Rated host_link(const Topology& t, const Sku* sku, int device) {
  if (t.source == TopologySource::emulator) return {"emulated host", std::nullopt};
  const TopologyDevice* d = t.device(device);
  if (d == nullptr) return {};
  const PcieLink link = rated_pcie(*d);
  Rated r{link_name(LinkKind::pcie, link.generation, link.width) + " host", std::nullopt};
  if (sku && sku->pcie) r.bidirectional = sku->pcie->bidirectional_bytes_per_s;
  return r;
}

std::string gb(double bytes_per_s) {
  const double v = bytes_per_s / 1e9;
  return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

// The NVLink count most pairs of a group have (the larger on a tie); 0 when
// the group is not NVLink.
int usual_nvlinks(const std::vector<const NodeCopyCell*>& cells) {
  std::map<int, int> pairs_with;  // links -> pairs
  for (const auto* c : cells)
    if (c->nvlinks > 0) ++pairs_with[c->nvlinks];
  int usual = 0, most = 0;
  for (const auto& [links, n] : pairs_with)
    if (n >= most) usual = links, most = n;
  return usual;
}

NodeVerdict judge(const std::string& group, const NodeCopyTable& table, bool emulated) {
  std::vector<const NodeCopyCell*> cells;
  for (const auto& c : table.cells)
    if (c.link_group == group) cells.push_back(&c);
  const int usual = usual_nvlinks(cells);
  // A pair's rate as if it had the usual count of links.
  auto per_usual = [&](const NodeCopyCell& c) {
    return usual > 0 && c.nvlinks > 0 ? c.bytes_per_s * usual / c.nvlinks : c.bytes_per_s;
  };
  NodeVerdict v;
  v.link = group;
  v.usual_nvlinks = usual;
  v.record = table.record;
  v.bidirectional = table.bidirectional;
  // Named, and held to the datasheet, as a pair with the usual count:
  // "NVLink 4, 18 links".
  const auto named = std::find_if(cells.begin(), cells.end(),
                                  [&](const NodeCopyCell* c) { return c->nvlinks == usual; });
  if (named != cells.end()) {
    v.link = (*named)->link;
    v.datasheet_bytes_per_s = (*named)->datasheet_bytes_per_s;
  }
  std::vector<double> rates;
  for (const auto* c : cells) {
    rates.push_back(per_usual(*c));
    if (usual > 0 && c->nvlinks < usual) {
      v.fewer_links.push_back(*c);
      v.fewer_links_fail = c->nvlink_generation >= 3;
    }
  }
  v.measured = static_cast<int>(rates.size());
  v.median_bytes_per_s = median(rates);
  for (const auto* c : cells)
    if (per_usual(*c) < kSlowFraction * v.median_bytes_per_s) v.slow.push_back(*c);
  const char* sense = table.bidirectional ? "bidirectional" : "per direction";
  const std::string what = table.per_device ? "device" : "pair";
  v.line = fmt::format("{}: ", v.link);
  if (emulated || !v.datasheet_bytes_per_s) {
    v.line += fmt::format("{} GB/s {}", gb(v.median_bytes_per_s), sense);
    v.line += emulated ? " (emulated: CPU time, no datasheet figure)" : " (no datasheet figure)";
  } else {
    v.line += fmt::format("{} of {} GB/s {} = {:.0f}%", gb(v.median_bytes_per_s),
                          gb(*v.datasheet_bytes_per_s), sense,
                          100 * v.median_bytes_per_s / *v.datasheet_bytes_per_s);
  }
  v.line += fmt::format(", median of {} {}{} ({})", v.measured, what, v.measured == 1 ? "" : "s",
                        table.record);
  auto who = [&](const NodeCopyCell& c) {
    return table.per_device ? fmt::format("GPU{}", c.device)
                            : fmt::format("GPU{} -> GPU{}", c.src, c.dst);
  };
  for (const auto& c : v.fewer_links)
    v.line += fmt::format(
        "; FEWER LINKS: {} has {} of the node's usual {}{}", who(c), c.nvlinks, usual,
        c.nvlink_generation >= 3 ? " (a link down)" : " (a link down, or the node is built so)");
  for (const auto& c : v.slow)
    v.line += fmt::format("; SLOW: {} at {} GB/s ({:.0f}% of the median{})", who(c),
                          gb(c.bytes_per_s), 100 * per_usual(c) / v.median_bytes_per_s,
                          c.nvlinks > 0 && c.nvlinks != usual ? ", per link" : "");
  return v;
}

}  // namespace

std::optional<double> NodeCopyCell::pct_of_datasheet() const {
  if (!datasheet_bytes_per_s || *datasheet_bytes_per_s <= 0) return std::nullopt;
  return 100 * bytes_per_s / *datasheet_bytes_per_s;
}

NodeReport analyse_node(const Results& r, const Sku* sku) {
  NodeReport out;
  out.emulated = r.context.backend == Backend::emulator;
  out.topology = r.context.topology;
  const Topology topology = r.context.topology.value_or(Topology{});
  // (record, src, dst, device) -> the instance with the largest bytes / hops.
  std::map<std::tuple<std::string, int, int, int>, const KernelResult*> largest;
  std::map<std::string, NcclCurve> nccl;
  for (const auto& k : r.kernels) {
    if (k.family != "node") continue;
    if (k.status == Status::skipped) {
      out.skipped.push_back(fmt::format("{} {}: {}", k.name, shape_text(k.shape), k.error));
      continue;
    }
    if (!timed(k)) continue;
    const double t = k.time_s->median;
    if (k.name.starts_with(kNcclPrefix)) {
      NcclCurve& curve = nccl[k.name];
      curve.record = k.name;
      if (curve.method.empty()) curve.method = k.method;
      const std::int64_t bytes = dim(k, "bytes").value_or(0);
      curve.points.push_back({.bytes = bytes,
                              .in_place = dim(k, "in_place").value_or(0) != 0,
                              .time_s = t,
                              .busbw = k.bytes_model / t,
                              .algbw = static_cast<double>(bytes) / t});
      continue;
    }
    const auto key = std::make_tuple(k.name, static_cast<int>(dim(k, "src").value_or(-1)),
                                     static_cast<int>(dim(k, "dst").value_or(-1)),
                                     static_cast<int>(dim(k, "device").value_or(-1)));
    const char* size = k.name.find("latency") != std::string::npos ? "hops" : "bytes";
    auto [it, inserted] = largest.try_emplace(key, &k);
    if (!inserted && dim(k, size).value_or(0) > dim(*it->second, size).value_or(0)) it->second = &k;
  }

  std::map<std::string, NodeCopyTable> copies;
  std::map<std::string, NodeLatencyTable> latencies;
  for (const auto& [key, k] : largest) {
    const auto& [name, src, dst, device] = key;
    const double t = k->time_s->median;
    if (name.find("latency") != std::string::npos) {
      const std::int64_t hops = std::max<std::int64_t>(1, dim(*k, "hops").value_or(1));
      latencies[name].record = name;
      latencies[name].cells.push_back({src, dst, device, hops, t / static_cast<double>(hops)});
      continue;
    }
    NodeCopyTable& table = copies[name];
    table.record = name;
    table.bidirectional = name.find("bidir") != std::string::npos;
    table.per_device = src < 0 || dst < 0;
    NodeCopyCell cell{.src = src,
                      .dst = dst,
                      .device = device,
                      .bytes = dim(*k, "bytes").value_or(0),
                      .bytes_per_s = k->bytes_model / t};
    Rated rated;
    if (!table.per_device)
      rated = peer_link(topology, sku, src, dst);
    else if (host_record(name))
      rated = host_link(topology, sku, device);
    cell.link = rated.link;
    cell.link_group = rated.group.empty() ? rated.link : rated.group;
    cell.nvlinks = rated.nvlinks;
    cell.nvlink_generation = rated.nvlink_generation;
    if (!out.emulated && rated.bidirectional)
      cell.datasheet_bytes_per_s =
          table.bidirectional ? *rated.bidirectional : *rated.bidirectional / 2;
    table.cells.push_back(cell);
  }
  for (auto& [name, table] : copies) out.copies.push_back(std::move(table));
  for (auto& [name, table] : latencies) out.latencies.push_back(std::move(table));
  for (auto& [name, curve] : nccl) {
    std::sort(curve.points.begin(), curve.points.end(), [](const NcclPoint& a, const NcclPoint& b) {
      return std::tie(a.bytes, a.in_place) < std::tie(b.bytes, b.in_place);
    });
    out.nccl.push_back(std::move(curve));
  }

  // One verdict per link type, from the most preferred record that crossed it.
  std::vector<std::string> judged;
  for (auto preferred : kVerdictPreference)
    for (const auto& table : out.copies) {
      if (table.record != preferred) continue;
      for (const auto& cell : table.cells) {
        if (cell.link_group.empty() ||
            std::find(judged.begin(), judged.end(), cell.link_group) != judged.end())
          continue;
        judged.push_back(cell.link_group);
        out.verdicts.push_back(judge(cell.link_group, table, out.emulated));
      }
    }
  return out;
}

}  // namespace rl::roofline
