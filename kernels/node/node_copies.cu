// The node family's copy machinery (node/node_copies.hpp): shapes, regions,
// legs, the fork/join around the timed stream, and the exact check of every
// destination.  Host code only (device regions are filled by an upload, not
// by stream_pattern.hpp's fill kernel, so this file has no kernel and nvcc's
// device passes see an empty file).
#if !defined(__CUDA_ARCH__)  // host pass only (rl/device_instances.hpp)
#include "node/node_copies.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <stdexcept>
#include <utility>

namespace rl::node {

std::int64_t preset_bytes(SizePreset preset) {
  return preset == SizePreset::small ? std::int64_t{1} << 20 : std::int64_t{512} << 20;
}

std::vector<Shape> pair_shapes(SizePreset preset) {
  const int count = std::max(visible_device_count(), 2);  // below 2: 0 -> 1 alone, skipped
  std::vector<Shape> shapes;
  for (int src = 0; src < count; ++src)
    for (int dst = 0; dst < count; ++dst)
      if (src != dst && (visible_device_count() >= 2 || shapes.empty()))
        shapes.push_back(Shape{{{"src", src}, {"dst", dst}, {"bytes", preset_bytes(preset)}}});
  return shapes;
}

std::vector<Shape> unordered_pair_shapes(SizePreset preset) {
  std::vector<Shape> shapes = pair_shapes(preset);
  if (visible_device_count() >= 2)
    std::erase_if(shapes, [](const Shape& s) { return s.at("src") > s.at("dst"); });
  return shapes;
}

std::vector<Shape> device_shapes(SizePreset preset) {
  std::vector<Shape> shapes;
  for (int device = 0; device < std::max(visible_device_count(), 1); ++device)
    shapes.push_back(Shape{{{"device", device}, {"bytes", preset_bytes(preset)}}});
  return shapes;
}

int device_dim(const Shape& shape, std::string_view name) {
  const std::int64_t value = shape.at(name);
  if (value < 0 || value >= 64)
    throw std::invalid_argument("node: " + std::string(name) +
                                " must be a device index 0..63; got " + shape.to_string());
  return static_cast<int>(value);
}

std::size_t copy_bytes(const Shape& shape) {
  const std::int64_t bytes = shape.at("bytes");
  if (bytes <= 0 || bytes % 16 != 0)
    throw std::invalid_argument("node: bytes must be a positive multiple of 16; got " +
                                shape.to_string());
  return static_cast<std::size_t>(bytes);
}

int fan_devices() {
  return std::max(visible_device_count(), 2);
}

roofline::Cost copies_cost(const Shape& shape, int legs) {
  const double bytes = static_cast<double>(copy_bytes(shape)) * legs;
  return {0.0, bytes, bytes, roofline::ComputeUnit::fp32};
}

namespace {

void enable_peer_access(int from, int to) {
  int can = 0;
  RL_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (!can)
    throw std::runtime_error("device " + std::to_string(from) + " cannot access device " +
                             std::to_string(to) + "'s memory (cudaDeviceCanAccessPeer)");
  const ScopedDevice on(from);
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // enabled by an earlier instance: the state we want
    return;
  }
  RL_CUDA_CHECK(status);
}

}  // namespace

void enable_peer_access_both_ways(int a, int b) {
  enable_peer_access(a, b);
  enable_peer_access(b, a);
}

// ---------------------------------------------------------------------------

Region::Region(Kind kind, int device, std::size_t floats)
    : kind_(kind), device_(kind == Kind::device ? device : -1), floats_(floats) {
  switch (kind) {
    case Kind::device: {
      const ScopedDevice on(device);
      device_buffer_ = DeviceBuffer<float>(floats);
      address_ = device_buffer_.get();
      break;
    }
    case Kind::pinned_mapped: {
      const ScopedDevice on(device);  // the device whose address is taken
      void* host = nullptr;
      RL_CUDA_CHECK(cudaHostAlloc(&host, floats * sizeof(float), cudaHostAllocMapped));
      host_ = static_cast<float*>(host);
      void* mapped = nullptr;
      RL_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
      address_ = static_cast<float*>(mapped);
      break;
    }
    case Kind::pageable:
      host_ = new float[floats];
      address_ = host_;
      break;
  }
}

Region::~Region() {
  if (kind_ == Kind::pinned_mapped) cudaFreeHost(host_);
  if (kind_ == Kind::pageable) delete[] host_;
}

void Region::fill(std::uint64_t seed) {
  std::vector<float> values(floats_);
  for (std::size_t i = 0; i < floats_; ++i) values[i] = ceilings::stream_pattern(i, seed);
  write(values);
}

void Region::write(const std::vector<float>& values) {
  if (values.size() != floats_) throw std::invalid_argument("node: Region::write: size mismatch");
  if (kind_ == Kind::device)
    device_buffer_.upload(values);
  else
    std::memcpy(host_, values.data(), floats_ * sizeof(float));
}

