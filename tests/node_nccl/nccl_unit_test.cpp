// Host-only checks of the NCCL collective records (kernels/node/nccl_*; no
// device, no NCCL run): nccl-tests' bus factors, the size ladder,
// the in-place layouts, the exact expected outputs against a host simulation
// of each collective (and a wrong simulation that the exact check rejects),
// the records as registered, and the one-line reason when NCCL is not found.
#include <gtest/gtest.h>

#include "node/nccl_library.hpp"
#include "node/nccl_plan.hpp"
#include "rl/registry.hpp"
#include "rl/scoped_device.hpp"
#include "rl/validate.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using rl::nccl::Collective;

constexpr Collective kAll[] = {Collective::all_reduce, Collective::all_gather,
                               Collective::reduce_scatter, Collective::alltoall,
                               Collective::broadcast};

std::string record_name(Collective op) {
  return "node_nccl_" + std::string(rl::nccl::collective_name(op));
}

TEST(NcclPlan, bus_factors_are_nccl_tests_for_2_4_and_8_ranks) {
  const struct {
    int ranks;
    double all_reduce, halves, broadcast;
  } expected[] = {{2, 1.0, 0.5, 1.0}, {4, 1.5, 0.75, 1.0}, {8, 1.75, 0.875, 1.0}};
  for (const auto& e : expected) {
    EXPECT_DOUBLE_EQ(rl::nccl::bus_factor(Collective::all_reduce, e.ranks), e.all_reduce);
    EXPECT_DOUBLE_EQ(rl::nccl::bus_factor(Collective::all_gather, e.ranks), e.halves);
    EXPECT_DOUBLE_EQ(rl::nccl::bus_factor(Collective::reduce_scatter, e.ranks), e.halves);
    EXPECT_DOUBLE_EQ(rl::nccl::bus_factor(Collective::alltoall, e.ranks), e.halves);
    EXPECT_DOUBLE_EQ(rl::nccl::bus_factor(Collective::broadcast, e.ranks), e.broadcast);
  }
}

TEST(NcclPlan, size_ladder_doubles_from_8_bytes_to_the_maximum) {
  const std::vector<std::int64_t> small = rl::nccl::size_ladder(rl::nccl::kSmallMaxBytes);
  ASSERT_EQ(small.size(), 18u);  // 2^3 .. 2^20
  EXPECT_EQ(small.front(), 8);
  EXPECT_EQ(small.back(), std::int64_t{1} << 20);
  for (std::size_t i = 1; i < small.size(); ++i) EXPECT_EQ(small[i], 2 * small[i - 1]);
  EXPECT_EQ(rl::nccl::size_ladder(rl::nccl::kLargeMaxBytes).size(), 28u);
  EXPECT_EQ(rl::nccl::size_ladder(100).back(), 64);  // a maximum off the ladder is not reached
}

TEST(NcclPlan, layouts_are_nccl_tests_in_place_slots) {
  // 4 ranks, 64 B: 16 floats per rank, chunks of 4; rank 2's slot starts at 8.
  const rl::nccl::RankLayout gather = rl::nccl::rank_layout(Collective::all_gather, 64, 4, 2);
  EXPECT_EQ(gather.count, 16u);
  EXPECT_EQ(gather.input_elements, 4u);
  EXPECT_EQ(gather.output_elements, 16u);
  EXPECT_EQ(gather.in_offset, 8u);
  EXPECT_EQ(gather.out_offset, 0u);
  const rl::nccl::RankLayout scatter = rl::nccl::rank_layout(Collective::reduce_scatter, 64, 4, 2);
  EXPECT_EQ(scatter.input_elements, 16u);
  EXPECT_EQ(scatter.output_elements, 4u);
  EXPECT_EQ(scatter.in_offset, 0u);
  EXPECT_EQ(scatter.out_offset, 8u);
  EXPECT_EQ(rl::nccl::rank_buffer_bytes(Collective::all_gather, 64, false, 4), 80u);
  EXPECT_EQ(rl::nccl::rank_buffer_bytes(Collective::all_gather, 64, true, 4), 64u);
  EXPECT_EQ(rl::nccl::rank_buffer_bytes(Collective::alltoall, 64, false, 4), 128u);
}

TEST(NcclPlan, shape_refusals_name_the_reason) {
  using rl::nccl::shape_refusal;
  EXPECT_EQ(shape_refusal(Collective::all_reduce, 6, false, 2).value_or(""),
            "bytes=6 is not a whole number of float32 elements");
  EXPECT_EQ(shape_refusal(Collective::all_gather, 8, false, 8).value_or(""),
            "bytes=8 does not split into 8 equal float32 chunks, one per rank");
  EXPECT_FALSE(shape_refusal(Collective::all_reduce, 8, true, 8));  // not chunked
  EXPECT_FALSE(shape_refusal(Collective::all_gather, 32, true, 8));
  EXPECT_NE(shape_refusal(Collective::alltoall, 32, true, 2).value_or("").find("in-place"),
            std::string::npos);
}

