// The node family under the emulator on 1, 2 and 8 emulated devices
// (rl::emu::set_device_count): every record's workload, the copy-engine ones
// included (GPU-only for the harness, but the emulator can do their copies),
// validates exactly at every shape of its list at a small size; each copy
// kind fails validation when its destination is one vector off or its last
// vector is dropped, and the chase fails one hop short; the shapes name
// every ordered pair of the devices present; and a peer record on one device
// is skipped with the reason.
#include "node/node_copies.hpp"
#include "rl/emu/launch.hpp"
#include "rl/registry.hpp"
#include "rl/scoped_device.hpp"
#include "selection.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rl::node {
namespace {

// The SM copy records and the copy-engine ones (make_sm_copy, make_ce_copy).
const std::vector<std::string> kSmCopies = {"node_h2d_sm",
                                            "node_d2h_sm",
                                            "node_peer_sm_read",
                                            "node_peer_sm_write",
                                            "node_peer_sm_bidir",
                                            "node_all_to_one_sm_write",
                                            "node_one_to_all_sm_write"};
const std::vector<std::string> kCeCopies = {"node_h2d_ce_pinned",        "node_d2h_ce_pinned",
                                            "node_h2d_ce_pageable",      "node_d2h_ce_pageable",
                                            "node_bidir_host_ce_pinned", "node_peer_ce_write",
                                            "node_peer_ce_read",         "node_peer_ce_bidir"};
const std::vector<std::string> kChases = {"node_peer_latency_sm", "node_host_latency_sm"};

// A record's shape shrunk to what the emulator copies in a millisecond: an
// odd number of 16-byte vectors (the grid-stride loop's remainder runs), a
// chase of 37 slots walked one and a half times (past the start: the end
// slot and the sum are not those of a whole cycle).
Shape small(Shape shape) {
  for (auto& [name, value] : shape.dims) {
    if (name == "bytes") value = shape.dims.back().first == "hops" ? 37 * 4096 : 16 * 1037;
    if (name == "hops") value = 37 + 18;
  }
  return shape;
}

// Validates the workload on a stream of the record's device, current as the
// harness makes it.
Validation validate_on_its_device(const KernelRecord& record, const Shape& shape,
                                  std::unique_ptr<Workload> workload) {
  const ScopedDevice on(record.device(shape));
  cudaStream_t stream = nullptr;
  EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const Validation v = workload->validate(stream);
  cudaStreamDestroy(stream);
  return v;
}

class NodeOnDevices : public testing::TestWithParam<int> {
 protected:
  void SetUp() override { ASSERT_EQ(emu::set_device_count(GetParam()), cudaSuccess); }
  void TearDown() override { emu::set_device_count(1); }
};

TEST_P(NodeOnDevices, every_record_validates_at_every_shape_it_lists) {
  const int devices = GetParam();
  int records = 0;
  for (const KernelRecord& record : kernel_registry()) {
    if (record.family != "node" || record.name.starts_with("node_nccl")) continue;
    ++records;
    if (devices < record.min_devices) continue;
    for (const Shape& listed : record.shapes(SizePreset::small)) {
      const Shape shape = small(listed);
      const Validation v = validate_on_its_device(record, shape, record.make_workload(shape, 7));
      EXPECT_TRUE(v.passed) << record.name << " " << shape.to_string() << ": " << v.detail;
    }
  }
  EXPECT_EQ(records, static_cast<int>(kSmCopies.size() + kCeCopies.size() + kChases.size()));
}

TEST_P(NodeOnDevices, pair_records_list_every_ordered_pair_once) {
  const int devices = GetParam();
  const std::vector<Shape> shapes = find_kernel("node_peer_sm_write")->shapes(SizePreset::small);
  if (devices == 1) {
    // One nominal pair, for the harness to skip with its reason.
    ASSERT_EQ(shapes.size(), 1u);
    EXPECT_EQ(shapes[0].to_string(), "src=0,dst=1,bytes=1048576");
    return;
  }
  EXPECT_EQ(static_cast<int>(shapes.size()), devices * (devices - 1));
  for (int src = 0; src < devices; ++src)
    for (int dst = 0; dst < devices; ++dst) {
      int seen = 0;
      for (const Shape& s : shapes) seen += s.at("src") == src && s.at("dst") == dst;
      EXPECT_EQ(seen, src == dst ? 0 : 1) << src << " -> " << dst;
    }
  EXPECT_EQ(static_cast<int>(find_kernel("node_h2d_sm")->shapes(SizePreset::small).size()),
            devices);
  // Both directions at once: each unordered pair once, src < dst.
  for (const char* bidir : {"node_peer_sm_bidir", "node_peer_ce_bidir"}) {
    const std::vector<Shape> pairs = find_kernel(bidir)->shapes(SizePreset::small);
    EXPECT_EQ(static_cast<int>(pairs.size()), devices * (devices - 1) / 2) << bidir;
    for (const Shape& s : pairs) EXPECT_LT(s.at("src"), s.at("dst")) << bidir;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, NodeOnDevices, testing::Values(1, 2, 8));

// The first shape of the record at 2 devices (1 -> 0 where there is a pair,
// so the timed device is not always 0).
Shape fault_shape(const std::string& name) {
  const std::vector<Shape> shapes = find_kernel(name)->shapes(SizePreset::small);
  return small(shapes.size() > 1 ? shapes[1] : shapes[0]);
}

class NodeFaults : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(emu::set_device_count(2), cudaSuccess); }
  void TearDown() override { emu::set_device_count(1); }
};

