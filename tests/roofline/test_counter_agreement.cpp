// compare_counters (issue 28): which quantities a kernel's counts check
// against its cost model, the one tolerance policy (the emulator exact, CUPTI
// per quantity) and the sentences.  Small hand-made results: the counts are
// test inputs, not measurements.
#include "rl/roofline/counter_agreement.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>

namespace rl::roofline {
namespace {

KernelResult kernel(std::string family, ComputeUnit unit) {
  KernelResult k;
  k.name = family + "_kernel";
  k.family = std::move(family);
  k.unit = unit;
  k.flops = 1e9;
  k.bytes_min = k.bytes_model = 2e9;
  return k;
}

KernelCounters counted(CounterSource source, std::map<std::string, double> values) {
  KernelCounters c;
  c.source = source;
  c.chip = source == CounterSource::cupti ? "GH100" : "";
  c.passes = 1;
  c.values = std::move(values);
  return c;
}

// The comparison of `quantity`, failing the test when there is none.
const CounterComparison& only(const KernelResult& k, const std::string& quantity) {
  for (const CounterComparison& c : k.counters->comparisons)
    if (to_string(c.quantity) == quantity) return c;
  ADD_FAILURE() << "no comparison of " << quantity;
  static const CounterComparison none;
  return none;
}

std::vector<std::string> quantities(const KernelResult& k) {
  std::vector<std::string> out;
  for (const CounterComparison& c : k.counters->comparisons)
    out.emplace_back(to_string(c.quantity));
  return out;
}

TEST(CounterAgreement, emulator_counts_equal_to_the_model_agree_exactly) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.bytes_l2_load = 4096;
  k.bytes_l2_store = 1024;
  k.tensor_ops = 1e9;
  k.counters = counted(CounterSource::emulator, {{"l2_load_bytes", 4096},
                                                 {"l2_store_bytes", 1024},
                                                 {"l2_bytes", 5120},
                                                 {"tensor_bf16", 6e8},
                                                 {"tensor_fp16_f32", 4e8}});
  compare_counters(k);
  // No DRAM bytes (the emulator has none) and no FLOPs (CUPTI's only).
  EXPECT_EQ(quantities(k), (std::vector<std::string>{"l2_bytes", "l2_load_bytes", "l2_store_bytes",
                                                     "tensor_ops"}));
  for (const CounterComparison& c : k.counters->comparisons) {
    EXPECT_TRUE(c.agrees) << to_string(c.quantity);
    EXPECT_EQ(c.tolerance, 0.0) << to_string(c.quantity);
    EXPECT_EQ(c.sentence, "equal (exact emulator count)") << to_string(c.quantity);
  }
  EXPECT_EQ(only(k, "tensor_ops").counted, 1e9);  // the tensor roles summed
  const CounterVerdict verdict = counter_verdict(*k.counters);
  EXPECT_FALSE(verdict.disagrees);
  EXPECT_EQ(verdict.text, "agree");
}

TEST(CounterAgreement, one_byte_off_the_model_disagrees_under_the_emulator) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.bytes_l2_load = 4096;
  k.counters = counted(CounterSource::emulator, {{"l2_load_bytes", 4097}});
  compare_counters(k);
  const CounterComparison& c = only(k, "l2_load_bytes");
  EXPECT_FALSE(c.agrees);
  EXPECT_EQ(c.sentence,
            "counted 0.024% more bytes loaded from L2 than the model (4.097 kB vs 4.096 kB): the "
            "kernel's instructions did more than its model declares; the count is exact, so fix "
            "the model");
  const CounterVerdict verdict = counter_verdict(*k.counters);
  EXPECT_TRUE(verdict.disagrees);
  EXPECT_EQ(verdict.text, c.sentence);
}

