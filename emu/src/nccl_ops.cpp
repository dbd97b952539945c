// The emulator's NCCL: each call's argument checks, and the data a matched
// collective or send/receive pair moves (nccl_comm.cpp decides when).
//
// Checks, with NCCL's codes (argcheck.cc, enqueue.cc), first the
// communicator (NULL or not live: invalid argument), a root or peer outside
// the ranks, a datatype or reduction op that does not exist (a user-defined
// op, which needs ncclRedOpCreatePreMulSum, included), all invalid argument.
// Then what NCCL only checks with NCCL_CHECK_MODE set, and a GPU otherwise
// faults on, checked always: each buffer of a call that moves data must be
// memory the runtime allocated (device memory of the communicator's device,
// managed or pinned host memory) and hold the call's bytes (an emulator
// check: a GPU may read past an allocation silently), else invalid argument;
// buffers that overlap must be NCCL's in-place layout (its user guide,
// "In-place Operations": all_reduce and broadcast sendbuff == recvbuff,
// all_gather sendbuff == recvbuff + rank x count, reduce_scatter recvbuff ==
// sendbuff + rank x count), else invalid argument (an emulator check: a GPU
// computes garbage, while the emulator, staging every result, would give the
// ideal answer; broadcast reads sendbuff on the root only, so only there);
// the stream must be a live stream of the communicator's device (NULL: that
// device's default stream), else unhandled CUDA error, as NCCL's launch into
// it would fail.  A collective of count 0 is checked and then dropped, as in
// NCCL; a send or receive of count 0 still pairs with its peer's.
//
// Arithmetic: sum, prod, max and min in the element type, ranks added in
// rank order (exact for the records' integer-valued floats; NCCL's order
// depends on its algorithm); integers wrap.  ncclAvg and reductions of
// float16, bfloat16 and fp8 are refused as not emulated (NCCL's rounding of
// those is its own); copies (all_gather, broadcast, send/recv) take every type.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_api_internal.hpp"
#include "internal.hpp"
#include "nccl_internal.hpp"

namespace rl::emu::nccl {
namespace {

template <typename T>
T combine(T a, T b, ncclRedOp_t op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // wraps instead of signed overflow
    if (op == ncclSum) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if (op == ncclProd) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    if (op == ncclSum) return a + b;
    if (op == ncclProd) return a * b;
  }
  return op == ncclMax ? (b > a ? b : a) : (b < a ? b : a);
}

template <typename T>
void reduce_typed(unsigned char* acc, const void* in, std::size_t n, ncclRedOp_t op) {
  for (std::size_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&b, static_cast<const unsigned char*>(in) + i * sizeof(T), sizeof(T));
    a = combine(a, b, op);
    std::memcpy(acc + i * sizeof(T), &a, sizeof(T));
  }
}

// acc[i] = acc[i] op in[i] for n elements (a type check_reduction allows).
void reduce_into(unsigned char* acc, const void* in, std::size_t n, ncclDataType_t type,
                 ncclRedOp_t op) {
  switch (type) {
    case ncclInt8:
      return reduce_typed<std::int8_t>(acc, in, n, op);
    case ncclUint8:
      return reduce_typed<std::uint8_t>(acc, in, n, op);
    case ncclInt32:
      return reduce_typed<std::int32_t>(acc, in, n, op);
    case ncclUint32:
      return reduce_typed<std::uint32_t>(acc, in, n, op);
    case ncclInt64:
      return reduce_typed<std::int64_t>(acc, in, n, op);
    case ncclUint64:
      return reduce_typed<std::uint64_t>(acc, in, n, op);
    case ncclFloat32:
      return reduce_typed<float>(acc, in, n, op);
    case ncclFloat64:
      return reduce_typed<double>(acc, in, n, op);
    default:
      return;
  }
}

// The communicator and datatype of every call (NCCL's first checks).
ncclResult_t check_call(ncclComm_t comm, const char* call, ncclDataType_t type, ncclComm* c) {
  if (const ncclResult_t r = live_comm(comm, call, c); r != ncclSuccess) return r;
  if (static_cast<int>(type) < 0 || static_cast<int>(type) >= ncclNumTypes)
    return fail(ncclInvalidArgument,
                std::string(call) + ": invalid type " + std::to_string(static_cast<int>(type)));
  return ncclSuccess;
}

// Where NCCL would launch: the communicator's device and the stream (last,
// as NCCL meets a bad stream only when it launches into it).
ncclResult_t check_stream(const char* call, cudaStream_t stream, const ncclComm& c) {
  const std::string name(call);
  if (!detail::valid_device(c.device))
    return fail(ncclUnhandledCudaError, name + ": the communicator's device " +
                                            std::to_string(c.device) + " no longer exists");
  int owner = 0;
  if (stream != nullptr && !detail::stream_device(stream, &owner))
    return fail(ncclUnhandledCudaError, name + ": stream is not a live stream");
  if (stream != nullptr && owner != c.device)
    return fail(ncclUnhandledCudaError, name + ": stream belongs to device " +
                                            std::to_string(owner) + ", the communicator to " +
                                            std::to_string(c.device));
  return ncclSuccess;
}