TEST_F(NodeFaults, a_copy_one_vector_off_or_short_fails_validation) {
  for (const bool sm : {true, false})
    for (const std::string& name : sm ? kSmCopies : kCeCopies) {
      const KernelRecord& record = *find_kernel(name);
      const Shape shape = fault_shape(name);
      for (const CopyFault fault : {CopyFault::none, CopyFault::dst_offset, CopyFault::drop_tail}) {
        auto workload =
            sm ? make_sm_copy(name, shape, 7, fault) : make_ce_copy(name, shape, 7, fault);
        ASSERT_NE(workload, nullptr) << name;
        const Validation v = validate_on_its_device(record, shape, std::move(workload));
        EXPECT_EQ(v.passed, fault == CopyFault::none)
            << name << " fault " << static_cast<int>(fault) << ": " << v.detail;
      }
    }
}

// The copies and chases under the other thread order: validation is exact,
// so passing under both is being bit-identical under both.
class NodeOnTwoDevices : public NodeFaults {};

TEST_F(NodeOnTwoDevices, every_sm_record_validates_under_the_reverse_schedule_too) {
  const emu::ScopedSchedule reverse(emu::Schedule{emu::ScheduleOrder::reverse, 0});
  for (const std::vector<std::string>* names : {&kSmCopies, &kChases})
    for (const std::string& name : *names) {
      const KernelRecord& record = *find_kernel(name);
      const Shape shape = fault_shape(name);
      const Validation v = validate_on_its_device(record, shape, record.make_workload(shape, 7));
      EXPECT_TRUE(v.passed) << name << " " << shape.to_string() << ": " << v.detail;
    }
}

TEST_F(NodeOnTwoDevices, the_tensor_dump_holds_each_legs_source_and_its_exact_copy) {
  const KernelRecord& record = *find_kernel("node_peer_sm_bidir");
  const Shape shape = fault_shape(record.name);
  const std::unique_ptr<Workload> workload = record.make_workload(shape, 7);
  {
    const ScopedDevice on(record.device(shape));
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    ASSERT_TRUE(workload->validate(stream).passed);
    cudaStreamDestroy(stream);
  }
  const std::vector<TensorDump> dumps = workload->tensors();
  ASSERT_EQ(dumps.size(), 4u);  // two legs: src0, dst0, src1, dst1
  for (std::size_t leg = 0; leg < 2; ++leg) {
    const TensorDump& src = dumps[2 * leg];
    const TensorDump& dst = dumps[2 * leg + 1];
    EXPECT_EQ(src.name, "src" + std::to_string(leg));
    EXPECT_EQ(src.role, "input");
    EXPECT_EQ(dst.name, "dst" + std::to_string(leg));
    EXPECT_EQ(dst.role, "output");
    EXPECT_EQ(
        dst.dims,
        (std::vector<std::int64_t>{static_cast<std::int64_t>(copy_bytes(shape) / sizeof(float))}));
    EXPECT_EQ(dst.values, src.values);
  }
  EXPECT_NE(dumps[0].values, dumps[2].values);  // each direction its own pattern
}

TEST_F(NodeFaults, a_chase_one_hop_short_fails_validation) {
  for (const std::string& name : kChases) {
    const Shape shape = fault_shape(name);
    for (const bool short_by_one : {false, true}) {
      const Validation v = validate_on_its_device(*find_kernel(name), shape,
                                                  make_chase(name, shape, 7, short_by_one));
      EXPECT_EQ(v.passed, !short_by_one) << name << ": " << v.detail;
    }
  }
}

// The copies to and from pageable memory return only when done: timed
// without the blocking kernel (KernelRecord::host_synchronous); the others
// queue behind it.
TEST(NodeHarness, only_the_pageable_copies_are_host_synchronous) {
  for (const KernelRecord& record : kernel_registry()) {
    if (record.family != "node") continue;
    EXPECT_EQ(record.host_synchronous, record.name.ends_with("_pageable")) << record.name;
  }
}

TEST(NodeHarness, a_peer_record_on_one_device_is_skipped_with_the_reason) {
  ASSERT_EQ(emu::set_device_count(1), cudaSuccess);
  roofline::Context context;
  context.backend = roofline::Backend::emulator;
  context.device.compute_capability = "8.9";
  for (const std::string name :
       {"node_peer_sm_read", "node_all_to_one_sm_write", "node_peer_latency_sm"}) {
    const KernelRecord& record = *find_kernel(name);
    const Shape shape = record.shapes(SizePreset::small).front();
    EXPECT_EQ(bench::cannot_run_here(record, shape, context, visible_device_count()),
              "needs 2 devices; this machine has 1 (the emulator runs it as a node with "
              "RL_EMU_DEVICES=8, as scripts/run does)")
        << name;
  }
  // One device is enough for the host records.
  const KernelRecord& h2d = *find_kernel("node_h2d_sm");
  EXPECT_EQ(bench::cannot_run_here(h2d, h2d.shapes(SizePreset::small).front(), context, 1),
            std::nullopt);
}

}  // namespace
}  // namespace rl::node
