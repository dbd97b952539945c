// Latency over the node's links: one thread chases pointers through another
// device's memory (peer) or through pinned mapped host memory, each load's
// address the value of the one before, so the loads cannot overlap and the
// time of a run is hops x the latency of one remote load.
//
// The chain: the footprint (`bytes`) cut into slots of kStrideBytes, a
// stride well over a cache line (and an adjacent-line prefetch), linked in a
// random order that is one cycle through every slot (Sattolo's algorithm),
// so no cache line is reused within a run and no prefetcher can guess the
// next one.  The presets walk the cycle once (hops = slots), over 256 MiB on
// medium and large.  What a cache can hold is the lines the chase touches,
// not the footprint: 65,536 slots of one line each, 8 MiB, which fits the
// L2 of every GPU we target, and the same cycle runs every sample.  So a
// cold sample (one walk, the default the report shows) flushes the L2 of
// every device first, the memory's owner's (a peer's) included (the peer
// records need 2 devices: rl::bench::other_devices_to_flush), and the timed
// device's, which also holds lines of host memory: each hop then goes to
// the owner's memory.  A batch sample walks the cycle again behind the
// last, so its hops can hit an L2: the latency of a cached hop.
// nvbandwidth chases a fixed stride through its 512 MiB buffer; the random
// order is ours.
//
// Validation: the thread writes the slot it ended on and the sum of the
// slots it visited; both are known from the chain (a host walk), so a chase
// that skipped a hop, or read the wrong slot, fails.
//
// Cost: flops 0; bytes = hops x 4 (the index each hop loads); the report
// shows time / hops.
#include "rl/cuda.hpp"
#if !defined(__CUDA_ARCH__)  // the records: host pass only (rl/device_instances.hpp)
#include "node/node_copies.hpp"

#include <cstring>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#endif

#include <cstddef>
#include <cstdint>

namespace rl::node {

// rl-static: kernel=node_pointer_chase max_regs=32 max_smem=0 sass=LDG
__global__ void node_pointer_chase(const unsigned* chain, unsigned words_per_slot,
                                   std::uint64_t hops, unsigned* out) {
  unsigned slot = 0;
  unsigned sum = 0;
  for (std::uint64_t h = 0; h < hops; ++h) {
    slot = chain[std::size_t{slot} * words_per_slot];
    sum += slot;
  }
  out[0] = slot;
  out[1] = sum;
}

#if !defined(__CUDA_ARCH__)
namespace {

constexpr std::size_t kStrideBytes = 4096;
constexpr unsigned kWordsPerSlot = kStrideBytes / sizeof(unsigned);

std::int64_t chase_bytes(SizePreset preset) {
  return preset == SizePreset::small ? std::int64_t{1} << 20 : std::int64_t{256} << 20;
}

// Slots of the shape's footprint; at least 2, and hops must walk them all.
std::size_t chase_slots(const Shape& shape) {
  const std::int64_t bytes = shape.at("bytes");
  const std::int64_t hops = shape.at("hops");
  const std::int64_t slots = bytes / static_cast<std::int64_t>(kStrideBytes);
  if (bytes % static_cast<std::int64_t>(kStrideBytes) != 0 || slots < 2 || slots > (1 << 30) ||
      hops < slots)
    throw std::invalid_argument("node latency: bytes must be a multiple of " +
                                std::to_string(kStrideBytes) +
                                " with at least 2 slots, and hops >= bytes / " +
                                std::to_string(kStrideBytes) + "; got " + shape.to_string());
  return static_cast<std::size_t>(slots);
}

// The preset's shapes (every one of `base`'s) with the footprint and the
// hops of one walk of the cycle.
std::vector<Shape> with_chase(std::vector<Shape> base, SizePreset preset) {
  for (Shape& shape : base) {
    shape.dims.back() = {"bytes", chase_bytes(preset)};
    shape.dims.emplace_back("hops", chase_bytes(preset) / static_cast<std::int64_t>(kStrideBytes));
  }
  return base;
}

class PointerChase final : public Workload {
 public:
  // The chain lives in `chain_kind` memory of `chain_device`; `timed` runs
  // the chase.
  PointerChase(int timed, Region::Kind chain_kind, int chain_device, const Shape& shape,
               std::uint64_t seed, bool one_hop_short)
      : timed_(timed), hops_(static_cast<std::uint64_t>(shape.at("hops"))) {
    const std::size_t slots = chase_slots(shape);
    if (chain_kind == Region::Kind::device && chain_device != timed)
      enable_peer_access_both_ways(timed, chain_device);
    // Sattolo: a uniformly random permutation that is a single cycle.
    std::vector<unsigned> next(slots);
    std::iota(next.begin(), next.end(), 0u);
    SeededRng rng(seed);
    for (std::size_t i = slots - 1; i > 0; --i) std::swap(next[i], next[rng.next_u64() % i]);
    std::vector<float> words(slots * kWordsPerSlot, 0.0f);
    for (std::size_t s = 0; s < slots; ++s)
      std::memcpy(&words[s * kWordsPerSlot], &next[s], sizeof(unsigned));
    // The expected end and sum: the same walk on the host.
    unsigned slot = 0;
    for (std::uint64_t h = 0; h < hops_; ++h) {
      slot = next[slot];
      expected_sum_ += slot;
    }
    expected_end_ = slot;
    chain_ = std::make_unique<Region>(chain_kind, chain_device, words.size());
    chain_->write(words);
    const ScopedDevice on(timed_);
    out_ = DeviceBuffer<unsigned>(2);
    if (one_hop_short) --hops_;
  }