TEST(CounterAgreement, declared_tensor_ops_the_emulator_never_saw_are_counted_as_zero) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.tensor_ops = 1e9;
  k.counters = counted(CounterSource::emulator, {{"l2_load_bytes", 0}});
  compare_counters(k);
  const CounterComparison& c = only(k, "tensor_ops");
  EXPECT_EQ(c.counted, 0.0);
  EXPECT_FALSE(c.agrees);
  EXPECT_NE(c.sentence.find("counted 100% fewer tensor-core ops than the model"), std::string::npos)
      << c.sentence;

  k.tensor_ops = 0;  // a model declaring none, and the kernel issued some
  k.counters = counted(CounterSource::emulator, {{"tensor_bf16", 2e6}});
  compare_counters(k);
  EXPECT_FALSE(only(k, "tensor_ops").agrees);
  EXPECT_EQ(only(k, "tensor_ops").sentence,
            "counted 2 Mop where the model declares no tensor-core ops: the kernel's instructions "
            "did more than its model declares; the count is exact, so fix the model");
}

TEST(CounterAgreement, nothing_the_model_leaves_undeclared_is_compared) {
  KernelResult k = kernel("gelu", ComputeUnit::fp32);  // declares no L2 bytes, no tensor ops
  k.counters = counted(CounterSource::emulator,
                       {{"l2_load_bytes", 4096}, {"l2_store_bytes", 4096}, {"l2_bytes", 8192}});
  compare_counters(k);
  EXPECT_TRUE(k.counters->comparisons.empty());
  EXPECT_EQ(counter_verdict(*k.counters).text, "nothing to compare");

  // l2_bytes needs both halves declared; the declared half is still compared.
  k.bytes_l2_load = 4096;
  compare_counters(k);
  EXPECT_EQ(quantities(k), std::vector<std::string>{"l2_load_bytes"});
}

TEST(CounterAgreement, cupti_dram_bytes_say_which_way_and_why) {
  KernelResult k = kernel("layernorm", ComputeUnit::fp32);
  k.counters =
      counted(CounterSource::cupti, {{"dram_bytes_read", 2.0e9}, {"dram_bytes_write", 0.46e9}});
  compare_counters(k);
  const CounterComparison& more = only(k, "dram_bytes");
  EXPECT_FALSE(more.agrees);
  EXPECT_DOUBLE_EQ(more.tolerance, 0.10);
  EXPECT_EQ(more.sentence,
            "counted 23% more DRAM bytes than the model (2.46 GB vs 2 GB): the model misses "
            "traffic, e.g. L2 misses of re-read tiles or partly used sectors");

  k.counters =
      counted(CounterSource::cupti, {{"dram_bytes_read", 1.0e9}, {"dram_bytes_write", 0.6e9}});
  compare_counters(k);
  EXPECT_EQ(only(k, "dram_bytes").sentence,
            "counted 20% fewer DRAM bytes than the model (1.6 GB vs 2 GB): caches served what the "
            "model sends to DRAM");
}

TEST(CounterAgreement, cupti_l2_bytes_are_compared_with_both_declarations_summed) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.bytes_l2_load = 3e9;
  k.counters = counted(CounterSource::cupti, {{"l2_bytes", 4.5e9}});
  compare_counters(k);
  EXPECT_TRUE(k.counters->comparisons.empty());  // the store half is not declared
  k.bytes_l2_store = 1e9;
  compare_counters(k);
  const CounterComparison& c = only(k, "l2_bytes");
  EXPECT_EQ(c.modelled, 4e9);
  EXPECT_FALSE(c.agrees);
  EXPECT_EQ(c.sentence,
            "counted 12% more L2 bytes than the model (4.5 GB vs 4 GB): the model misses requests "
            "to L2, e.g. L1 misses of re-read data or partly used sectors");
}

