// --counters in the harness, on the emulator backend with a session of the
// test's own (the emulator's real session is checked end to end in
// tests/e2e/counters_checks.py).  Protects: each timed instance, a ceiling
// included, is counted through the session exactly once, after its timed
// samples (no launch of it follows the counted one), on the stream its samples
// used, and compared with its cost model; a failed instance is not counted; without a session
// nothing is; the session is opened once, with the run's context; a session's reason it cannot
// count is carried by every result (the session prints it, once: counters.hpp) and the run goes on;
// a count that throws leaves the timed result standing and says so in one line naming the kernel.
// And the emulator's session itself (bench/emu_only/counters_emu.cpp): the counts of exactly the
// launch it is given, under the role keys results.json stores, and counting off again after it, a
// launch that throws included.
#include "emu_harness_run.hpp"

#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/emu/counters.hpp"
#include "rl/registry.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

__global__ void counters_test_fill(int* out, int value) {
  out[threadIdx.x] = value;
}

// Launches of each record's workload so far, and the stream of the last one.
std::map<std::string, int> g_runs;
cudaStream_t g_last_stream = nullptr;

class CountedFill final : public rl::Workload {
 public:
  CountedFill(std::string name, bool wrong) : name_(std::move(name)), wrong_(wrong), out_(32) {}
  void run(cudaStream_t stream) override {
    ++g_runs[name_];
    g_last_stream = stream;
    rl::launch(counters_test_fill, dim3(1), dim3(32), 0, stream, out_.get(), 7);
  }
  rl::Validation validate(cudaStream_t stream) override {
    out_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    rl::Validation v;
    v.passed = !wrong_ && out_.download() == std::vector<int>(32, 7);
    return v;
  }

 private:
  std::string name_;
  bool wrong_;
  rl::DeviceBuffer<int> out_;
};

rl::KernelRecord fill_record(const std::string& name, std::string ceiling, bool wrong) {
  rl::KernelRecord r;
  r.name = name;
  r.family = "counters_test";
  r.variant = "fill";
  r.ceiling = std::move(ceiling);
  r.shapes = [](rl::SizePreset) { return std::vector<rl::Shape>{rl::Shape{{{"n", 32}}}}; };
  r.cost = [](const rl::Shape&) {
    rl::roofline::Cost cost{.flops = 32, .bytes_min = 128, .bytes_model = 128};
    cost.bytes_l2_store = 128;  // declared: the result carries it with or without --counters
    return cost;
  };
  r.make_workload = [name, wrong](const rl::Shape&, std::uint64_t) {
    return std::unique_ptr<rl::Workload>(new CountedFill(name, wrong));
  };
  return r;
}

RL_REGISTER_KERNEL(fill_record("counters_test_a_fill", "", false));
RL_REGISTER_KERNEL(fill_record("counters_test_b_wrong_output", "", true));
RL_REGISTER_KERNEL(fill_record("counters_test_c_ceiling", "hbm.copy", false));

// What the session saw of one count().
struct Count {
  std::map<std::string, int> runs_before;
  std::map<std::string, int> runs_after;
  bool stream_is_the_workloads = false;
};

class FakeSession final : public rl::bench::CounterSession {
 public:
  std::string unavailable;  // non-empty: cannot count, says this
  bool throws = false;
  std::vector<Count> counts;

  rl::roofline::KernelCounters count(const std::function<void()>& launch,
                                     cudaStream_t stream) override {
    Count& seen = counts.emplace_back();
    seen.runs_before = g_runs;
    if (throws) throw std::runtime_error("replay refused");
    rl::roofline::KernelCounters counters;
    counters.source = rl::roofline::CounterSource::emulator;
    if (!unavailable.empty()) {
      counters.unavailable = unavailable;
      return counters;
    }
    launch();
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    seen.runs_after = g_runs;
    seen.stream_is_the_workloads = stream == g_last_stream;
    counters.passes = 1;
    counters.values["l2_store_bytes"] = 128;
    return counters;
  }
};

