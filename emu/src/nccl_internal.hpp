// The emulator's NCCL (<nccl.h>, emu/cuda_include/nccl.h), shared by its two
// files: nccl_comm.cpp (communicators, groups, matching the ranks' calls) and
// nccl_ops.cpp (each call's argument checks and the data it moves).  Not a
// public header.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace rl::emu::nccl {

enum class Kind { all_reduce, broadcast, reduce_scatter, all_gather, send, recv };

// One rank's call, as it was made (arguments already checked).
struct Call {
  Kind kind = Kind::all_reduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // the call's count argument (reduce_scatter: recvcount)
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;  // broadcast's root; send's and recv's peer
  int rank = 0;  // the caller's rank
  // The host thread of a call made outside a group (nccl_comm.cpp's
  // thread_id), which NCCL may block in that call; 0 inside a group.
  std::uint64_t thread = 0;
};

// The communicators ncclCommInitAll made together, and the calls each rank
// made that the other ranks have not all matched yet.
struct Clique {
  explicit Clique(int n)
      : ranks(n),
        collectives(static_cast<std::size_t>(n)),
        sends(static_cast<std::size_t>(n) * n),
        recvs(static_cast<std::size_t>(n) * n) {}
  int ranks;
  std::vector<std::deque<Call>> collectives;  // by rank, in call order
  std::vector<std::deque<Call>> sends;        // [from * ranks + to], in call order
  std::vector<std::deque<Call>> recvs;        // [from * ranks + to]: the receiver is `to`
};

}  // namespace rl::emu::nccl

// ncclComm_t points to one of these (nccl.h declares the name).
struct ncclComm {
  int rank = 0;
  int ranks = 0;
  int device = 0;
  std::shared_ptr<rl::emu::nccl::Clique> clique;
};

namespace rl::emu::nccl {

// Records `message` as the calling thread's ncclGetLastError and returns
// `result`; inside a group the first failure also fails the group, which
// ncclGroupEnd then returns, running none of its calls (as NCCL does).
ncclResult_t fail(ncclResult_t result, const std::string& message);

// A call NCCL runs but the emulator does not (a reduction of 16- or 8-bit
// floats, ncclAvg): one line on stderr, and fail(ncclInvalidUsage, ...).
ncclResult_t not_emulated(const std::string& what);

// The communicator's rank, ranks and device when `comm` is live, else
// fail(ncclInvalidArgument).  `call` names the NCCL function for messages.
ncclResult_t live_comm(ncclComm_t comm, const char* call, ncclComm* out);

// Queues a checked call: inside a group until the outermost ncclGroupEnd,
// else at once.  A queued call runs when every rank it needs has called
// (nccl_comm.cpp tells the matching).
ncclResult_t submit(ncclComm_t comm, const Call& call);

// nccl_ops.cpp: the bytes of one element; 0 for a type NCCL does not have.
std::size_t type_size(ncclDataType_t type);
// Runs one collective from its calls on every rank (calls[r] is rank r's,
// all of one kind, count, type, op and root), computing every rank's result
// before writing any output, so in-place calls read their inputs intact.
void run_collective(const std::vector<Call>& calls);
// Runs matched send/receive pairs (first: the send, second: its receive),
// every send's data read before any receive is written.
void run_transfers(const std::vector<std::pair<Call, Call>>& pairs);

}  // namespace rl::emu::nccl
