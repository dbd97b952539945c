// The suite's sm_90a kernels under the emulator as a Hopper (this test runs
// with RL_EMU_CC=90, set by its CMakeLists): the wgmma roof loops and the
// GEMM ladder's wgmma rungs validate against their references, the GEMMs at
// odd shapes (K and N not multiples of 8 too) under two schedules with
// bit-identical outputs and over 64 k-tiles, the exact check fails a skipped
// k-tile and a stage read early, setmaxnreg runs, and the records are no longer gpu_only for the
// emulator.
#include "emu_kernel_test.hpp"
#include "gemm/gemm_workload.hpp"
#include "gemm_pipeline_fault_check.hpp"
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace {

// The persistent and TMA-store rungs run here in bf16 (their fp16 twins on a
// GPU, in hopper_gpu_test); hopper_persistent_test.cpp walks several tiles
// per CTA with both.
const char* const kGemms[] = {
    "gemm_wgmma_tma_bf16",     "gemm_wgmma_tma_fp16",        "gemm_wgmma_128x256_bf16",
    "gemm_wgmma_128x256_fp16", "gemm_wgmma_inflight_bf16",   "gemm_wgmma_inflight_fp16",
    "gemm_wgmma_inflight_fp8", "gemm_wgmma_persistent_bf16", "gemm_wgmma_tma_store_bf16",
    "gemm_wgmma_cluster_bf16", "gemm_wgmma_cluster_fp16"};

bool is_fp8(const std::string& name) {
  return name.ends_with("_fp8");
}

// Under a sanitizer the fp16 twin of a bf16 rung is left to the default
// build: it is the same template with another wgmma type, so the same
// addresses, barriers and orderings (what ASan and racecheck look at), at
// 7-11 s a test under racecheck.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RL_SKIP_FP16_TWIN_UNDER_SANITIZER(name)                                                  \
  do {                                                                                           \
    if (std::string(name).ends_with("_fp16"))                                                    \
      GTEST_SKIP() << "the bf16 twin runs the same code under the sanitizer; the default build " \
                      "runs this one";                                                           \
  } while (0)
#else
#define RL_SKIP_FP16_TWIN_UNDER_SANITIZER(name) \
  do {                                          \
  } while (0)
#endif

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
// consumers' "empty" barriers and every stage's parity flips (N = 264 is also
// one column block and a tail past the 128 x 256 tile).
const rl::gemm::Dims kShapes[] = {{1, 8, 8}, {129, 136, 72}, {70, 264, 328}};

// Each shape validates under two schedules with bit-identical outputs.  fp8's
// k-tiles are 128 wide, twice the 16-bit rungs': its K is doubled, so it gets
// the same k-tiles and tails (K = 656: 6 stages, the ring wraps).
template <std::size_t Shapes>
void expect_shapes_pass_under_two_schedules(const char* name,
                                            const rl::gemm::Dims (&shapes)[Shapes]) {
  for (rl::gemm::Dims d : shapes) {
    if (is_fp8(name)) d.K *= 2;
    SCOPED_TRACE("M=" + std::to_string(d.M) + " N=" + std::to_string(d.N) +
                 " K=" + std::to_string(d.K));
    auto workload = rl::test::make_inspectable_workload(name, rl::gemm::make_shape(d.M, d.N, d.K),
                                                        9000 + static_cast<std::uint64_t>(d.K));
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

class WgmmaGemm : public ::testing::TestWithParam<const char*> {};

TEST_P(WgmmaGemm, matches_the_float64_reference_at_odd_shapes_under_two_schedules) {
  RL_SKIP_FP16_TWIN_UNDER_SANITIZER(GetParam());
  expect_shapes_pass_under_two_schedules(GetParam(), kShapes);
}

// Every rung runs on padded rows (RecordSpec::ld_multiple = 8), so the shapes
// TMA cannot describe with lda = K, ldb = N run too: K and N not multiples
// of 8, down to 1 x 1 x 1.
const rl::gemm::Dims kUnalignedShapes[] = {{1, 1, 1}, {130, 263, 71}};

class PaddedWgmmaGemm : public ::testing::TestWithParam<const char*> {};

TEST_P(PaddedWgmmaGemm, runs_k_and_n_not_multiples_of_8_under_two_schedules) {
#if defined(__SANITIZE_THREAD__)
  // The padding is the host's (rows padded to ld_multiple); the kernel runs
  // the pipeline the odd shapes above run under racecheck (about 30 s of it).
  GTEST_SKIP() << "padded rows are host work; racecheck runs this pipeline at the odd shapes";
#endif
  RL_SKIP_FP16_TWIN_UNDER_SANITIZER(GetParam());
  expect_shapes_pass_under_two_schedules(GetParam(), kUnalignedShapes);
}

INSTANTIATE_TEST_SUITE_P(Hopper, PaddedWgmmaGemm, ::testing::ValuesIn(kGemms));

// 64 k-tiles and a tail (K = 4104, or 8200 for fp8's 128-wide k-tiles):
// every stage of the 4-stage ring is used 16 times, so its barriers'
// parities wrap over and over; a producer or consumer one phase off
// deadlocks (reported) or reads a stale tile.  M and N stay past one tile in
// each direction but small, and one schedule is enough (the odd shapes above
// compare two): about 3 s a record in the default build (fp8, twice the K:
// 7.5 s), but 10-13 s under ASan and 125-145 s under racecheck, so the
// sanitizer builds leave it out: it runs no code the odd shapes do not (at
// K = 328, 656 for fp8, the producer already waits on "empty" and two stages
// flip their parity), only more of it.
TEST_P(WgmmaGemm, stays_in_phase_over_64_k_tiles) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "64 k-tiles run no code the odd shapes do not, at 10-145 s a record under a "
                  "sanitizer; the default build runs them";
#endif
  // fp8: one column tile (N = 136), half the work of its twice-as-long K.
  const bool fp8 = is_fp8(GetParam());
  const std::int64_t k = fp8 ? 64 * 128 + 8 : 64 * 64 + 8;
  auto workload = rl::test::make_inspectable_workload(
      GetParam(), rl::gemm::make_shape(129, fp8 ? 136 : 264, k), 64);
  ASSERT_NE(workload, nullptr);
  const rl::Validation v = workload->validate(nullptr);
  EXPECT_TRUE(v.passed) << v.detail;
}

// The check can fail: the same launch one 8-wide K slice short (the last
// k16 step of the last stage never issued, as a miscounted loop would) misses
// a term of every output, far beyond the bf16/fp16 bound (and fp8's).
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
  else if (is_fp8(GetParam()))
    shorten(dynamic_cast<rl::gemm::GemmWorkload<__nv_fp8_e4m3>*>(workload.get()));
  else
    shorten(dynamic_cast<rl::gemm::GemmWorkload<__half>*>(workload.get()));
  EXPECT_FALSE(workload->validate(nullptr).passed);
}

INSTANTIATE_TEST_SUITE_P(Hopper, WgmmaGemm, ::testing::ValuesIn(kGemms));

// The exact check fails the two pipeline bugs of gemm/gemm_pipeline_fault.hpp
// built into the first wgmma rung (the middle k-tile never multiplied; its
// math reading the next stage before the wait that covers it) at 64 k-tiles,
// and passes the same build without a fault.
TEST(WgmmaPipelineFault, the_exact_check_fails_a_skipped_k_tile_and_a_stage_read_early) {
  RL_SKIP_UNDER_RACECHECK();  // the early read is a race by construction
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "64 k-tiles take 10-13 s a run under ASan; the default build runs them";
#endif
  // 64 k-tiles of 64; rows padded to TMA's pitch, as the record runs them.
  rl::test::expect_only_the_faulty_builds_fail<__nv_bfloat16>(rl::gemm::faults::wgmma_tma_bf16,
                                                              rl::gemm::Dims{70, 72, 4096}, 5, 8);
}

// setmaxnreg exists on the emulated Hopper: a warpgroup that gives registers
// back and two that take them run on (the emulator checks only that every lane
// of each warp executes it; there is no register file to resize).
__global__ void reallocate_registers(int* out) {
  if (threadIdx.x < 128)
    rl::ptx::setmaxnreg_dec<40>();
  else
    rl::ptx::setmaxnreg_inc<232>();
  out[threadIdx.x] = static_cast<int>(threadIdx.x);
}

TEST(HopperOnTheEmulator, setmaxnreg_runs_in_every_warp_of_a_warpgroup) {
  int* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), 384 * sizeof(int)), cudaSuccess);
  rl::launch(reallocate_registers, dim3(1), dim3(384), 0, nullptr, out);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<int> got(384);
  ASSERT_EQ(cudaMemcpy(got.data(), out, got.size() * sizeof(int), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (int i = 0; i < 384; ++i) EXPECT_EQ(got[i], i);
  cudaFree(out);
}

// .sync.aligned: a warp with a lane that has exited stops the process with
// the instruction's one line, as mma.sync does.
__global__ void setmaxnreg_without_lane_31() {
  if (threadIdx.x == 31) return;
  rl::ptx::setmaxnreg_inc<232>();
}

TEST(HopperOnTheEmulator, setmaxnreg_needs_every_lane_of_the_warp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        rl::launch(setmaxnreg_without_lane_31, dim3(1), dim3(32), 0, nullptr);
        (void)cudaDeviceSynchronize();
      },
      "setmaxnreg.inc executed by an incomplete warp \\(lanes present: 0x7fffffff\\)");
}

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
