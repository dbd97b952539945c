// context.topology (issue 29): the type, its results.json round trip, old files
// without it, the nvidia-smi matrix, and the SKU table's link figures.
#include "fixtures.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/sku.hpp"
#include "rl/roofline/topology.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>

namespace rl::roofline {
namespace {

// Three GPUs as NVML could report them: an NVLink pair, a PCIe pair on one
// switch, one across the sockets; device 2's NUMA node unknown.
Topology nvml_like() {
  Topology t;
  t.source = TopologySource::nvml;
  t.note = "unknown: nvmlDeviceGetMemoryAffinity";
  for (int i = 0; i < 3; ++i)
    t.devices.push_back({.index = i,
                         .name = "NVIDIA H100 80GB HBM3",
                         .pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0",
                         .numa_node = i < 2 ? std::optional<int>(i) : std::nullopt,
                         .pcie_current = {5, 16 >> i},
                         .pcie_max = {5, 16}});
  t.pairs = {{.a = 0, .b = 1, .path = PeerPath::nvlink, .nvlink_count = 18, .nvlink_generation = 4},
             {.a = 0, .b = 2, .path = PeerPath::pix},
             {.a = 1, .b = 2, .path = PeerPath::sys}};
  return t;
}

std::string parse_error(const std::string& text) {
  try {
    parse_results(text, "in.json");
  } catch (const ResultsError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(Topology, round_trips_through_results_json) {
  Results r = testing::emulator_fixture();
  r.context.topology = nvml_like();
  const Results back = parse_results(results_to_text(r), "t.json");
  ASSERT_TRUE(back.context.topology);
  const Topology& t = *back.context.topology;
  const Topology want = nvml_like();
  EXPECT_EQ(t.source, TopologySource::nvml);
  EXPECT_EQ(t.note, want.note);
  ASSERT_EQ(t.devices.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(t.devices[i].index, want.devices[i].index);
    EXPECT_EQ(t.devices[i].name, want.devices[i].name);
    EXPECT_EQ(t.devices[i].pci_bus_id, want.devices[i].pci_bus_id);
    EXPECT_EQ(t.devices[i].numa_node, want.devices[i].numa_node);
    EXPECT_EQ(t.devices[i].pcie_current.width, want.devices[i].pcie_current.width);
    EXPECT_EQ(t.devices[i].pcie_max.generation, 5);
  }
  ASSERT_EQ(t.pairs.size(), 3u);
  EXPECT_EQ(path_text(t.pairs[0]), "NV18");
  EXPECT_EQ(t.pairs[0].nvlink_generation, 4);
  EXPECT_EQ(t.pairs[1].path, PeerPath::pix);
  EXPECT_EQ(t.pair(2, 1)->path, PeerPath::sys);
  EXPECT_EQ(t.pair(0, 0), nullptr);
}

TEST(Topology, file_without_topology_reads_as_absent) {
  const std::string text = results_to_text(testing::emulator_fixture());
  EXPECT_EQ(text.find("\"topology\""), std::string::npos);
  EXPECT_FALSE(parse_results(text, "old.json").context.topology);
}

TEST(Topology, reader_rejects_a_path_that_contradicts_its_count_or_is_unknown) {
  Results r = testing::emulator_fixture();
  r.context.topology = nvml_like();
  const std::string good = results_to_text(r);
  std::string text = good;
  text.replace(text.find("\"nvlink_count\": 18"), 18, "\"nvlink_count\": 12");
  EXPECT_NE(parse_error(text).find("/context/topology/pairs/0/nvlink_count"), std::string::npos);
  text = good;
  text.replace(text.find("\"PIX\""), 5, "\"PCI\"");
  EXPECT_NE(parse_error(text).find("is not NV<n>, PIX"), std::string::npos);
  text = good;
  text.replace(text.find("\"nvml\""), 6, "\"smi\"");
  EXPECT_NE(parse_error(text).find("/context/topology/source"), std::string::npos);
}

TEST(Topology, path_words_round_trip_as_nvidia_smi_spells_them) {
  for (const char* word : {"NV1", "NV12", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "emulated"}) {
    TopologyPair p;
    ASSERT_TRUE(parse_path_text(word, p)) << word;
    EXPECT_EQ(path_text(p), word);
  }
  TopologyPair p;
  for (const char* bad : {"NV", "NV0", "NV-2", "NV4x", "nv4", "pix", ""})
    EXPECT_FALSE(parse_path_text(bad, p)) << bad;
}

TEST(Topology, matrix_reads_like_nvidia_smi_topo_m) {
  EXPECT_EQ(topology_matrix_text(nvml_like()),
            "         GPU0     GPU1     GPU2     NUMA Affinity\n"
            "GPU0     X        NV18     PIX      0\n"
            "GPU1     NV18     X        SYS      1\n"
            "GPU2     PIX      SYS      X        N/A\n");
  const Topology emulated = emulated_topology(2, "CPU emulator");
  EXPECT_EQ(emulated.source, TopologySource::emulator);
  EXPECT_EQ(topology_matrix_text(emulated),
            "         GPU0     GPU1     NUMA Affinity\n"
            "GPU0     X        emulated N/A\n"
            "GPU1     emulated X        N/A\n");
}

// results/schema-v1.json spells what the writer writes: every path word
// matches the schema's pattern, every source is in its enum.
TEST(Topology, schema_admits_every_path_and_source_the_writer_spells) {
  std::ifstream file(std::string(RL_ROOFLINE_TEST_DATA) + "/../../../results/schema-v1.json");
  ASSERT_TRUE(file);
  const auto schema = nlohmann::json::parse(file);
  const auto& topology = schema["$defs"]["context"]["properties"]["topology"]["properties"];
  const std::regex pattern(
      topology["pairs"]["items"]["properties"]["path"]["pattern"].get<std::string>());
  for (PeerPath path : {PeerPath::nvlink, PeerPath::pix, PeerPath::pxb, PeerPath::phb,
                        PeerPath::node, PeerPath::sys, PeerPath::emulated}) {
    const std::string word = path_text({.a = 0, .b = 1, .path = path, .nvlink_count = 12});
    EXPECT_TRUE(std::regex_search(word, pattern)) << word;
  }
  EXPECT_FALSE(std::regex_search(std::string("NV0"), pattern));
  const auto& sources = topology["source"]["enum"];
  for (auto s : {TopologySource::nvml, TopologySource::emulator, TopologySource::unavailable})
    EXPECT_NE(std::find(sources.begin(), sources.end(), std::string(to_string(s))), sources.end());
}

TEST(SkuLinks, every_link_figure_has_a_source_and_the_known_ones_are_as_published) {
  int figures = 0;
  for (const Sku& s : sku_table())
    for (LinkKind kind : {LinkKind::nvlink, LinkKind::pcie, LinkKind::c2c})
      if (const auto& f = s.link(kind)) {
        ++figures;
        EXPECT_FALSE(f->source.empty()) << s.key;
        EXPECT_GT(f->bidirectional_bytes_per_s, 0) << s.key;
      }
  EXPECT_GE(figures, 25);
  const Sku& h100 = *find_sku("h100-sxm");
  EXPECT_EQ(link_figure_text(LinkKind::nvlink, *h100.nvlink),
            "NVLink 4, 18 links: 900 GB/s bidirectional (450 GB/s per direction)");
  EXPECT_EQ(link_figure_text(LinkKind::pcie, *h100.pcie),
            "PCIe 5 x16: 128 GB/s bidirectional (64 GB/s per direction)");
  for (const char* key : {"gb200", "gb300", "dgx-spark"}) EXPECT_TRUE(find_sku(key)->c2c) << key;
  EXPECT_FALSE(find_sku("h100-sxm")->c2c);
  EXPECT_NE(find_sku("dgx-spark")->c2c->note.find("disagree"), std::string_view::npos);
}

}  // namespace
}  // namespace rl::roofline