  void run(cudaStream_t stream) override {
    rl::launch(node_pointer_chase, dim3(1), dim3(1), 0, stream,
               reinterpret_cast<const unsigned*>(chain_->address()), kWordsPerSlot, hops_,
               out_.get());
  }

  Validation validate(cudaStream_t stream) override {
    out_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<unsigned> got = out_.download();
    Validation result;
    result.passed = got[0] == expected_end_ && got[1] == expected_sum_;
    if (!result.passed)
      result.detail = "chase ended on slot " + std::to_string(got[0]) + " (sum " +
                      std::to_string(got[1]) + "), expected slot " + std::to_string(expected_end_) +
                      " (sum " + std::to_string(expected_sum_) + ")";
    return result;
  }

 private:
  int timed_;
  std::uint64_t hops_;
  unsigned expected_end_ = 0;
  unsigned expected_sum_ = 0;  // modulo 2^32, as the kernel's
  std::unique_ptr<Region> chain_;
  DeviceBuffer<unsigned> out_;
};

roofline::Cost chase_cost(const Shape& shape) {
  chase_slots(shape);  // refuses a shape the workload would
  const double bytes = static_cast<double>(shape.at("hops")) * sizeof(unsigned);
  return {0.0, bytes, bytes, roofline::ComputeUnit::fp32};
}

}  // namespace

std::unique_ptr<Workload> make_chase(std::string_view record, const Shape& shape,
                                     std::uint64_t seed, bool one_hop_short) {
  if (record == "node_peer_latency_sm")
    return std::make_unique<PointerChase>(device_dim(shape, "dst"), Region::Kind::device,
                                          device_dim(shape, "src"), shape, seed, one_hop_short);
  if (record == "node_host_latency_sm") {
    const int device = device_dim(shape, "device");
    return std::make_unique<PointerChase>(device, Region::Kind::pinned_mapped, device, shape, seed,
                                          one_hop_short);
  }
  return nullptr;
}

RL_REGISTER_KERNEL(node_record(
    "node_peer_latency_sm", "peer_latency_sm",
    "one thread on dst chases a random cycle through src's memory",
    [](SizePreset preset) { return with_chase(pair_shapes(preset), preset); },
    [](const Shape& shape) { return device_dim(shape, "dst"); }, 2, chase_cost,
    [](const Shape& shape, std::uint64_t seed) {
      return make_chase("node_peer_latency_sm", shape, seed, false);
    }));
RL_REGISTER_KERNEL(node_record(
    "node_host_latency_sm", "host_latency_sm",
    "one thread on the device chases a random cycle through pinned mapped host memory",
    [](SizePreset preset) { return with_chase(device_shapes(preset), preset); },
    [](const Shape& shape) { return device_dim(shape, "device"); }, 1, chase_cost,
    [](const Shape& shape, std::uint64_t seed) {
      return make_chase("node_host_latency_sm", shape, seed, false);
    }));
#endif  // !__CUDA_ARCH__

}  // namespace rl::node
