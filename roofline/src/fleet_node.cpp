#include "fleet_node.hpp"

#include "rl/roofline/node_report.hpp"
#include "rl/roofline/sku.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace rl::roofline::fleet_detail {

namespace {

// "GPU3 (00000000:48:00.0)": the bus id finds the card in the chassis.
std::string gpu(const Results& r, int index) {
  const TopologyDevice* d = r.context.topology ? r.context.topology->device(index) : nullptr;
  if (d == nullptr || d->pci_bus_id.empty()) return fmt::format("GPU{}", index);
  return fmt::format("GPU{} ({})", index, d->pci_bus_id);
}

}  // namespace

void add_node_outliers(std::size_t run, const Results& r, std::vector<FleetOutlier>& outliers) {
  if (r.context.backend == Backend::emulator) return;
  const NodeReport node = analyse_node(r, match_sku(r.context.device).sku);
  for (const NodeVerdict& v : node.verdicts)
    for (const NodeCopyCell& c : v.slow) {
      const bool pair = c.device < 0;
      FleetOutlier f{.run = run,
                     .kind = "node link",
                     .metric = pair ? fmt::format("{} [src={},dst={}]", v.record, c.src, c.dst)
                                    : fmt::format("{} [device={}]", v.record, c.device),
                     .unit = "B/s",
                     .value = c.bytes_per_s,
                     .median = v.median_bytes_per_s,
                     .below_pct = (1 - c.bytes_per_s / v.median_bytes_per_s) * 100,
                     .limit_pct = (1 - kSlowFraction) * 100,
                     .reason = {}};
      const std::string who = pair
                                  ? fmt::format("{} with its peer {}", gpu(r, c.src), gpu(r, c.dst))
                                  : gpu(r, c.device);
      f.reason = fmt::format(
          "{}: {} {:.1f} GB/s over {}, {:.1f}% below the median of its link "
          "type {:.1f} GB/s (limit {:.0f}%)",
          who, v.record, c.bytes_per_s / 1e9, v.link, f.below_pct, v.median_bytes_per_s / 1e9,
          f.limit_pct);
      outliers.push_back(std::move(f));
    }
  // A pair with a link down, even where it keeps up per link.
  for (const NodeVerdict& v : node.verdicts) {
    if (!v.fewer_links_fail) continue;
    for (const NodeCopyCell& c : v.fewer_links) {
      const bool slow = std::any_of(v.slow.begin(), v.slow.end(), [&](const NodeCopyCell& s) {
        return s.src == c.src && s.dst == c.dst;
      });
      if (slow) continue;  // already named, with its rate
      FleetOutlier f{.run = run,
                     .kind = "node link",
                     .metric = fmt::format("{} [src={},dst={}]", v.record, c.src, c.dst),
                     .unit = "NVLinks",
                     .value = static_cast<double>(c.nvlinks),
                     .median = static_cast<double>(v.usual_nvlinks),
                     .below_pct = (1 - static_cast<double>(c.nvlinks) / v.usual_nvlinks) * 100,
                     .limit_pct = 0,
                     .reason = {}};
      f.reason = fmt::format(
          "{} with its peer {}: {} of the node's usual {} NVLinks (a link down); "
          "{} {:.1f} GB/s",
          gpu(r, c.src), gpu(r, c.dst), c.nvlinks, v.usual_nvlinks, v.record, c.bytes_per_s / 1e9);
      outliers.push_back(std::move(f));
    }
  }
}

}  // namespace rl::roofline::fleet_detail
