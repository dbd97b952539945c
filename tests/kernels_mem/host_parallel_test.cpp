// The host side of the elementwise families on all cores: parallel_chunks
// covers every element once and rethrows a worker's exception; inputs,
// references and bounds of GELU, bias + GELU and LayerNorm are bit-identical
// under 1 and several threads; the parallel comparison gives the serial loop's
// Validation (worst errors, first failing element, its text).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gelu/bias_gelu.hpp"
#include "gelu/gelu_workload.hpp"
#include "layernorm/layernorm_workload.hpp"
#include "rl/host_parallel.hpp"
#include "rl/validate.hpp"

namespace {

// RL_HOST_THREADS for one scope (host_threads() reads it on every call).
class HostThreads {
 public:
  explicit HostThreads(const char* value) { setenv("RL_HOST_THREADS", value, 1); }
  HostThreads(const HostThreads&) = delete;
  HostThreads& operator=(const HostThreads&) = delete;
  ~HostThreads() { unsetenv("RL_HOST_THREADS"); }
};

// Runs make() serially and on 3 threads (more than this machine's cores is
// fine: the chunks decide the values, not the threads).
template <typename Make>
auto serial_and_parallel(Make make) {
  auto serial = [&] {
    const HostThreads one("1");
    return make();
  }();
  auto parallel = [&] {
    const HostThreads three("3");
    return make();
  }();
  return std::pair{std::move(serial), std::move(parallel)};
}

template <typename V>
bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(typename V::value_type)) == 0;
}

