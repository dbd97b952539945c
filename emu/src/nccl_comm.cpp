// The emulator's NCCL: communicators, groups, and when a call runs.
//
// A call runs when every rank it needs has called, the way NCCL's kernels
// wait for their peers: a collective when every rank of the clique has made
// its next collective call, a send when its peer has made the matching
// receive (and the reverse).  The k-th collective call of each rank form one
// collective, as in NCCL; they must agree on the function, count, type, op and
// root, or none of them runs and the call that completes them returns
// ncclInvalidUsage (NCCL would hang or compute garbage).  Inside
// ncclGroupStart/ncclGroupEnd nothing is queued until the outermost
// ncclGroupEnd, which runs whatever the group completes in the calling thread
// before it returns; a call outside a group is a group of its own.  NCCL may
// block in such a call until its peers have called ("When a single thread is
// managing multiple devices, group semantics must be used", its group docs),
// so the thread never reaches another rank's call: an emulator check refuses
// that call (ncclInvalidUsage) where the emulator would otherwise run it.  The
// streams of the emulator are synchronous (work is done when it is
// enqueued), so data moved at that moment is where a GPU would have it once
// the streams reach the collective.  State is process-wide under one mutex;
// the group and the last error are per host thread, as in NCCL.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cuda_api_internal.hpp"
#include "internal.hpp"
#include "nccl_internal.hpp"
#include "rl/emu/launch.hpp"