TEST(CounterAgreement, cupti_tolerances_hold_at_their_boundaries) {
  // Bytes: 10% either way agrees, one byte beyond does not.
  KernelResult k = kernel("layernorm", ComputeUnit::fp32);
  k.bytes_model = 1e9;
  auto dram = [&](double total) {
    k.counters =
        counted(CounterSource::cupti, {{"dram_bytes_read", total}, {"dram_bytes_write", 0}});
    compare_counters(k);
    return only(k, "dram_bytes");
  };
  EXPECT_TRUE(dram(1.1e9).agrees);
  EXPECT_EQ(
      dram(1.1e9).sentence,
      "within the 10% tolerance: counted 10% more DRAM bytes than the model (1.1 GB vs 1 GB)");
  EXPECT_FALSE(dram(1.1e9 + 1).agrees);
  EXPECT_TRUE(dram(0.9e9).agrees);
  EXPECT_FALSE(dram(0.9e9 - 1).agrees);

  // Tensor ops: 2%.
  k = kernel("gemm", ComputeUnit::tc_fp16);
  k.tensor_ops = 1e9;
  auto tensor = [&](double ops) {
    k.counters = counted(CounterSource::cupti, {{"tensor_fp16_f32", ops}});
    compare_counters(k);
    return only(k, "tensor_ops");
  };
  EXPECT_DOUBLE_EQ(tensor(1e9).tolerance, 0.02);
  EXPECT_EQ(tensor(1e9).sentence, "equal");
  EXPECT_TRUE(tensor(1.02e9).agrees);
  EXPECT_FALSE(tensor(1.02e9 + 1).agrees);
  EXPECT_TRUE(tensor(0.98e9).agrees);
  EXPECT_FALSE(tensor(0.98e9 - 1).agrees);
}

TEST(CounterAgreement, cupti_flops_only_where_the_model_and_the_instructions_count_alike) {
  // A tensor-unit library record (no tensor_ops declared): its tensor ops are its FLOPs.
  KernelResult library = kernel("gemm", ComputeUnit::tc_bf16);
  library.counters = counted(CounterSource::cupti, {{"tensor_bf16", 1.3e9}});
  compare_counters(library);
  EXPECT_EQ(quantities(library), std::vector<std::string>{"flops"});
  EXPECT_FALSE(only(library, "flops").agrees);
  EXPECT_NE(only(library, "flops").sentence.find("30% more FLOPs"), std::string::npos);

  // Declared tensor_ops: they are the check; flops may differ by padding.
  library.tensor_ops = 1.3e9;
  compare_counters(library);
  EXPECT_EQ(quantities(library), std::vector<std::string>{"tensor_ops"});

  // An FP32 GEMM: 2 per FFMA plus adds and multiplies, within 5%.
  KernelResult sgemm = kernel("gemm", ComputeUnit::fp32);
  sgemm.counters =
      counted(CounterSource::cupti, {{"ffma", 0.5e9}, {"fadd", 0.02e9}, {"fmul", 0.02e9}});
  compare_counters(sgemm);
  EXPECT_EQ(only(sgemm, "flops").counted, 1.04e9);
  EXPECT_DOUBLE_EQ(only(sgemm, "flops").tolerance, 0.05);
  EXPECT_TRUE(only(sgemm, "flops").agrees);

  // An element-wise FP32 kernel: the model's convention (a tanh is 1) is not
  // the instructions' (a polynomial of FFMAs), so its FLOPs are not compared.
  KernelResult gelu = kernel("gelu", ComputeUnit::fp32);
  gelu.counters = sgemm.counters;
  compare_counters(gelu);
  EXPECT_TRUE(gelu.counters->comparisons.empty());

  // The emulator never compares FLOPs (it counts no SIMT instructions).
  sgemm.counters->source = CounterSource::emulator;
  compare_counters(sgemm);
  EXPECT_TRUE(sgemm.counters->comparisons.empty());
}

TEST(CounterAgreement, unavailable_counts_compare_nothing_and_say_why) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.tensor_ops = 1e9;
  KernelCounters refused = counted(CounterSource::cupti, {});
  refused.unavailable = "no profiling permission";
  k.counters = refused;
  compare_counters(k);
  EXPECT_TRUE(k.counters->comparisons.empty());
  const CounterVerdict verdict = counter_verdict(*k.counters);
  EXPECT_FALSE(verdict.disagrees);
  EXPECT_EQ(verdict.text, "unavailable: no profiling permission");

  KernelResult none = kernel("gemm", ComputeUnit::tc_bf16);
  compare_counters(none);  // no counters: nothing to do
  EXPECT_FALSE(none.counters.has_value());
}

