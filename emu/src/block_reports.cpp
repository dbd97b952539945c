#include "block_reports.hpp"

#include <cxxabi.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace rl::emu::detail {
namespace {

std::string demangle(const char* symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(symbol, nullptr, nullptr, &status), std::free);
  return status == 0 ? demangled.get() : symbol;
}

// Where code at `return_address` was called from, for `addr2line -e`.
std::string call_site(const void* return_address) {
  Dl_info info{};
  const auto pc = reinterpret_cast<std::uintptr_t>(return_address) - 1;  // inside the call
  char buf[64];
  if (dladdr(return_address, &info) == 0 || info.dli_fname == nullptr) {
    std::snprintf(buf, sizeof buf, "%#zx", static_cast<std::size_t>(pc));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%#zx",
                static_cast<std::size_t>(pc - reinterpret_cast<std::uintptr_t>(info.dli_fbase)));
  const std::string file = *info.dli_fname != '\0' ? info.dli_fname : "/proc/self/exe";
  return file + "+" + buf + " (addr2line -e " + file + " " + buf + ")";
}

// What each warp of a stopped block waits on, e.g. "warp 0: 31 at
// __syncthreads, 1 running (interrupted)"; one clause per state present.
std::string warp_states(const Block& b, const Thread* interrupted) {
  std::string out;
  for (unsigned base = 0; base < b.count; base += 32) {
    unsigned counts[static_cast<unsigned>(State::exited) + 1] = {};
    unsigned stopped = 0;
    std::string object;  // what the first thread waiting on an object waits on
    for (unsigned r = base; r < std::min(b.count, base + 32); ++r) {
      const Thread& t = b.threads[r];
      if (t.abandoned) {
        ++stopped;
        continue;
      }
      ++counts[static_cast<unsigned>(*t.state)];
      if (*t.state == State::object && object.empty())
        object = "waiting on " + t.describe(t.wait_object);
    }
    out += (base == 0 ? "warp " : "; warp ") + std::to_string(base / 32) + ":";
    const char* sep = " ";
    const auto clause = [&](unsigned n, const char* what) {
      if (n == 0) return;
      out += sep + std::to_string(n) + " " + what;
      sep = ", ";
    };
    clause(counts[static_cast<unsigned>(State::runnable)],
           "runnable (yielded in __nanosleep or not yet run)");
    clause(counts[static_cast<unsigned>(State::barrier)], "at __syncthreads");
    clause(counts[static_cast<unsigned>(State::collective)], "in a warp collective");
    clause(counts[static_cast<unsigned>(State::activemask)], "in __activemask");
    clause(counts[static_cast<unsigned>(State::object)], object.c_str());
    clause(counts[static_cast<unsigned>(State::exited)], "exited");
    if (stopped > 0)
      clause(stopped, interrupted != nullptr
                          ? "running without ever yielding (stopped by the watchdog)"
                          : "stopped mid-kernel");
  }
  return out;
}

}  // namespace

std::string kernel_name(const LaunchSpec& spec) {
  if (spec.name != nullptr) return spec.name;
  Dl_info info{};
  if (dladdr(spec.kernel, &info) != 0 && info.dli_sname != nullptr && info.dli_saddr == spec.kernel)
    return demangle(info.dli_sname);
  // Kernels with internal linkage (static, anonymous namespace) are only in
  // the ELF .symtab, not in the dynamic symbol table that dladdr() reads.
  if (const std::string mangled = symbol_table_name(spec.kernel); !mangled.empty())
    return demangle(mangled.c_str());
  // A stripped binary: the kernel's address and parameter types, from
  // rl::launch's signature.
  const std::string_view signature = spec.signature;
  const std::string_view key = "KernelParams = {";
  std::string params = "?";
  if (const auto at = signature.find(key); at != std::string_view::npos) {
    const auto end = signature.find('}', at);
    params = std::string(signature.substr(at + key.size(), end - at - key.size()));
  }
  char address[32];
  std::snprintf(address, sizeof address, "%p", spec.kernel);
  return std::string("<kernel at ") + address + ">(" + params + ")";
}