namespace rl::emu::nccl {
namespace {

std::mutex g_mutex;
std::unordered_set<ncclComm*>& live_comms() {
  static std::unordered_set<ncclComm*> set;
  return set;
}

thread_local std::string t_last_error;
thread_local int t_group_depth = 0;
thread_local ncclResult_t t_group_error = ncclSuccess;
thread_local std::vector<std::pair<ncclComm*, Call>> t_group_calls;

// A number per host thread, never reused (a std::thread::id may be, once its
// thread has ended with a call still waiting).
std::uint64_t thread_id() {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t id = next.fetch_add(1, std::memory_order_relaxed);
  return id;
}

const char* function_name(Kind kind) {
  switch (kind) {
    case Kind::all_reduce:
      return "ncclAllReduce";
    case Kind::broadcast:
      return "ncclBroadcast";
    case Kind::reduce_scatter:
      return "ncclReduceScatter";
    case Kind::all_gather:
      return "ncclAllGather";
    case Kind::send:
      return "ncclSend";
    case Kind::recv:
      return "ncclRecv";
  }
  return "?";
}

std::string describe(const Call& c) {
  return std::string(function_name(c.kind)) + " of rank " + std::to_string(c.rank) + " (count " +
         std::to_string(c.count) + ", datatype " + std::to_string(static_cast<int>(c.type)) +
         ", op " + std::to_string(static_cast<int>(c.op)) + ", root/peer " +
         std::to_string(c.root) + ")";
}

// Why the ranks' calls of one collective disagree, or "".
std::string mismatch(const std::vector<Call>& calls) {
  const Call& first = calls.front();
  for (const Call& c : calls) {
    if (c.kind != first.kind || c.count != first.count || c.type != first.type ||
        (c.kind != Kind::all_gather && c.kind != Kind::broadcast && c.op != first.op) ||
        (c.kind == Kind::broadcast && c.root != first.root))
      return "the ranks' calls of one collective do not match: " + describe(first) + " and " +
             describe(c) + "; none ran";
  }
  return "";
}

// An emulator check (NCCL's group docs): why the calling thread cannot make
// `call`, as it is still inside its call outside a group on another rank of
// the clique, which waits for its peers; or "".
std::string blocked_thread(const Clique& clique, const Call& call) {
  const std::uint64_t me = thread_id();
  for (const auto* queues : {&clique.collectives, &clique.sends, &clique.recvs})
    for (const std::deque<Call>& q : *queues)
      for (const Call& c : q)
        if (c.thread == me && c.rank != call.rank)
          return "emulator check: " + describe(call) + " is made by the host thread still in " +
                 describe(c) + ", made outside a group, where NCCL may block until the other " +
                 "ranks call: one thread driving several ranks puts their calls in one group";
  return "";
}

// Runs what the clique's queued calls complete; the first mismatch's error.
ncclResult_t progress(Clique& clique) {
  ncclResult_t result = ncclSuccess;
  auto keep_first = [&](ncclResult_t r) { result = result == ncclSuccess ? r : result; };
  while (std::none_of(clique.collectives.begin(), clique.collectives.end(),
                      [](const std::deque<Call>& q) { return q.empty(); })) {
    std::vector<Call> calls;
    for (std::deque<Call>& q : clique.collectives) {
      calls.push_back(q.front());
      q.pop_front();
    }
    if (const std::string why = mismatch(calls); !why.empty())
      keep_first(fail(ncclInvalidUsage, why));
    else
      run_collective(calls);
  }
  std::vector<std::pair<Call, Call>> pairs;
  for (std::size_t i = 0; i < clique.sends.size(); ++i) {
    std::deque<Call>& sends = clique.sends[i];
    std::deque<Call>& recvs = clique.recvs[i];
    for (; !sends.empty() && !recvs.empty(); sends.pop_front(), recvs.pop_front()) {
      // NCCL: "rank peer needs to call ncclRecv with the same datatype and the same count".
      if (sends.front().count != recvs.front().count || sends.front().type != recvs.front().type)
        keep_first(fail(ncclInvalidUsage, describe(sends.front()) + " does not match " +
                                              describe(recvs.front()) + "; neither ran"));
      else
        pairs.emplace_back(sends.front(), recvs.front());
    }
  }
  run_transfers(pairs);
  return result;
}

// Queues the calls on their cliques and runs what they complete.
ncclResult_t flush(const std::vector<std::pair<ncclComm*, Call>>& calls) {
  const std::lock_guard lock(g_mutex);
  // A thread held in a call never makes the others: none of them is queued.
  for (const auto& [comm, call] : calls)
    if (live_comms().count(comm) != 0)
      if (const std::string why = blocked_thread(*comm->clique, call); !why.empty())
        return fail(ncclInvalidUsage, why);
  std::vector<Clique*> touched;
  ncclResult_t result = ncclSuccess;
  for (const auto& [comm, call] : calls) {
    if (live_comms().count(comm) == 0) {  // destroyed inside the group
      result = fail(ncclInvalidArgument, describe(call) + ": its communicator was destroyed");
      continue;
    }
    Clique& clique = *comm->clique;
    const std::size_t n = static_cast<std::size_t>(clique.ranks);
    const std::size_t me = static_cast<std::size_t>(call.rank);
    const std::size_t peer = static_cast<std::size_t>(call.root);
    if (call.kind == Kind::send)
      clique.sends[me * n + peer].push_back(call);
    else if (call.kind == Kind::recv)
      clique.recvs[peer * n + me].push_back(call);
    else
      clique.collectives[me].push_back(call);
    if (std::find(touched.begin(), touched.end(), &clique) == touched.end())
      touched.push_back(&clique);
  }
  for (Clique* clique : touched)
    if (const ncclResult_t r = progress(*clique); result == ncclSuccess) result = r;
  return result;
}

}  // namespace

ncclResult_t fail(ncclResult_t result, const std::string& message) {
  t_last_error = message;
  if (t_group_depth > 0 && t_group_error == ncclSuccess) t_group_error = result;
  return result;
}

ncclResult_t not_emulated(const std::string& what) {
  std::fprintf(stderr, "rl::emu: %s is not emulated (emu/docs/multi-device.md, \"NCCL\")\n",
               what.c_str());
  return fail(ncclInvalidUsage, what + " is not emulated");
}

ncclResult_t live_comm(ncclComm_t comm, const char* call, ncclComm* out) {
  const std::lock_guard lock(g_mutex);
  if (comm == nullptr) return fail(ncclInvalidArgument, std::string(call) + ": comm is NULL");
  if (live_comms().count(comm) == 0)
    return fail(ncclInvalidArgument,
                std::string(call) + ": comm is not a live communicator (destroyed?)");
  *out = *comm;
  return ncclSuccess;
}

ncclResult_t submit(ncclComm_t comm, const Call& call) {
  if (t_group_depth > 0) {
    t_group_calls.emplace_back(comm, call);
    return ncclSuccess;
  }
  Call alone = call;
  alone.thread = thread_id();
  return flush({{comm, alone}});
}

}  // namespace rl::emu::nccl

using rl::emu::nccl::fail;

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

// NCCL's own texts, so messages read the same whichever NCCL ran.
const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    case ncclNumResults:
      break;
  }
  return "unknown result code";
}

const char* ncclGetLastError(ncclComm_t) {
  return rl::emu::nccl::t_last_error.c_str();
}