TEST(CounterAgreement, a_second_call_replaces_the_comparisons_and_joins_disagreements) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.bytes_l2_load = 100;
  k.bytes_l2_store = 100;
  k.counters = counted(CounterSource::emulator,
                       {{"l2_load_bytes", 150}, {"l2_store_bytes", 50}, {"l2_bytes", 200}});
  compare_counters(k);
  compare_counters(k);
  EXPECT_EQ(k.counters->comparisons.size(), 3u);
  EXPECT_TRUE(only(k, "l2_bytes").agrees);  // the sum hides what the parts show
  const CounterVerdict verdict = counter_verdict(*k.counters);
  EXPECT_TRUE(verdict.disagrees);
  EXPECT_EQ(verdict.text,
            only(k, "l2_load_bytes").sentence + "; " + only(k, "l2_store_bytes").sentence);
}

TEST(CounterAgreement, the_verdict_leaves_out_a_differing_sum_whose_part_says_more) {
  KernelResult k = kernel("gelu", ComputeUnit::fp32);
  k.bytes_l2_load = 100;
  k.bytes_l2_store = 100;
  k.counters = counted(CounterSource::emulator,
                       {{"l2_load_bytes", 125}, {"l2_store_bytes", 100}, {"l2_bytes", 225}});
  compare_counters(k);
  EXPECT_FALSE(only(k, "l2_bytes").agrees);  // still compared, and in the file
  EXPECT_EQ(counter_verdict(*k.counters).text, only(k, "l2_load_bytes").sentence);

  // CUPTI's l2_bytes has no parts: its sentence is the verdict.
  k.counters = counted(CounterSource::cupti, {{"l2_bytes", 300}});
  compare_counters(k);
  EXPECT_EQ(counter_verdict(*k.counters).text, only(k, "l2_bytes").sentence);
}

// CUPTI's DRAM bytes against a kernel's bytes_model; nullopt when not compared.
std::optional<CounterComparison> dram_comparison(KernelResult k) {
  k.counters =
      counted(CounterSource::cupti, {{"dram_bytes_read", 1.5e9}, {"dram_bytes_write", 0.5e9}});
  compare_counters(k);
  for (const CounterComparison& c : k.counters->comparisons)
    if (c.quantity == CounterQuantity::dram_bytes) return c;
  return std::nullopt;
}

KernelResult ceiling_loop(std::string ceiling, ComputeUnit unit) {
  KernelResult k = kernel("ceilings", unit);
  k.ceiling = std::move(ceiling);
  return k;
}

TEST(CounterAgreement, dram_bytes_are_compared_only_where_the_model_means_dram_traffic) {
  // An ordinary kernel and an HBM ceiling: bytes_model is the DRAM traffic.
  EXPECT_TRUE(dram_comparison(kernel("layernorm", ComputeUnit::fp32)));
  EXPECT_TRUE(dram_comparison(ceiling_loop("hbm.copy", ComputeUnit::fp32)));
  EXPECT_EQ(dram_comparison(ceiling_loop("hbm.read", ComputeUnit::fp32))->counted, 2e9);
  // L2 bytes, shared-memory bytes, a roof loop's token output, bus bytes.
  EXPECT_FALSE(dram_comparison(ceiling_loop("l2.read", ComputeUnit::fp32)));
  EXPECT_FALSE(dram_comparison(ceiling_loop("smem.read", ComputeUnit::fp32)));
  EXPECT_FALSE(dram_comparison(ceiling_loop("fp32.fma", ComputeUnit::fp32)));
  EXPECT_FALSE(dram_comparison(ceiling_loop("tc.bf16", ComputeUnit::tc_bf16)));
  EXPECT_FALSE(dram_comparison(kernel("node", ComputeUnit::fp32)));
}