ncclResult_t check_reduction(const char* call, ncclRedOp_t op, ncclDataType_t type) {
  const std::string name(call);
  if (static_cast<int>(op) < 0 || static_cast<int>(op) >= ncclNumOps)
    return fail(ncclInvalidArgument, name + ": reduction operation " +
                                         std::to_string(static_cast<int>(op)) + " unknown");
  if (op == ncclAvg) return not_emulated(name + " with ncclAvg");
  if (type == ncclFloat16 || type == ncclBfloat16 || type == ncclFloat8e4m3 ||
      type == ncclFloat8e5m2)
    return not_emulated(name + " reducing a 16- or 8-bit float type (" +
                        std::to_string(static_cast<int>(type)) + ")");
  return ncclSuccess;
}

ncclResult_t check_root(const char* call, int root, const ncclComm& c) {
  if (root >= 0 && root < c.ranks) return ncclSuccess;
  return fail(ncclInvalidArgument, std::string(call) + ": invalid root or peer " +
                                       std::to_string(root) + " (ranks 0.." +
                                       std::to_string(c.ranks - 1) + ")");
}

// `ptr` holds `count` x `per` elements of `type` the communicator's device may use.
ncclResult_t check_buffer(const char* call, const char* what, const void* ptr, std::size_t count,
                          std::size_t per, ncclDataType_t type, const ncclComm& c) {
  const std::string name = std::string(call) + ": " + what;
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, per * type_size(type), &bytes))
    return fail(ncclInvalidArgument, name + ": count overflows the address space");
  if (bytes == 0) return ncclSuccess;
  detail::Allocation a;
  if (ptr == nullptr) return fail(ncclInvalidArgument, name + " is NULL");
  if (!detail::find_allocation(ptr, &a))
    return fail(ncclInvalidArgument, name + " is not a valid pointer (not CUDA memory)");
  if (a.type == cudaMemoryTypeDevice && a.device != c.device)
    return fail(ncclInvalidArgument, name + " allocated on device " + std::to_string(a.device) +
                                         " mismatches with NCCL device " +
                                         std::to_string(c.device));
  const std::size_t offset = static_cast<std::size_t>(static_cast<const unsigned char*>(ptr) -
                                                      static_cast<const unsigned char*>(a.base));
  if (bytes > a.size - offset)
    return fail(ncclInvalidArgument,
                name + ": " + std::to_string(bytes) + " bytes run past the end of its allocation");
  return ncclSuccess;
}

// An emulator check: buffers that overlap hold NCCL's in-place layout,
// `in_place` (sendbuff - recvbuff in bytes, for the caller's rank).
ncclResult_t check_overlap(const char* call, const void* send, std::size_t send_bytes,
                           const void* recv, std::size_t recv_bytes, std::ptrdiff_t in_place) {
  const auto s = reinterpret_cast<std::uintptr_t>(send);
  const auto r = reinterpret_cast<std::uintptr_t>(recv);
  if (s >= r + recv_bytes || r >= s + send_bytes) return ncclSuccess;  // apart
  if (static_cast<std::ptrdiff_t>(s - r) == in_place) return ncclSuccess;
  return fail(ncclInvalidArgument,
              std::string("emulator check: ") + call +
                  ": sendbuff and recvbuff overlap (sendbuff - " +
                  "recvbuff = " + std::to_string(static_cast<std::ptrdiff_t>(s - r)) +
                  " bytes) but are not NCCL's in-place layout for this rank (" +
                  std::to_string(in_place) + " bytes); a GPU would compute garbage");
}

}  // namespace

std::size_t type_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    case ncclNumTypes:
      break;
  }
  return 0;
}

void run_collective(const std::vector<Call>& calls) {
  const Call& first = calls.front();
  const std::size_t n = calls.size();
  const std::size_t bytes = first.count * type_size(first.type);
  std::vector<unsigned char> result;
  switch (first.kind) {
    case Kind::all_reduce:
    case Kind::reduce_scatter: {  // reduce_scatter reduces all n slots, rank r keeps slot r
      const std::size_t slots = first.kind == Kind::all_reduce ? 1 : n;
      result.assign(static_cast<const unsigned char*>(first.send),
                    static_cast<const unsigned char*>(first.send) + slots * bytes);
      for (std::size_t r = 1; r < n; ++r)
        reduce_into(result.data(), calls[r].send, slots * first.count, first.type, first.op);
      for (std::size_t r = 0; r < n; ++r)
        std::memcpy(calls[r].recv, result.data() + (slots == 1 ? 0 : r * bytes), bytes);
      return;
    }
    case Kind::all_gather:  // slot p of every output: rank p's input
      result.resize(n * bytes);
      for (std::size_t p = 0; p < n; ++p)
        std::memcpy(result.data() + p * bytes, calls[p].send, bytes);
      for (const Call& c : calls) std::memcpy(c.recv, result.data(), n * bytes);
      return;
    case Kind::broadcast: {
      const auto* root = static_cast<const unsigned char*>(calls[first.root].send);
      result.assign(root, root + bytes);
      for (const Call& c : calls) std::memcpy(c.recv, result.data(), bytes);
      return;
    }
    case Kind::send:
    case Kind::recv:
      return;  // not collectives: run_transfers
  }
}

