// The comparison of a kernel's counts with its cost model: the one tolerance
// policy (both sources) and the sentences the table, report and compare show.
#include "rl/roofline/counter_agreement.hpp"

#include "rl/roofline/counter_metrics.hpp"
#include "rl/roofline/text.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace rl::roofline {

namespace {

// CUPTI's tolerances, relative to the modelled figure.  The emulator's counts
// are exact (every counted instruction, whatever the schedule): tolerance 0,
// so any difference is the model's (or the kernel's) to fix.
//
// Bytes, 10%: a cost model states the traffic its algorithm plans; the
// hardware moves whole 32 B sectors, keeps some of the data in L2 across the
// replays CUPTI makes (or evicts what the model expects to stay), and counts
// the other clients of the L2.  Within 10% the model describes the kernel;
// beyond it, the sentence names the likely cause.
constexpr double kCuptiBytes = 0.10;
// Tensor ops, 2%: an instruction count, the same on every replay; the room
// is for a chip that rolls several paths into one counter (GH100's src_fp16
// counts either accumulator) and for a library's MMA shapes padding an edge
// differently from the model's tiles.
constexpr double kCuptiTensorOps = 0.02;
// FP32/FP64 FMA kernels' FLOPs from SIMT instruction counts, 5%: the
// epilogue (alpha * acc + beta * C: 3 FLOP per output against the model's
// 2K) adds 1.5/K, 2.3% at K = 64.
constexpr double kCuptiSimtFlops = 0.05;

// The work the quantity names, and what a difference each way most likely
// means when CUPTI counted it.
struct Quantity {
  CounterQuantity id;
  std::string_view what;  // "DRAM bytes": "counted 23% more DRAM bytes than the model"
  std::string_view unit;  // after an SI prefix: "2.46 GB"
  std::string_view more;  // the hardware did more than the model says
  std::string_view fewer;
};

constexpr Quantity kDramBytes{
    CounterQuantity::dram_bytes, "DRAM bytes", "B",
    "the model misses traffic, e.g. L2 misses of re-read tiles or partly used sectors",
    "caches served what the model sends to DRAM"};
constexpr Quantity kL2Bytes{CounterQuantity::l2_bytes, "L2 bytes", "B",
                            "the model misses requests to L2, e.g. L1 misses of re-read data or "
                            "partly used sectors",
                            "L1 served loads the model sends to L2"};
// Counted apart by the emulator only (exact: its own sentence), so their
// CUPTI wording is never shown today.
constexpr Quantity kL2LoadBytes{CounterQuantity::l2_load_bytes, "bytes loaded from L2", "B",
                                kL2Bytes.more, kL2Bytes.fewer};
constexpr Quantity kL2StoreBytes{CounterQuantity::l2_store_bytes, "bytes stored to L2", "B",
                                 kL2Bytes.more, kL2Bytes.fewer};
constexpr Quantity kTensorOps{
    CounterQuantity::tensor_ops, "tensor-core ops", "op",
    "the tensor cores did work the model does not declare, e.g. padded edge tiles",
    "the model declares MMAs the kernel did not issue"};
constexpr Quantity kFlops{CounterQuantity::flops, "FLOPs", "FLOP",
                          "the instructions did more than the model counts, e.g. padded edge "
                          "tiles, whole causal tiles or recomputation",
                          "the model counts work these instructions did not do (another pipe, "
                          "or a cheaper path than it assumes)"};

// "23%", or more digits where the difference is small but not zero.
std::string percent(double relative) {
  const double pct = 100 * std::abs(relative);
  return pct >= 1 ? fmt::format("{:.0f}%", pct) : fmt::format("{:.2g}%", pct);
}

// "2.46 GB vs 2 GB", with as many digits as it takes to tell them apart
// (an exact count one byte off: "4.097 kB vs 4.096 kB").
std::string amounts(double counted, double modelled, std::string_view unit) {
  int digits = 3;
  while (digits < 15 && si(counted, digits) == si(modelled, digits)) ++digits;
  return fmt::format("{}{} vs {}{}", si(counted, digits), unit, si(modelled, digits), unit);
}

CounterComparison judge(const Quantity& q, double counted, double modelled, CounterSource source,
                        double tolerance) {
  CounterComparison c{q.id, counted, modelled, tolerance, true, ""};
  const bool exact = source == CounterSource::emulator;
  c.agrees = std::abs(counted - modelled) <= tolerance * modelled;
  if (counted == modelled) {
    c.sentence = exact ? "equal (exact emulator count)" : "equal";
    return c;
  }
  const bool more = counted > modelled;
  std::string difference =
      modelled > 0
          ? fmt::format("counted {} {} {} than the model ({})",
                        percent((counted - modelled) / modelled), more ? "more" : "fewer", q.what,
                        amounts(counted, modelled, q.unit))
          : fmt::format("counted {}{} where the model declares no {}", si(counted), q.unit, q.what);
  if (c.agrees) {
    c.sentence = fmt::format("within the {} tolerance: {}", percent(tolerance), difference);
  } else if (exact) {
    c.sentence = difference + (more ? ": the kernel's instructions did more than its model "
                                      "declares; the count is exact, so fix the model"
                                    : ": the model declares more than the kernel's instructions "
                                      "did; the count is exact, so fix the model");
  } else {
    c.sentence = fmt::format("{}: {}", difference, more ? q.more : q.fewer);
  }
  return c;
}

std::optional<double> value_of(const KernelCounters& counters, std::string_view role) {
  auto it = counters.values.find(std::string(role));
  if (it == counters.values.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

// The sum of the tensor roles (counter_metrics: unit "ops") that were
// counted; nullopt when none was.
std::optional<double> tensor_ops_counted(const KernelCounters& counters) {
  std::optional<double> sum;
  for (const CounterRole& role : counter_roles())
    if (role.unit == "ops")
      if (auto v = value_of(counters, role.key)) sum = sum.value_or(0) + *v;
  return sum;
}

// FLOPs from the SIMT instruction counts of an FP32 or FP64 kernel (an FMA
// is 2, a packed FFMA2 4), or nullopt when its FMA count was not collected.
std::optional<double> simt_flops_counted(const KernelCounters& counters, ComputeUnit unit) {
  auto v = [&](std::string_view role) { return value_of(counters, role); };
  if (unit == ComputeUnit::fp64) {
    if (!v("dfma")) return std::nullopt;
    return 2 * *v("dfma") + v("dadd").value_or(0) + v("dmul").value_or(0);
  }
  if (!v("ffma")) return std::nullopt;
  return 2 * *v("ffma") + v("fadd").value_or(0) + v("fmul").value_or(0) +
         4 * v("ffma2").value_or(0) + 2 * v("fadd2").value_or(0) + 2 * v("fmul2").value_or(0);
}

bool is_tensor_unit(ComputeUnit unit) {
  return compute_unit_name(unit).starts_with("tc_");
}

// Why a quantity that the counts and the model both have is left out (one
// sentence each, shown as written by the report and the terminal summary).
//
// bytes_model is not the DRAM traffic the counts measure for a ceiling other
// than HBM's (l2.read's model is L2 bytes, the data staying in L2;
// smem.read's shared-memory bytes; a compute roof loop's, fp32.fma and the
// tensor loops, a token output), nor for a node record.
constexpr std::string_view kNotDramCeiling =
    "the ceiling's bytes_model is not DRAM traffic (L2 or shared-memory bytes, or a compute "
    "loop's token output)";
constexpr std::string_view kNodeBytes =
    "a node record's bytes cross the bus between devices, and the counts are one device's";
// With --warm-l2 (l2_flushed false) nothing empties the L2 between CUPTI's
// replay passes, so each pass starts from what the one before left.  The
// emulator's counts are instruction requests, the same warm or cold.
constexpr std::string_view kWarmL2 =
    "with --warm-l2 nothing empties the L2 between CUPTI's replay passes, so the passes that "
    "count bytes start from different cache states";
// Attention's flops follow FlashAttention's convention, so a kernel computing
// whole masked tiles would be flagged for doing what it does (it checks its
// tensor_ops where it declares them).
constexpr std::string_view kFlopsConvention =
    "the model's FLOPs follow FlashAttention's convention (causal work halved, masked work not "
    "credited), which the MMAs issued do not";
// Outside the FMA kernels (GEMMs, the FMA ceilings) a transcendental counts 1
// in the model and is a MUFU or a polynomial of FFMAs in SASS; a division is
// a reciprocal and a Newton step: every element-wise kernel would be flagged.
constexpr std::string_view kSimtFlops =
    "the model counts a transcendental or a division as 1 FLOP, the instructions as several";
constexpr std::string_view kHalfFlops =
    "what one packed FP16/BF16 instruction counts (HFMA2) is not settled here";

// Why a DRAM-bytes comparison is left out for this kernel ("" : compared).
std::string_view dram_bytes_left_out(const KernelResult& k) {
  if (k.family == "node") return kNodeBytes;
  if (!k.ceiling.empty() && !k.ceiling.starts_with("hbm.")) return kNotDramCeiling;
  return {};
}

// Whether the tensor ops a tensor-unit kernel issued are its modelled FLOPs
// (checked where the model declares no tensor_ops: a library record).  A
// GEMM's flops are 2 m n k, every one an MMA's, and so are a tensor ceiling's.
bool tensor_ops_are_flops(const KernelResult& k) {
  return k.family == "gemm" || k.ceiling == compute_ceiling_name(k.unit);
}

// A kernel whose every modelled FLOP is half an FMA: the GEMMs and the FMA
// ceilings.
bool is_fma_kernel(const KernelResult& k) {
  return k.family == "gemm" || k.ceiling == "fp32.fma" || k.ceiling == "fp64.fma";
}

struct Judgement {
  std::vector<CounterComparison> comparisons;
  std::vector<SkippedComparison> skipped;
};

// Each quantity the counts and the model both have: compared, or left out
// with the reason why.
Judgement judge_counters(const KernelResult& k) {
  Judgement out;
  if (!k.counters || k.counters->values.empty()) return out;
  const KernelCounters& counters = *k.counters;
  const CounterSource source = counters.source;
  const bool emulator = source == CounterSource::emulator;
  auto finite = [](const std::optional<double>& v) { return v && std::isfinite(*v); };
  // `why` empty: compared; else left out for that reason.
  auto add = [&](const Quantity& q, std::optional<double> counted, std::optional<double> modelled,
                 double cupti_tolerance, std::string_view why = {}) {
    if (!finite(counted) || !finite(modelled)) return;
    if (!why.empty() && !(*modelled > 0)) return;  // nothing modelled: nothing left out
    if (why.empty()) {
      out.comparisons.push_back(
          judge(q, *counted, *modelled, source, emulator ? 0.0 : cupti_tolerance));
      return;
    }
    auto same = std::ranges::find(out.skipped, why, &SkippedComparison::why);
    if (same == out.skipped.end()) same = out.skipped.insert(same, {{}, why});
    same->quantities.push_back(q.id);
  };

  const std::string_view warm = emulator || k.l2_flushed != false ? "" : kWarmL2;
  const std::string_view not_dram = dram_bytes_left_out(k);
  const auto read = value_of(counters, "dram_bytes_read");
  const auto write = value_of(counters, "dram_bytes_write");
  if (read && write)
    add(kDramBytes, *read + *write, k.bytes_model, kCuptiBytes, not_dram.empty() ? warm : not_dram);

  if (k.bytes_l2_load && k.bytes_l2_store)
    add(kL2Bytes, value_of(counters, "l2_bytes"), *k.bytes_l2_load + *k.bytes_l2_store, kCuptiBytes,
        warm);
  add(kL2LoadBytes, value_of(counters, "l2_load_bytes"), k.bytes_l2_load, kCuptiBytes);
  add(kL2StoreBytes, value_of(counters, "l2_store_bytes"), k.bytes_l2_store, kCuptiBytes);

  // The emulator records only the tensor roles it saw: none is 0 ops.
  std::optional<double> tensor = tensor_ops_counted(counters);
  if (emulator && !tensor) tensor = 0.0;
  add(kTensorOps, tensor, k.tensor_ops, kCuptiTensorOps);

  // FLOPs: CUPTI only (the emulator counts no SIMT instructions, and its
  // tensor ops are checked exactly above).
  if (emulator) return out;
  if (is_tensor_unit(k.unit)) {
    // Where the model declares tensor_ops, those are the exact check.
    if (!k.tensor_ops)
      add(kFlops, tensor, k.flops, kCuptiTensorOps,
          tensor_ops_are_flops(k) ? "" : kFlopsConvention);
  } else if (k.unit == ComputeUnit::fp32 || k.unit == ComputeUnit::fp64) {
    add(kFlops, simt_flops_counted(counters, k.unit), k.flops, kCuptiSimtFlops,
        is_fma_kernel(k) ? "" : kSimtFlops);
  } else {
    add(kFlops, value_of(counters, "hfma"), k.flops, kCuptiSimtFlops, kHalfFlops);
  }
  return out;
}

}  // namespace

void compare_counters(KernelResult& k) {
  if (!k.counters || k.counters->values.empty()) return;
  k.counters->comparisons = judge_counters(k).comparisons;
}

std::vector<SkippedComparison> skipped_comparisons(const KernelResult& k) {
  if (!k.counters || !k.counters->unavailable.empty()) return {};
  // The skips are the current policy's, recomputed; the comparisons are the
  // file's, as its writer made them (an older one compared dram_bytes under
  // --warm-l2).  A quantity the file compared is shown compared, never also
  // as not compared.
  const std::vector<CounterComparison>& stored = k.counters->comparisons;
  std::vector<SkippedComparison> skipped = judge_counters(k).skipped;
  for (SkippedComparison& s : skipped)
    std::erase_if(s.quantities, [&](CounterQuantity q) {
      return std::ranges::find(stored, ResultCounterQuantity(q), &CounterComparison::quantity) !=
             stored.end();
    });
  std::erase_if(skipped, [](const SkippedComparison& s) { return s.quantities.empty(); });
  return skipped;
}

std::vector<std::string> not_compared_sentences(const Results& r) {
  // Per reason, each quantity with the number of kernels that left it out
  // for that reason (a warm L2 leaves out every counted kernel's dram_bytes
  // but l2_bytes only where the model declares L2 bytes).
  struct Reason {
    std::string_view why;
    std::vector<std::pair<CounterQuantity, int>> kernels;  // in first-seen order
  };
  std::vector<Reason> reasons;
  for (const KernelResult& k : r.kernels)
    for (const SkippedComparison& s : skipped_comparisons(k)) {
      auto reason = std::ranges::find(reasons, s.why, &Reason::why);
      if (reason == reasons.end()) reason = reasons.insert(reason, {s.why, {}});
      for (CounterQuantity q : s.quantities) {
        auto count = std::ranges::find(reason->kernels, q, &std::pair<CounterQuantity, int>::first);
        if (count == reason->kernels.end()) count = reason->kernels.insert(count, {q, 0});
        ++count->second;
      }
    }
  // "dram_bytes not compared for 12 kernels, l2_bytes for 3 kernels: <why>."
  std::vector<std::string> sentences;
  for (const Reason& reason : reasons) {
    std::string counts;
    for (const auto& [q, n] : reason.kernels)
      counts += fmt::format("{}{}{} for {} kernel{}", counts.empty() ? "" : ", ", to_string(q),
                            counts.empty() ? " not compared" : "", n, n == 1 ? "" : "s");
    sentences.push_back(fmt::format("{}: {}.", counts, reason.why));
  }
  return sentences;
}

CounterVerdict counter_verdict(const KernelCounters& counters) {
  if (!counters.unavailable.empty()) return {false, "unavailable: " + counters.unavailable};
  if (counters.comparisons.empty()) return {false, "nothing to compare"};
  // Where the emulator compared loads and stores apart, a differing l2_bytes
  // (their sum) only repeats what the part that differs says.
  bool part_differs = false;
  for (const CounterComparison& c : counters.comparisons)
    part_differs |= !c.agrees && (c.quantity == CounterQuantity::l2_load_bytes ||
                                  c.quantity == CounterQuantity::l2_store_bytes);
  CounterVerdict verdict{false, ""};
  for (const CounterComparison& c : counters.comparisons) {
    if (c.agrees) continue;
    verdict.disagrees = true;
    if (part_differs && c.quantity == CounterQuantity::l2_bytes) continue;
    verdict.text += (verdict.text.empty() ? "" : "; ") + c.sentence;
  }
  if (!verdict.disagrees) verdict.text = "agree";
  return verdict;
}

}  // namespace rl::roofline
