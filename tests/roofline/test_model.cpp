#include "fixtures.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/sku.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rl::roofline {
namespace {

Ceiling ceiling(std::string name, std::string kind, double value) {
  Ceiling c;
  c.name = std::move(name);
  c.kind = std::move(kind);
  c.value = value;
  c.unit = c.kind == "memory" ? "B/s" : "FLOP/s";
  return c;
}

TEST(RooflineModel, h100_sxm_bf16_ridge_is_295_flop_per_byte) {
  // 989.4 TFLOP/s / 3.35 TB/s = 295.34 FLOP/B, by hand.
  EXPECT_NEAR(ridge_point(989.4e12, 3.35e12), 295.34, 0.01);
  const Sku* h100 = find_sku("h100-sxm");
  ASSERT_NE(h100, nullptr);
  auto ceilings = datasheet_ceilings(*h100);
  const Ceiling* bf16 = compute_ceiling(ceilings, ComputeUnit::tc_bf16);
  const Ceiling* hbm = dram_ceiling(ceilings);
  ASSERT_NE(bf16, nullptr);
  ASSERT_NE(hbm, nullptr);
  EXPECT_NEAR(ridge_point(bf16->value, hbm->value), 295.34, 0.01);
}

TEST(RooflineModel, attainable_is_the_lower_of_bandwidth_times_intensity_and_compute) {
  // 2 TB/s, 20 TFLOP/s: ridge 10 FLOP/B.
  EXPECT_DOUBLE_EQ(attainable(20e12, 2e12, 0.25), 0.5e12);  // memory side
  EXPECT_DOUBLE_EQ(attainable(20e12, 2e12, 10), 20e12);     // exactly at the ridge
  EXPECT_DOUBLE_EQ(attainable(20e12, 2e12, 100), 20e12);    // compute side
  EXPECT_DOUBLE_EQ(intensity(8, 32), 0.25);
  EXPECT_DOUBLE_EQ(intensity(8, 0), 0);
}

TEST(RooflineModel, dram_ceiling_is_the_best_hbm_measurement_not_l2) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 1.8e12),
                         ceiling("hbm.read", "memory", 1.9e12), ceiling("l2.read", "memory", 5e12)};
  ASSERT_NE(dram_ceiling(c), nullptr);
  EXPECT_EQ(dram_ceiling(c)->name, "hbm.read");
}

KernelResult kernel_at(double flops, double bytes, double seconds,
                       ComputeUnit unit = ComputeUnit::fp32) {
  KernelResult k = testing::timed_kernel("k", seconds, 0, 3);
  k.unit = unit;
  k.flops = flops;
  k.bytes_min = k.bytes_model = bytes;
  k.achieved_flops_per_s = flops / k.time_s->median;
  k.achieved_bytes_per_s = bytes / k.time_s->median;
  return k;
}

TEST(RooflineModel, memory_bound_kernel_gets_its_bandwidth_roof_and_percentage) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12),
                         ceiling("fp32.fma", "compute", 20e12)};
  // 1 GFLOP over 4 GB: intensity 0.25, roof 0.5 TFLOP/s; 2.5 ms -> 0.4 TFLOP/s = 80%.
  std::vector<KernelResult> k{kernel_at(1e9, 4e9, 2.5e-3)};
  apply_roofline(k, c);
  ASSERT_TRUE(k[0].roof && k[0].pct_of_roof);
  EXPECT_DOUBLE_EQ(k[0].intensity, 0.25);
  EXPECT_DOUBLE_EQ(*k[0].roof, 0.5e12);
  EXPECT_NEAR(*k[0].pct_of_roof, 80.0, 1e-9);
  EXPECT_EQ(k[0].bound, Bound::memory);
}

