// The naive attention path's out-of-memory boundary at the GPU preset (large:
// FlashAttention's benchmark shapes, 16k tokens per batch).  The harness
// skips an instance whose declared device memory (the record's device_bytes,
// copied into the result by make_entry) exceeds what is free, with
// memory_shortfall's reason (Measurer::does_not_fit).  The emulator's device
// memory is the host's and cannot be told a smaller size, so the tests ask
// memory_shortfall, the harness's own decision, about a card's total:
// on an 80 GB H100 every naive instance fits (the largest, N = 16k at d = 64,
// needs 69.3 GB), so the boundary shows only on smaller cards; and the
// report's attention story says so with the footprint.
#include "bench_entry.hpp"
#include "selection.hpp"

#include "rl/registry.hpp"
#include "rl/roofline/analysis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace {

// The naive hand-written record's instances of the GPU preset, as make_entry
// records them before anything runs.
std::vector<rl::roofline::KernelResult> naive_gpu_preset_entries() {
  rl::bench::Selection selection;
  selection.preset = rl::SizePreset::large;
  selection.families = {"attention"};
  std::vector<rl::roofline::KernelResult> out;
  for (rl::bench::Instance& instance : rl::bench::selected_instances(selection))
    if (instance.record->name == "attention_f32_naive")
      out.push_back(rl::bench::make_entry(std::move(instance)).result);
  return out;
}

// The shapes the harness's rule skips on a card with `free_bytes` free.
std::vector<std::string> skipped_on(double free_bytes) {
  std::vector<std::string> out;
  for (const auto& r : naive_gpu_preset_entries())
    if (rl::bench::memory_shortfall(static_cast<std::size_t>(*r.device_bytes),
                                    static_cast<std::size_t>(free_bytes)))
      out.push_back(rl::roofline::shape_text(r.shape));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(NaiveAttentionMemory, fits_an_80_gb_h100_at_every_gpu_preset_shape_and_not_smaller_cards) {
  const auto entries = naive_gpu_preset_entries();
  ASSERT_EQ(entries.size(), 24u);  // N in 512..16k, d in {64, 128}, causal and not
  double largest = 0;
  for (const auto& r : entries) largest = std::max(largest, *r.device_bytes);
  EXPECT_EQ(rl::bench::memory_shortfall(static_cast<std::size_t>(largest), 0).value_or(""),
            "needs 69.3 GB of device memory, 0.0 GB free");
  EXPECT_TRUE(skipped_on(80e9).empty());
  EXPECT_EQ(skipped_on(40e9), (std::vector<std::string>{"B=1,H=32,N=16384,d=64,causal=0",
                                                        "B=1,H=32,N=16384,d=64,causal=1"}));
  EXPECT_EQ(skipped_on(24e9),
            (std::vector<std::string>{
                "B=1,H=16,N=16384,d=128,causal=0", "B=1,H=16,N=16384,d=128,causal=1",
                "B=1,H=32,N=16384,d=64,causal=0", "B=1,H=32,N=16384,d=64,causal=1",
                "B=2,H=32,N=8192,d=64,causal=0", "B=2,H=32,N=8192,d=64,causal=1"}));
}

// On a 24 GB card the naive root of the ladder at N = 16k is skipped with
// its footprint, and the story's first sentence carries it.  The fused
// rungs' times are fixture numbers, not measurements.
TEST(NaiveAttentionMemory, the_attention_story_reports_the_skip_with_its_footprint) {
  rl::bench::Selection selection;
  selection.preset = rl::SizePreset::large;
  selection.families = {"attention"};
  rl::roofline::Results results;
  results.context.backend = rl::roofline::Backend::emulator;
  const rl::Shape longest{{{"B", 1}, {"H", 32}, {"N", 16384}, {"d", 64}, {"causal", 0}}};
  for (rl::bench::Instance& instance : rl::bench::selected_instances(selection)) {
    const std::string& name = instance.record->name;
    if (instance.shape.dims != longest.dims ||
        (name != "attention_f32_naive" && name != "attention_f32_fused" &&
         name != "attention_flash_mma_sync_bf16"))
      continue;
    rl::roofline::KernelResult r = rl::bench::make_entry(std::move(instance)).result;
    if (std::optional<std::string> why = rl::bench::memory_shortfall(
            static_cast<std::size_t>(*r.device_bytes), 24'000'000'000)) {
      r.status = rl::roofline::Status::skipped;
      r.error = *why;
    } else {
      r.status = rl::roofline::Status::ok;
      r.time_s.emplace();
      r.time_s->median = name == "attention_f32_fused" ? 0.1 : 0.05;
    }
    results.kernels.push_back(std::move(r));
  }
  ASSERT_EQ(results.kernels.size(), 3u);
  const auto analysis = rl::roofline::analyse(results);
  const auto& ladder = analysis.attention_fusion.at(0).ladders.at(0);
  ASSERT_EQ(ladder.steps.size(), 3u);
  EXPECT_EQ(ladder.steps[0].name, "attention_f32_naive");
  const std::string& sentence = ladder.steps[0].sentence;
  EXPECT_NE(sentence.find("did not run here: it was skipped (needs 69.3 GB of device memory, "
                          "24.0 GB free)"),
            std::string::npos)
      << sentence;
}

}  // namespace