TEST(NcclPlan, inputs_are_integers_in_range_that_differ_between_ranks) {
  std::set<float> seen;
  int same = 0;
  for (std::size_t i = 0; i < 4096; ++i) {
    const float a = rl::nccl::input_value(42, 0, i);
    ASSERT_EQ(a, std::trunc(a));
    ASSERT_GE(a, -64.0f);
    ASSERT_LE(a, 63.0f);
    seen.insert(a);
    same += a == rl::nccl::input_value(42, 1, i) ? 1 : 0;
  }
  EXPECT_EQ(seen.size(), 128u);
  EXPECT_LT(same, 4096 / 64);  // 1/128 expected by chance
}

// Each collective as data movement between the ranks' input buffers, written
// from the senders' side: the expected outputs must agree element by element.
std::vector<std::vector<double>> simulate(Collective op, int n, std::size_t chunk,
                                          const std::vector<std::vector<float>>& in) {
  const std::size_t count = op == Collective::all_gather ? chunk * n : in[0].size();
  std::vector<std::vector<double>> out(
      n, std::vector<double>(op == Collective::reduce_scatter ? chunk : count, 0.0));
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d)
      for (std::size_t k = 0; k < (rl::nccl::is_chunked(op) ? chunk : count); ++k) switch (op) {
          case Collective::all_reduce:
            out[d][k] += in[s][k];
            break;
          case Collective::reduce_scatter:
            out[d][k] += in[s][d * chunk + k];
            break;
          case Collective::all_gather:
            out[d][s * chunk + k] = in[s][k];
            break;
          case Collective::alltoall:
            out[d][s * chunk + k] = in[s][d * chunk + k];
            break;
          case Collective::broadcast:
            if (s == 0) out[d][k] = in[0][k];
            break;
        }
  return out;
}

rl::Validation check_against_expected(Collective op, int n, std::int64_t bytes,
                                      const std::vector<std::vector<double>>& got) {
  rl::Validation all{.passed = true, .max_rel_err = 0, .max_abs_err = 0, .detail = {}};
  for (int r = 0; r < n && all.passed; ++r) {
    const rl::nccl::RankLayout l = rl::nccl::rank_layout(op, bytes, n, r);
    std::vector<double> ref(l.output_elements);
    for (std::size_t j = 0; j < ref.size(); ++j)
      ref[j] = rl::nccl::expected_output(op, 7, n, r, j, l);
    const std::vector<float> got_f(got[r].begin(), got[r].end());
    all = rl::compare_exactly(got_f, ref);
  }
  return all;
}

std::vector<std::vector<float>> inputs(Collective op, int n, std::int64_t bytes) {
  std::vector<std::vector<float>> in(n);
  for (int r = 0; r < n; ++r) {
    in[r].resize(rl::nccl::rank_layout(op, bytes, n, r).input_elements);
    for (std::size_t i = 0; i < in[r].size(); ++i) in[r][i] = rl::nccl::input_value(7, r, i);
  }
  return in;
}

TEST(NcclPlan, expected_outputs_match_a_host_simulation_of_each_collective) {
  const int n = 3;
  const std::int64_t bytes = 3 * 5 * 4;  // chunks of 5 floats
  for (const Collective op : kAll) {
    const auto out = simulate(op, n, 5, inputs(op, n, bytes));
    const rl::Validation v = check_against_expected(op, n, bytes, out);
    EXPECT_TRUE(v.passed) << record_name(op) << ": " << v.detail;
  }
}

TEST(NcclPlan, the_exact_check_rejects_a_chunk_from_the_wrong_rank) {
  const int n = 3;
  const std::int64_t bytes = 3 * 5 * 4;
  for (const Collective op : {Collective::all_gather, Collective::alltoall}) {
    auto out = simulate(op, n, 5, inputs(op, n, bytes));
    std::swap(out[1][0], out[1][5]);  // rank 1: slot 0 and slot 1 swapped at one element
    EXPECT_FALSE(check_against_expected(op, n, bytes, out).passed) << record_name(op);
  }
  // reduce_scatter summing rank 0's slot on every rank
  auto in = inputs(Collective::reduce_scatter, n, bytes);
  auto out = simulate(Collective::all_reduce, n, 5, in);
  for (auto& o : out) o.resize(5);
  EXPECT_FALSE(check_against_expected(Collective::reduce_scatter, n, bytes, out).passed);
}