class HarnessCounters : public ::testing::Test {
 protected:
  // The recorded kernels, by name; stderr of the run in `stderr_`.
  std::map<std::string, rl::roofline::KernelResult> run_harness(
      std::shared_ptr<rl::bench::CounterSession> session,
      rl::bench::SampleKind judged_by = rl::bench::SampleKind::cold) {
    g_runs.clear();
    const rl::test::ScratchDir scratch("rl_harness_counters_test");
    rl::bench::HarnessConfig config;
    if (session)
      config.open_counters = [this, session](const rl::roofline::Context& context) {
        ++opened_;
        l2_flushed_at_open_ = context.l2_flushed;
        return session;
      };
    config.judged_by = judged_by;
    ::testing::internal::CaptureStderr();
    const rl::test::EmuHarnessRun run =
        rl::test::run_emu_harness(config, "^counters_test_", 2, scratch.path());
    std::map<std::string, rl::roofline::KernelResult> kernels;
    for (const auto& k : run.results.kernels) kernels[k.name] = k;
    stderr_ = ::testing::internal::GetCapturedStderr();
    return kernels;
  }

  int lines_containing(const std::string& text) const {
    int lines = 0;
    for (std::size_t at = stderr_.find(text); at != std::string::npos;
         at = stderr_.find(text, at + 1))
      ++lines;
    return lines;
  }

  std::string stderr_;
  int opened_ = 0;
  bool l2_flushed_at_open_ = false;
};

TEST_F(HarnessCounters, each_timed_instance_and_ceiling_is_counted_once_after_its_samples) {
  const auto session = std::make_shared<FakeSession>();
  auto kernels = run_harness(session);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(opened_, 1);
  EXPECT_TRUE(l2_flushed_at_open_);
  // The ceiling and the fill: not the instance that failed validation.
  ASSERT_EQ(session->counts.size(), 2u);
  for (const Count& count : session->counts) {
    int counted_records = 0;
    for (const auto& [name, after] : count.runs_after) {
      const int before = count.runs_before.count(name) ? count.runs_before.at(name) : 0;
      if (after == before) continue;
      ++counted_records;
      EXPECT_EQ(after, before + 1) << name << ": the count is one launch";
      // Validation, warm-up and both sample kinds came before it, and no
      // launch of the instance came after it.
      EXPECT_GT(before, 4) << name;
      EXPECT_EQ(g_runs.at(name), after) << name << " ran again after its count";
    }
    EXPECT_EQ(counted_records, 1);
    EXPECT_TRUE(count.stream_is_the_workloads);
  }
  for (const char* name : {"counters_test_a_fill", "counters_test_c_ceiling"}) {
    const rl::roofline::KernelResult& k = kernels.at(name);
    EXPECT_EQ(k.status, rl::roofline::Status::ok) << name << ": " << k.error;
    ASSERT_TRUE(k.counters.has_value()) << name;
    EXPECT_EQ(k.counters->values.at("l2_store_bytes"), 128);
    EXPECT_TRUE(k.counters->unavailable.empty());
    // Set beside the model's one declaration (roofline's compare_counters).
    ASSERT_EQ(k.counters->comparisons.size(), 1u) << name;
    EXPECT_EQ(k.counters->comparisons[0].quantity, rl::roofline::CounterQuantity::l2_store_bytes);
    EXPECT_TRUE(k.counters->comparisons[0].agrees);
  }
  EXPECT_EQ(kernels.at("counters_test_b_wrong_output").status,
            rl::roofline::Status::failed_validation);
  EXPECT_FALSE(kernels.at("counters_test_b_wrong_output").counters.has_value());
  EXPECT_EQ(lines_containing("counters unavailable"), 0);
}

TEST_F(HarnessCounters, without_a_session_nothing_is_counted_and_the_models_figures_are_kept) {
  auto kernels = run_harness(nullptr);
  ASSERT_EQ(kernels.size(), 3u);
  for (const auto& [name, k] : kernels) {
    EXPECT_FALSE(k.counters.has_value()) << name;
    EXPECT_EQ(k.bytes_l2_store, 128.0) << name;
    EXPECT_FALSE(k.bytes_l2_load.has_value()) << name;  // not declared
    EXPECT_FALSE(k.tensor_ops.has_value()) << name;
  }
}

