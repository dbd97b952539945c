// The node report (issue 29): what a run's `node` records say about the links
// between devices and between host and device, judged against the topology
// the run recorded (context.topology) and the datasheet row's link figures.
//
// Records (docs/node-roofs.md has the list): shape dims `src`/`dst` for a
// GPU<->GPU copy, `device` for host<->device and one-device records, `bytes`
// per copy, `hops` for latency chases; NCCL records `node_nccl_*` carry
// `bytes` and `in_place`.  A record's cost bytes are the bytes that cross the
// link(s) in one run, so cost bytes / median time is the bandwidth shown: for
// a `*bidir*` record both directions together, judged against the
// datasheet's bidirectional figure; for the others one direction, judged
// against half of it.  For NCCL, cost bytes are bus factor x bytes, so that
// rate is nccl-tests' busbw and shape bytes / time its algbw.
//
// Each copy cell is the record at its largest `bytes` (the size nearest the
// link's peak); each latency cell at its largest `hops`.
//
// Verdicts: one per link type (the link's name: "NVLink 4, 18 links",
// "PCIe 5 x16 host", ...), from the first record in a fixed preference order
// that measured it (copy engine before SM copies, bidirectional before one
// way).  The verdict is the median over the pairs (or devices) of that link
// type, against the datasheet where the topology and the SKU row give a
// figure; a pair below kSlowFraction of that median is slow and fails the
// verdict.  The rule is relative so a slow pair stands out without trusting a
// datasheet figure, and it needs no datasheet on a machine the SKU table does
// not know.  An emulated run shows no datasheet percentages: its times are the
// host CPU's.
//
// NVLink pairs are grouped by generation, not by their link count, so that a
// pair with a link down (17 of 18) is judged with its siblings: the verdict
// is named by the node's usual count (the most common; the larger on a tie),
// and each pair is compared per link (its rate x usual / its count) with the
// median, so a pair with fewer links that runs at full speed per link is not
// SLOW.  A pair with fewer links than the usual is listed as such, and fails
// the verdict from NVLink 3 on (NVSwitch nodes give every pair the same
// count); on NVLink 1 and 2 some nodes join pairs by one or two links by
// design (DGX-1's hybrid cube mesh), so there it is only listed.
#pragma once

#include "rl/roofline/results.hpp"
#include "rl/roofline/sku.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rl::roofline {

inline constexpr double kSlowFraction = 0.8;

struct NodeCopyCell {
  int src = -1, dst = -1;    // GPU<->GPU; both -1 for a per-device record
  int device = -1;           // host<->device and one-device records
  std::int64_t bytes = 0;    // the shape's bytes per copy
  double bytes_per_s = 0;    // cost bytes / median time
  std::string link{};        // the link type it crossed ("" when the topology does not say)
  std::string link_group{};  // what it is judged with: `link` less an NVLink pair's count
  int nvlinks = 0;           // an NVLink pair's link count, 0 for any other link
  int nvlink_generation = 0;
  std::optional<double> datasheet_bytes_per_s{};  // bidirectional or per direction, as the record
  std::optional<double> pct_of_datasheet() const;
};

struct NodeCopyTable {
  std::string record;
  bool bidirectional = false;  // both directions at once: judged against the bidirectional figure
  bool per_device = false;     // keyed by `device` (host<->device, all-to-one, one-to-all)
  std::vector<NodeCopyCell> cells;
};

struct NodeLatencyCell {
  int src = -1, dst = -1, device = -1;
  std::int64_t hops = 0;
  double seconds_per_hop = 0;
};
struct NodeLatencyTable {
  std::string record;
  std::vector<NodeLatencyCell> cells;
};

struct NcclPoint {
  std::int64_t bytes = 0;  // per rank (nccl-tests' "size")
  bool in_place = false;
  double time_s = 0;
  double busbw = 0;  // cost bytes / time
  double algbw = 0;  // shape bytes / time
};
struct NcclCurve {
  std::string record;  // node_nccl_all_reduce, ...
  std::string method;  // which NCCL ran it: "NCCL 2.28.9 ...", "NCCL 2.28.9 (emulated: ..."
  std::vector<NcclPoint> points;  // by bytes, out-of-place before in-place
};

struct NodeVerdict {
  std::string link;    // "NVLink 4, 18 links"
  std::string record;  // the record judged
  bool bidirectional = false;
  int measured = 0;  // pairs (or devices) of this link type the record measured
  double median_bytes_per_s = 0;
  std::optional<double> datasheet_bytes_per_s;
  std::vector<NodeCopyCell> slow;         // below kSlowFraction x the median (per link)
  std::vector<NodeCopyCell> fewer_links;  // NVLink pairs with fewer links than the usual
  int usual_nvlinks = 0;                  // the node's usual count, 0 for any other link
  bool fewer_links_fail = false;          // from NVLink 3 on (see above)
  std::string line;                       // the sentence the report prints
  bool ok() const { return slow.empty() && (fewer_links.empty() || !fewer_links_fail); }
};

struct NodeReport {
  bool emulated = false;
  std::optional<Topology> topology;
  std::vector<NodeCopyTable> copies;
  std::vector<NodeLatencyTable> latencies;
  std::vector<NcclCurve> nccl;
  std::vector<NodeVerdict> verdicts;
  std::vector<std::string> skipped;  // "node_peer_sm_read src=0,dst=1: needs 2 devices; ..."
  bool empty() const {
    return copies.empty() && latencies.empty() && nccl.empty() && skipped.empty();
  }
};

// `sku`: the datasheet row (nullptr: no percentages).
NodeReport analyse_node(const Results& results, const Sku* sku);

// The report's "Node" section; "" when the run has no node records.
std::string node_section_html(const NodeReport& report);

}  // namespace rl::roofline
