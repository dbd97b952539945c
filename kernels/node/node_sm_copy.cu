// Copies over the node's links by SM kernels: host <-> device through pinned
// mapped memory, device <-> device through peer pointers (read, write, both
// directions at once), and all-to-one / one-to-all fans.
//
// The idea: the copy the HBM ceiling uses (hbm.copy's body, copy_vec16:
// 16-byte loads and stores, four independent loads in flight per thread,
// a grid of one resident wave) with a link between the two pointers, so the
// link, not the SM or the HBM behind it, is what limits it.  As in
// nvbandwidth, a read is a kernel on the reading device (remote loads), a
// write a kernel on the writing device (remote stores); they load the link
// differently (a read waits a round trip per load, a write posts), so both
// are records.
//
// Cost: flops 0; bytes = the bytes that cross the links in one run (one-way:
// the shape's bytes; bidirectional: twice; a fan over N devices: N-1 times),
// so bytes / time is the bandwidth.
#include "ceilings/stream_pattern.hpp"
#include "rl/cuda.hpp"
#if !defined(__CUDA_ARCH__)  // the records: host pass only (rl/device_instances.hpp)
#include "node/node_copies.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#endif

#include <cstddef>

namespace rl::node {

// The pattern fill (stream_pattern.hpp's, which this file's device passes
// include for copy_vec16) is set-up, not measured: a budget only.
// rl-static: kernel=fill_stream_pattern max_regs=32 max_smem=0
// rl-static: kernel=node_copy_vec16 max_regs=48 max_smem=0 sass=LDG.E.128,STG.E.128
__global__ void node_copy_vec16(const float4* __restrict__ in, float4* __restrict__ out,
                                std::size_t n4) {
  ceilings::copy_vec16<4>(in, out, n4);
}

#if !defined(__CUDA_ARCH__)
namespace {

constexpr int kBlock = 256;

// The grid of one leg: one resident wave of its issuer, shared by the
// `sharing` legs its issuer runs at once (one-to-all), at most one block a
// thread's worth of vectors.
int leg_blocks(int issuer, std::size_t floats, int sharing) {
  const ScopedDevice on(issuer);
  const std::int64_t vectors = static_cast<std::int64_t>(floats / 4);
  const std::int64_t wave = ceilings::one_wave_blocks(node_copy_vec16, kBlock, 1);
  return static_cast<int>(std::clamp<std::int64_t>((vectors + kBlock - 1) / kBlock, 1,
                                                   std::max<std::int64_t>(wave / sharing, 1)));
}

void issue_sm_copy(const Leg& leg, const float* src, float* dst, std::size_t floats,
                   cudaStream_t stream) {
  rl::launch(node_copy_vec16, dim3(leg.blocks), dim3(kBlock), 0, stream,
             reinterpret_cast<const float4*>(src), reinterpret_cast<float4*>(dst), floats / 4);
}

using Kind = Region::Kind;

// One leg from a region of (src_kind, src_device) to one of (dst_kind,
// dst_device), issued by `issuer` on the timed stream.
std::unique_ptr<Workload> one_leg(int issuer, Kind src_kind, int src_device, Kind dst_kind,
                                  int dst_device, std::size_t floats, std::uint64_t seed,
                                  CopyFault fault) {
  auto copies = std::make_unique<NodeCopies>(issuer, fault, issue_sm_copy);
  Leg& leg = copies->add_leg(issuer, copies->region(src_kind, src_device, floats),
                             copies->region(dst_kind, dst_device, floats), seed, false);
  leg.blocks = leg_blocks(issuer, floats, 1);
  return copies;
}

}  // namespace

std::unique_ptr<Workload> make_sm_copy(std::string_view record, const Shape& shape,
                                       std::uint64_t seed, CopyFault fault) {
  const std::size_t floats = copy_bytes(shape) / sizeof(float);
  if (record == "node_h2d_sm") {
    const int d = device_dim(shape, "device");
    return one_leg(d, Kind::pinned_mapped, d, Kind::device, d, floats, seed, fault);
  }
  if (record == "node_d2h_sm") {
    const int d = device_dim(shape, "device");
    return one_leg(d, Kind::device, d, Kind::pinned_mapped, d, floats, seed, fault);
  }
  if (record == "node_peer_sm_read" || record == "node_peer_sm_write") {
    const int src = device_dim(shape, "src"), dst = device_dim(shape, "dst");
    const int issuer = record == "node_peer_sm_read" ? dst : src;
    return one_leg(issuer, Kind::device, src, Kind::device, dst, floats, seed, fault);
  }
  if (record == "node_peer_sm_bidir") {
    // Timed on src; dst's kernel writes back on a stream of its own.
    const int src = device_dim(shape, "src"), dst = device_dim(shape, "dst");
    auto copies = std::make_unique<NodeCopies>(src, fault, issue_sm_copy);
    copies
        ->add_leg(src, copies->region(Kind::device, src, floats),
                  copies->region(Kind::device, dst, floats), seed, false)
        .blocks = leg_blocks(src, floats, 1);
    copies
        ->add_leg(dst, copies->region(Kind::device, dst, floats),
                  copies->region(Kind::device, src, floats), seed + 1, true)
        .blocks = leg_blocks(dst, floats, 1);
    return copies;
  }
  if (record == "node_all_to_one_sm_write" || record == "node_one_to_all_sm_write") {
    // Every leg on a stream of its own, forked from `device`'s; one-to-all's
    // legs share its one wave, all-to-one's each have their issuer's.
    const int device = device_dim(shape, "device");
    const int count = visible_device_count();
    const bool to_one = record == "node_all_to_one_sm_write";
    auto copies = std::make_unique<NodeCopies>(device, fault, issue_sm_copy);
    std::uint64_t leg_seed = seed;
    for (int other = 0; other < count; ++other) {
      if (other == device) continue;
      const int issuer = to_one ? other : device;
      copies
          ->add_leg(issuer, copies->region(Kind::device, to_one ? other : device, floats),
                    copies->region(Kind::device, to_one ? device : other, floats), leg_seed++, true)
          .blocks = leg_blocks(issuer, floats, to_one ? 1 : count - 1);
    }
    return copies;
  }
  return nullptr;
}

namespace {

KernelRecord sm_record(std::string name, std::string variant, std::string idea, bool pair,
                       std::string_view timed_dim, int legs, int min_devices) {
  auto make = [name](const Shape& shape, std::uint64_t seed) {
    return make_sm_copy(name, shape, seed, CopyFault::none);
  };
  auto device = [dim = std::string(timed_dim)](const Shape& shape) {
    return device_dim(shape, dim);
  };
  auto cost = [legs](const Shape& shape) {
    return copies_cost(shape, legs > 0 ? legs : fan_devices() - 1);
  };
  return node_record(std::move(name), std::move(variant), std::move(idea),
                     !pair       ? device_shapes
                     : legs == 2 ? unordered_pair_shapes
                                 : pair_shapes,
                     device, min_devices, cost, make);
}

}  // namespace

// legs 0: one per other device (the fans).
RL_REGISTER_KERNEL(sm_record("node_h2d_sm", "h2d_sm",
                             "SM kernel on the device reads pinned mapped host memory", false,
                             "device", 1, 1));
RL_REGISTER_KERNEL(sm_record("node_d2h_sm", "d2h_sm",
                             "SM kernel on the device writes pinned mapped host memory", false,
                             "device", 1, 1));
RL_REGISTER_KERNEL(sm_record("node_peer_sm_read", "peer_sm_read",
                             "SM kernel on dst reads src's memory through the peer pointer", true,
                             "dst", 1, 2));
RL_REGISTER_KERNEL(sm_record("node_peer_sm_write", "peer_sm_write",
                             "SM kernel on src writes dst's memory through the peer pointer", true,
                             "src", 1, 2));
RL_REGISTER_KERNEL(sm_record("node_peer_sm_bidir", "peer_sm_bidir",
                             "SM kernels on src and dst, each writing into the other, at once",
                             true, "src", 2, 2));
RL_REGISTER_KERNEL(sm_record("node_all_to_one_sm_write", "all_to_one_sm_write",
                             "every other device's SM kernel writes into the device at once", false,
                             "device", 0, 2));
RL_REGISTER_KERNEL(sm_record("node_one_to_all_sm_write", "one_to_all_sm_write",
                             "the device's SM kernels write into every other device at once", false,
                             "device", 0, 2));
#endif  // !__CUDA_ARCH__

}  // namespace rl::node
