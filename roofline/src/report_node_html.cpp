// The report's "Node" section (node_report.hpp): verdicts, the topology as
// `nvidia-smi topo -m` shows it, one src x dst matrix per copy record, latency
// per hop, and the NCCL busbw-by-size curves.
#include "rl/roofline/node_report.hpp"

#include "report_html.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

using report_detail::esc;

std::string gbps(double bytes_per_s) {
  return fmt::format("{:.1f} GB/s", bytes_per_s / 1e9);
}

std::string bytes_text(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string cell_html(const NodeCopyCell& c) {
  std::string h = gbps(c.bytes_per_s);
  if (auto pct = c.pct_of_datasheet())
    h += fmt::format("<br><span class=\"muted\">{:.0f}%</span>", *pct);
  return h;
}

std::string topology_html(const Topology& t) {
  std::string h = fmt::format("<h3>Topology</h3>\n<p class=\"muted\">source: {}{}</p>\n",
                              esc(to_string(t.source)), t.note.empty() ? "" : " — " + esc(t.note));
  if (t.devices.empty()) return h;
  h += "<pre>" + esc(topology_matrix_text(t)) + "</pre>\n";
  h += "<table>\n<tr><th>GPU</th><th>name</th><th>PCI bus id</th><th>NUMA node</th><th>PCIe "
       "now</th><th>PCIe max</th></tr>\n";
  auto pcie = [](const PcieLink& l) {
    return l.generation > 0 ? fmt::format("Gen{} x{}", l.generation, l.width) : std::string("—");
  };
  for (const auto& d : t.devices)
    h +=
        fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    d.index, esc(d.name), esc(d.pci_bus_id.empty() ? "—" : d.pci_bus_id),
                    d.numa_node ? fmt::format("{}", *d.numa_node) : "—", pcie(d.pcie_current),
                    pcie(d.pcie_max));
  return h + "</table>\n";
}

std::string copy_table_html(const NodeCopyTable& t) {
  const bool rated = std::any_of(t.cells.begin(), t.cells.end(), [](const NodeCopyCell& c) {
    return c.pct_of_datasheet().has_value();
  });
  std::string h = fmt::format(
      "<h3>{}</h3>\n<p class=\"muted\">{}; cost bytes / median time at the largest "
      "size{}</p>\n",
      esc(t.record), t.bidirectional ? "both directions" : "one direction",
      !rated            ? ""
      : t.bidirectional ? "; % of the link's bidirectional datasheet figure"
                        : "; % of the link's datasheet figure per direction");
  if (t.per_device) {
    h += "<table>\n<tr><th>GPU</th><th>link</th><th>bytes</th><th>rate</th></tr>\n";
    for (const auto& c : t.cells)
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td></tr>\n",
          c.device, esc(c.link.empty() ? "—" : c.link), bytes_text(c.bytes), cell_html(c));
    return h + "</table>\n";
  }
  std::set<int> devices;
  for (const auto& c : t.cells) devices.insert({c.src, c.dst});
  h += "<table>\n<tr><th>src \\ dst</th>";
  for (int d : devices) h += fmt::format("<th>GPU{}</th>", d);
  h += "</tr>\n";
  for (int src : devices) {
    h += fmt::format("<tr><th>GPU{}</th>", src);
    for (int dst : devices) {
      auto it = std::find_if(t.cells.begin(), t.cells.end(),
                             [&](const NodeCopyCell& c) { return c.src == src && c.dst == dst; });
      h += fmt::format("<td class=\"num\">{}</td>", it == t.cells.end() ? "" : cell_html(*it));
    }
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

std::string latency_html(const NodeLatencyTable& t) {
  std::string h = fmt::format(
      "<h3>{}</h3>\n<p class=\"muted\">median time / hops, at the "
      "largest chase</p>\n<table>\n<tr><th>from</th><th>hops</th><th>per "
      "hop</th></tr>\n",
      esc(t.record));
  for (const auto& c : t.cells) {
    const std::string who = c.device >= 0 ? fmt::format("GPU{} (host memory)", c.device)
                                          : fmt::format("GPU{} reading GPU{}", c.dst, c.src);
    h += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.0f} "
        "ns</td></tr>\n",
        who, c.hops, c.seconds_per_hop * 1e9);
  }
  return h + "</table>\n";
}

std::string nccl_html(const NcclCurve& c) {
  // Which NCCL ran it, beside its curve: the emulator's says so in its method.
  std::string h = fmt::format(
      "<h3>{}</h3>\n{}<p class=\"muted\">busbw = cost bytes (bus factor x size) / time; algbw = "
      "size / time</p>\n<table>\n<tr><th>size</th><th>in place</th><th>time</th><th>algbw</"
      "th><th>busbw</th></tr>\n",
      esc(c.record), c.method.empty() ? "" : "<p>" + esc(c.method) + "</p>\n");
  for (const auto& p : c.points)
    h += fmt::format(
        "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{:.1f} µs</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        bytes_text(p.bytes), p.in_place ? "yes" : "no", p.time_s * 1e6, gbps(p.algbw),
        gbps(p.busbw));
  return h + "</table>\n";
}

}  // namespace

std::string node_section_html(const NodeReport& r) {
  if (r.empty() && !r.topology) return "";
  std::string h = "<h2>Node: links between devices</h2>\n";
  if (r.emulated)
    h += "<div class=\"banner\">Emulated devices: rates are the CPU emulator's copies in host "
         "memory, not a link's; no datasheet percentages.</div>\n";
  if (!r.verdicts.empty()) {
    h += "<ul>\n";
    for (const auto& v : r.verdicts)
      h += fmt::format("<li{}>{}</li>\n", v.ok() ? "" : " class=\"bad\"", esc(v.line));
    h += "</ul>\n";
  }
  if (r.topology) h += topology_html(*r.topology);
  for (const auto& t : r.copies) h += copy_table_html(t);
  for (const auto& t : r.latencies) h += latency_html(t);
  for (const auto& c : r.nccl) h += nccl_html(c);
  if (!r.skipped.empty()) {
    h += "<h3>Skipped</h3>\n<ul>\n";
    for (const auto& s : r.skipped) h += "<li>" + esc(s) + "</li>\n";
    h += "</ul>\n";
  }
  return h;
}

}  // namespace rl::roofline