TEST(CounterAgreement, tensor_ops_stand_for_flops_only_in_gemms_and_tensor_ceilings) {
  // No tensor_ops declared (library records, tensor roof loops): 30% more ops.
  auto flops_compared = [](KernelResult k) {
    k.counters = counted(CounterSource::cupti, {{"tensor_bf16", 1.3e9}});
    compare_counters(k);
    return quantities(k) == std::vector<std::string>{"flops"};
  };
  EXPECT_TRUE(flops_compared(kernel("gemm", ComputeUnit::tc_bf16)));
  EXPECT_TRUE(flops_compared(ceiling_loop("tc.bf16", ComputeUnit::tc_bf16)));
  // Attention's flops halve causal work and credit no masked work
  // (FlashAttention's convention): not the ops its MMAs issued.
  EXPECT_FALSE(flops_compared(kernel("attention", ComputeUnit::tc_bf16)));
  EXPECT_FALSE(flops_compared(kernel("layernorm", ComputeUnit::tc_bf16)));
  // Declared tensor ops are compared in every family.
  KernelResult attention = kernel("attention", ComputeUnit::tc_bf16);
  attention.tensor_ops = 1.3e9;
  attention.counters = counted(CounterSource::cupti, {{"tensor_bf16", 1.3e9}});
  compare_counters(attention);
  EXPECT_EQ(quantities(attention), std::vector<std::string>{"tensor_ops"});
}

TEST(CounterAgreement, a_warm_l2_leaves_cupti_bytes_uncompared) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.bytes_l2_load = 3e9;
  k.bytes_l2_store = 1e9;
  k.tensor_ops = 1e9;
  const auto cupti = counted(CounterSource::cupti, {{"dram_bytes_read", 1.5e9},
                                                    {"dram_bytes_write", 0.5e9},
                                                    {"l2_bytes", 4e9},
                                                    {"tensor_bf16", 1e9}});
  for (const std::optional<bool> flushed : {std::optional<bool>(), std::optional<bool>(true)}) {
    k.l2_flushed = flushed;
    k.counters = cupti;
    compare_counters(k);
    EXPECT_EQ(quantities(k), (std::vector<std::string>{"dram_bytes", "l2_bytes", "tensor_ops"}));
    EXPECT_TRUE(skipped_comparisons(k).empty());
  }
  k.l2_flushed = false;  // --warm-l2
  compare_counters(k);
  EXPECT_EQ(quantities(k), std::vector<std::string>{"tensor_ops"});
  // ... and the reader is told which bytes were left out, and why.
  const std::vector<SkippedComparison> skipped = skipped_comparisons(k);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].quantities,
            (std::vector<CounterQuantity>{CounterQuantity::dram_bytes, CounterQuantity::l2_bytes}));
  EXPECT_NE(skipped[0].why.find("--warm-l2"), std::string_view::npos) << skipped[0].why;
  k.tensor_ops.reset();  // bytes were all it had: nothing to compare
  k.unit = ComputeUnit::fp32;
  compare_counters(k);
  EXPECT_EQ(counter_verdict(*k.counters).text, "nothing to compare");

  // The emulator's bytes are instruction requests: compared warm or cold.
  k.counters = counted(CounterSource::emulator,
                       {{"l2_load_bytes", 3e9}, {"l2_store_bytes", 1e9}, {"l2_bytes", 4e9}});
  compare_counters(k);
  EXPECT_EQ(quantities(k),
            (std::vector<std::string>{"l2_bytes", "l2_load_bytes", "l2_store_bytes"}));
}

