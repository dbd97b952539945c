// The harness driven on the emulator backend with records of its own: a kernel
// whose output is wrong, a ceiling, and a kernel that looks at results.json
// while it runs.  Protects: failed validation is recorded and never timed;
// ceilings are measured first and rated by the right work; the partial
// results.json is flushed after every benchmark.
#include "harness.hpp"

#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/model.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/validate.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

__global__ void harness_test_copy(const float* x, float* y, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = x[i];
}

constexpr int kElements = 256;
std::filesystem::path g_out_dir;
std::optional<std::size_t> g_kernels_seen_on_disk;  // by the "observer" kernel

// A copy, optionally with one element deliberately wrong, optionally reading
// results.json before it builds its buffers.
class CopyWorkload final : public rl::Workload {
 public:
  CopyWorkload(bool corrupt, bool observe, std::uint64_t seed)
      : corrupt_(corrupt), x_(kElements), y_(kElements) {
    if (observe) {
      const auto on_disk = rl::roofline::load_results(g_out_dir / "results.json");
      g_kernels_seen_on_disk = on_disk.kernels.size();
    }
    x_.upload(rl::uniform_floats(kElements, seed));
  }
  void run(cudaStream_t stream) override {
    rl::launch(harness_test_copy, dim3(kElements / 64), dim3(64), 0, stream, x_.get(), y_.get(),
               kElements);
  }
  rl::Validation validate(cudaStream_t stream) override {
    y_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<float> got = y_.download();
    const std::vector<float> x = x_.download();
    if (corrupt_) got[17] += 1.0f;
    const std::vector<double> ref(x.begin(), x.end());
    return rl::compare_to_reference(got, ref, rl::tolerance_for("fp32"));
  }

 private:
  bool corrupt_;
  rl::DeviceBuffer<float> x_;
  rl::DeviceBuffer<float> y_;
};

rl::KernelRecord copy_record(std::string name, std::string ceiling, bool corrupt, bool observe) {
  rl::KernelRecord r;
  r.name = std::move(name);
  r.family = "harness_test";
  r.variant = "copy";
  r.precision = rl::roofline::Precision::fp32;
  r.ceiling = std::move(ceiling);
  r.shapes = [](rl::SizePreset) { return std::vector<rl::Shape>{rl::Shape{{{"n", kElements}}}}; };
  r.cost = [](const rl::Shape& s) {
    const auto n = static_cast<double>(s.at("n"));
    return rl::roofline::Cost{.flops = n,
                              .bytes_min = 8 * n,
                              .bytes_model = 8 * n,
                              .unit = rl::roofline::ComputeUnit::fp32};
  };
  r.make_workload = [corrupt, observe](const rl::Shape&, std::uint64_t seed) {
    return std::unique_ptr<rl::Workload>(new CopyWorkload(corrupt, observe, seed));
  };
  return r;
}

