// attention_wgmma_fp8_sm90a.cu under the emulator as a Hopper (RL_EMU_CC=90):
// it validates against the float64 reference of the dequantised inputs at
// odd N, d = 64 and 128, causal and not, bit-identical under two schedules;
// causal query tiles load only the K and Vᵀ tiles they reach, heaviest
// query tiles first; validation fails a missed rescale, a wrong causal mask
// and P in the wrong fp8 fragment layout (d = 64 and 128) and a wrong
// descale, and at N = 1024 an all-zero O, a wrong descale and a wrong last
// causal row; the bf16 tolerance rejects the correct kernel.
#include "attention/attention_fp8_workload.hpp"
#include "emu_kernel_test.hpp"
#include "hopper_attention_cases.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

using rl::attention::Fp8AttentionWorkload;
using rl::attention::shape_of;
using rl::attention::SoftmaxFault;

constexpr const char* kRecord = "attention_wgmma_fp8_e4m3";

std::unique_ptr<rl::InspectableWorkload> make(const rl::Shape& shape, std::uint64_t seed) {
  return rl::test::make_inspectable_workload(kRecord, shape, seed);
}

Fp8AttentionWorkload& fp8(rl::InspectableWorkload& w) {
  return dynamic_cast<Fp8AttentionWorkload&>(w);
}

TEST(HopperAttentionFp8, the_record_runs_on_the_emulated_hopper_only) {
  const rl::KernelRecord* record = rl::find_kernel(kRecord);
  ASSERT_NE(record, nullptr);
  EXPECT_FALSE(record->gpu_only);
  EXPECT_EQ(record->min_cc, 90);
  EXPECT_EQ(record->max_cc, 90);
  EXPECT_EQ(record->baseline, "attention_wgmma_tma_bf16");
  // Footprint: Q, K, V of 1 byte, O of 2 (bf16), Vᵀ of 1 with N rounded up to 32.
  const rl::Shape longest = shape_of(1, 16, 16383, 128, true);
  EXPECT_EQ(record->device_bytes(longest), 16ull * 16383 * 128 * 5 + 16ull * 128 * 16384);
  // bytes_min: the same without Vᵀ; bytes_model adds the K and Vᵀ re-reads and the pre-pass.
  const rl::roofline::Cost cost = record->cost(shape_of(1, 1, 256, 64, false));
  EXPECT_EQ(cost.bytes_min, 256.0 * 64 * 5);
  EXPECT_EQ(cost.bytes_model, 256.0 * 64 * (1 + 2 + 2 * 2 + 2));
}

// The cases of the 16-bit rungs (hopper_attention_cases.hpp); N = 129 and
// 17 also end in a ragged 32-key block of Vᵀ (zeros past N).
using rl::test::attention::Case;
using rl::test::attention::expect_query_tiles_load_only_the_key_tiles_they_reach_heaviest_first;
using rl::test::attention::odd_length_cases;