// Each other comparison the policy leaves out is named with its reason too,
// and the views say each reason once over the run.
TEST(CounterAgreement, what_the_policy_leaves_out_is_named_with_its_reason) {
  // A ceiling whose bytes are L2 traffic, an element-wise kernel's FLOPs,
  // attention's FLOPs by FlashAttention's convention, packed-half FLOPs.
  KernelResult l2 = kernel("ceilings", ComputeUnit::fp32);
  l2.ceiling = "l2.read";
  l2.counters = counted(CounterSource::cupti, {{"dram_bytes_read", 1e6}, {"dram_bytes_write", 0}});
  KernelResult gelu = kernel("gelu", ComputeUnit::fp32);
  gelu.counters = counted(CounterSource::cupti, {{"ffma", 1e6}});
  KernelResult attention = kernel("attention", ComputeUnit::tc_bf16);
  attention.counters = counted(CounterSource::cupti, {{"tensor_bf16", 1e9}});
  KernelResult half = kernel("gelu", ComputeUnit::bf16);
  half.counters = counted(CounterSource::cupti, {{"hfma", 1e6}});
  const std::vector<std::tuple<KernelResult, CounterQuantity, std::string_view>> cases = {
      {l2, CounterQuantity::dram_bytes, "not DRAM traffic"},
      {gelu, CounterQuantity::flops, "transcendental"},
      {attention, CounterQuantity::flops, "FlashAttention"},
      {half, CounterQuantity::flops, "HFMA2"}};
  for (const auto& [k, quantity, why] : cases) {
    const std::vector<SkippedComparison> skipped = skipped_comparisons(k);
    ASSERT_EQ(skipped.size(), 1u) << k.name;
    EXPECT_EQ(skipped[0].quantities, std::vector<CounterQuantity>{quantity}) << k.name;
    EXPECT_NE(skipped[0].why.find(why), std::string_view::npos) << skipped[0].why;
  }

  Results r;
  r.kernels = {l2, gelu, l2};
  EXPECT_EQ(not_compared_sentences(r),
            (std::vector<std::string>{"dram_bytes not compared for 2 kernels: " +
                                          std::string(skipped_comparisons(l2)[0].why) + ".",
                                      "flops not compared for 1 kernel: " +
                                          std::string(skipped_comparisons(gelu)[0].why) + "."}));
  l2.counters->unavailable = "no profiling permission";  // nothing was counted to leave out
  EXPECT_TRUE(skipped_comparisons(l2).empty());
}

// Under --warm-l2 every counted kernel leaves out its DRAM bytes, but only a
// kernel whose model declares L2 bytes leaves out l2_bytes: the run's sentence
// counts each quantity apart.
TEST(CounterAgreement, a_reasons_sentence_counts_each_quantity_apart) {
  KernelResult gemm = kernel("gemm", ComputeUnit::tc_bf16);
  gemm.bytes_l2_load = 3e9;
  gemm.bytes_l2_store = 1e9;
  KernelResult gelu = kernel("gelu", ComputeUnit::fp32);
  for (KernelResult* k : {&gemm, &gelu}) {
    k->l2_flushed = false;
    k->counters = counted(CounterSource::cupti,
                          {{"dram_bytes_read", 2e9}, {"dram_bytes_write", 0}, {"l2_bytes", 4e9}});
  }
  Results r;
  r.kernels = {gelu, gemm, gelu};
  const std::string why(skipped_comparisons(gemm).at(0).why);
  EXPECT_EQ(not_compared_sentences(r),
            std::vector<std::string>{"dram_bytes not compared for 3 kernels, l2_bytes for 1 "
                                     "kernel: " +
                                     why + "."});
}

// A file written before the warm-L2 rule holds a dram_bytes comparison made
// under --warm-l2: the report shows it as stored, and the policy's recomputed
// skip does not list (or count) it as not compared as well.
TEST(CounterAgreement, a_stored_comparison_is_never_also_listed_as_not_compared) {
  KernelResult k = kernel("gemm", ComputeUnit::tc_bf16);
  k.bytes_l2_load = 3e9;
  k.bytes_l2_store = 1e9;
  k.l2_flushed = false;
  k.counters = counted(CounterSource::cupti,
                       {{"dram_bytes_read", 2e9}, {"dram_bytes_write", 0}, {"l2_bytes", 4e9}});
  CounterComparison older;  // the older writer's, as its file holds it
  older.quantity = CounterQuantity::dram_bytes;
  older.counted = older.modelled = 2e9;
  older.tolerance = 0.1;
  older.sentence = "equal";
  k.counters->comparisons = {older};
  const std::vector<SkippedComparison> skipped = skipped_comparisons(k);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].quantities, std::vector<CounterQuantity>{CounterQuantity::l2_bytes});
  Results r;
  r.kernels = {k};
  EXPECT_EQ(not_compared_sentences(r),
            std::vector<std::string>{
                "l2_bytes not compared for 1 kernel: " + std::string(skipped[0].why) + "."});
  // Both stored: nothing left to list.
  CounterComparison l2 = older;
  l2.quantity = CounterQuantity::l2_bytes;
  k.counters->comparisons.push_back(l2);
  EXPECT_TRUE(skipped_comparisons(k).empty());
}

}  // namespace
}  // namespace rl::roofline
