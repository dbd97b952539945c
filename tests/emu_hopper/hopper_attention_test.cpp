// The wgmma attention kernels (kernels/attention/attention_wgmma_*_sm90a.cu)
// under the emulator as a Hopper (RL_EMU_CC=90): each validates against the
// float64 reference at odd N, d = 64 and 128, causal and not, under two
// schedules with bit-identical outputs, and validation fails the three
// softmax bugs of attention_wgmma_fault.hpp built into each, at d = 64 and
// 128; causal query tiles load only the key tiles they reach, and the
// heaviest query tiles are launched first (the emulator's TMA log); each
// rung names the one below it.
#include "attention/attention_wgmma_fault.hpp"
#include "attention/attention_workload.hpp"
#include "emu_kernel_test.hpp"
#include "hopper_attention_cases.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using rl::attention::shape_of;
using rl::attention::SoftmaxFault;

const char* const kRecords[] = {"attention_wgmma_tma_bf16",      "attention_wgmma_tma_fp16",
                                "attention_wgmma_overlap_bf16",  "attention_wgmma_overlap_fp16",
                                "attention_wgmma_pingpong_bf16", "attention_wgmma_pingpong_fp16"};

TEST(HopperAttention, the_records_run_on_the_emulated_hopper_only) {
  for (const char* name : kRecords) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_FALSE(record->gpu_only) << name;
    EXPECT_EQ(record->min_cc, 90) << name;
    EXPECT_EQ(record->max_cc, 90) << name;
  }
}

// One idea per rung, each naming the rung below it in its precision: the
// mma.sync rung, then wgmma + TMA, then the intra-warpgroup overlap, then
// pingpong; a rung's idea is the same in bf16 and fp16.
TEST(HopperAttention, each_rung_names_the_one_below_and_shares_its_idea_per_precision) {
  for (const std::string precision : {"bf16", "fp16"}) {
    std::string below = "attention_flash_mma_sync_" + precision;
    for (const std::string rung : {"wgmma_tma", "wgmma_overlap", "wgmma_pingpong"}) {
      const std::string name = "attention_" + rung + "_" + precision;
      const rl::KernelRecord* record = rl::find_kernel(name);
      ASSERT_NE(record, nullptr) << name;
      EXPECT_EQ(record->variant, rung) << name;
      EXPECT_EQ(record->baseline, below) << name;
      EXPECT_FALSE(record->idea.empty()) << name;
      const rl::KernelRecord* twin =
          rl::find_kernel("attention_" + rung + (precision == "bf16" ? "_fp16" : "_bf16"));
      ASSERT_NE(twin, nullptr) << name;
      EXPECT_EQ(record->idea, twin->idea) << name;
      below = name;
    }
  }
}

class WgmmaAttention : public ::testing::TestWithParam<const char*> {};

using rl::test::attention::Case;
using rl::test::attention::expect_query_tiles_load_only_the_key_tiles_they_reach_heaviest_first;
using rl::test::attention::odd_length_cases;

TEST_P(WgmmaAttention, matches_the_float64_reference_at_odd_lengths_under_two_schedules) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  if (std::string(GetParam()).ends_with("_fp16"))
    GTEST_SKIP() << "the bf16 twin runs the same code under the sanitizer; the default build "
                    "runs this one";
#endif
  for (const Case& c : odd_length_cases()) {
    SCOPED_TRACE("N = " + std::to_string(c.N) + ", d = " + std::to_string(c.d) +
                 (c.causal ? ", causal" : ""));
    auto workload = rl::test::make_inspectable_workload(
        GetParam(), shape_of(1, 2, c.N, c.d, c.causal),
        static_cast<std::uint64_t>(1000 * c.N + c.d + (c.causal ? 1 : 0)));
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// --dump-tensors: Q, K, V as inputs and O as the output, [B, H, N, d], O
// exactly what validation compared.
TEST_P(WgmmaAttention, dumps_q_k_v_and_the_output_it_validated) {
  RL_SKIP_UNDER_RACECHECK();
  auto workload = rl::test::make_inspectable_workload(GetParam(), shape_of(1, 2, 17, 64, true), 5);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(workload->validate(nullptr).passed);
  const std::vector<rl::TensorDump> tensors = workload->tensors();
  ASSERT_EQ(tensors.size(), 4u);
  const std::vector<std::int64_t> bhnd{1, 2, 17, 64};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(tensors[i].name, std::string(1, "QKVO"[i]));
    EXPECT_EQ(tensors[i].role, i < 3 ? "input" : "output");
    EXPECT_EQ(tensors[i].dims, bhnd);
  }
  EXPECT_EQ(tensors[3].values, workload->download_outputs());
}

