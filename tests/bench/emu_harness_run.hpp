// One harness run on the emulator backend over the records a filter selects,
// for the tests that drive the harness with records of their own: Google
// Benchmark's flags set as main() would, a quick sampling budget, the small
// preset, the emulator's context (compute capability 8.9, as it reports).
#pragma once

#include "harness.hpp"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

namespace rl::test {

struct EmuHarnessRun {
  roofline::Results results;  // what the harness recorded (results.json's content)
  std::size_t failed = 0;     // what finish() returned (main's exit 1 when > 0)
};

// `config` gives what the test sets (ceilings, --counters, ...); the filter,
// preset, repetitions, sampling budget and output folder are set here.
inline EmuHarnessRun run_emu_harness(bench::HarnessConfig config, const std::string& filter,
                                     int repetitions, const std::filesystem::path& out_dir) {
  std::string a0 = "emu_harness_test", a1 = "--benchmark_filter=" + filter,
              a2 = "--benchmark_repetitions=" + std::to_string(repetitions);
  char* argv[] = {a0.data(), a1.data(), a2.data()};
  int argc = 3;
  benchmark::Initialize(&argc, argv);
  config.sampling.timeout_s = 0.02;
  config.repetitions = repetitions;
  config.selection.preset = SizePreset::small;
  config.selection.filter = filter;
  config.out_dir = out_dir;
  roofline::Context context;
  context.backend = roofline::Backend::emulator;
  context.device.compute_capability = "8.9";
  EmuHarnessRun run;
  {
    bench::Harness harness(config, context, nullptr);
    harness.register_benchmarks();
    harness.run();
    run.failed = harness.finish();
    run.results = harness.results();
  }
  benchmark::ClearRegisteredBenchmarks();
  return run;
}

}  // namespace rl::test