TEST_F(HarnessCounters, the_session_sees_the_runs_l2_policy) {
  // CUPTI's session flushes the L2 before each pass unless the run keeps it
  // warm: it must be opened with the context after --warm-l2 is applied.
  run_harness(std::make_shared<FakeSession>(), rl::bench::SampleKind::batch);
  EXPECT_EQ(opened_, 1);
  EXPECT_FALSE(l2_flushed_at_open_);
}

TEST_F(HarnessCounters, a_session_that_cannot_count_leaves_its_reason_in_each_result) {
  const auto session = std::make_shared<FakeSession>();
  session->unavailable = "no profiling permission (test)";
  auto kernels = run_harness(session);
  EXPECT_EQ(session->counts.size(), 2u);
  // The session said it once when it was opened; the harness repeats nothing.
  EXPECT_EQ(lines_containing("counters unavailable"), 0) << stderr_;
  for (const char* name : {"counters_test_a_fill", "counters_test_c_ceiling"}) {
    const rl::roofline::KernelResult& k = kernels.at(name);
    EXPECT_EQ(k.status, rl::roofline::Status::ok) << name;
    ASSERT_TRUE(k.counters.has_value()) << name;
    EXPECT_EQ(k.counters->unavailable, "no profiling permission (test)");
    EXPECT_TRUE(k.counters->values.empty());
  }
}

TEST_F(HarnessCounters, a_count_that_throws_keeps_the_timed_result_and_says_why) {
  const auto session = std::make_shared<FakeSession>();
  session->throws = true;
  auto kernels = run_harness(session);
  const rl::roofline::KernelResult& k = kernels.at("counters_test_a_fill");
  EXPECT_EQ(k.status, rl::roofline::Status::ok);
  EXPECT_TRUE(k.time_s.has_value());
  ASSERT_TRUE(k.counters.has_value());
  EXPECT_EQ(k.counters->source, rl::roofline::CounterSource::emulator);
  EXPECT_EQ(k.counters->unavailable, "the counted launch failed: replay refused");
  EXPECT_EQ(lines_containing("counters unavailable for counters_test_a_fill/n=32: the counted "
                             "launch failed: replay refused\n"),
            1)
      << stderr_;
}

// The emulator's hooks called from the host stand in for a kernel's
// instructions: the session's arithmetic, not the emulator's, is under test.
TEST(EmulatorCounterSession, counts_only_the_launch_it_is_given_under_role_keys) {
  rl::roofline::Context context;
  context.backend = rl::roofline::Backend::emulator;
  const auto session = rl::bench::open_counter_session(context);
  rl::emu::reset_counts();
  rl::emu::count_global_load(1000);  // before the count: not the launch's
  const rl::roofline::KernelCounters counters = session->count(
      [] {
        rl::emu::count_tensor_ops("tensor_bf16", 4096);
        rl::emu::count_tensor_ops("tensor_bf16", 4096);
        rl::emu::count_global_load(256);
        rl::emu::count_global_store(64);
      },
      nullptr);
  EXPECT_EQ(counters.source, rl::roofline::CounterSource::emulator);
  EXPECT_EQ(counters.passes, 1);
  EXPECT_TRUE(counters.chip.empty());
  EXPECT_TRUE(counters.unavailable.empty());
  EXPECT_EQ(counters.values, (std::map<std::string, double>{{"tensor_bf16", 8192},
                                                            {"l2_load_bytes", 256},
                                                            {"l2_store_bytes", 64},
                                                            {"l2_bytes", 320}}));
  // Off after the count: the next instance's timed launches add nothing.
  rl::emu::count_global_load(16);
  EXPECT_EQ(rl::emu::read_counts().global_load_bytes, 256);
}

TEST(EmulatorCounterSession, a_launch_that_throws_leaves_counting_off) {
  const auto session = rl::bench::open_counter_session(rl::roofline::Context{});
  EXPECT_THROW(session->count([] { throw std::runtime_error("launch failed"); }, nullptr),
               std::runtime_error);
  rl::emu::count_global_store(16);
  EXPECT_EQ(rl::emu::read_counts().global_store_bytes, 0);
}

}  // namespace
