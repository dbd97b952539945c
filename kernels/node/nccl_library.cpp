// The records' NCCL: NVIDIA's, loaded at run time (nccl_library.hpp says
// where it is looked for), or in the emulator build the emulator's, linked in.
#include "node/nccl_library.hpp"

#include <cstdlib>
#include <optional>
#include <string>

#if defined(RL_HAVE_NCCL_API)
#include "node/nccl_plan.hpp"  // version_text
#include "rl/library_error.hpp"

#include <stdexcept>
#endif
#if defined(RL_HAVE_NCCL_API) && !defined(RL_EMULATE)
#include <dlfcn.h>

#include <utility>
#endif

namespace rl::nccl {

#if defined(RL_EMULATE)

// The emulator's NCCL is part of the one emulator runtime this process links
// (its devices, memory and streams), so the table is filled from its
// functions directly; RL_NCCL_LIBRARY is not read.
const NcclApi& nccl_api() {
  static const NcclApi api = [] {
    NcclApi a{.get_version = &ncclGetVersion,
              .error_string = &ncclGetErrorString,
              .last_error = &ncclGetLastError,
              .comm_init_all = &ncclCommInitAll,
              .comm_destroy = &ncclCommDestroy,
              .group_start = &ncclGroupStart,
              .group_end = &ncclGroupEnd,
              .all_reduce = &ncclAllReduce,
              .all_gather = &ncclAllGather,
              .reduce_scatter = &ncclReduceScatter,
              .broadcast = &ncclBroadcast,
              .send = &ncclSend,
              .recv = &ncclRecv,
              .version = 0,
              .path = kEmulatedNccl};
    a.get_version(&a.version);
    return a;
  }();
  return api;
}

std::optional<std::string> nccl_unavailable() {
  return std::nullopt;
}

std::optional<std::string> nccl_load_failure(const std::string& library) {
  return "NCCL not loaded: the emulator build uses the emulator's NCCL and loads no library (" +
         library + ")";
}

#elif defined(RL_HAVE_NCCL_H)
namespace {

// An open library with every function resolved, or why not.
struct Loaded {
  void* handle = nullptr;
  NcclApi api;
  std::string why;  // set when handle is null
};

template <typename Fn>
void resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
}

Loaded open(const std::string& library) {
  Loaded l;
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    l.why = error != nullptr ? error : library + ": dlopen failed";
    return l;
  }
  NcclApi& a = l.api;
  std::string missing;
  resolve(handle, "ncclGetVersion", a.get_version, missing);
  resolve(handle, "ncclGetErrorString", a.error_string, missing);
  resolve(handle, "ncclCommInitAll", a.comm_init_all, missing);
  resolve(handle, "ncclCommDestroy", a.comm_destroy, missing);
  resolve(handle, "ncclGroupStart", a.group_start, missing);
  resolve(handle, "ncclGroupEnd", a.group_end, missing);
  resolve(handle, "ncclAllReduce", a.all_reduce, missing);
  resolve(handle, "ncclAllGather", a.all_gather, missing);
  resolve(handle, "ncclReduceScatter", a.reduce_scatter, missing);
  resolve(handle, "ncclBroadcast", a.broadcast, missing);
  resolve(handle, "ncclSend", a.send, missing);  // NCCL 2.7+
  resolve(handle, "ncclRecv", a.recv, missing);
  std::string optional_missing;
  resolve(handle, "ncclGetLastError", a.last_error, optional_missing);
  if (!missing.empty() || a.get_version(&a.version) != ncclSuccess) {
    l.why = library + " lacks " + (missing.empty() ? "a working ncclGetVersion" : missing);
    dlclose(handle);
    return l;
  }
  Dl_info info{};
  a.path = dladdr(reinterpret_cast<void*>(a.get_version), &info) != 0 && info.dli_fname != nullptr
               ? info.dli_fname
               : library;
  l.handle = handle;
  return l;
}

// The search of nccl_library.hpp, once per process.  The library stays loaded
// until the process ends (communicators may outlive any one workload).
const Loaded& process_nccl() {
  static const Loaded loaded = [] {
    if (const char* env = std::getenv("RL_NCCL_LIBRARY"); env != nullptr && *env != '\0') {
      Loaded l = open(env);
      if (l.handle == nullptr) l.why += " (RL_NCCL_LIBRARY=" + std::string(env) + ")";
      return l;
    }
    Loaded l = open("libnccl.so.2");
#if defined(RL_NCCL_CONFIGURED_DIR)
    if (l.handle == nullptr) {
      const std::string configured = std::string(RL_NCCL_CONFIGURED_DIR) + "/libnccl.so.2";
      Loaded second = open(configured);
      if (second.handle != nullptr) return second;
      l.why += "; " + second.why;
    }
#endif
    if (l.handle == nullptr)
      l.why += " (put libnccl.so.2 on LD_LIBRARY_PATH, or set RL_NCCL_LIBRARY to its path)";
    return l;
  }();
  return loaded;
}

}  // namespace

std::optional<std::string> nccl_unavailable() {
  const Loaded& l = process_nccl();
  if (l.handle != nullptr) return std::nullopt;
  return "NCCL not found: " + l.why;
}

std::optional<std::string> nccl_load_failure(const std::string& library) {
  Loaded l = open(library);
  if (l.handle == nullptr) return "NCCL not found: " + l.why;
  dlclose(l.handle);
  return std::nullopt;
}

const NcclApi& nccl_api() {
  if (const std::optional<std::string> why = nccl_unavailable()) throw std::runtime_error(*why);
  return process_nccl().api;
}

#else  // built without nccl.h: the records exist and are always skipped

namespace {
constexpr const char* kNoHeader =
    "NCCL not found: bench_roofline was built without nccl.h (install the toolkit's NCCL or "
    "the nvidia-nccl-cu* wheel into .venv, then reconfigure)";
}  // namespace

std::optional<std::string> nccl_unavailable() {
  return kNoHeader;
}
std::optional<std::string> nccl_load_failure(const std::string&) {
  return kNoHeader;
}

#endif

#if defined(RL_HAVE_NCCL_API)
void nccl_check(ncclResult_t result, const char* call) {
  if (result == ncclSuccess) return;
  const NcclApi& a = nccl_api();
  std::string what = std::string(call) + " failed: " + a.error_string(result);
  if (a.last_error != nullptr)
    if (const char* last = a.last_error(nullptr); last != nullptr && *last != '\0')
      what += " (" + std::string(last) + ")";
  what += " [NCCL " + version_text(a.version) + ", " + a.path + "]";
  throw LibraryError("NCCL", static_cast<int>(result), what);
}
#endif

}  // namespace rl::nccl