TEST(RooflineModel, a_node_record_is_not_judged_against_the_chips_memory_roof) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12),
                         ceiling("fp32.fma", "compute", 20e12)};
  // A 1 GB host-to-device copy in 40 ms (25 GB/s): against hbm.copy it would
  // read "1.25% of roof"; its roof is the link's, which the chip model lacks.
  std::vector<KernelResult> k{kernel_at(0, 1e9, 40e-3), kernel_at(0, 1e9, 40e-3)};
  k[0].family = "node";
  apply_roofline(k, c);
  EXPECT_FALSE(k[0].roof);
  EXPECT_FALSE(k[0].pct_of_roof);
  EXPECT_EQ(k[0].bound, Bound::none);
  EXPECT_TRUE(k[1].roof);  // the same numbers in another family are judged
}

TEST(RooflineModel, compute_bound_kernel_uses_its_own_unit_roof) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12), ceiling("fp32.fma", "compute", 20e12),
                         ceiling("tc.bf16", "compute", 300e12)};
  // GEMM-like: 1 TFLOP over 1 GB (1000 FLOP/B): tc.bf16 roof 300 TFLOP/s; 4 ms -> 250 = 83%.
  std::vector<KernelResult> k{kernel_at(1e12, 1e9, 4e-3, ComputeUnit::tc_bf16)};
  apply_roofline(k, c);
  EXPECT_DOUBLE_EQ(*k[0].roof, 300e12);
  EXPECT_NEAR(*k[0].pct_of_roof, 83.333, 1e-3);
  EXPECT_EQ(k[0].bound, Bound::compute);
}

TEST(RooflineModel, kernel_under_half_of_attainable_is_below_both) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12),
                         ceiling("fp32.fma", "compute", 20e12)};
  std::vector<KernelResult> k{kernel_at(1e9, 4e9, 5.1e-3)};  // 0.196 of 0.5 TFLOP/s = 39%
  apply_roofline(k, c);
  EXPECT_EQ(k[0].bound, Bound::below_both);
  EXPECT_NEAR(*k[0].pct_of_roof, 39.2, 0.1);
}

TEST(RooflineModel, kernel_well_above_its_roof_is_flagged_not_trusted) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12),
                         ceiling("fp32.fma", "compute", 20e12)};
  // 1e9 FLOP over 4e9 B in 1e-3 s: 1 TFLOP/s against a 0.5 TFLOP/s memory roof.
  std::vector<KernelResult> k{kernel_at(1e9, 4e9, 1e-3)};
  apply_roofline(k, c);
  EXPECT_EQ(k[0].bound, Bound::above_roof);
  EXPECT_NEAR(*k[0].pct_of_roof, 200.0, 1e-9);
  // Within the 5% allowance it is judged as usual.
  std::vector<KernelResult> near{kernel_at(1e9, 4e9, 1.0 / 0.52 * 1e-3)};
  apply_roofline(near, c);
  EXPECT_EQ(near[0].bound, Bound::memory);
}

TEST(RooflineModel, copy_kernel_without_flops_is_judged_on_bandwidth) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12)};
  std::vector<KernelResult> k{kernel_at(0, 3e9, 2e-3)};  // 1.5 TB/s of 2 = 75%
  apply_roofline(k, c);
  EXPECT_NEAR(*k[0].pct_of_roof, 75.0, 1e-9);
  EXPECT_EQ(k[0].bound, Bound::memory);
}

TEST(RooflineModel, no_ceilings_or_untimed_kernel_leaves_roof_empty) {
  std::vector<KernelResult> k{kernel_at(1e9, 4e9, 1e-3)};
  apply_roofline(k, {});
  EXPECT_FALSE(k[0].roof.has_value());
  EXPECT_EQ(k[0].bound, Bound::none);
  Results r = testing::emulator_fixture();
  apply_roofline(r);
  EXPECT_FALSE(r.kernels[3].roof.has_value());  // failed validation, not timed
  EXPECT_TRUE(r.kernels[0].roof.has_value());
}

TEST(RooflineModel, placement_reports_every_memory_level_with_its_ridge) {
  std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12), ceiling("l2.read", "memory", 8e12),
                         ceiling("fp32.fma", "compute", 20e12)};
  auto p = place(4.0, ComputeUnit::fp32, c);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_DOUBLE_EQ(p[0].attainable_flops_per_s, 8e12);
  EXPECT_TRUE(p[0].memory_limited);
  EXPECT_DOUBLE_EQ(*p[0].ridge, 10.0);
  EXPECT_DOUBLE_EQ(p[1].attainable_flops_per_s, 20e12);
  EXPECT_FALSE(p[1].memory_limited);
  EXPECT_DOUBLE_EQ(*p[1].ridge, 2.5);
}