const std::string& cached_kernel_name(const LaunchSpec& spec) {
  static std::mutex mutex;
  static std::unordered_map<const void*, std::string> names;  // node-based: stable references
  std::lock_guard lock(mutex);
  auto [at, inserted] = names.try_emplace(spec.kernel);
  if (inserted) at->second = kernel_name(spec);
  return at->second;
}

uint3 block_index(std::uint64_t linear, const dim3& grid) {
  return uint3{static_cast<unsigned>(linear % grid.x),
               static_cast<unsigned>((linear / grid.x) % grid.y),
               static_cast<unsigned>(linear / (static_cast<std::uint64_t>(grid.x) * grid.y))};
}

std::string block_label(const uint3& b) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", b.x, b.y, b.z);
  return buf;
}

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string divergent_barrier_description(const Block& b) {
  return "divergent __syncthreads: " + std::to_string(b.exited_since_barrier) + " of " +
         std::to_string(b.count) + " threads exited without reaching the barrier that the other " +
         std::to_string(b.barrier_arrived) + " live threads wait at, called from " +
         call_site(b.barrier_site);
}

std::string deadlock_description(const Block& b) {
  unsigned at_barrier = 0, in_collective = 0;
  std::string example;
  for (unsigned i = 0; i < b.count; ++i) {
    const Thread& t = b.threads[i];
    if ((*t.state) == State::barrier) ++at_barrier;
    if ((*t.state) != State::collective) continue;
    ++in_collective;
    if (!example.empty()) continue;
    const unsigned base = t.rank & ~31u;
    for (unsigned m = t.mask; m != 0; m &= m - 1) {
      const unsigned lane = static_cast<unsigned>(__builtin_ctz(m));
      if (base + lane >= b.count) continue;
      const Thread& u = b.threads[base + lane];
      if ((*u.state) == State::exited) continue;
      if ((*u.state) == State::collective && u.mask == t.mask && u.fn == t.fn) continue;
      example = "; thread " + std::to_string(t.rank) + " waits in a warp collective (mask " +
                hex(t.mask) + ") for lane " + std::to_string(lane) + ", which " +
                ((*u.state) == State::barrier  ? "waits at __syncthreads"
                 : (*u.state) == State::object ? "sleeps on an mbarrier or a named barrier"
                                               : "waits in a different warp collective");
      break;
    }
  }
  unsigned on_object = 0;
  for (unsigned i = 0; i < b.count; ++i) {
    const Thread& t = b.threads[i];
    if ((*t.state) != State::object) continue;
    if (on_object++ == 0 && example.empty())
      example = "; thread " + std::to_string(t.rank) + " waits on " + t.describe(t.wait_object);
  }
  return std::to_string(b.live) + " of " + std::to_string(b.count) +
         " threads alive and none can proceed (" + std::to_string(at_barrier) +
         " at __syncthreads, " + std::to_string(in_collective) + " in warp collectives" +
         (on_object > 0 ? ", " + std::to_string(on_object) + " on mbarriers or named barriers"
                        : std::string()) +
         example + ")";
}

std::string watchdog_description(const Block& b, const Thread* interrupted) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", watchdog_seconds());
  return std::string("watchdog: no thread of the block made progress for ") + seconds +
         " s (RL_EMU_WATCHDOG_S; a spin-wait that cannot end?): " + warp_states(b, interrupted);
}

std::string watched_block_label(const WorkerWatch& w) {
  const LaunchSpec* spec = w.spec.load(std::memory_order_acquire);
  if (spec == nullptr) return "a kernel";
  return "kernel " + cached_kernel_name(*spec) + ", block " +
         block_label(block_index(w.block.load(std::memory_order_relaxed), spec->grid));
}

}  // namespace rl::emu::detail