void run_transfers(const std::vector<std::pair<Call, Call>>& pairs) {
  std::vector<std::vector<unsigned char>> data;
  data.reserve(pairs.size());
  for (const auto& [send, recv] : pairs) {
    const auto* from = static_cast<const unsigned char*>(send.send);
    data.emplace_back(from, from + send.count * type_size(send.type));
  }
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (!data[i].empty()) std::memcpy(pairs[i].second.recv, data[i].data(), data[i].size());
}

}  // namespace rl::emu::nccl

namespace {

using rl::emu::nccl::Call;
using rl::emu::nccl::Kind;

// The checks every data call shares, then its buffers, then submit.
struct Request {
  const char* name;
  Kind kind;
  const void* send;
  void* recv;
  std::size_t count;
  bool send_per_rank, recv_per_rank;  // the buffer holds count elements per rank, else count
  ncclDataType_t type;
  ncclRedOp_t op;
  int root;
  bool reduces, rooted;
};

ncclResult_t issue(const Request& q, ncclComm_t comm, cudaStream_t stream) {
  using namespace rl::emu::nccl;
  ncclComm c;
  if (const ncclResult_t r = check_call(comm, q.name, q.type, &c); r != ncclSuccess) return r;
  if (q.rooted)
    if (const ncclResult_t r = check_root(q.name, q.root, c); r != ncclSuccess) return r;
  if (q.reduces)
    if (const ncclResult_t r = check_reduction(q.name, q.op, q.type); r != ncclSuccess) return r;
  const bool p2p = q.kind == Kind::send || q.kind == Kind::recv;
  if (q.count == 0 && !p2p) return check_stream(q.name, stream, c);
  const auto ranks = static_cast<std::size_t>(c.ranks);
  // Broadcast reads sendbuff on the root only.
  const bool reads = q.kind != Kind::recv && (q.kind != Kind::broadcast || c.rank == q.root);
  if (reads)
    if (const ncclResult_t r = check_buffer(q.name, "sendbuff", q.send, q.count,
                                            q.send_per_rank ? ranks : 1, q.type, c);
        r != ncclSuccess)
      return r;
  if (q.kind != Kind::send)
    if (const ncclResult_t r = check_buffer(q.name, "recvbuff", q.recv, q.count,
                                            q.recv_per_rank ? ranks : 1, q.type, c);
        r != ncclSuccess)
      return r;
  if (reads && !p2p) {
    // Checked above: the byte counts cannot overflow.  A collective writes
    // one buffer from the other; send and receive are separate calls.
    const std::size_t slot = q.count * type_size(q.type);
    const auto own_slot = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c.rank) * slot);
    const std::ptrdiff_t in_place = q.kind == Kind::all_gather       ? own_slot
                                    : q.kind == Kind::reduce_scatter ? -own_slot
                                                                     : 0;
    if (const ncclResult_t r =
            check_overlap(q.name, q.send, slot * (q.send_per_rank ? ranks : 1), q.recv,
                          slot * (q.recv_per_rank ? ranks : 1), in_place);
        r != ncclSuccess)
      return r;
  }
  if (const ncclResult_t r = check_stream(q.name, stream, c); r != ncclSuccess) return r;
  return submit(comm, Call{.kind = q.kind,
                           .send = q.send,
                           .recv = q.recv,
                           .count = q.count,
                           .type = q.type,
                           .op = q.reduces ? q.op : ncclSum,
                           .root = q.root,
                           .rank = c.rank});
}

}  // namespace

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return issue({"ncclAllReduce", Kind::all_reduce, sendbuff, recvbuff, count, false, false,
                datatype, op, 0, true, false},
               comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return issue({"ncclBroadcast", Kind::broadcast, sendbuff, recvbuff, count, false, false, datatype,
                ncclSum, root, false, true},
               comm, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return issue({"ncclReduceScatter", Kind::reduce_scatter, sendbuff, recvbuff, recvcount, true,
                false, datatype, op, 0, true, false},
               comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return issue({"ncclAllGather", Kind::all_gather, sendbuff, recvbuff, sendcount, false, true,
                datatype, ncclSum, 0, false, false},
               comm, stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return issue({"ncclSend", Kind::send, sendbuff, nullptr, count, false, false, datatype, ncclSum,
                peer, false, true},
               comm, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return issue({"ncclRecv", Kind::recv, nullptr, recvbuff, count, false, false, datatype, ncclSum,
                peer, false, true},
               comm, stream);
}
