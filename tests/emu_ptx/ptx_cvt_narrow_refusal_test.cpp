// At the emulator's default compute capability 8.9 (an Ada, RL_EMU_CC unset)
// the fp8 cvt wrappers work and the f6, f4 and ue8m0 ones stop the process
// with one line naming the instruction, as the GPU would trap.
#include <gtest/gtest.h>

#include "rl/cuda.hpp"
#include "rl/ptx_cvt_narrow.hpp"

namespace {

TEST(PtxCvtNarrowOnAda, fp8_conversions_exist_from_sm_89) {
  ASSERT_EQ(rl::emu::compute_capability(), 89) << "this test runs without RL_EMU_CC";
  EXPECT_EQ(rl::ptx::cvt_rn_e4m3x2_f32(1.0f, -2.0f), 0x38C0U);
  EXPECT_EQ(rl::ptx::cvt_rn_e5m2x2_f32(1.0f, -2.0f), 0x3CC0U);
}

TEST(PtxCvtNarrowOnAda, blackwell_only_forms_stop_the_process_with_their_name) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)rl::ptx::cvt_rn_e2m1x2_f32(1.0f, 2.0f),
               "cvt.rn.satfinite.e2m1x2.f32 exists on sm_100a/sm_103a/sm_120a/sm_121a only and "
               "the emulated device is compute capability 89");
  EXPECT_DEATH((void)rl::ptx::cvt_rn_e2m3x2_f32(1.0f, 2.0f), "cvt.rn.satfinite.e2m3x2.f32");
  EXPECT_DEATH((void)rl::ptx::cvt_rn_e3m2x2_f32(1.0f, 2.0f), "cvt.rn.satfinite.e3m2x2.f32");
  EXPECT_DEATH((void)rl::ptx::cvt_rz_ue8m0x2_f32(1.0f, 2.0f), "cvt.rz.satfinite.ue8m0x2.f32");
  EXPECT_DEATH((void)rl::ptx::cvt_rp_ue8m0x2_f32(1.0f, 2.0f), "cvt.rp.satfinite.ue8m0x2.f32");
}

}  // namespace
