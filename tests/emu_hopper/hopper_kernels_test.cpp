// The suite's sm_90a kernels under the emulator as a Hopper (this test runs
// with RL_EMU_CC=90, set by its CMakeLists): the wgmma roof loops and the
// GEMM ladder's wgmma + TMA rung validate against their references, the GEMM
// at odd shapes under two schedules with bit-identical outputs, and the
// records are no longer gpu_only for the emulator.
#include "emu_kernel_test.hpp"
#include "gemm/gemm_workload.hpp"
#include "rl/cuda.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

namespace {

const char* const kGemms[] = {"gemm_wgmma_tma_bf16", "gemm_wgmma_tma_fp16"};
const char* const kLoops[] = {"wgmma_loop_bf16_m64n256k16", "wgmma_loop_fp16_m64n256k16",
                              "wgmma_loop_tf32_m64n256k8", "wgmma_loop_fp8_e4m3_m64n256k32",
                              "wgmma_loop_int8_m64n256k32"};

TEST(HopperOnTheEmulator, the_device_reports_9_0_and_the_records_run_on_it) {
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(prop.major * 10 + prop.minor, 90) << "this test needs RL_EMU_CC=90";
  for (const char* name : kGemms) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_FALSE(record->gpu_only) << name;
  }
  for (const char* name : kLoops) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_FALSE(record->gpu_only) << name;
  }
}

// Shapes TMA accepts (K and N multiples of 8) with tails everywhere: one row;
// one past the 128 x 128 tile in M and N with K past one 64-wide stage; and
// K of 6 stages, more than the ring's 4, so the producer waits on the
// consumers' "empty" barriers and every stage's parity flips.
const rl::gemm::Dims kShapes[] = {{1, 8, 8}, {129, 136, 72}, {70, 264, 328}};

class WgmmaGemm : public ::testing::TestWithParam<const char*> {};

TEST_P(WgmmaGemm, matches_the_float64_reference_at_odd_shapes_under_two_schedules) {
  for (const rl::gemm::Dims& d : kShapes) {
    SCOPED_TRACE("M=" + std::to_string(d.M) + " N=" + std::to_string(d.N) +
                 " K=" + std::to_string(d.K));
    auto workload = rl::test::make_inspectable_workload(
        GetParam(), rl::gemm::make_shape(d.M, d.N, d.K), 9000 + static_cast<std::uint64_t>(d.K));
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// The check can fail: the same launch one 8-wide K slice short (the last
// k16 step of the last stage never issued, as a miscounted loop would) misses
// a term of every output, far beyond the bf16/fp16 bound.
TEST_P(WgmmaGemm, a_launch_short_of_k_fails_the_reference) {
  RL_SKIP_UNDER_RACECHECK();
  auto workload =
      rl::test::make_inspectable_workload(GetParam(), rl::gemm::make_shape(70, 264, 328), 7);
  ASSERT_NE(workload, nullptr);
  auto shorten = [&]<typename T>(rl::gemm::GemmWorkload<T>* w) {
    ASSERT_NE(w, nullptr);
    w->launch = [inner = w->launch](const rl::gemm::Args<T>& a, cudaStream_t stream) {
      rl::gemm::Args<T> changed = a;
      changed.K -= 8;
      inner(changed, stream);
    };
  };
  if (std::string(GetParam()).find("bf16") != std::string::npos)
    shorten(dynamic_cast<rl::gemm::GemmWorkload<__nv_bfloat16>*>(workload.get()));
  else
    shorten(dynamic_cast<rl::gemm::GemmWorkload<__half>*>(workload.get()));
  EXPECT_FALSE(workload->validate(nullptr).passed);
}

INSTANTIATE_TEST_SUITE_P(Hopper, WgmmaGemm, ::testing::ValuesIn(kGemms));

class WgmmaLoop : public ::testing::TestWithParam<const char*> {};

// Every accumulator must end at the loop's exact count (all-ones operands).
TEST_P(WgmmaLoop, every_accumulator_ends_at_the_exact_count) {
  const rl::KernelRecord* record = rl::find_kernel(GetParam());
  ASSERT_NE(record, nullptr);
  const rl::Shape shape{{{"blocks", 3}, {"threads", 128}, {"iters", 3}}};
  std::unique_ptr<rl::Workload> workload = record->make_workload(shape, 1);
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_TRUE(v.passed) << v.detail;
}

INSTANTIATE_TEST_SUITE_P(Hopper, WgmmaLoop, ::testing::ValuesIn(kLoops));

}  // namespace
