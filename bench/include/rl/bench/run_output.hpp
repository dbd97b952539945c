// What a run writes besides results.json (roofline's, results_io.hpp):
// benchmarks.json marked incomplete after an interrupt or a budget, and the
// lines on the terminal (one progress line per benchmark, the end-of-run
// summary).  The results' encoding, the chart and the report are roofline's
// (results_io.hpp, report.hpp).  Plain C++, shared by both backends.
#pragma once

#include "rl/roofline/results.hpp"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rl::bench {

// Google Benchmark's JSON file of a run cut short: without the entries of the
// benchmarks that did not finish (`unfinished` names them as registered,
// "<kernel>/<shape>"; their repetitions and aggregates go, and so does any
// entry skipped with the "interrupted" message), context.bench_roofline_complete
// false and, after a signal, context.bench_roofline_interrupted_by =
// `signal_name` ("" for a budget: the key is left out), its NaN and Infinity
// values (not JSON) written as null, written atomically.
// A missing or unreadable file is left as it is.
void mark_benchmarks_json_incomplete(const std::filesystem::path& file,
                                     std::string_view signal_name,
                                     const std::set<std::string>& unfinished);

// "[17/52] name shape ... ok 0.41 ms, 83.1% of roof (1m23s)".
std::string progress_line(std::size_t done, std::size_t total, const roofline::KernelResult& result,
                          std::chrono::steady_clock::duration elapsed);

// The end of a run on the terminal: the report's headline and one line per
// kernel sized to the terminal, the ceilings, the vendor-claim verdict, and
// where the files went.
void print_summary(std::FILE* out, const roofline::Results& results,
                   const std::filesystem::path& out_dir);

}  // namespace rl::bench
