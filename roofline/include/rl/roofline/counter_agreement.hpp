// The counters beside the cost model (issue 28): which quantities a kernel's
// counts check, the one tolerance policy for both sources, and the sentence a
// reader sees.  docs/counters.md explains each choice.
//
// Quantities (each compared only where the counts and the model both have it):
//   dram_bytes      dram_bytes_read + dram_bytes_write  vs bytes_model, where that is
//                   DRAM traffic (not a non-hbm ceiling, not a node record)
//   l2_bytes        l2_bytes                            vs bytes_l2_load + bytes_l2_store
//                   (both byte quantities: CUPTI's only with the L2 flushed)
//   l2_load_bytes   l2_load_bytes (the emulator's)      vs bytes_l2_load
//   l2_store_bytes  l2_store_bytes (the emulator's)     vs bytes_l2_store
//   tensor_ops      the sum of the tensor_* roles       vs tensor_ops
//   flops           (CUPTI) counted FLOPs               vs flops, where the model's
//                   convention and the instructions' agree (see the .cpp)
#pragma once

#include "rl/roofline/results.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace rl::roofline {

// Fills kernel.counters->comparisons (replacing any) for each quantity the
// counted values and the cost model both have, each with its tolerance: 0 for
// the emulator (its counts are exact), per quantity for CUPTI (the .cpp says
// why each).  Nothing to do without counters or when they are unavailable.
void compare_counters(KernelResult& kernel);

// Quantities that the counts and the model both have but the policy leaves
// out of the comparisons, and why (one sentence, shown as written).
struct SkippedComparison {
  std::vector<CounterQuantity> quantities;
  std::string_view why;  // "with --warm-l2 nothing empties the L2 between ..."
};
// What compare_counters leaves out of `kernel`'s comparisons, one entry per
// reason (none without counters, or where they are unavailable).  A quantity
// that `kernel` has a comparison of (one read from an older file, whose
// writer's policy compared it) is not listed.
std::vector<SkippedComparison> skipped_comparisons(const KernelResult& kernel);
// One sentence per reason over a run's kernels, for the report and the
// terminal summary, each quantity with its own count: "dram_bytes not
// compared for 12 kernels, l2_bytes for 3 kernels: with --warm-l2 ...".
// Empty when nothing was left out.
std::vector<std::string> not_compared_sentences(const Results& results);

// What the views say about a kernel's counters, in one line.
struct CounterVerdict {
  bool disagrees = false;  // some comparison is beyond its tolerance: flag it
  // "agree" (every comparison within its tolerance), the disagreeing
  // comparisons' sentences joined by "; " (l2_bytes left out where a part it
  // sums, l2_load_bytes or l2_store_bytes, differs and says more), "unavailable: <why>", or
  // "nothing to compare" (counted, but the model declares none of the quantities).
  std::string text;
};
CounterVerdict counter_verdict(const KernelCounters& counters);

}  // namespace rl::roofline