void Region::poison() {
  if (kind_ == Kind::device) {
    const ScopedDevice on(device_);
    device_buffer_.poison();
    RL_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  std::memset(host_, 0xFF, floats_ * sizeof(float));
}

std::vector<float> Region::read() const {
  if (kind_ == Kind::device) return device_buffer_.download();
  return std::vector<float>(host_, host_ + floats_);
}

// ---------------------------------------------------------------------------

NodeCopies::NodeCopies(int timed_device, CopyFault fault, IssueCopy issue)
    : timed_device_(timed_device), fault_(fault), issue_(std::move(issue)) {
  const ScopedDevice on(timed_device_);
  RL_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
}

NodeCopies::~NodeCopies() {
  for (Leg& leg : legs_) {
    if (leg.side == nullptr) continue;
    cudaEventDestroy(leg.done);
    cudaStreamDestroy(leg.side);
  }
  cudaEventDestroy(fork_);
}

Region& NodeCopies::region(Region::Kind kind, int device, std::size_t floats) {
  return *regions_.emplace_back(std::make_unique<Region>(kind, device, floats));
}

Leg& NodeCopies::add_leg(int issuer, Region& src, Region& dst, std::uint64_t seed,
                         bool side_stream) {
  if (!side_stream && issuer != timed_device_)
    throw std::logic_error("node: a leg on the timed stream must be issued by the timed device");
  for (const Region* region : {&src, &dst})
    if (region->kind() == Region::Kind::device && region->device() != issuer)
      enable_peer_access_both_ways(issuer, region->device());
  src.fill(seed);
  Leg& leg = legs_.emplace_back(Leg{.issuer = issuer, .src = &src, .dst = &dst, .seed = seed});
  if (side_stream) {
    const ScopedDevice on(issuer);
    RL_CUDA_CHECK(cudaStreamCreateWithFlags(&leg.side, cudaStreamNonBlocking));
    RL_CUDA_CHECK(cudaEventCreateWithFlags(&leg.done, cudaEventDisableTiming));
  }
  return leg;
}

void NodeCopies::issue(const Leg& leg, cudaStream_t stream) const {
  constexpr std::size_t kVector = 4;  // floats in 16 bytes
  std::size_t floats = std::min(leg.src->floats(), leg.dst->floats());
  float* dst = leg.dst->address();
  if (fault_ != CopyFault::none) floats -= kVector;
  if (fault_ == CopyFault::dst_offset) dst += kVector;
  issue_(leg, leg.src->address(), dst, floats, stream);
}

void NodeCopies::run(cudaStream_t stream) {
  const bool forks =
      std::any_of(legs_.begin(), legs_.end(), [](const Leg& leg) { return leg.side != nullptr; });
  if (forks) RL_CUDA_CHECK(cudaEventRecord(fork_, stream));
  for (const Leg& leg : legs_) {
    if (leg.side == nullptr) {
      issue(leg, stream);
      continue;
    }
    const ScopedDevice on(leg.issuer);
    RL_CUDA_CHECK(cudaStreamWaitEvent(leg.side, fork_, 0));
    issue(leg, leg.side);
    RL_CUDA_CHECK(cudaEventRecord(leg.done, leg.side));
  }
  for (const Leg& leg : legs_)
    if (leg.side != nullptr) RL_CUDA_CHECK(cudaStreamWaitEvent(stream, leg.done, 0));
}

Validation NodeCopies::validate(cudaStream_t stream) {
  for (Leg& leg : legs_) leg.dst->poison();
  run(stream);
  RL_CUDA_CHECK(cudaGetLastError());
  RL_CUDA_CHECK(cudaStreamSynchronize(stream));  // the join covers every leg
  Validation result;
  result.passed = true;
  for (const Leg& leg : legs_) {
    const std::vector<float> got = leg.dst->read();
    const Validation checked = ceilings::compare_in_chunks(
        std::span<const float>(got),
        [&](std::size_t i) { return double{ceilings::stream_pattern(i, leg.seed)}; },
        ceilings::kExactIntegers);
    result.max_rel_err = std::max(result.max_rel_err, checked.max_rel_err);
    result.max_abs_err = std::max(result.max_abs_err, checked.max_abs_err);
    if (!checked.passed && result.passed) {
      result.passed = false;
      result.detail = "copy issued by device " + std::to_string(leg.issuer) + " into " +
                      (leg.dst->device() < 0 ? std::string("host memory")
                                             : "device " + std::to_string(leg.dst->device())) +
                      ": " + checked.detail;
    }
  }
  return result;
}

std::vector<TensorDump> NodeCopies::tensors() const {
  std::vector<TensorDump> dumps;
  for (std::size_t i = 0; i < legs_.size(); ++i) {
    const Leg& leg = legs_[i];
    const auto n = static_cast<std::int64_t>(leg.src->floats());
    dumps.push_back({"src" + std::to_string(i), "input", "fp32", {n}, leg.src->read()});
    dumps.push_back({"dst" + std::to_string(i), "output", "fp32", {n}, leg.dst->read()});
  }
  return dumps;
}

KernelRecord node_record(
    std::string name, std::string variant, std::string idea,
    std::function<std::vector<Shape>(SizePreset)> shapes, std::function<int(const Shape&)> device,
    int min_devices, std::function<roofline::Cost(const Shape&)> cost,
    std::function<std::unique_ptr<Workload>(const Shape&, std::uint64_t)> make) {
  return KernelRecord{.name = std::move(name),
                      .family = "node",
                      .variant = std::move(variant),
                      .precision = roofline::Precision::fp32,
                      .unit = roofline::ComputeUnit::fp32,
                      .baseline = "",
                      .ceiling = "",
                      .shapes = std::move(shapes),
                      .cost = std::move(cost),
                      .make_workload = std::move(make),
                      .idea = std::move(idea),
                      .device = std::move(device),
                      .min_devices = min_devices};
}

}  // namespace rl::node
#endif  // !__CUDA_ARCH__
