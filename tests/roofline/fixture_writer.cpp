// Writes the test fixtures as results.json files (through the one writer), so
// script-driven tests (schema validation, CLI, browser) read real files.
//   roofline_fixture_writer <emulator|counters|crowded|compare-base|compare-same|
//                            compare-slow|compare-clock-up|compare-clock-drop> <path>
// The compare files hold three compute-bound kernels, 20 repetitions each,
// with the SM clock sampled during each kernel: compare-same repeats the base,
// compare-slow is 10% slower, compare-clock-up has the same times with a 10%
// higher clock reading, compare-clock-drop a 10% lower clock and times longer
// by 1000/900 (the same cycles).
#include "fixtures.hpp"
#include "rl/roofline/results_io.hpp"

#include <cstdio>
#include <exception>
#include <string>

namespace {

using namespace rl::roofline;

Results compare_fixture(const std::string& which) {
  Results r = testing::emulator_fixture();
  r.kernels.clear();
  r.context.clocks.sm_mhz = 1000;
  double scale = 1.0;
  if (which == "compare-slow") scale = 1.10;
  if (which == "compare-clock-up") r.context.clocks.sm_mhz = 1100;
  if (which == "compare-clock-drop") {
    r.context.clocks.sm_mhz = 900;
    scale = 1000.0 / 900.0;
  }
  for (const char* name : {"copy_vec4", "gelu_fused", "layernorm_twopass"}) {
    KernelResult k = testing::timed_kernel(name, 1.0e-3 * scale, 0.002, 20);
    k.sm_clock_mhz = r.context.clocks.sm_mhz;
    k.bound = Bound::compute;
    r.kernels.push_back(k);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: roofline_fixture_writer KIND PATH\n");
    return 2;
  }
  std::string kind = argv[1];
  try {
    Results r;
    if (kind == "emulator")
      r = testing::emulator_fixture();
    else if (kind == "counters")
      r = testing::counters_fixture();
    else if (kind == "crowded")
      r = testing::crowded_fixture(40);
    else if (kind.starts_with("compare-"))
      r = compare_fixture(kind);
    else
      throw std::runtime_error("unknown fixture kind " + kind);
    write_results_atomic(argv[2], r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roofline_fixture_writer: %s\n", e.what());
    return 2;
  }
  return 0;
}