// Registered in an order that puts the ceiling last: the harness must still
// measure it first.
RL_REGISTER_KERNEL(copy_record("harness_test_a_wrong_output", "", true, false));
RL_REGISTER_KERNEL(copy_record("harness_test_b_observer", "", false, true));
RL_REGISTER_KERNEL(copy_record("harness_test_c_ceiling_copy", "hbm.copy", false, false));
rl::KernelRecord gpu_only_record() {
  rl::KernelRecord r = copy_record("harness_test_d_gpu_only", "", false, false);
  r.gpu_only = true;
  r.make_workload = [](const rl::Shape&, std::uint64_t) -> std::unique_ptr<rl::Workload> {
    throw std::logic_error("a GPU-only workload was built on the emulator");
  };
  return r;
}
RL_REGISTER_KERNEL(gpu_only_record());
// Declares more device memory than any machine has: skipped before anything
// is allocated (its workload would throw if built).
rl::KernelRecord too_big_record() {
  rl::KernelRecord r = copy_record("harness_test_e_too_big", "", false, false);
  r.device_bytes = [](const rl::Shape&) { return std::size_t{1} << 62; };
  r.make_workload = [](const rl::Shape&, std::uint64_t) -> std::unique_ptr<rl::Workload> {
    throw std::logic_error("a workload that does not fit was built");
  };
  return r;
}
RL_REGISTER_KERNEL(too_big_record());
// Declares what it allocates, which fits: runs as usual.
rl::KernelRecord fits_record() {
  rl::KernelRecord r = copy_record("harness_test_f_fits", "", false, false);
  r.device_bytes = [](const rl::Shape& s) {
    return static_cast<std::size_t>(2 * s.at("n")) * sizeof(float);
  };
  return r;
}
RL_REGISTER_KERNEL(fits_record());
// Built for compute capability up to 8.0; the emulator reports 8.9.
rl::KernelRecord too_new_device_record() {
  rl::KernelRecord r = copy_record("harness_test_g_max_cc_80", "", false, false);
  r.max_cc = 80;
  r.make_workload = [](const rl::Shape&, std::uint64_t) -> std::unique_ptr<rl::Workload> {
    throw std::logic_error("a workload past its max_cc was built");
  };
  return r;
}
RL_REGISTER_KERNEL(too_new_device_record());
// Within its compute-capability range but refused on this architecture (as
// fp8 mma.sync is where the compiler emulates it).
rl::KernelRecord refused_architecture_record() {
  rl::KernelRecord r = copy_record("harness_test_h_refused_on_89", "", false, false);
  r.refuse_on = [](int cc_x10) -> std::optional<std::string> {
    if (cc_x10 == 89) return "the instruction is emulated on sm_89";
    return std::nullopt;
  };
  r.make_workload = [](const rl::Shape&, std::uint64_t) -> std::unique_ptr<rl::Workload> {
    throw std::logic_error("a workload refused on this architecture was built");
  };
  return r;
}
RL_REGISTER_KERNEL(refused_architecture_record());
// Lists two shapes and refuses the second (as a slow rung refuses the largest
// GEMMs): it runs the first and records the second as skipped, with why.
rl::KernelRecord refused_shape_record() {
  rl::KernelRecord r = copy_record("harness_test_i_refused_shape", "", false, false);
  r.shapes = [](rl::SizePreset) {
    return std::vector<rl::Shape>{rl::Shape{{{"n", kElements}}}, rl::Shape{{{"n", kElements + 1}}}};
  };
  r.refuse_shape = [](const rl::Shape& s) -> std::optional<std::string> {
    if (s.at("n") == kElements + 1) return "refused: n is not the one it was written for";
    return std::nullopt;
  };
  r.make_workload = [inner = r.make_workload](const rl::Shape& s, std::uint64_t seed) {
    if (s.at("n") != kElements) throw std::logic_error("a workload of a refused shape was built");
    return inner(s, seed);
  };
  return r;
}
RL_REGISTER_KERNEL(refused_shape_record());

class HarnessOnEmulator : public ::testing::Test {
 protected:
  // A short sampling budget: the tests are about what is recorded, not noise.
  static rl::bench::HarnessConfig quick_config() {
    rl::bench::HarnessConfig config;
    config.sampling.timeout_s = 0.05;
    config.repetitions = 2;
    return config;
  }

  rl::roofline::Results run_harness(bool ceilings_only,
                                    rl::bench::HarnessConfig config = quick_config(),
                                    const std::string& filter = "^harness_test_") {
    scratch_ = std::make_unique<rl::test::ScratchDir>("rl_harness_emu_test");
    g_out_dir = scratch_->path();
    g_kernels_seen_on_disk.reset();
    std::string a0 = "harness_emu_test", a1 = "--benchmark_filter=" + filter,
                a2 = "--benchmark_repetitions=" + std::to_string(config.repetitions);
    char* argv[] = {a0.data(), a1.data(), a2.data()};
    int argc = 3;
    benchmark::Initialize(&argc, argv);
    config.selection.preset = rl::SizePreset::small;
    config.selection.filter = filter;
    config.selection.ceilings_only = ceilings_only;
    config.out_dir = g_out_dir;
    rl::roofline::Context context;
    context.backend = rl::roofline::Backend::emulator;
    context.device.compute_capability = "8.9";  // what the emulator reports
    {
      rl::bench::Harness harness(config, context, nullptr);
      harness.register_benchmarks();
      harness.run();
      failed_ = harness.finish();
    }
    benchmark::ClearRegisteredBenchmarks();
    return rl::roofline::load_results(g_out_dir / "results.json");
  }

  std::unique_ptr<rl::test::ScratchDir> scratch_;
  std::size_t failed_ = 0;  // what finish() reported (main's exit code 1 when > 0)

  static const rl::roofline::KernelResult* find(const rl::roofline::Results& r,
                                                const std::string& name) {
    for (const auto& k : r.kernels)
      if (k.name == name) return &k;
    return nullptr;
  }
};

