// Float arrays written and read through int4* (llm.c's Packed128) give the
// GPU's exact answer under the emulator, whose code is compiled with
// -fno-strict-aliasing; the same kernels built with -fstrict-aliasing give
// wrong answers, which shows what the flag protects and that these checks
// can fail.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "packed128_kernels.hpp"

namespace emu_traps {

Packed128Outputs run_packed128_kernels(const std::vector<float>& in) {
  return run_packed128_kernels_here(in);
}

Packed128Outputs packed128_reference(const std::vector<float>& in) {
  Packed128Outputs want{std::vector<float>(in.size() / 4), std::vector<float>(in.size())};
  for (std::size_t t = 0; t < in.size() / 4; ++t) {
    const float* x = &in[4 * t];
    want.sums[t] = ((2.0f * x[0] + 2.0f * x[1]) + 2.0f * x[2]) + 2.0f * x[3];
  }
  for (std::size_t i = 0; i < in.size(); ++i) want.clamped[i] = in[i] > 0.0f ? in[i] : 0.0f;
  return want;
}

namespace {

// Exact in float: quarters from -8 to 8, every fourth one negative at least.
std::vector<float> packed128_inputs() {
  std::vector<float> in(4 * 96);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(static_cast<int>(i * 37 % 64) - 32) * 0.25f;
  return in;
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(StrictAliasing, packed128_kernels_give_the_exact_answer_under_two_schedules) {
  const std::vector<float> in = packed128_inputs();
  const Packed128Outputs want = packed128_reference(in);
  const auto runs = rl::emu::run_under_schedules([&] { return run_packed128_kernels(in); });
  ASSERT_EQ(runs.size(), 2U);
  for (const Packed128Outputs& got : runs) {
    EXPECT_TRUE(bitwise_equal(got.sums, want.sums));
    EXPECT_TRUE(bitwise_equal(got.clamped, want.clamped));
  }
}

// The negative control: g++ exploits type-based aliasing in both kernels
// (GCC 12 at -O2 and the default preset's -O3; the sanitizer presets
// compile this file without instrumentation, CMakeLists.txt).  If a compiler
// stops doing so, this fails: the positive test above then no longer shows
// that the flag matters, and this comment needs revisiting.
TEST(StrictAliasing, the_same_kernels_built_with_strict_aliasing_give_wrong_answers) {
  const std::vector<float> in = packed128_inputs();
  const Packed128Outputs want = packed128_reference(in);
  const Packed128Outputs strict = run_packed128_kernels_strict(in);
  EXPECT_FALSE(bitwise_equal(strict.sums, want.sums))
      << "the float reads after store128 were not forwarded past it";
  EXPECT_FALSE(bitwise_equal(strict.clamped, want.clamped))
      << "the second load128 was not merged with the first";
}

}  // namespace
}  // namespace emu_traps
