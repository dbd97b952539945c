// NCCL for the node_nccl_* records: in the CUDA build NVIDIA's library,
// loaded at run time (dlopen), never linked, so a machine without it runs
// every other record and records the NCCL instances as skipped with the
// reason ("NCCL not found: ..."); in the emulator build the emulator's own
// NCCL (emu/cuda_include/nccl.h, emu/src/nccl_*.cpp), linked in with the rest
// of the emulator runtime, so the records run on emulated devices and their
// notes say whose NCCL it was.
//
// Where the CUDA build looks for it, first hit wins:
//   1. RL_NCCL_LIBRARY, when set: that file (a path) or name, and nothing
//      else.  Set it to a library that is not on the search path, or to a
//      path that does not exist to see the records skipped.
//   2. "libnccl.so.2" as dlopen searches: LD_LIBRARY_PATH, bench_roofline's
//      RUNPATH (the CUDA toolkit's library folder it was linked against), the
//      loader's cache.
//   3. The folder where CMake found libnccl.so.2 when it configured the build
//      (the toolkit's lib folder, or the nvidia-nccl-cu* wheel's nvidia/nccl/lib
//      in the project's .venv).
// The types come from nccl.h (the toolkit's, or the wheel's), found by CMake
// (RL_HAVE_NCCL_H); without it the records are built and always skipped.  The
// emulator build always has one (RL_EMULATE: the emulator's nccl.h).
#pragma once

#include <optional>
#include <string>

#if defined(RL_HAVE_NCCL_H) || defined(RL_EMULATE)
#define RL_HAVE_NCCL_API 1
#include <nccl.h>
#endif

namespace rl::nccl {

// Why this process cannot use NCCL (one line, "NCCL not found: ..."), or
// nullopt.  Loads the library once per process.
std::optional<std::string> nccl_unavailable();

// Why `library` (a path or a name, as dlopen takes it) does not load as NCCL,
// or nullopt when it does; for the tests: loads and unloads it again.  The
// emulator build loads no library: it always says why.
std::optional<std::string> nccl_load_failure(const std::string& library);

#if defined(RL_HAVE_NCCL_API)
// The functions the records call, with nccl.h's types.
struct NcclApi {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;  // may be absent (NCCL < 2.13)
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  int version = 0;   // ncclGetVersion: 22809 for 2.28.9
  std::string path;  // the file it was loaded from, or kEmulatedNccl
};

// NcclApi::path in the emulator build: whose NCCL ran, for the records' notes.
inline constexpr const char* kEmulatedNccl =
    "emulated: rl::emu's NCCL on the host (emu/src/nccl_*.cpp), not NVIDIA's library";

// The process's NCCL; throws std::runtime_error with nccl_unavailable()'s
// reason when there is none.
const NcclApi& nccl_api();

// Throws rl::LibraryError ("NCCL") naming the call and NCCL's message (in both
// builds: rl/library_error.hpp).
void nccl_check(ncclResult_t result, const char* call);
#endif

}  // namespace rl::nccl