INSTANTIATE_TEST_SUITE_P(Hopper, WgmmaAttention, ::testing::ValuesIn(kRecords));

// Causal skipping and heaviest-first order (the TMA log,
// hopper_attention_cases.hpp) for each rung at d = 64 (a tile is one box);
// at d = 128 (two 64-column boxes, each loaded as often) on the first rung
// alone: the three share the producer, wgmma::produce.
TEST(WgmmaAttention, causal_query_tiles_load_only_the_key_tiles_they_reach_heaviest_first) {
  RL_SKIP_UNDER_RACECHECK();  // the log's mutex would order the producers for racecheck
  for (const char* name : {"attention_wgmma_tma_bf16", "attention_wgmma_overlap_bf16",
                           "attention_wgmma_pingpong_bf16"}) {
    for (const std::int64_t d : {64, 128}) {
      if (d == 128 && std::string(name) != "attention_wgmma_tma_bf16") continue;
      for (const bool causal : {false, true}) {
        SCOPED_TRACE(std::string(name) + ", d = " + std::to_string(d) + (causal ? ", causal" : ""));
        auto workload =
            rl::test::make_inspectable_workload(name, shape_of(1, 1, 1000, d, causal), 3);
        ASSERT_NE(workload, nullptr);
        expect_query_tiles_load_only_the_key_tiles_they_reach_heaviest_first(
            *workload, causal, static_cast<int>(d / 64));
      }
    }
  }
}

using FaultyLaunchers = rl::attention::Launcher<__nv_bfloat16> (*)(SoftmaxFault);

// Validation of `shape` with the bf16 record's launcher replaced by the
// build with `fault`.
rl::Validation validate_with_fault(const char* record, FaultyLaunchers faulty, SoftmaxFault fault,
                                   const rl::Shape& shape) {
  auto workload = rl::test::make_inspectable_workload(record, shape, 77);
  auto* attention = dynamic_cast<rl::attention::AttentionWorkload<__nv_bfloat16>*>(workload.get());
  if (attention == nullptr) return {.passed = false, .detail = "not an attention workload"};
  attention->launch = faulty(fault);
  return attention->validate(nullptr);
}

// Each bug at the smallest shape that has it: the rescale matters from the
// second key tile on (N = 200), the mask off by one whenever it is causal,
// P's layout at any N; at both head dims (d = 128: P·V of two 64-column
// boxes, S over two k-halves).  The same shapes pass without a fault, through
// the same faults:: launcher (so it is the fault that fails them).
TEST(WgmmaAttentionFault,
     validation_fails_a_missed_rescale_a_wrong_mask_and_p_in_the_wrong_layout) {
  RL_SKIP_UNDER_RACECHECK();
  const struct {
    SoftmaxFault fault;
    rl::Shape shape;
  } cases[] = {
      {SoftmaxFault::skip_rescale, shape_of(1, 1, 200, 64, false)},
      {SoftmaxFault::causal_off_by_one, shape_of(1, 1, 129, 64, true)},
      {SoftmaxFault::p_in_wrong_layout, shape_of(1, 1, 17, 64, false)},
      {SoftmaxFault::skip_rescale, shape_of(1, 1, 200, 128, false)},
      {SoftmaxFault::causal_off_by_one, shape_of(1, 1, 129, 128, true)},
      {SoftmaxFault::p_in_wrong_layout, shape_of(1, 1, 17, 128, false)},
  };
  const struct {
    const char* record;
    FaultyLaunchers faulty;
  } builds[] = {
      {"attention_wgmma_tma_bf16", rl::attention::faults::attention_wgmma_tma_bf16},
      {"attention_wgmma_overlap_bf16", rl::attention::faults::attention_wgmma_overlap_bf16},
      {"attention_wgmma_pingpong_bf16", rl::attention::faults::attention_wgmma_pingpong_bf16}};
  for (const auto& b : builds) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(b.record) + " " + c.shape.to_string());
      const rl::Validation without =
          validate_with_fault(b.record, b.faulty, SoftmaxFault::none, c.shape);
      EXPECT_TRUE(without.passed) << without.detail;
      const rl::Validation with = validate_with_fault(b.record, b.faulty, c.fault, c.shape);
      EXPECT_FALSE(with.passed) << "fault " << static_cast<int>(c.fault) << " passed validation";
    }
  }
}

}  // namespace
