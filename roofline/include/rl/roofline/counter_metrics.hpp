// The hardware counters the suite collects beside its cost models (issue 28):
// one list of roles, each a quantity the suite uses ("DRAM bytes read") with
// the CUPTI metric it prefers and, in order, the nearest equivalents for chips
// that name the quantity differently or not at all.  Plain data: which name a
// chip has is decided by counter_plan.hpp through CUPTI's host API.
//
// A metric name is a base metric and a rollup, optionally a submetric:
// "dram__bytes_read" + ".sum", "sm__cycles_elapsed" + ".avg" + ".per_second".
#pragma once

#include <span>
#include <string_view>

namespace rl::roofline {

// One spelling of a role's quantity on some chips.
struct CounterMetric {
  std::string_view name;  // full metric name: "dram__bytes_read.sum"
  // Multiplies the metric's value into the role's unit (32: L2 sectors to bytes).
  double scale = 1;
  // How this spelling differs from the role's preferred one; empty for the
  // preferred metric and for exact respellings.
  std::string_view differs{};
  // The other roles whose quantity this counter also counts (its inputs
  // include theirs): "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32" holds
  // every FP4 op that "tensor_fp4" counts.  Where a plan reads this metric,
  // those roles are left out of the readout (bench/cuda_only/
  // counter_readout.cpp), so that a sum over roles counts each op once.
  std::span<const std::string_view> contains{};
};

enum class CounterNeed {
  every_chip,    // the suite needs it everywhere: its absence is MISSING
  where_present  // exists on some chips only (packed FP32, FP8/FP4 tensor paths)
};

struct CounterRole {
  std::string_view key;      // "dram_bytes_read": what results will store it as
  std::string_view purpose;  // "DRAM bytes read": what the suite uses it for
  std::string_view unit;     // of the role's value (after `scale`)
  CounterNeed need = CounterNeed::every_chip;
  std::span<const CounterMetric> metrics;  // preferred first, then nearest equivalents
  // For where_present roles: what it means when no metric exists.
  std::string_view when_absent{};
};

// The suite's metric set, in the order tables print it.
std::span<const CounterRole> counter_roles();

}  // namespace rl::roofline
