// One registered benchmark, a kernel record on one shape, and what the
// harness learns about it as it runs: its results.json record, its samples,
// and why it stopped early.
#pragma once

#include "rl/bench/policy.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/cost.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/results.hpp"
#include "selection.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace rl::bench {

struct BenchEntry {
  const KernelRecord* record = nullptr;
  Shape shape;
  std::string name;  // "<kernel>/<shape>", the Google Benchmark name
  roofline::Cost cost;
  roofline::KernelResult result;    // filled as the benchmark goes
  bool prepared = false;            // validated and warmed up
  bool failed = false;              // failed validation or errored: never timed
  bool interrupted = false;         // SIGINT/SIGTERM came before it finished: not recorded
  bool over_budget = false;         // --budget was spent before it started: not recorded
  bool repetition_started = false;  // a repetition entered Google Benchmark's timing loop
  SampleSet cold{SampleKind::cold, 1, {}, {}};
  SampleSet batch{SampleKind::batch, 1, {}, {}};
  int discarded_throttled = 0;  // samples retaken after a throttle reason
  bool kept_throttled = false;  // discards ran out: throttled samples were kept
  bool blocking = true;         // queue samples behind the blocking kernel (off after a timeout)
  std::chrono::steady_clock::time_point started;
  // The kernel's roof (the time-independent half of its roofline judgement,
  // roofline::roof_of), worked out once, at its first repetition, against the
  // ceilings measured so far -- a ceiling kernel's own first repetition
  // included.  Every repetition's counters classify their time against it,
  // and so does its results.json verdict while the ceilings are still those
  // it was worked out against.  Unset until then.
  struct JudgedRoof {
    std::optional<roofline::KernelRoof> roof;  // nullopt: no memory ceiling to judge by
    // The harness's ceilings version it was worked out against; nullopt for
    // a ceiling kernel, whose own measurement was then provisional.
    std::optional<std::size_t> ceilings_version;
  };
  std::optional<JudgedRoof> judged_roof;
};

// The entry of `instance` with its identity and cost fields filled in
// (name, family, precision, shape, flops, bytes, ...).
BenchEntry make_entry(Instance instance);

}  // namespace rl::bench
