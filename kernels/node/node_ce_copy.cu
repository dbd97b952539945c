// Copies over the node's links by copy engine (cudaMemcpyAsync,
// cudaMemcpyPeerAsync): host <-> device from pinned and from pageable
// memory, both host directions at once, and device <-> device (the copy
// queued on the writer's stream, on the reader's, or both directions at
// once).  The DMA engines need no SM, so these are the links' roofs as a
// framework's memcpy sees them, next to the SM kernels' (node_sm_copy.cu).
//
// GPU-only: the emulator has no copy engine; its cudaMemcpyAsync is a host
// memcpy done when it is called, so its time says nothing about a link.
// They only call the runtime, so they are built in both builds, and
// tests/node validates them on the emulator through make_ce_copy.
//
// Pageable copies: the driver stages them through its own pinned buffer and
// returns only when the copy is done (device to host) or may wait for the
// stream first (host to device), so the harness's blocking kernel would hold
// them until its timeout: they are host_synchronous, timed without it, launch
// latency included (as a framework's copy from pageable memory sees it).
//
// Cost: flops 0; bytes = the bytes that cross the links in one run.
#if !defined(__CUDA_ARCH__)  // host code only: no kernel here
#include "node/node_copies.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace rl::node {

namespace {

using Kind = Region::Kind;

void issue_ce_copy(const Leg& leg, const float* src, float* dst, std::size_t floats,
                   cudaStream_t stream) {
  const std::size_t bytes = floats * sizeof(float);
  if (leg.src->kind() == Kind::device && leg.dst->kind() == Kind::device)
    RL_CUDA_CHECK(
        cudaMemcpyPeerAsync(dst, leg.dst->device(), src, leg.src->device(), bytes, stream));
  else
    RL_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
}

}  // namespace

std::unique_ptr<Workload> make_ce_copy(std::string_view record, const Shape& shape,
                                       std::uint64_t seed, CopyFault fault) {
  const std::size_t floats = copy_bytes(shape) / sizeof(float);
  struct HostCopy {
    std::string_view name;
    Kind host;
    bool to_device;
  };
  for (const HostCopy& c : {HostCopy{"node_h2d_ce_pinned", Kind::pinned_mapped, true},
                            HostCopy{"node_d2h_ce_pinned", Kind::pinned_mapped, false},
                            HostCopy{"node_h2d_ce_pageable", Kind::pageable, true},
                            HostCopy{"node_d2h_ce_pageable", Kind::pageable, false}}) {
    if (record != c.name) continue;
    const int d = device_dim(shape, "device");
    auto copies = std::make_unique<NodeCopies>(d, fault, issue_ce_copy);
    Region& host = copies->region(c.host, d, floats);
    Region& device = copies->region(Kind::device, d, floats);
    copies->add_leg(d, c.to_device ? host : device, c.to_device ? device : host, seed, false);
    return copies;
  }
  if (record == "node_bidir_host_ce_pinned") {
    // Host to device on the timed stream, device to host on a second stream.
    const int d = device_dim(shape, "device");
    auto copies = std::make_unique<NodeCopies>(d, fault, issue_ce_copy);
    copies->add_leg(d, copies->region(Kind::pinned_mapped, d, floats),
                    copies->region(Kind::device, d, floats), seed, false);
    copies->add_leg(d, copies->region(Kind::device, d, floats),
                    copies->region(Kind::pinned_mapped, d, floats), seed + 1, true);
    return copies;
  }
  if (record == "node_peer_ce_write" || record == "node_peer_ce_read" ||
      record == "node_peer_ce_bidir") {
    const int src = device_dim(shape, "src"), dst = device_dim(shape, "dst");
    // write and bidir: on src's stream; read: on dst's.
    const int issuer = record == "node_peer_ce_read" ? dst : src;
    auto copies = std::make_unique<NodeCopies>(issuer, fault, issue_ce_copy);
    copies->add_leg(issuer, copies->region(Kind::device, src, floats),
                    copies->region(Kind::device, dst, floats), seed, false);
    if (record == "node_peer_ce_bidir")
      copies->add_leg(dst, copies->region(Kind::device, dst, floats),
                      copies->region(Kind::device, src, floats), seed + 1, true);
    return copies;
  }
  return nullptr;
}

namespace {

KernelRecord ce_record(std::string name, std::string idea, bool pair, std::string_view timed_dim,
                       int legs) {
  auto make = [name](const Shape& shape, std::uint64_t seed) {
    return make_ce_copy(name, shape, seed, CopyFault::none);
  };
  auto device = [dim = std::string(timed_dim)](const Shape& shape) {
    return device_dim(shape, dim);
  };
  std::string variant = name.substr(5);  // after "node_"
  KernelRecord record = node_record(
      std::move(name), std::move(variant), std::move(idea),
      !pair       ? device_shapes
      : legs == 2 ? unordered_pair_shapes
                  : pair_shapes,
      device, pair ? 2 : 1, [legs](const Shape& shape) { return copies_cost(shape, legs); }, make);
  record.gpu_only = true;  // the emulator has no copy engine (above)
  record.host_synchronous = record.name.ends_with("_pageable");
  return record;
}

}  // namespace

RL_REGISTER_KERNEL(ce_record("node_h2d_ce_pinned", "copy engine, pinned host to device", false,
                             "device", 1));
RL_REGISTER_KERNEL(ce_record("node_d2h_ce_pinned", "copy engine, device to pinned host", false,
                             "device", 1));
RL_REGISTER_KERNEL(ce_record("node_h2d_ce_pageable", "copy engine, pageable host to device", false,
                             "device", 1));
RL_REGISTER_KERNEL(ce_record("node_d2h_ce_pageable", "copy engine, device to pageable host", false,
                             "device", 1));
RL_REGISTER_KERNEL(ce_record("node_bidir_host_ce_pinned",
                             "copy engines, pinned host to device and back at once", false,
                             "device", 2));
RL_REGISTER_KERNEL(ce_record("node_peer_ce_write", "cudaMemcpyPeerAsync on src's stream", true,
                             "src", 1));
RL_REGISTER_KERNEL(ce_record("node_peer_ce_read", "cudaMemcpyPeerAsync on dst's stream", true,
                             "dst", 1));
RL_REGISTER_KERNEL(ce_record("node_peer_ce_bidir",
                             "cudaMemcpyPeerAsync both ways at once, on src's and dst's streams",
                             true, "src", 2));

}  // namespace rl::node
#endif  // !__CUDA_ARCH__