const rl::KernelRecord& record(Collective op) {
  const rl::KernelRecord* r = rl::find_kernel(record_name(op));
  if (r == nullptr) throw std::logic_error(record_name(op) + " is not registered");
  return *r;
}

TEST(NcclRecords, are_registered_in_family_node_and_need_two_devices) {
  for (const Collective op : kAll) {
    const rl::KernelRecord& r = record(op);
    EXPECT_EQ(r.family, "node");
    EXPECT_FALSE(r.gpu_only);  // the emulator build runs them on its own NCCL
    EXPECT_EQ(r.min_devices, 2);
    EXPECT_EQ(r.library, "NCCL");
    EXPECT_EQ(r.source_file, "kernels/node/nccl_collectives.cpp");
  }
}

TEST(NcclRecords, shapes_are_the_ladder_in_and_out_of_place_and_alltoall_out_of_place) {
  for (const Collective op : kAll) {
    const rl::KernelRecord& r = record(op);
    const std::vector<rl::Shape> small = r.shapes(rl::SizePreset::small);
    const std::size_t per_size = op == Collective::alltoall ? 1 : 2;
    ASSERT_EQ(small.size(), 18 * per_size) << r.name;
    EXPECT_EQ(small.front().to_string(), "bytes=8,in_place=0");
    EXPECT_EQ(small.back().at("bytes"), rl::nccl::kSmallMaxBytes);
    EXPECT_EQ(r.shapes(rl::SizePreset::medium).back().at("bytes"), rl::nccl::kMediumMaxBytes);
    EXPECT_EQ(r.shapes(rl::SizePreset::large).back().at("bytes"), rl::nccl::kLargeMaxBytes);
    if (per_size == 2) {
      EXPECT_EQ(small[1].to_string(), "bytes=8,in_place=1");
    }
  }
}

TEST(NcclRecords, cost_is_the_bus_factor_times_bytes_for_the_devices_seen) {
  const int n = rl::visible_device_count();
  const rl::Shape shape{{{"bytes", 1 << 20}, {"in_place", 0}}};
  for (const Collective op : kAll) {
    const rl::roofline::Cost cost = record(op).cost(shape);
    EXPECT_EQ(cost.flops, 0.0);
    EXPECT_DOUBLE_EQ(cost.bytes_model, rl::nccl::bus_factor(op, n) * (1 << 20));
    EXPECT_DOUBLE_EQ(cost.bytes_min, cost.bytes_model);
    EXPECT_THROW(record(op).cost(rl::Shape{{{"bytes", 8}, {"in_place", 2}}}),
                 std::invalid_argument);
  }
}

TEST(NcclLibrary, a_missing_library_gives_one_line_reason) {
  const std::optional<std::string> why = rl::nccl::nccl_load_failure("/nonexistent/libnccl.so.2");
  ASSERT_TRUE(why);
  EXPECT_EQ(why->rfind("NCCL not found: ", 0), 0u) << *why;
  EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
#if defined(RL_HAVE_NCCL_H)
  EXPECT_NE(why->find("/nonexistent/libnccl.so.2"), std::string::npos) << *why;
#endif
}

// RL_NCCL_LIBRARY pointing nowhere: every record refuses every shape with the
// same one line, and building a workload throws it.  The only test of this
// process that loads the process's NCCL, so setting the variable here works
// whether ctest or a person runs the binary.
TEST(NcclLibrary, rl_nccl_library_pointing_nowhere_skips_every_record_with_the_reason) {
  ASSERT_EQ(setenv("RL_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1), 0);
  for (const Collective op : kAll) {
    const rl::KernelRecord& r = record(op);
    const rl::Shape shape = r.shapes(rl::SizePreset::small).front();
    const std::optional<std::string> why = r.refuse_shape(shape);
    ASSERT_TRUE(why) << r.name;
    EXPECT_EQ(why->rfind("NCCL not found: ", 0), 0u) << *why;
    EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
#if defined(RL_HAVE_NCCL_H)
    EXPECT_NE(why->find("RL_NCCL_LIBRARY=/nonexistent/libnccl.so.2"), std::string::npos) << *why;
#endif
    try {
      r.make_workload(shape, 1);
      ADD_FAILURE() << r.name << ": built a workload without NCCL";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), *why);
    }
  }
}

TEST(NcclLibrary, the_library_cmake_found_loads_with_every_function) {
#if defined(RL_TEST_NCCL_LIBRARY) && defined(RL_HAVE_NCCL_H)
  const std::optional<std::string> why = rl::nccl::nccl_load_failure(RL_TEST_NCCL_LIBRARY);
  EXPECT_FALSE(why) << *why;
#else
  GTEST_SKIP() << "CMake found no libnccl.so.2 or no nccl.h for this build";
#endif
}

}  // namespace