TEST_F(HarnessOnEmulator, failed_validation_is_recorded_with_its_error_and_not_timed) {
  const auto results = run_harness(false);
  const auto* wrong = find(results, "harness_test_a_wrong_output");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->status, rl::roofline::Status::failed_validation);
  EXPECT_FALSE(wrong->validated);
  EXPECT_NE(wrong->error.find("element 17"), std::string::npos) << wrong->error;
  EXPECT_FALSE(wrong->time_s.has_value());
  EXPECT_GT(wrong->max_rel_err, 0.0);
  EXPECT_EQ(failed_, 1u);  // only the wrong output: skipped and timed kernels do not count
}

TEST_F(HarnessOnEmulator, ceiling_kernels_run_first_and_become_ceilings) {
  const auto results = run_harness(false);
  ASSERT_EQ(results.kernels.size(), 10u);  // the refused-shape record has two instances
  // Skipped records are written when the run starts; the first kernel timed is
  // the ceiling, although it was registered after two others.  (The one that
  // does not fit is skipped when its turn comes.)
  std::vector<std::string> timed_order;
  for (const auto& k : results.kernels)
    if (k.status != rl::roofline::Status::skipped) timed_order.push_back(k.name);
  EXPECT_EQ(timed_order,
            (std::vector<std::string>{"harness_test_c_ceiling_copy", "harness_test_a_wrong_output",
                                      "harness_test_b_observer", "harness_test_f_fits",
                                      "harness_test_i_refused_shape"}));
  ASSERT_EQ(results.ceilings.size(), 1u);
  const auto& ceiling = results.ceilings.front();
  EXPECT_EQ(ceiling.name, "hbm.copy");
  EXPECT_EQ(ceiling.kind, "memory");
  EXPECT_EQ(ceiling.unit, "B/s");
  EXPECT_EQ(ceiling.method, "kernel harness_test_c_ceiling_copy, n=256");
  const auto* copy = find(results, "harness_test_c_ceiling_copy");
  ASSERT_NE(copy, nullptr);
  ASSERT_TRUE(copy->time_s.has_value());
  EXPECT_EQ(copy->time_s->repetitions, 2);
  // The statistic every kernel is judged by: the median.
  EXPECT_DOUBLE_EQ(ceiling.value, copy->bytes_model / copy->time_s->median);
  EXPECT_DOUBLE_EQ(*ceiling.best, copy->bytes_model / copy->time_s->min);
  EXPECT_EQ(copy->ceiling, "hbm.copy");
}

TEST_F(HarnessOnEmulator, cold_and_batch_samples_are_both_recorded_with_launches_per_sample) {
  const auto results = run_harness(false);
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  ASSERT_TRUE(fits->time_s.has_value());
  ASSERT_TRUE(fits->other_time_s.has_value());
  EXPECT_EQ(fits->time_s->kind, "cold");
  EXPECT_EQ(fits->other_time_s->kind, "batch");
  EXPECT_EQ(fits->time_s->launches_per_sample, 1);  // a cold sample is one launch
  EXPECT_GE(fits->other_time_s->launches_per_sample, 1);
  EXPECT_EQ(fits->l2_flushed, true);
  EXPECT_GE(fits->time_s->samples_taken, 2);  // at least one per repetition
  EXPECT_GE(fits->other_time_s->samples_taken, 2);
  EXPECT_TRUE(fits->time_s->noise.has_value());
  EXPECT_FALSE(fits->time_s->stopped_by.empty());
  EXPECT_EQ(fits->time_s->samples.size(), 2u);  // one median per repetition
}

TEST_F(HarnessOnEmulator, warm_l2_judges_kernels_by_their_batch_samples) {
  auto config = quick_config();
  config.judged_by = rl::bench::SampleKind::batch;
  const auto results = run_harness(false, config);
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  ASSERT_TRUE(fits->time_s && fits->other_time_s);
  EXPECT_EQ(fits->time_s->kind, "batch");
  EXPECT_EQ(fits->other_time_s->kind, "cold");
  EXPECT_EQ(fits->l2_flushed, false);
  EXPECT_FALSE(results.context.l2_flushed);
}

