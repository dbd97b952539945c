// Views of a run that answer the suite's two headline questions, computed from
// results.json's kernels and ceilings alone (so any results file can be
// analysed again, on any machine):
//  - the GEMM ladder: at each shape, every rung with what it adds, its
//    FLOP/s, its share of the library baseline of the same precision and of
//    its roof; and the precision ladder (FP32 -> TF32 -> FP16/BF16 -> FP8 at
//    one shape) with the compute roof of each precision beside it;
//  - why fusion beats naive attention: at each shape, the naive and fused
//    variants side by side (bytes moved per the cost model and the share of
//    them that is the N x N matrices S and P, intensity, time, speed-up,
//    memory footprint, out-of-memory skips) and findings: sentences generated
//    from those numbers, never canned text; and the story up each attention
//    ladder (naive -> fused SIMT -> FA2 -> FA3-style -> the library), one
//    generated sentence per step saying what that step bought.
// The report renders these; results.json carries them as "analysis" for
// scripts.
#pragma once

#include "rl/roofline/results.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rl::roofline {

struct LadderRung {
  std::string name, variant, precision, idea, library;  // library: "" for hand-written
  Status status = Status::none;                         // the kernel's, as recorded
  std::string error;
  std::optional<double> flops_per_s;     // achieved; timed kernels only
  std::optional<double> pct_of_library;  // of the fastest timed library record, same precision
  std::string library_reference;         // that record's name
  std::optional<double> pct_of_roof;
};

struct GemmLadder {
  ShapeDims shape;
  std::vector<LadderRung> rungs;  // by precision (fp32, tf32, fp16, bf16, fp8), then up the ladder
};

struct PrecisionStep {
  std::string precision;
  std::string kernel;  // the fastest timed hand-written kernel of this precision ("" none)
  std::optional<double> flops_per_s;
  std::string library;  // the fastest timed library record of this precision ("" none)
  std::optional<double> library_flops_per_s;
  std::string roof_name;  // the measured compute ceiling of this precision's unit ("" none)
  std::optional<double> roof;
};

struct PrecisionLadder {
  ShapeDims shape;  // the shape with the most precisions timed (the largest on a tie)
  std::vector<PrecisionStep> steps;
};

struct AttentionVariant {
  std::string name, precision;
  Status status = Status::none;
  std::string error;
  bool naive = false;  // writes S and P to memory (its name or variant says "naive")
  double bytes_model = 0, intensity = 0;
  // (bytes_model - bytes_min) / bytes_model: the traffic beyond reading Q, K,
  // V and writing O once.  For a naive variant that is S and P written and
  // read back; for a fused one, the re-reads of K and V per query tile.
  double extra_traffic_share = 0;
  std::optional<double> time_s, flops_per_s, pct_of_roof, device_bytes;
  Bound bound = Bound::none;
  // The roof pct_of_roof is of, the one its record was judged against: its
  // unit's compute ceiling ("tc.bf16", "fp32.fma") or, where the sloped roof
  // was lower at its intensity, that memory ceiling ("hbm.copy"); "" none.
  std::string roof_name;
  std::optional<double> speedup;  // time of `speedup_over` / this time
  std::string speedup_over;       // the naive reference: fastest timed naive, same precision first
};

// One step up an attention ladder: a rung, or the library record it ends with.
struct AttentionStep {
  std::string name, precision, idea, library;  // library: "cuDNN" for a library record, else ""
  Status status = Status::none;                // as recorded; not timed: a gap in the ladder
  std::string error;                           // why it did not run, as recorded
  double bytes_min = 0, bytes_model = 0, intensity = 0;
  std::optional<double> time_s;  // median; timed kernels only
  // The last step below this one that was timed ("" none), and this step
  // against it: its bytes / these bytes (> 1: fewer bytes), its time / this
  // time (< 1: this step is slower).
  std::string compared_with;
  std::optional<double> bytes_factor, speedup;
  // Its own record's verdict, as AttentionVariant's: each step is judged
  // against its own roof, never the top rung's (the lower rungs are of other
  // precisions).
  std::optional<double> pct_of_roof;
  std::string roof_name;
  Bound bound = Bound::none;
  std::string sentence;  // what the step bought, from the fields above
};

// At one shape, the ladder to one precision: its rungs in ladder order, read
// from the records' declared baselines (from the top rung of that precision
// down), then the library's fused record of that precision.
struct AttentionLadder {
  std::string precision;  // the top rung's
  // The lowest rung's declared baseline when it is not at this shape ("" none),
  // and whether the run has it at another shape.
  std::string missing_baseline;
  bool missing_baseline_at_other_shapes = false;
  std::vector<AttentionStep> steps;
};

struct AttentionFusion {
  ShapeDims shape;
  std::vector<AttentionVariant> variants;  // naive first, then fused, each by name
  std::vector<std::string> findings;       // sentences stating what the numbers show
  std::vector<AttentionLadder> ladders;    // by precision; only those with two steps or more
};

struct Analysis {
  std::vector<GemmLadder> gemm_ladders;
  std::optional<PrecisionLadder> precision_ladder;
  std::vector<AttentionFusion> attention_fusion;
  bool emulator = false;  // the run's times are the CPU emulator's: no roof percentage holds
};

Analysis analyse(const Results& results);

// An instance that ran, passed validation and has a positive median time:
// the ones a rate can be derived from.
bool timed(const KernelResult& k);

// One rung of a ladder against the rung below it (its `baseline`), at one
// shape: what the rung buys, kept apart from fusion (a declared pair).
struct LadderStep {
  std::string family;
  ShapeDims shape;
  std::string rung, baseline, idea;  // idea: what the rung changes ("" unsaid)
  std::string precision;
  std::optional<double> rung_time_s, baseline_time_s;  // medians; timed kernels only
  std::optional<double> gain;  // baseline time / rung time (> 1: the rung is faster)
};
// Every rung whose baseline ran at the same shape, by family (ladder order:
// the suite's ladders first), then shape, then depth up the ladder.
std::vector<LadderStep> ladder_steps(const Results& results);

}  // namespace rl::roofline
