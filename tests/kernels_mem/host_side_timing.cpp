// Times the host side of one GELU bf16 (tanh) instance at a given n, on the
// emulator backend (only host code is timed; no kernel runs): constructing the
// workload (device buffers, drawing x, the float64 reference and bounds,
// upload), redrawing its inputs, and validate() with a stand-in kernel that
// copies x to y (poison, copy, download, the full comparison; gelu(x) != x, so
// every element goes through the arithmetic and the bound check).  Uses only
// the workload's public interface, so the same source also builds against an
// older tree for a before/after comparison (docs/perf-log.md, "Host-side
// validation on many cores").  Not a test: built on request
// (target kernels_mem_host_timing), run by hand.
//
//   kernels_mem_host_timing [n]      n defaults to 2^27; RL_HOST_THREADS applies
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "gelu/gelu_workload.hpp"

namespace {

// Wall and CPU seconds (all threads of the process) of one phase: on a shared
// machine the CPU seconds show the work, the wall seconds what other load left.
struct Phase {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
  void print(const char* name) const {
    std::printf(" %s_s=%.2f (cpu %.2f)", name,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(),
                static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC);
  }
};

}  // namespace

int main(int argc, char** argv) {
  using T = __nv_bfloat16;
  std::int64_t n = std::int64_t{1} << 27;
  if (argc > 1) {
    char* end = nullptr;
    n = std::strtoll(argv[1], &end, 10);
    if (argc > 2 || *end != '\0' || n <= 0) {
      std::fprintf(stderr, "usage: %s [n > 0]\n", argv[0]);
      return 2;
    }
  }
  const char* threads = std::getenv("RL_HOST_THREADS");

  std::printf("n=%lld RL_HOST_THREADS=%s", static_cast<long long>(n),
              threads != nullptr ? threads : "unset");
  Phase phase;
  rl::gelu::GeluWorkload<T> workload(rl::gelu::Form::tanh, nullptr, 0.0, n, 1);
  phase.print("construct");

  phase = Phase();
  workload.redraw_inputs(rl::gelu::kDefaultInputs, 2);
  phase.print("redraw");

  workload.launch = [](const rl::gelu::Args<T>& args, cudaStream_t stream) {
    RL_CUDA_CHECK(cudaMemcpyAsync(args.y, args.x, static_cast<std::size_t>(args.n) * sizeof(T),
                                  cudaMemcpyDeviceToDevice, stream));
  };
  phase = Phase();
  const rl::Validation v = workload.validate(nullptr);
  phase.print("validate");
  std::printf(" passed=%d max_abs_err=%.6g\n", v.passed ? 1 : 0, v.max_abs_err);
  return 0;
}