TEST_F(HarnessOnEmulator, sampling_stops_at_the_noise_target_once_min_samples_are_taken) {
  auto config = quick_config();
  config.sampling.max_noise = 100;  // any spread is below it
  config.sampling.min_samples = 3;
  config.sampling.timeout_s = 600;
  const auto results = run_harness(false, config, "^harness_test_f_");
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  ASSERT_TRUE(fits->time_s && fits->other_time_s);
  EXPECT_EQ(fits->time_s->stopped_by, "noise");
  EXPECT_EQ(fits->time_s->samples_taken, 2 * 3);  // 2 repetitions x min_samples
  EXPECT_EQ(fits->other_time_s->samples_taken, 2 * 3);
}

TEST_F(HarnessOnEmulator, sampling_stops_at_the_time_cap_when_the_noise_target_is_out_of_reach) {
  auto config = quick_config();
  config.sampling.max_noise = 0;  // unreachable unless every sample is identical
  config.sampling.timeout_s = 0.02;
  const auto started = std::chrono::steady_clock::now();
  const auto results = run_harness(false, config, "^harness_test_f_");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  ASSERT_TRUE(fits->time_s.has_value());
  EXPECT_EQ(fits->time_s->stopped_by, "timeout");
  EXPECT_LT(seconds, 5.0);  // 20 ms of sampling, plus validation and set-up
}

TEST_F(HarnessOnEmulator, throttled_samples_are_discarded_and_retaken_and_counted) {
  ::setenv("RL_BENCH_TEST_THROTTLE_EVERY", "3", 1);  // every third check "throttled"
  const auto results = run_harness(false, quick_config(), "^harness_test_f_");
  ::unsetenv("RL_BENCH_TEST_THROTTLE_EVERY");
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  ASSERT_TRUE(fits->time_s.has_value());
  EXPECT_GT(fits->discarded_throttled, 0);
  EXPECT_LE(fits->discarded_throttled, rl::bench::kMaxThrottleDiscards);
}

TEST_F(HarnessOnEmulator,
       a_kernel_throttled_past_the_discard_limit_keeps_samples_marked_throttled) {
  ::setenv("RL_BENCH_TEST_THROTTLE_EVERY", "1", 1);  // every check "throttled"
  const auto results = run_harness(false, quick_config(), "^harness_test_f_");
  ::unsetenv("RL_BENCH_TEST_THROTTLE_EVERY");
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  ASSERT_TRUE(fits->time_s.has_value());  // still timed: discards are bounded
  EXPECT_EQ(fits->discarded_throttled, rl::bench::kMaxThrottleDiscards);
  EXPECT_TRUE(fits->throttled);
}

TEST_F(HarnessOnEmulator, ceilings_given_by_an_earlier_run_are_used_and_not_remeasured) {
  auto config = quick_config();
  rl::roofline::Ceiling hbm;
  hbm.name = "hbm.copy";
  hbm.kind = "memory";
  hbm.unit = "B/s";
  hbm.value = 1e6;
  hbm.method = "kernel hbm_copy_vec16, n=1; from earlier/results.json";
  config.given_ceilings = {hbm};
  config.selection.no_ceilings = true;
  const auto results = run_harness(false, config, "^harness_test_f_");
  ASSERT_EQ(results.ceilings.size(), 1u);
  EXPECT_EQ(results.ceilings.front().method, hbm.method);
  EXPECT_EQ(find(results, "harness_test_c_ceiling_copy"), nullptr);  // not measured again
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  EXPECT_TRUE(fits->pct_of_roof.has_value());
  EXPECT_EQ(fits->memory_roof, "hbm.copy");
}

TEST_F(HarnessOnEmulator, each_kernel_is_judged_once_as_a_judgement_of_the_final_ceilings_would) {
  // The harness judges a kernel when it is recorded (again only when a
  // ceiling it depends on rises): its verdict is what judging every kernel
  // against the run's final ceilings gives.
  const auto results = run_harness(false);
  rl::roofline::Results fresh = results;
  rl::roofline::apply_roofline(fresh);
  ASSERT_EQ(fresh.kernels.size(), results.kernels.size());
  std::size_t judged = 0;
  for (std::size_t i = 0; i < results.kernels.size(); ++i) {
    const auto& got = results.kernels[i];
    const auto& want = fresh.kernels[i];
    SCOPED_TRACE(got.name);
    EXPECT_EQ(got.roof, want.roof);
    EXPECT_EQ(got.pct_of_roof, want.pct_of_roof);
    EXPECT_EQ(got.bound, want.bound);
    EXPECT_EQ(got.memory_roof, want.memory_roof);
    if (got.pct_of_roof) ++judged;
  }
  EXPECT_GE(judged, 3u);  // the ceiling, the observer and the kernel that fits
}