TEST(HopperAttentionFp8, matches_the_float64_reference_at_odd_lengths_under_two_schedules) {
  for (const Case& c : odd_length_cases()) {
    SCOPED_TRACE("N = " + std::to_string(c.N) + ", d = " + std::to_string(c.d) +
                 (c.causal ? ", causal" : ""));
    auto workload = make(shape_of(1, 2, c.N, c.d, c.causal),
                         static_cast<std::uint64_t>(1000 * c.N + c.d + (c.causal ? 1 : 0)));
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// --dump-tensors: Q, K, V as the values they represent (code·scale, each
// tensor its own power-of-two scale), O as validated.
TEST(HopperAttentionFp8, dumps_the_dequantised_inputs_and_the_output_it_validated) {
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make(shape_of(1, 2, 17, 64, true), 5);
  ASSERT_TRUE(workload->validate(nullptr).passed);
  const std::vector<rl::TensorDump> tensors = workload->tensors();
  ASSERT_EQ(tensors.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(tensors[i].name, std::string(1, "QKVO"[i]));
    EXPECT_EQ(tensors[i].precision, i < 3 ? "fp8_e4m3" : "bf16");
    EXPECT_EQ(tensors[i].dims, (std::vector<std::int64_t>{1, 2, 17, 64}));
  }
  for (int t = 0; t < 3; ++t) {
    const float s = fp8(*workload).descale(t);
    EXPECT_LT(s, 1.0f) << "N(0, 1) inputs scale down: amax < 448";
    for (const float x : tensors[static_cast<std::size_t>(t)].values)
      EXPECT_EQ(static_cast<float>(rl::attention::Fp8(x / s)) * s, x) << "on the e4m3 grid";
  }
  EXPECT_EQ(tensors[3].values, workload->download_outputs());
}

// Causal skipping and heaviest-first order (the TMA log,
// hopper_attention_cases.hpp) at d = 64 and 128: key tile j is loaded as K
// (row 128j) and as Vᵀ (column 128j).
TEST(HopperAttentionFp8, causal_query_tiles_load_only_the_key_tiles_they_reach_heaviest_first) {
  RL_SKIP_UNDER_RACECHECK();
  for (const std::int64_t d : {64, 128}) {
    for (const bool causal : {false, true}) {
      SCOPED_TRACE("d = " + std::to_string(d) + (causal ? ", causal" : ", not causal"));
      auto workload = make(shape_of(1, 1, 1000, d, causal), 3);
      expect_query_tiles_load_only_the_key_tiles_they_reach_heaviest_first(*workload, causal, 0);
    }
  }
}

// What a test does to O after the kernel (nothing, or a fault of its own).
using AfterKernel = std::function<void(const rl::attention::Fp8Args&, cudaStream_t)>;

rl::Validation validate_with(const rl::Shape& shape, SoftmaxFault fault, float v_descale_error = 1,
                             const AfterKernel& after = nullptr) {
  auto workload = make(shape, 77);
  Fp8AttentionWorkload& w = fp8(*workload);
  const rl::attention::Fp8Launcher faulty = rl::attention::faults::attention_wgmma_fp8(fault);
  w.launch = [faulty, v_descale_error, after](const rl::attention::Fp8Args& a,
                                              cudaStream_t stream) {
    rl::attention::Fp8Args wrong = a;
    wrong.v_descale *= v_descale_error;
    faulty(wrong, stream);
    if (after) after(a, stream);
  };
  return w.validate(nullptr);
}

// Each bug at the smallest shape that has it, at d = 64 and 128 (at 128, S
// sums twice the k32 steps and P·V writes twice the columns); the same
// shapes pass through the same faults:: launcher without the fault.  s_V off
// by one binade (the scales are powers of two) fails too.
TEST(HopperAttentionFp8Fault,
     validation_fails_a_missed_rescale_a_wrong_mask_p_in_the_wrong_layout) {
  RL_SKIP_UNDER_RACECHECK();
  const struct {
    SoftmaxFault fault;
    rl::Shape shape;
    float v_descale_error;
  } cases[] = {
      {SoftmaxFault::skip_rescale, shape_of(1, 1, 200, 64, false), 1},
      {SoftmaxFault::causal_off_by_one, shape_of(1, 1, 129, 64, true), 1},
      {SoftmaxFault::p_in_wrong_layout, shape_of(1, 1, 17, 64, false), 1},
      {SoftmaxFault::p_in_wrong_layout, shape_of(1, 1, 17, 128, false), 1},
      {SoftmaxFault::skip_rescale, shape_of(1, 1, 200, 128, false), 1},
      {SoftmaxFault::causal_off_by_one, shape_of(1, 1, 129, 128, true), 1},
      {SoftmaxFault::none, shape_of(1, 1, 17, 64, false), 0.5f},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.shape.to_string() + " fault " + std::to_string(static_cast<int>(c.fault)));
    const rl::Validation without = validate_with(c.shape, SoftmaxFault::none);
    EXPECT_TRUE(without.passed) << without.detail;
    const rl::Validation with = validate_with(c.shape, c.fault, c.v_descale_error);
    EXPECT_FALSE(with.passed) << "passed validation: " << with.detail;
  }
}

// At a benchmark-like length (N = 1024, d = 64: 64 sampled rows, |O| ~
// 1/√N) the per-row bound stays below |O| (atol ~0.07 against |O| up to
// ~0.27): an all-zero O and s_V off by a binade fail, and under the causal
// mask so does a wrong last row (the late rows see the most keys, and the
// smallest |O|).  A global bound (max |V|, the largest logit) passed an
// all-zero O from N = 4096 on.
TEST(HopperAttentionFp8Fault, at_n_1024_a_zero_o_a_wrong_descale_and_a_wrong_last_row_fail) {
  RL_SKIP_UNDER_RACECHECK();
  const AfterKernel zero_o = [](const rl::attention::Fp8Args& a, cudaStream_t stream) {
    const auto elements = static_cast<std::size_t>(a.B) * a.H * a.N * a.d;
    RL_CUDA_CHECK(cudaMemsetAsync(a.O, 0, elements * sizeof(__nv_bfloat16), stream));
  };
  const AfterKernel zero_last_row = [](const rl::attention::Fp8Args& a, cudaStream_t stream) {
    const auto row = static_cast<std::size_t>(a.B) * a.H * a.N - 1;
    RL_CUDA_CHECK(cudaMemsetAsync(a.O + row * static_cast<std::size_t>(a.d), 0,
                                  static_cast<std::size_t>(a.d) * sizeof(__nv_bfloat16), stream));
  };
  const rl::Shape full = shape_of(1, 1, 1024, 64, false), causal = shape_of(1, 1, 1024, 64, true);
  for (const rl::Shape& shape : {full, causal}) {
    const rl::Validation v = validate_with(shape, SoftmaxFault::none);
    EXPECT_TRUE(v.passed) << shape.to_string() << ": " << v.detail;
  }
  EXPECT_FALSE(validate_with(full, SoftmaxFault::none, 1, zero_o).passed) << "all-zero O";
  EXPECT_FALSE(validate_with(full, SoftmaxFault::none, 0.5f).passed) << "s_V x 0.5";
  EXPECT_FALSE(validate_with(causal, SoftmaxFault::none, 1, zero_last_row).passed)
      << "the last row zero";
}

// The fp8 bound's P term is needed: the bf16 flash kernels' bound (P
// rounded to bf16, not e4m3) rejects the correct fp8 kernel (errors ~0.012
// against its ~0.01).
TEST(HopperAttentionFp8Fault, the_bf16_bound_rejects_the_correct_kernel) {
  RL_SKIP_UNDER_RACECHECK();
  auto workload = make(shape_of(1, 1, 200, 64, false), 77);
  Fp8AttentionWorkload& w = fp8(*workload);
  w.tolerance_of = [](const rl::attention::Dims& p, const rl::attention::Reference& ref,
                      const rl::attention::Fp8RowBound&) {
    return rl::attention::tolerance<__nv_bfloat16>(p, ref, rl::attention::kErrorFlashTensorCore);
  };
  EXPECT_FALSE(w.validate(nullptr).passed) << "the bf16 bound passed the fp8 kernel";
}

}  // namespace