// A judgement's two halves: the roof (which ceilings bound a kernel, worked
// out without its time) and the verdict (its time classified against that
// roof).  What the harness relies on to judge a kernel once: the roof is the
// same whatever the time, classifying any time against it is the whole
// judgement, and a kernel depends on every memory ceiling and on its own
// unit's compute ceiling only.

const std::vector<Ceiling> kCeilings{
    ceiling("hbm.copy", "memory", 2e12), ceiling("hbm.read", "memory", 2.5e12),
    ceiling("fp32.fma", "compute", 20e12), ceiling("tc.bf16", "compute", 300e12)};

TEST(RoofOf, does_not_read_the_time) {
  KernelResult untimed = kernel_at(1e9, 4e9, 1e-3, ComputeUnit::fp32);
  untimed.time_s.reset();
  untimed.achieved_flops_per_s = untimed.achieved_bytes_per_s = 0;
  const std::optional<KernelRoof> roof = roof_of(untimed, kCeilings);
  ASSERT_TRUE(roof.has_value());
  EXPECT_EQ(roof->memory_ceiling, "hbm.read");  // the best DRAM ceiling
  EXPECT_DOUBLE_EQ(roof->bytes_per_s, 2.5e12);
  EXPECT_DOUBLE_EQ(roof->attainable_flops_per_s, 2.5e12 * 0.25);  // intensity 0.25 FLOP/B
  EXPECT_TRUE(roof->memory_limited);
  EXPECT_FALSE(roof->data_movement);
  ASSERT_TRUE(roof->ridge.has_value());
  EXPECT_DOUBLE_EQ(*roof->ridge, 20e12 / 2.5e12);
  // Untimed: no verdict, whatever the roof.
  EXPECT_FALSE(classify(roof, untimed).pct_of_roof.has_value());
  EXPECT_EQ(classify(roof, untimed).bound, Bound::none);
}

TEST(Classify, any_time_against_the_roof_is_the_whole_judgement) {
  // Memory-limited, compute-limited and pure data movement, each at times
  // that land below both, on the roof and above it.
  const std::vector<std::pair<double, double>> work{{1e9, 4e9}, {1e12, 1e9}, {0, 3e9}};
  const std::vector<ComputeUnit> units{ComputeUnit::fp32, ComputeUnit::tc_bf16, ComputeUnit::fp32};
  for (std::size_t w = 0; w < work.size(); ++w) {
    const std::optional<KernelRoof> roof =
        roof_of(kernel_at(work[w].first, work[w].second, 1.0, units[w]), kCeilings);
    ASSERT_TRUE(roof.has_value());
    std::vector<Bound> seen;
    for (const double seconds : {1e-1, 1e-2, 5e-3, 4e-3, 3.4e-3, 1.6e-3, 1.2e-3, 1e-3, 1e-4}) {
      const KernelResult k = kernel_at(work[w].first, work[w].second, seconds, units[w]);
      const RoofVerdict split = classify(roof, k);
      const RoofVerdict whole = judge(k, kCeilings);
      SCOPED_TRACE(std::to_string(w) + " at " + std::to_string(seconds) + " s");
      EXPECT_EQ(split.roof, whole.roof);
      EXPECT_EQ(split.pct_of_roof, whole.pct_of_roof);
      EXPECT_EQ(split.bound, whole.bound);
      EXPECT_EQ(split.memory_roof, whole.memory_roof);
      seen.push_back(split.bound);
    }
    // The times do cover every class the roof allows.
    const Bound limited = w == 1 ? Bound::compute : Bound::memory;
    for (const Bound b : {Bound::below_both, limited, Bound::above_roof})
      EXPECT_NE(std::find(seen.begin(), seen.end(), b), seen.end()) << static_cast<int>(b);
  }
}