TEST_F(HarnessOnEmulator, results_are_flushed_after_every_benchmark) {
  const auto results = run_harness(false);
  // The observer ran after the ceiling and the wrong-output kernel finished
  // (registration order after the ceiling) and found both on disk, beside the
  // four instances skipped at registration (GPU-only, past max_cc, refused on
  // this architecture, refused at its shape).
  ASSERT_TRUE(g_kernels_seen_on_disk.has_value());
  EXPECT_EQ(*g_kernels_seen_on_disk, 6u);
  const auto* observer = find(results, "harness_test_b_observer");
  ASSERT_NE(observer, nullptr);
  EXPECT_EQ(observer->status, rl::roofline::Status::ok);
  EXPECT_TRUE(observer->validated);
}

TEST_F(HarnessOnEmulator, gpu_only_kernels_are_recorded_as_skipped_on_the_emulator) {
  const auto results = run_harness(false);
  const auto* gpu_only = find(results, "harness_test_d_gpu_only");
  ASSERT_NE(gpu_only, nullptr);
  EXPECT_EQ(gpu_only->status, rl::roofline::Status::skipped);
  EXPECT_NE(gpu_only->error.find("GPU-only"), std::string::npos) << gpu_only->error;
  EXPECT_FALSE(gpu_only->time_s.has_value());
  EXPECT_FALSE(gpu_only->validated);
}

TEST_F(HarnessOnEmulator,
       an_instance_that_needs_more_memory_than_is_free_is_skipped_with_both_figures) {
  const auto results = run_harness(false);
  const auto* too_big = find(results, "harness_test_e_too_big");
  ASSERT_NE(too_big, nullptr);
  EXPECT_EQ(too_big->status, rl::roofline::Status::skipped);
  EXPECT_NE(too_big->error.find("needs 4611686018.4 GB of device memory, "), std::string::npos)
      << too_big->error;
  EXPECT_NE(too_big->error.find(" GB free"), std::string::npos) << too_big->error;
  EXPECT_FALSE(too_big->time_s.has_value());
  const auto* fits = find(results, "harness_test_f_fits");
  ASSERT_NE(fits, nullptr);
  EXPECT_EQ(fits->status, rl::roofline::Status::ok);
  EXPECT_TRUE(fits->validated);
  // A skip is data, not a failure: only the deliberately wrong kernel counts.
  EXPECT_EQ(failed_, 1u);
}

TEST_F(HarnessOnEmulator, a_record_refused_on_this_architecture_is_skipped_with_its_reason) {
  const auto results = run_harness(false);
  const auto* refused = find(results, "harness_test_h_refused_on_89");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, rl::roofline::Status::skipped);
  EXPECT_EQ(refused->error, "the instruction is emulated on sm_89");
  EXPECT_FALSE(refused->time_s.has_value());
}

TEST_F(HarnessOnEmulator, a_refused_shape_is_skipped_with_the_reason_and_the_others_run) {
  const auto results = run_harness(false);
  std::vector<const rl::roofline::KernelResult*> instances;
  for (const auto& k : results.kernels)
    if (k.name == "harness_test_i_refused_shape") instances.push_back(&k);
  ASSERT_EQ(instances.size(), 2u);
  for (const auto* k : instances) {
    const bool refused = k->shape == rl::roofline::ShapeDims{{"n", kElements + 1}};
    SCOPED_TRACE(refused ? "refused shape" : "accepted shape");
    EXPECT_EQ(k->status, refused ? rl::roofline::Status::skipped : rl::roofline::Status::ok);
    EXPECT_EQ(k->error, refused ? "refused: n is not the one it was written for" : "");
    EXPECT_EQ(k->time_s.has_value(), !refused);
  }
}

TEST_F(HarnessOnEmulator, a_record_built_for_older_devices_is_skipped_on_a_newer_one) {
  const auto results = run_harness(false);
  const auto* past_max = find(results, "harness_test_g_max_cc_80");
  ASSERT_NE(past_max, nullptr);
  EXPECT_EQ(past_max->status, rl::roofline::Status::skipped);
  EXPECT_NE(past_max->error.find("built for compute capability up to 8.0, the device has 8.9"),
            std::string::npos)
      << past_max->error;
}

