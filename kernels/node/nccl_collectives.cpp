// NCCL collectives over every device of the node, nccl-tests' way: one
// process, one thread, ncclCommInitAll over devices 0..n-1, float32 data.
//
//   node_nccl_all_reduce      ncclAllReduce, sum
//   node_nccl_all_gather      ncclAllGather
//   node_nccl_reduce_scatter  ncclReduceScatter, sum
//   node_nccl_alltoall        ncclSend + ncclRecv to and from every rank in one
//                             group (nccl-tests' alltoall without ncclAlltoAll,
//                             which needs NCCL 2.28); out of place only
//   node_nccl_broadcast       ncclBroadcast from rank 0
//
// Shape: `bytes`, nccl-tests' size per rank (nccl_plan.hpp: the larger of a
// rank's two buffers), 8 B to the preset's largest by x2, and `in_place`
// (0/1, nccl-tests' in-place layouts).
//
// Cost: flops 0; bytes = bus factor x bytes, the factor of nccl-tests'
// doc/PERFORMANCE.md for n = the devices this process sees (all_reduce
// 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; broadcast 1).  So
// the report's bytes / time is nccl-tests' busbw, comparable with one link's
// bandwidth whatever n; its algbw is shape bytes / time.  n is in notes().
//
// Timing: run(stream) is on device 0's stream, which is also rank 0's.  The
// other ranks' streams wait on an event recorded in `stream`, the group is
// launched, and `stream` waits on each rank's completion event, so the
// harness's events on `stream` span the slowest rank.  The communicators,
// streams and events are made once per process (NcclNode), the buffers per
// instance.  The harness's L2 flush before a cold sample is device 0's only.
//
// Check (before timing): every rank's inputs are integers in [-64, 63]
// (nccl_plan.hpp), so every sum is exact in float32; every rank's output is
// compared element by element, exactly, with the expected values.
//
// Skipped, with the reason: fewer than 2 devices (min_devices), NCCL not found
// (nccl_library.hpp), a size that does not split into float32 chunks per rank,
// in-place alltoall.
//
// Both backends, one code path: the CUDA build calls NVIDIA's NCCL, the
// emulator build the emulator's (emu/src/nccl_*.cpp) on emulated devices, so
// an emulated node validates every rank's output and draws the busbw curves.
// Its times are the host's copies, and the record says so: library "NCCL
// (emulated)", notes "NCCL 2.28.9 (emulated: rl::emu's NCCL ...)".
#include "node/nccl_library.hpp"
#include "node/nccl_plan.hpp"

#include "rl/registry.hpp"
#include "rl/scoped_device.hpp"