// NCCL's checks and codes (init.cc): comms NULL or ndev < 0, invalid
// argument; with a devlist, a device outside 0..count-1 is invalid argument
// and one listed twice invalid usage, both checked before any communicator is
// made; without one, device i that does not exist is an unhandled CUDA error
// (its cudaSetDevice fails).
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  using namespace rl::emu::nccl;
  if (comms == nullptr) return fail(ncclInvalidArgument, "ncclCommInitAll: comms is NULL");
  if (ndev < 0) return fail(ncclInvalidArgument, "ncclCommInitAll: ndev < 0");
  std::vector<int> devices;
  for (int i = 0; i < ndev; ++i) {
    const int d = devlist != nullptr ? devlist[i] : i;
    if (devlist != nullptr && !rl::emu::detail::valid_device(d))
      return fail(ncclInvalidArgument,
                  "ncclCommInitAll: Invalid device " + std::to_string(d) +
                      " (totalnDev=" + std::to_string(rl::emu::device_count()) + ")");
    if (!rl::emu::detail::valid_device(d))
      return fail(ncclUnhandledCudaError, "ncclCommInitAll: device " + std::to_string(d) +
                                              " does not exist (cudaErrorInvalidDevice)");
    if (std::find(devices.begin(), devices.end(), d) != devices.end())
      return fail(ncclInvalidUsage,
                  "ncclCommInitAll: device " + std::to_string(d) + " is listed twice");
    devices.push_back(d);
  }
  if (ndev == 0) return ncclSuccess;
  const auto clique = std::make_shared<Clique>(ndev);
  const std::lock_guard lock(g_mutex);
  for (int r = 0; r < ndev; ++r) {
    comms[r] = new ncclComm{r, ndev, devices[static_cast<std::size_t>(r)], clique};
    live_comms().insert(comms[r]);
  }
  return ncclSuccess;
}

// NULL is a no-op (NCCL).  A rank's calls that no peer matched can never run:
// they are dropped with the communicator and reported as invalid usage (on a
// GPU its stream would wait for them forever).
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  using namespace rl::emu::nccl;
  if (comm == nullptr) return ncclSuccess;
  const std::lock_guard lock(g_mutex);
  if (live_comms().erase(comm) == 0)
    return fail(ncclInvalidArgument, "ncclCommDestroy: comm is not a live communicator");
  Clique& c = *comm->clique;
  std::size_t pending = c.collectives[static_cast<std::size_t>(comm->rank)].size();
  c.collectives[static_cast<std::size_t>(comm->rank)].clear();
  for (int p = 0; p < c.ranks; ++p) {
    std::deque<Call>& sends = c.sends[static_cast<std::size_t>(comm->rank * c.ranks + p)];
    std::deque<Call>& recvs = c.recvs[static_cast<std::size_t>(p * c.ranks + comm->rank)];
    pending += sends.size() + recvs.size();
    sends.clear();
    recvs.clear();
  }
  const int rank = comm->rank;
  delete comm;
  if (pending == 0) return ncclSuccess;
  return fail(ncclInvalidUsage, "ncclCommDestroy: rank " + std::to_string(rank) + " had " +
                                    std::to_string(pending) +
                                    " call(s) that no peer matched; they never ran");
}

// Nothing runs asynchronously here, so there is never an asynchronous error.
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* async_error) {
  ncclComm c;
  if (const ncclResult_t r = rl::emu::nccl::live_comm(comm, "ncclCommGetAsyncError", &c); r)
    return r;
  if (async_error == nullptr) return fail(ncclInvalidArgument, "ncclCommGetAsyncError: NULL");
  *async_error = ncclSuccess;
  return ncclSuccess;
}

namespace {
template <typename Field>
ncclResult_t query(ncclComm_t comm, const char* call, int* out, Field field) {
  ncclComm c;
  if (const ncclResult_t r = rl::emu::nccl::live_comm(comm, call, &c); r) return r;
  if (out == nullptr) return fail(ncclInvalidArgument, std::string(call) + ": output is NULL");
  *out = field(c);
  return ncclSuccess;
}
}  // namespace

ncclResult_t ncclCommCount(ncclComm_t comm, int* count) {
  return query(comm, "ncclCommCount", count, [](const ncclComm& c) { return c.ranks; });
}
ncclResult_t ncclCommCuDevice(ncclComm_t comm, int* device) {
  return query(comm, "ncclCommCuDevice", device, [](const ncclComm& c) { return c.device; });
}
ncclResult_t ncclCommUserRank(ncclComm_t comm, int* rank) {
  return query(comm, "ncclCommUserRank", rank, [](const ncclComm& c) { return c.rank; });
}

ncclResult_t ncclGroupStart() {
  ++rl::emu::nccl::t_group_depth;
  return ncclSuccess;
}

// The outermost end runs the group, or, when one of its calls failed, drops
// all of them and returns that call's error (NCCL's group error).
ncclResult_t ncclGroupEnd() {
  using namespace rl::emu::nccl;
  if (t_group_depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd: not in a group call");
  if (--t_group_depth > 0) return ncclSuccess;
  const ncclResult_t error = std::exchange(t_group_error, ncclSuccess);
  const std::vector<std::pair<ncclComm*, Call>> calls = std::exchange(t_group_calls, {});
  if (error != ncclSuccess) return error;
  return flush(calls);
}