TEST_F(HarnessOnEmulator, ceilings_only_measures_only_ceilings) {
  const auto results = run_harness(true);
  ASSERT_EQ(results.kernels.size(), 1u);
  EXPECT_EQ(results.kernels.front().name, "harness_test_c_ceiling_copy");
  EXPECT_EQ(results.ceilings.size(), 1u);
  EXPECT_EQ(failed_, 0u);
  EXPECT_TRUE(std::filesystem::exists(g_out_dir / "roofline.svg"));
  EXPECT_TRUE(std::filesystem::exists(g_out_dir / "report.html"));
}

TEST_F(HarnessOnEmulator, a_spent_budget_measures_the_ceilings_and_lists_every_kernel_left_out) {
  auto config = quick_config();
  config.budget_s = 1e-9;  // spent before the first kernel starts
  const auto results = run_harness(false, config);
  // The ceiling ran (the budget never stops the roofs); the kernels that
  // would have run were not started and are not recorded.
  EXPECT_NE(find(results, "harness_test_c_ceiling_copy"), nullptr);
  EXPECT_EQ(results.ceilings.size(), 1u);
  for (const char* name : {"harness_test_a_wrong_output", "harness_test_b_observer",
                           "harness_test_e_too_big", "harness_test_f_fits"})
    EXPECT_EQ(find(results, name), nullptr) << name;
  const auto* refused = find(results, "harness_test_i_refused_shape");  // its refused shape only
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, rl::roofline::Status::skipped);
  EXPECT_EQ(results.run.complete, false);
  EXPECT_EQ(results.run.interrupted_by, "");
  EXPECT_EQ(failed_, 0u);  // nothing that was left out failed
  std::ifstream in(g_out_dir / "results.json");
  const auto json = nlohmann::json::parse(in);
  std::vector<std::string> left_out;
  for (const auto& item : json["run"]["left_out"]) {
    EXPECT_EQ(item["reason"], "not reached: budget");
    EXPECT_EQ(item["shape"]["n"], kElements);
    left_out.push_back(item["name"].get<std::string>());
  }
  EXPECT_EQ(left_out,
            (std::vector<std::string>{"harness_test_a_wrong_output", "harness_test_b_observer",
                                      "harness_test_e_too_big", "harness_test_f_fits",
                                      "harness_test_i_refused_shape"}));
}

TEST_F(HarnessOnEmulator, an_unspent_budget_leaves_nothing_out) {
  auto config = quick_config();
  config.budget_s = 3600;
  const auto results = run_harness(false, config);
  EXPECT_EQ(results.run.complete, true);
  EXPECT_NE(find(results, "harness_test_f_fits"), nullptr);
  std::ifstream in(g_out_dir / "results.json");
  EXPECT_FALSE(nlohmann::json::parse(in)["run"].contains("left_out"));
}

// What matters first: the ceilings (every shape), then one shape per kernel,
// its headline (the largest), then the remaining shapes.
TEST(SelectedInstances, run_ceilings_then_each_kernels_headline_shape_then_the_rest) {
  rl::bench::Selection selection;
  selection.preset = rl::SizePreset::small;
  selection.filter = "^scale_f32_|^hbm_write_vec16/";
  std::vector<std::string> order;
  for (const auto& instance : rl::bench::selected_instances(selection))
    order.push_back(instance.name);
  ASSERT_EQ(order.size(), 5u);
  EXPECT_EQ(order[0].rfind("hbm_write_vec16/", 0), 0u) << order[0];
  EXPECT_EQ(std::vector<std::string>(order.begin() + 1, order.end()),
            (std::vector<std::string>{"scale_f32_scalar/n=4097", "scale_f32_vec4/n=4097",
                                      "scale_f32_scalar/n=1000", "scale_f32_vec4/n=1000"}));
}

TEST(HeadlineShape, is_the_shape_with_the_most_flops_then_the_most_compulsory_bytes) {
  const rl::KernelRecord record = copy_record("headline_probe", "", false, false);
  // copy_record's cost: flops = n, bytes = 8 n.
  const std::vector<rl::Shape> shapes{rl::Shape{{{"n", 10}}}, rl::Shape{{{"n", 300}}},
                                      rl::Shape{{{"n", 20}}}};
  EXPECT_EQ(rl::bench::headline_index(record, shapes), 1u);
  const std::vector<rl::Shape> tied{rl::Shape{{{"n", 5}}}, rl::Shape{{{"n", 5}}}};
  EXPECT_EQ(rl::bench::headline_index(record, tied), 1u);  // the later one
}

}  // namespace