#if defined(RL_HAVE_NCCL_API)
#include "rl/check.hpp"
#include "rl/device_buffer.hpp"
#include "rl/host_parallel.hpp"
#include "rl/validate.hpp"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rl::nccl {
namespace {

using roofline::Cost;

#if defined(RL_EMULATE)
constexpr const char* kLibrary = "NCCL (emulated)";
#else
constexpr const char* kLibrary = "NCCL";
#endif

struct Problem {
  std::int64_t bytes = 0;
  bool in_place = false;
};

Problem problem(const Shape& shape) {
  const std::int64_t in_place = shape.at("in_place");
  if (in_place != 0 && in_place != 1)
    throw std::invalid_argument("in_place must be 0 or 1, got " + std::to_string(in_place));
  return {shape.at("bytes"), in_place == 1};
}

#if defined(RL_HAVE_NCCL_API)
// The node as NCCL sees it, made once per process and rank count:
// ncclCommInitAll over devices 0..n-1 (about a second on 8 GPUs, and the
// harness builds a workload per instance, again per repetition when
// repetitions interleave), a stream and a completion event per rank (rank 0
// runs on the harness's stream), and the event the other ranks' streams wait
// on.  Never destroyed: they live until the process exits, as the loaded
// library does.  One per rank count, as a test process may switch the
// emulator from 2 devices to 8 (rl::emu::set_device_count).
struct NcclNode {
  int ranks = 0;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;  // [0] unused
  std::vector<cudaEvent_t> done;      // [0] unused
  cudaEvent_t ready = nullptr;        // on device 0
};

NcclNode make_nccl_node(const NcclApi& api, int ranks) {
  NcclNode k;
  k.ranks = ranks;
  k.comms.assign(static_cast<std::size_t>(ranks), nullptr);
  k.streams.assign(k.comms.size(), nullptr);
  k.done.assign(k.comms.size(), nullptr);
  for (int r = 0; r < ranks; ++r) {
    const ScopedDevice on(r);
    if (r == 0) RL_CUDA_CHECK(cudaEventCreateWithFlags(&k.ready, cudaEventDisableTiming));
    if (r == 0) continue;
    RL_CUDA_CHECK(cudaStreamCreateWithFlags(&k.streams[r], cudaStreamNonBlocking));
    RL_CUDA_CHECK(cudaEventCreateWithFlags(&k.done[r], cudaEventDisableTiming));
  }
  nccl_check(api.comm_init_all(k.comms.data(), ranks, nullptr), "ncclCommInitAll");
  return k;
}

const NcclNode& nccl_node(const NcclApi& api, int ranks) {
  // A throw leaves the node unmade, so the next instance tries again.  The
  // map is never destroyed, not even at exit: its communicators and streams
  // stay reachable to the leak checker (asan), which runs after the statics'
  // destructors.
  static std::mutex mutex;
  static auto& nodes = *new std::map<int, NcclNode>;
  const std::lock_guard lock(mutex);
  auto it = nodes.find(ranks);
  if (it == nodes.end()) it = nodes.emplace(ranks, make_nccl_node(api, ranks)).first;
  return it->second;
}

// One rank's buffers: out of place an input and an output, each used whole;
// in place the output buffer alone, with the input and the output at the
// layout's offsets inside it (RankLayout: those offsets are in-place only;
// reduce_scatter's out_offset applied out of place pointed rank r's result
// r chunks past its output buffer, which the emulator's NCCL refused).
struct RankBuffers {
  RankLayout layout;
  DeviceBuffer<float> input;
  DeviceBuffer<float> output;
  bool in_place() const { return input.size() == 0; }
  float* in() const { return in_place() ? output.get() + layout.in_offset : input.get(); }
  float* out() const { return in_place() ? output.get() + layout.out_offset : output.get(); }
};

class CollectiveWorkload final : public Workload {
 public:
  CollectiveWorkload(Collective op, Problem p, std::uint64_t seed)
      : api_(nccl_api()), op_(op), p_(p), seed_(seed), n_(visible_device_count()) {
    if (n_ < 2) throw std::runtime_error("needs 2 devices; this machine has " + std::to_string(n_));
    if (const std::optional<std::string> why = shape_refusal(op, p.bytes, p.in_place, n_))
      throw std::invalid_argument(*why);
    node_ = &nccl_node(api_, n_);
    ranks_.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      const ScopedDevice on(r);
      RankBuffers& k = ranks_[r];
      k.layout = rank_layout(op, p.bytes, n_, r);
      if (!p.in_place) k.input = DeviceBuffer<float>(k.layout.input_elements);
      k.output = DeviceBuffer<float>(p.in_place ? k.layout.count : k.layout.output_elements);
    }
  }

