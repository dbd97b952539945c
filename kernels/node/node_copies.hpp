// What every copy record of the node family shares (host code only: the
// records' side of the kernel files, under their device-pass guard).
//
// A record is a set of legs, each one copy of `bytes` from a source region
// (device memory of one device, pinned mapped host memory, or pageable host
// memory) into a destination region, issued on one device.  The work is timed
// on the record's device's stream (KernelRecord::device); legs issued on
// other streams are forked from it and joined back into it by events, so the
// timed window spans all of them (nvbandwidth's measured stream, the other
// directions queued behind the same blocking kernel).
//
// Every source holds a seeded pattern (a different seed per leg, so a leg
// that reads another's source fails) and every destination is compared with
// it element by element before anything is timed.
#pragma once

#include "ceilings/stream_pattern.hpp"
#include "ceilings/support.hpp"
#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"
#include "rl/scoped_device.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rl::node {

// A deliberately broken copy, for the negative tests (tests/node): the
// records build CopyFault::none.  dst_offset writes every leg one 16-byte
// vector further into its destination (and one vector less, to stay in
// bounds); drop_tail leaves a leg's last vector uncopied.
enum class CopyFault { none, dst_offset, drop_tail };

// ---------------------------------------------------------------------------
// Shapes.  Bytes per copy: 1 MiB on the small preset (the emulator copies it
// in milliseconds); 512 MiB on medium and large, nvbandwidth's default
// buffer size, which keeps even a 900 GB/s link busy for over half a
// millisecond per copy, far above the event timer's resolution.
std::int64_t preset_bytes(SizePreset preset);

// Every ordered pair (src != dst) of the visible devices, dims src, dst,
// bytes.  With fewer than two devices, the one pair 0 -> 1, which the
// harness records as skipped ("needs 2 devices; this machine has 1"), so the
// record is never silently absent.
std::vector<Shape> pair_shapes(SizePreset preset);
// Both directions at once measure the pair, not an order: src < dst only
// (0 -> 1 alone below two devices, as pair_shapes).
std::vector<Shape> unordered_pair_shapes(SizePreset preset);
// Every visible device (at least device 0), dims device, bytes.
std::vector<Shape> device_shapes(SizePreset preset);

// The dimension `name` of `shape` as a device index in [0, 64).
int device_dim(const Shape& shape, std::string_view name);
// The shape's `bytes`: positive and a whole number of 16-byte vectors.
std::size_t copy_bytes(const Shape& shape);
// The devices a fan record (all-to-one, one-to-all) spans: every visible
// one, at least 2 (the record needs 2; its cost is then that of 2).
int fan_devices();

// The cost of `legs` copies of the shape's bytes: flops 0, bytes = the bytes
// that cross the links (KernelRecord::cost of every copy record).
roofline::Cost copies_cost(const Shape& shape, int legs);

// Peer access from `a` to `b` and from `b` to `a`, enabled once for the
// process (cudaErrorPeerAccessAlreadyEnabled is success, and cleared).
// Throws when the pair cannot access each other (cudaDeviceCanAccessPeer).
void enable_peer_access_both_ways(int a, int b);

// ---------------------------------------------------------------------------
// A buffer of floats a copy reads or writes.
class Region {
 public:
  enum class Kind { device, pinned_mapped, pageable };
  // Device memory of `device`, or pinned mapped host memory
  // (cudaHostAlloc(cudaHostAllocMapped)), or pageable host memory.
  Region(Kind kind, int device, std::size_t floats);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  Kind kind() const { return kind_; }
  int device() const { return device_; }  // the owner of device memory; -1 for host memory
  std::size_t floats() const { return floats_; }
  // The address a kernel or a copy is given (cudaHostGetDevicePointer's for
  // mapped memory).
  float* address() { return address_; }
  void fill(std::uint64_t seed);                 // stream_pattern(i, seed)
  void write(const std::vector<float>& values);  // floats() of them
  void poison();                                 // every byte 0xFF (NaN), synchronously
  std::vector<float> read() const;

 private:
  Kind kind_;
  int device_;
  std::size_t floats_;
  DeviceBuffer<float> device_buffer_;
  float* host_ = nullptr;  // pinned (cudaFreeHost) or pageable (delete[])
  float* address_ = nullptr;
};

// One copy: `issuer` issues it (its kernel runs there, or its copy engine is
// driven from its stream).
struct Leg {
  int issuer = 0;
  Region* src = nullptr;
  Region* dst = nullptr;
  std::uint64_t seed = 0;       // src's pattern
  int blocks = 1;               // SM copies: the grid
  cudaStream_t side = nullptr;  // nullptr: the timed stream itself
  cudaEvent_t done = nullptr;   // recorded on `side` for the join
};

// Issues one leg's copy of `floats` floats from `src` to `dst` on `stream`
// (the fault already applied to the addresses and count).
using IssueCopy = std::function<void(const Leg& leg, const float* src, float* dst,
                                     std::size_t floats, cudaStream_t stream)>;

class NodeCopies final : public Workload {
 public:
  // `timed_device`: the record's device, whose stream run() is given.
  NodeCopies(int timed_device, CopyFault fault, IssueCopy issue);
  ~NodeCopies() override;

  // A region owned by the workload.
  Region& region(Region::Kind kind, int device, std::size_t floats);
  // A leg from src to dst (filled with the pattern of `seed`), issued by
  // `issuer` on the timed stream (side_stream false: issuer must be the
  // timed device) or on a stream of its own forked from it.  Peer access is
  // enabled where the issuer touches another device's memory.
  Leg& add_leg(int issuer, Region& src, Region& dst, std::uint64_t seed, bool side_stream);

  void run(cudaStream_t stream) override;
  Validation validate(cudaStream_t stream) override;
  // Each leg's source (input "src<i>") and destination (output "dst<i>"),
  // in leg order, for --dump-tensors.
  std::vector<TensorDump> tensors() const override;

 private:
  void issue(const Leg& leg, cudaStream_t stream) const;

  int timed_device_;
  CopyFault fault_;
  IssueCopy issue_;
  std::vector<std::unique_ptr<Region>> regions_;
  std::vector<Leg> legs_;
  cudaEvent_t fork_ = nullptr;  // on the timed device
};

// The node family's record with the fields every node record shares.
KernelRecord node_record(
    std::string name, std::string variant, std::string idea,
    std::function<std::vector<Shape>(SizePreset)> shapes, std::function<int(const Shape&)> device,
    int min_devices, std::function<roofline::Cost(const Shape&)> cost,
    std::function<std::unique_ptr<Workload>(const Shape&, std::uint64_t)> make);

// The copy records' workloads with a fault, by record name, for the negative
// tests (tests/node); nullptr for a name the file does not define.  The
// records call them with CopyFault::none.
std::unique_ptr<Workload> make_sm_copy(std::string_view record, const Shape& shape,
                                       std::uint64_t seed, CopyFault fault);
std::unique_ptr<Workload> make_ce_copy(std::string_view record, const Shape& shape,
                                       std::uint64_t seed, CopyFault fault);
// The latency records' workloads, by record name; one_hop_short stops the
// chase one hop early (the negative test).  nullptr for another name.
std::unique_ptr<Workload> make_chase(std::string_view record, const Shape& shape,
                                     std::uint64_t seed, bool one_hop_short);

}  // namespace rl::node
