// bench_roofline --counters on a GPU (label gpu): CUPTI's range profiler
// counts what the cost models declare.  One small tensor-core GEMM, whose
// counted tensor ops must equal its model's exactly (every MMA it issues is
// in the model, padded edge tiles included), and the hbm.copy ceiling, whose
// counted DRAM bytes must agree with its bytes_model within the comparison's
// tolerance.  The copy runs at 512 MiB per array: the output's last L2-full
// of lines can still be dirty in the L2 when the range ends (on an H100,
// 50 MB of 1 GiB moved), which a size near the L2's would make the larger part.
//
// Skipped, with the reason, without a device, or where this machine refuses
// profiling (no permission, another profiler: cupti_refusal.hpp's sentence).
#include "cupti_refusal.hpp"
#include "gpu.hpp"
#include "scratch_dir.hpp"

#include "rl/roofline/counter_metrics.hpp"
#include "rl/roofline/results.hpp"
#include "rl/roofline/results_io.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace rl::bench {
namespace {

constexpr const char* kGemm = "gemm_mma_sync_multistage_bf16";
constexpr const char* kCopy = "hbm_copy_vec16";

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const roofline::KernelResult* kernel_named(const roofline::Results& results,
                                           std::string_view name) {
  for (const auto& k : results.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

const roofline::CounterComparison* comparison(const roofline::KernelCounters& counters,
                                              std::string_view quantity) {
  for (const auto& c : counters.comparisons)
    if (to_string(c.quantity) == quantity) return &c;
  return nullptr;
}

// The tensor-core operations counted, over every role in ops (each counter
// once: a chip's folded counter is one role's, counter_readout.hpp).
double counted_tensor_ops(const roofline::KernelCounters& counters) {
  double ops = 0;
  for (const auto& role : roofline::counter_roles())
    if (role.unit == "ops")
      if (auto v = counters.values.find(std::string(role.key)); v != counters.values.end())
        ops += v->second;
  return ops;
}

TEST(CountersOnGpu, gemm_tensor_ops_and_hbm_copy_dram_bytes_match_their_models) {
  RL_REQUIRE_GPU();
  const char* bench = std::getenv("RL_BENCH_ROOFLINE");  // set by ctest (CMakeLists.txt)
  ASSERT_NE(bench, nullptr) << "RL_BENCH_ROOFLINE names no benchmark; run this through ctest";
  rl::test::ScratchDir dir("counters_cupti_gpu");
  const auto out = dir.path() / "run";
  const auto log = dir.path() / "stderr.txt";
  const std::string command = "'" + std::string(bench) + "'" +
                              " --counters --size small --timeout 0.5 --min-samples 3" +
                              " --shape gemm:M=512,N=512,K=512 --shape ceilings:n=134217728" +
                              " '--benchmark_filter=^(" + kGemm + "|" + kCopy + ")/'" + " --out '" +
                              out.string() + "' 2> '" + log.string() + "' > /dev/null";
  const int rc = std::system(command.c_str());
  ASSERT_EQ(rc, 0) << command << "\n" << text_of(log);
  const roofline::Results results = roofline::load_results(out / "results.json");

  const roofline::KernelResult* gemm = kernel_named(results, kGemm);
  const roofline::KernelResult* copy = kernel_named(results, kCopy);
  ASSERT_TRUE(gemm != nullptr && copy != nullptr)
      << kGemm << " or " << kCopy << " not in results.json; stderr:\n"
      << text_of(log);
  for (const roofline::KernelResult* kernel : {gemm, copy}) {
    const std::string& name = kernel->name;
    ASSERT_EQ(kernel->status, roofline::Status::ok) << name << ": " << kernel->error;
    ASSERT_TRUE(kernel->counters.has_value()) << name << " has no counters";
    const roofline::KernelCounters& counters = kernel->counters.value();
    if (is_refusal(counters.unavailable)) GTEST_SKIP() << counters.unavailable;
    ASSERT_EQ(counters.unavailable, "") << name;
    EXPECT_EQ(counters.source, roofline::CounterSource::cupti) << name;
    EXPECT_FALSE(counters.chip.empty()) << name;
    EXPECT_GE(counters.passes, 1) << name;
    EXPECT_TRUE(counters.values.contains("dram_bytes_read")) << name;
    EXPECT_TRUE(counters.values.contains("duration")) << name;
  }

  const roofline::KernelCounters& copied = copy->counters.value();
  const auto* dram = comparison(copied, "dram_bytes");
  ASSERT_NE(dram, nullptr) << kCopy << ": no dram_bytes comparison";
  const double counted = copied.values.at("dram_bytes_read") + copied.values.at("dram_bytes_write");
  EXPECT_EQ(dram->counted, counted);
  EXPECT_EQ(dram->modelled, copy->bytes_model);
  EXPECT_TRUE(dram->agrees) << kCopy << ": counted " << counted << " B, modelled "
                            << copy->bytes_model << " B, tolerance " << dram->tolerance << ": "
                            << dram->sentence;

  const roofline::KernelCounters& multiplied = gemm->counters.value();
  ASSERT_TRUE(gemm->tensor_ops.has_value()) << kGemm << "'s cost model declares no tensor_ops";
  EXPECT_EQ(counted_tensor_ops(multiplied), gemm->tensor_ops.value())
      << kGemm << ": the tensor ops CUPTI counted differ from the model's";
  const auto* ops = comparison(multiplied, "tensor_ops");
  ASSERT_NE(ops, nullptr) << kGemm << ": no tensor_ops comparison";
  EXPECT_TRUE(ops->agrees) << ops->sentence;
}

}  // namespace
}  // namespace rl::bench