  ~CollectiveWorkload() override {
    // Each buffer freed with its own device current (no throw here).
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) return;
    for (int r = 0; r < n_; ++r)
      if (cudaSetDevice(r) == cudaSuccess) ranks_[r] = RankBuffers{};
    cudaSetDevice(current);
  }

  void run(cudaStream_t stream) override {
    const NcclNode& k = *node_;
    RL_CUDA_CHECK(cudaEventRecord(k.ready, stream));
    for (int r = 1; r < n_; ++r) RL_CUDA_CHECK(cudaStreamWaitEvent(k.streams[r], k.ready, 0));
    nccl_check(api_.group_start(), "ncclGroupStart");
    // ncclGroupEnd runs even when a call fails, or NCCL stays inside the group.
    ncclResult_t first = ncclSuccess;
    for (int r = 0; r < n_ && first == ncclSuccess; ++r)
      first = launch(r, r == 0 ? stream : k.streams[r]);
    const ncclResult_t end = api_.group_end();
    nccl_check(first, "an NCCL call of the group");
    nccl_check(end, "ncclGroupEnd");
    for (int r = 1; r < n_; ++r) {
      const ScopedDevice on(r);
      RL_CUDA_CHECK(cudaEventRecord(k.done[r], k.streams[r]));
      RL_CUDA_CHECK(cudaStreamWaitEvent(stream, k.done[r], 0));
    }
  }

  Validation validate(cudaStream_t stream) override {
    for (int r = 0; r < n_; ++r) fill_inputs_and_poison(r);
    run(stream);
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    Validation all{.passed = true, .max_rel_err = 0, .max_abs_err = 0, .detail = {}};
    for (int r = 0; r < n_; ++r) {
      const RankBuffers& k = ranks_[r];
      std::vector<float> got(k.layout.output_elements);
      RL_CUDA_CHECK(
          cudaMemcpy(got.data(), k.out(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
      std::vector<double> ref(got.size());
      parallel_chunks(ref.size(), kLoopChunk, [&](std::size_t begin, std::size_t end) {
        for (std::size_t j = begin; j < end; ++j)
          ref[j] = expected_output(op_, seed_, n_, r, j, k.layout);
      });
      Validation v = compare_exactly(got, ref);
      all.max_abs_err = std::max(all.max_abs_err, v.max_abs_err);
      all.max_rel_err = std::max(all.max_rel_err, v.max_rel_err);
      if (!v.passed && all.passed) {
        all.passed = false;
        all.detail = "rank " + std::to_string(r) + ", " + v.detail;
      }
    }
    return all;
  }

  std::string notes() const override {
    return "NCCL " + version_text(api_.version) + " (" + api_.path + "), " + std::to_string(n_) +
           " ranks (ncclCommInitAll), bus factor " + std::to_string(bus_factor(op_, n_));
  }

 private:
  ncclResult_t launch(int r, cudaStream_t s) {
    const RankBuffers& k = ranks_[r];
    const ncclComm_t comm = node_->comms[r];
    const std::size_t chunk = k.layout.chunk;
    switch (op_) {
      case Collective::all_reduce:
        return api_.all_reduce(k.in(), k.out(), k.layout.count, ncclFloat32, ncclSum, comm, s);
      case Collective::all_gather:
        return api_.all_gather(k.in(), k.out(), chunk, ncclFloat32, comm, s);
      case Collective::reduce_scatter:
        return api_.reduce_scatter(k.in(), k.out(), chunk, ncclFloat32, ncclSum, comm, s);
      case Collective::broadcast:
        return api_.broadcast(k.in(), k.out(), k.layout.count, ncclFloat32, 0, comm, s);
      case Collective::alltoall:
        for (int peer = 0; peer < n_; ++peer) {
          const std::size_t slot = static_cast<std::size_t>(peer) * chunk;
          if (ncclResult_t e = api_.send(k.in() + slot, chunk, ncclFloat32, peer, comm, s);
              e != ncclSuccess)
            return e;
          if (ncclResult_t e = api_.recv(k.out() + slot, chunk, ncclFloat32, peer, comm, s);
              e != ncclSuccess)
            return e;
        }
        return ncclSuccess;
    }
    return ncclInvalidArgument;
  }

  // The inputs again (an in-place run overwrote them), and NaN wherever only
  // the collective may write: the output buffer out of place; in place, the
  // other ranks' slots of all_gather and all of a broadcast's non-root buffer.
  // In place all_reduce and reduce_scatter write over their own input, which
  // the exact check then tells apart from the result.
  void fill_inputs_and_poison(int r) {
    const ScopedDevice on(r);
    RankBuffers& k = ranks_[r];
    const bool broadcast_receiver = op_ == Collective::broadcast && r != 0;
    k.output.poison();
    if (p_.in_place && broadcast_receiver) {
      RL_CUDA_CHECK(cudaDeviceSynchronize());
      return;
    }
    std::vector<float> host(k.layout.input_elements);
    parallel_chunks(host.size(), kLoopChunk, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) host[i] = input_value(seed_, r, i);
    });
    RL_CUDA_CHECK(cudaDeviceSynchronize());  // the poison lands first
    RL_CUDA_CHECK(
        cudaMemcpy(k.in(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }

  const NcclApi& api_;
  Collective op_;
  Problem p_;
  std::uint64_t seed_;
  int n_;
  const NcclNode* node_ = nullptr;
  std::vector<RankBuffers> ranks_;
};
#endif

std::unique_ptr<Workload> make_workload(Collective op, const Shape& shape, std::uint64_t seed) {
#if defined(RL_HAVE_NCCL_API)
  return std::make_unique<CollectiveWorkload>(op, problem(shape), seed);
#else
  (void)op, (void)shape, (void)seed;
  throw std::runtime_error(*nccl_unavailable());
#endif
}

std::vector<Shape> shapes(Collective op, SizePreset preset) {
  const std::int64_t max = preset == SizePreset::small    ? kSmallMaxBytes
                           : preset == SizePreset::medium ? kMediumMaxBytes
                                                          : kLargeMaxBytes;
  std::vector<Shape> list;
  for (const std::int64_t bytes : size_ladder(max))
    for (const int in_place : {0, 1})
      if (!(op == Collective::alltoall && in_place == 1))
        list.push_back(Shape{{{"bytes", bytes}, {"in_place", in_place}}});
  return list;
}

KernelRecord record(Collective op, std::string idea) {
  const std::string name(collective_name(op));
  return KernelRecord{
      .name = "node_nccl_" + name,
      .family = "node",
      .variant = "nccl_" + name,
      .precision = roofline::Precision::fp32,
      .unit = roofline::ComputeUnit::fp32,
      .baseline = {},
      .ceiling = {},
      .gpu_only = false,  // the emulator build has its own NCCL
      .shapes = [op](SizePreset preset) { return shapes(op, preset); },
      .cost =
          [op](const Shape& shape) {
            const double bytes =
                bus_factor(op, visible_device_count()) * static_cast<double>(problem(shape).bytes);
            return Cost{.flops = 0, .bytes_min = bytes, .bytes_model = bytes};
          },
      .make_workload = [op](const Shape& shape,
                            std::uint64_t seed) { return make_workload(op, shape, seed); },
      .device_bytes =
          [op](const Shape& shape) {
            const Problem p = problem(shape);
            return rank_buffer_bytes(op, p.bytes, p.in_place, visible_device_count());
          },
      .idea = std::move(idea),
      .library = kLibrary,
      .refuse_shape = [op](const Shape& shape) -> std::optional<std::string> {
        if (std::optional<std::string> why = nccl_unavailable()) return why;
        const Problem p = problem(shape);
        return shape_refusal(op, p.bytes, p.in_place, visible_device_count());
      },
      .min_devices = 2,
  };
}

}  // namespace

RL_REGISTER_KERNEL(record(Collective::all_reduce, "ncclAllReduce (sum) over every device"));
RL_REGISTER_KERNEL(record(Collective::all_gather, "ncclAllGather over every device"));
RL_REGISTER_KERNEL(record(Collective::reduce_scatter, "ncclReduceScatter (sum) over every device"));
RL_REGISTER_KERNEL(record(Collective::alltoall,
                          "ncclSend/ncclRecv to and from every device in one group"));
RL_REGISTER_KERNEL(record(Collective::broadcast, "ncclBroadcast from device 0 to every device"));

}  // namespace rl::nccl