// The bounds a workload computes during its comparison, one per element.
template <typename HostData>
std::vector<double> bounds(const HostData& data) {
  std::vector<double> out(data.reference.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = data.bound(i);
  return out;
}

// Not a multiple of the draw chunk, so the last chunk is partial.
constexpr std::size_t kOddCount = 3 * rl::kDrawChunk + 5;

TEST(HostParallel, parallel_chunks_visits_every_element_once) {
  for (const char* threads : {"1", "4"}) {
    const HostThreads scope(threads);
    std::vector<std::atomic<int>> visits(1000);
    rl::parallel_chunks(visits.size(), 64, [&](std::size_t begin, std::size_t end) {
      EXPECT_EQ(begin % 64, 0u);
      EXPECT_LE(end - begin, 64u);
      for (std::size_t i = begin; i < end; ++i) ++visits[i];
    });
    for (std::size_t i = 0; i < visits.size(); ++i) ASSERT_EQ(visits[i], 1) << i;
    rl::parallel_chunks(0, 64, [](std::size_t, std::size_t) { FAIL() << "no chunk for n = 0"; });
  }
}

TEST(HostParallel, parallel_chunks_rethrows_the_lowest_chunks_exception_on_the_caller) {
  const HostThreads scope("4");
  try {
    rl::parallel_chunks(100, 1, [](std::size_t begin, std::size_t) {
      if (begin == 7 || begin == 90) throw std::runtime_error("chunk " + std::to_string(begin));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    // Chunk 90 may throw first, but every chunk below the lowest failure
    // runs, so chunk 7's exception is the one a serial loop would throw.
    EXPECT_STREQ(e.what(), "chunk 7");
  }
}

TEST(HostParallel, a_malformed_thread_count_is_one_clear_error) {
  for (const char* bad : {"0", "two", "-1", "4x", ""}) {
    const HostThreads scope(bad);
    try {
      (void)rl::host_threads();
      FAIL() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("RL_HOST_THREADS"), std::string::npos) << e.what();
    }
  }
}

TEST(HostParallel, each_draw_chunk_has_its_own_stream) {
  std::vector<double> x(kOddCount);
  rl::draw_in_chunks(x.size(), 42,
                     [&](rl::SeededRng& rng, std::size_t i) { x[i] = rng.uniform(0, 1); });
  for (std::size_t k = 1; k < 4; ++k) EXPECT_NE(x[k * rl::kDrawChunk], x[0]) << k;
  EXPECT_NE(rl::SeededRng::stream_seed(42, 0), rl::SeededRng::stream_seed(43, 0));
  EXPECT_NE(rl::SeededRng::stream_seed(42, 0), rl::SeededRng::stream_seed(42, 1));
}

template <typename T>
void expect_gelu_host_data_independent_of_threads() {
  const auto [serial, parallel] = serial_and_parallel([] {
    return rl::gelu::draw_host_data<T>(rl::gelu::Form::tanh, rl::gelu::kDefaultInputs, 7, kOddCount,
                                       rl::gelu::kTanhApproxMaxRelError);
  });
  EXPECT_TRUE(same_bits(serial.x, parallel.x));
  EXPECT_TRUE(same_bits(serial.reference, parallel.reference));
  EXPECT_TRUE(same_bits(bounds(serial), bounds(parallel)));
}

TEST(HostParallel, gelu_inputs_reference_and_bounds_do_not_depend_on_threads) {
  expect_gelu_host_data_independent_of_threads<float>();
  expect_gelu_host_data_independent_of_threads<__nv_bfloat16>();
}

TEST(HostParallel, bias_gelu_inputs_reference_and_bounds_do_not_depend_on_threads) {
  const auto [serial, parallel] = serial_and_parallel([] {
    return rl::gelu::draw_bias_gelu_host_data<__nv_bfloat16>(rl::gelu::kDefaultInputs, 7, 67, 3001,
                                                             /*unfused=*/true);
  });
  EXPECT_TRUE(same_bits(serial.x, parallel.x));
  EXPECT_TRUE(same_bits(serial.bias, parallel.bias));
  EXPECT_TRUE(same_bits(serial.bias_seen, parallel.bias_seen));
  EXPECT_TRUE(same_bits(serial.reference, parallel.reference));
  EXPECT_TRUE(same_bits(bounds(serial), bounds(parallel)));
}

TEST(HostParallel, layernorm_inputs_reference_and_bounds_do_not_depend_on_threads) {
  // 3001 wide: 21 rows per block of the reference, the last block partial.
  const auto [serial, parallel] = serial_and_parallel([] {
    return rl::layernorm::draw_host_data<__nv_bfloat16>(rl::InputSpec{1e3, 1.0}, 7, 67, 3001);
  });
  EXPECT_TRUE(same_bits(serial.x, parallel.x));
  EXPECT_TRUE(same_bits(serial.weight, parallel.weight));
  EXPECT_TRUE(same_bits(serial.bias, parallel.bias));
  for (auto member : {&rl::layernorm::Reference::y, &rl::layernorm::Reference::mean,
                      &rl::layernorm::Reference::rstd, &rl::layernorm::Reference::condition})
    EXPECT_TRUE(same_bits(serial.ref.*member, parallel.ref.*member));
  for (auto member :
       {&rl::layernorm::Bounds::y, &rl::layernorm::Bounds::mean, &rl::layernorm::Bounds::rstd})
    EXPECT_TRUE(same_bits(serial.bounds.*member, parallel.bounds.*member));
}

void expect_same_validation(const rl::Validation& a, const rl::Validation& b) {
  EXPECT_EQ(a.passed, b.passed);
  EXPECT_EQ(std::memcmp(&a.max_rel_err, &b.max_rel_err, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&a.max_abs_err, &b.max_abs_err, sizeof(double)), 0);
  EXPECT_EQ(a.detail, b.detail);
}

// An output off its reference in several chunks: the worst error in the last
// chunk, failures in chunks 1 and 2 and a NaN in chunk 3.  The first failure
// (chunk 1) must be the one reported, under any thread count.
struct Mismatch {
  std::vector<float> got;
  std::vector<double> ref, bound;
};

Mismatch mismatch() {
  Mismatch m{std::vector<float>(kOddCount), std::vector<double>(kOddCount),
             std::vector<double>(kOddCount, 1e-3)};
  for (std::size_t i = 0; i < kOddCount; ++i) {
    m.ref[i] = std::sin(static_cast<double>(i));
    m.got[i] = static_cast<float>(m.ref[i]);
  }
  const std::size_t chunk = rl::kLoopChunk;
  m.got[chunk + 11] += 0.01f;
  m.got[2 * chunk + 3] += 0.02f;
  m.got[3 * chunk] = NAN;
  m.got[kOddCount - 1] += 1e-4f;  // within the bound: counts for the maxima only
  return m;
}

TEST(HostParallel, parallel_comparison_reports_the_serial_first_failure_and_maxima) {
  const Mismatch m = mismatch();
  const auto [serial, parallel] =
      serial_and_parallel([&] { return rl::compare_with_bounds(m.got, m.ref, m.bound); });
  expect_same_validation(serial, parallel);
  EXPECT_FALSE(parallel.passed);
  EXPECT_EQ(parallel.detail.rfind("element " + std::to_string(rl::kLoopChunk + 11) + ":", 0), 0u)
      << parallel.detail;
  EXPECT_TRUE(std::isinf(parallel.max_rel_err));

  // Without the NaN the maxima are finite and still the serial ones.
  Mismatch finite = mismatch();
  finite.got[3 * rl::kLoopChunk] = static_cast<float>(finite.ref[3 * rl::kLoopChunk]);
  const auto [serial_tol, parallel_tol] = serial_and_parallel(
      [&] { return rl::compare_to_reference(finite.got, finite.ref, rl::tolerance_for("bf16")); });
  expect_same_validation(serial_tol, parallel_tol);
  EXPECT_GT(parallel_tol.max_abs_err, 0.019);
  EXPECT_LT(parallel_tol.max_abs_err, 0.021);
}

TEST(HostParallel, a_comparison_that_arrives_failed_keeps_its_first_failure) {
  const Mismatch m = mismatch();
  rl::Validation earlier;
  earlier.passed = false;
  earlier.detail = "an earlier output";
  const auto [serial, parallel] =
      serial_and_parallel([&] { return rl::compare_with_bounds(m.got, m.ref, m.bound, earlier); });
  expect_same_validation(serial, parallel);
  EXPECT_EQ(parallel.detail, "an earlier output");
}

}  // namespace