TEST(RoofOf, needs_a_memory_ceiling) {
  const KernelResult k = kernel_at(1e9, 4e9, 1e-3, ComputeUnit::fp32);
  const std::vector<Ceiling> compute_only{ceiling("fp32.fma", "compute", 20e12)};
  EXPECT_FALSE(roof_of(k, compute_only).has_value());
  EXPECT_FALSE(classify(std::nullopt, k).pct_of_roof.has_value());
  EXPECT_EQ(classify(std::nullopt, k).bound, Bound::none);
}

TEST(DependsOn, every_memory_ceiling_and_its_own_units_compute_ceiling) {
  const KernelResult bf16 = kernel_at(1e12, 1e9, 1e-3, ComputeUnit::tc_bf16);
  EXPECT_TRUE(depends_on(bf16, ceiling("hbm.triad", "memory", 1e12)));
  EXPECT_TRUE(depends_on(bf16, ceiling("l2.read", "memory", 1e13)));
  EXPECT_TRUE(depends_on(bf16, ceiling("tc.bf16", "compute", 1e14)));
  EXPECT_FALSE(depends_on(bf16, ceiling("tc.fp16", "compute", 1e14)));
  EXPECT_FALSE(depends_on(bf16, ceiling("fp32.fma", "compute", 1e13)));
}

TEST(DependsOn, the_shared_memory_ceiling_bounds_only_its_own_roof_loop) {
  const KernelResult bf16 = kernel_at(1e12, 1e9, 1e-3, ComputeUnit::tc_bf16);
  EXPECT_FALSE(depends_on(bf16, ceiling("smem.read", "memory", 3e13)));
  KernelResult smem_loop = kernel_at(0, 1e9, 1e-4);
  smem_loop.ceiling = "smem.read";
  EXPECT_TRUE(depends_on(smem_loop, ceiling("smem.read", "memory", 3e13)));
}

TEST(RoofOf, a_kernel_never_gets_the_shared_memory_roof_and_its_roof_loop_gets_only_that) {
  // smem.read is the fastest memory ceiling; an ordinary kernel (cold or
  // L2-resident) is still judged by HBM or L2, and the shared-memory roof
  // loop by smem.read (not HBM, where it would read as 1000% "above roof").
  const std::vector<Ceiling> c{ceiling("hbm.copy", "memory", 2e12),
                               ceiling("l2.read", "memory", 6e12),
                               ceiling("smem.read", "memory", 3e13)};
  KernelResult cold = kernel_at(1e9, 4e9, 2.5e-3);
  ASSERT_TRUE(roof_of(cold, c, 50e6));
  EXPECT_EQ(roof_of(cold, c, 50e6)->memory_ceiling, "hbm.copy");
  KernelResult warm = kernel_at(1e9, 4e6, 1e-5);
  warm.l2_flushed = false;
  ASSERT_TRUE(roof_of(warm, c, 50e6));
  EXPECT_EQ(roof_of(warm, c, 50e6)->memory_ceiling, "l2.read");
  KernelResult smem_loop = kernel_at(0, 3e9, 1e-4);
  smem_loop.ceiling = "smem.read";
  ASSERT_TRUE(roof_of(smem_loop, c, 50e6));
  EXPECT_EQ(roof_of(smem_loop, c, 50e6)->memory_ceiling, "smem.read");
  EXPECT_EQ(dram_ceiling(c)->name, "hbm.copy");
}

TEST(SetVerdict, writes_the_verdicts_fields_and_clears_them_when_empty) {
  KernelResult k = kernel_at(1e9, 4e9, 1e-3, ComputeUnit::fp32);
  set_verdict(k, judge(k, kCeilings));
  EXPECT_TRUE(k.roof.has_value());
  EXPECT_EQ(k.memory_roof, "hbm.read");
  set_verdict(k, RoofVerdict{});
  EXPECT_FALSE(k.roof.has_value());
  EXPECT_FALSE(k.pct_of_roof.has_value());
  EXPECT_EQ(k.bound, Bound::none);
  EXPECT_EQ(k.memory_roof, "");
}

}  // namespace
}  // namespace rl::roofline
