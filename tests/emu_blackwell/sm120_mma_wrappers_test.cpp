// The rl::ptx sm_120a wrappers (rl/ptx_sm120.hpp) inside emulated kernels:
// with RL_EMU_CC=120 (set for this executable by its CMakeLists) each warp's
// D is the one the per-warp semantics give; on any other emulated device the
// instruction is refused with one line naming it, the device and the thread.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/ptx_sm120.hpp"
#include "sm120_mma_test_support.hpp"

namespace sm120_wrappers {

using rl::ptx::F8f6f4;
using rl::ptx::ScaleOperand;

// One lane's registers from the warp's register files (lane-major), and back.
struct Lane {
  std::uint32_t a[4];
  std::uint32_t b[2];
  float c[4];
  float d[4];
  __device__ Lane(const std::uint32_t* ra, const std::uint32_t* rb, const float* rc) {
    const unsigned lane = threadIdx.x % 32U;
    for (int r = 0; r < 4; ++r) a[r] = ra[lane * 4 + r], c[r] = rc[lane * 4 + r], d[r] = 0;
    b[0] = rb[lane * 2], b[1] = rb[lane * 2 + 1];
  }
  __device__ void store(float* out) const {
    for (int r = 0; r < 4; ++r) out[(threadIdx.x % 32U) * 4 + r] = d[r];
  }
};

__global__ void f8f6f4_e2m1_e4m3(const std::uint32_t* ra, const std::uint32_t* rb, const float* rc,
                                 float* out) {
  Lane l(ra, rb, rc);
  rl::ptx::mma_m16n8k32_f8f6f4_f32<F8f6f4::e2m1, F8f6f4::e4m3>(l.d, l.a, l.b, l.c);
  l.store(out);
}

// Selectors {1, 1} for A and {2, 3} for B.
__global__ void mxf8f6f4_e3m2_e2m3(const std::uint32_t* ra, const std::uint32_t* rb,
                                   const float* rc, const std::uint32_t* sa,
                                   const std::uint32_t* sb, float* out) {
  Lane l(ra, rb, rc);
  const unsigned lane = threadIdx.x % 32U;
  rl::ptx::mma_m16n8k32_mxf8f6f4_f32<F8f6f4::e3m2, F8f6f4::e2m3>(
      l.d, l.a, l.b, l.c, ScaleOperand{sa[lane], 1, 1}, ScaleOperand{sb[lane], 2, 3});
  l.store(out);
}

__global__ void mxf4nvf4_ue4m3(const std::uint32_t* ra, const std::uint32_t* rb, const float* rc,
                               const std::uint32_t* sa, const std::uint32_t* sb, float* out) {
  Lane l(ra, rb, rc);
  const unsigned lane = threadIdx.x % 32U;
  rl::ptx::mma_m16n8k64_mxf4nvf4_ue4m3_f32(l.d, l.a, l.b, l.c, ScaleOperand{sa[lane], 0, 0},
                                           ScaleOperand{sb[lane], 0, 0});
  l.store(out);
}

// Lane 5 asks for other bytes than its warp: undefined in PTX.
__global__ void mxf4_disagreeing_selectors(const std::uint32_t* ra, const std::uint32_t* rb,
                                           const float* rc, float* out) {
  Lane l(ra, rb, rc);
  const auto byte_id = static_cast<std::uint16_t>(threadIdx.x == 5 ? 2 : 0);
  rl::ptx::mma_m16n8k64_mxf4_f32(l.d, l.a, l.b, l.c, ScaleOperand{0x7F7F7F7FU, byte_id, 0},
                                 ScaleOperand{0x7F7F7F7FU, 0, 0});
  l.store(out);
}

}  // namespace sm120_wrappers

namespace {

using namespace sm120_test;

// The warp's registers, flattened lane-major as the kernels read them.
struct Flat {
  std::vector<std::uint32_t> a = std::vector<std::uint32_t>(128);
  std::vector<std::uint32_t> b = std::vector<std::uint32_t>(64);
  std::vector<float> c = std::vector<float>(128);
  std::vector<std::uint32_t> sa = std::vector<std::uint32_t>(32);
  std::vector<std::uint32_t> sb = std::vector<std::uint32_t>(32);
  std::vector<float> d = std::vector<float>(128, -1.0F);
};

Flat flatten(const Mma& op, const Operands& in) {
  MmaA ra;
  MmaB rb;
  MmaCF32 rc;
  pack(op, in, ra, rb, rc);
  Flat f;
  for (unsigned lane = 0; lane < 32U; ++lane) {
    for (unsigned r = 0; r < 4U; ++r)
      f.a[lane * 4 + r] = ra[lane][r], f.c[lane * 4 + r] = rc[lane][r];
    for (unsigned r = 0; r < 2U; ++r) f.b[lane * 2 + r] = rb[lane][r];
  }
  return f;
}

void add_scales(const Mma& op, const ScalePowers& powers, ScaleSelector sel_a, ScaleSelector sel_b,
                Flat& f) {
  ScaleRegs sa;
  ScaleRegs sb;
  pack_scales(op, powers, sel_a, sel_b, op.scale == Format::ue8m0 ? 0xFFU : 0x7FU, sa, sb);
  for (unsigned lane = 0; lane < 32U; ++lane) f.sa[lane] = sa[lane], f.sb[lane] = sb[lane];
}

void expect_d(const Mma& op, const Operands& in, const Flat& f, const ScalePowers* powers) {
  MmaCF32 d;
  for (unsigned lane = 0; lane < 32U; ++lane)
    for (unsigned r = 0; r < 4U; ++r) d[lane][r] = f.d[lane * 4 + r];
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      EXPECT_EQ(d_at(d, m, n), expected(op, in, m, n, powers)) << "D(" << m << "," << n << ")";
}

ScalePowers powers_for_test() {
  ScalePowers p;
  for (int j = 0; j < 4; ++j) {
    // rows g and g + 8 (the two lanes of a selected pair) always differ
    for (int m = 0; m < 16; ++m) p.a[m][j] = ((5 * m) / 8 + j) % 4 - 1;
    for (int n = 0; n < 8; ++n) p.b[n][j] = (n + 3 * j) % 3 - 1;
  }
  return p;
}

TEST(Sm120MmaWrappers, the_emulated_device_is_an_sm_120a) {
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  ASSERT_EQ(prop.major * 10 + prop.minor, 120) << "this test needs RL_EMU_CC=120";
  EXPECT_TRUE(rl::ptx::emulator_runs_sm120a());
}

TEST(Sm120MmaWrappers, kind_f8f6f4_with_mixed_types_in_a_kernel) {
  const Mma op{Kind::f8f6f4, Format::e2m1, Format::e4m3, Format::ue8m0, 0};
  const Operands in = patterned(32, 6);
  Flat f = flatten(op, in);
  rl::launch(sm120_wrappers::f8f6f4_e2m1_e4m3, dim3(1), dim3(32), 0, nullptr, f.a.data(),
             f.b.data(), f.c.data(), f.d.data());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_d(op, in, f, nullptr);
}

TEST(Sm120MmaWrappers, kind_mxf8f6f4_reads_the_selected_bytes_and_threads) {
  const Mma op{Kind::mxf8f6f4, Format::e3m2, Format::e2m3, Format::ue8m0, 1};
  const Operands in = patterned(32, 7);
  const ScalePowers powers = powers_for_test();
  Flat f = flatten(op, in);
  add_scales(op, powers, {1, 1}, {2, 3}, f);
  rl::launch(sm120_wrappers::mxf8f6f4_e3m2_e2m3, dim3(1), dim3(32), 0, nullptr, f.a.data(),
             f.b.data(), f.c.data(), f.sa.data(), f.sb.data(), f.d.data());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_d(op, in, f, &powers);
}

TEST(Sm120MmaWrappers, kind_mxf4nvf4_with_ue4m3_scales_per_16_in_a_kernel) {
  const Mma op{Kind::mxf4nvf4, Format::e2m1, Format::e2m1, Format::ue4m3, 4};
  const Operands in = patterned(64, 8);
  const ScalePowers powers = powers_for_test();
  Flat f = flatten(op, in);
  add_scales(op, powers, {}, {}, f);
  rl::launch(sm120_wrappers::mxf4nvf4_ue4m3, dim3(1), dim3(32), 0, nullptr, f.a.data(), f.b.data(),
             f.c.data(), f.sa.data(), f.sb.data(), f.d.data());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_d(op, in, f, &powers);
}

// The emulated device decides: RL_EMU_CC is read once per process, so each
// refusal runs in a child with its own value.
TEST(Sm120MmaWrappersDeathTest, refused_on_a_datacenter_blackwell_and_on_ada) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Mma op{Kind::f8f6f4, Format::e2m1, Format::e4m3, Format::ue8m0, 0};
  Flat f = flatten(op, patterned(32));
  EXPECT_DEATH(
      {
        setenv("RL_EMU_CC", "100", 1);
        rl::launch(sm120_wrappers::f8f6f4_e2m1_e4m3, dim3(1), dim3(32), 0, nullptr, f.a.data(),
                   f.b.data(), f.c.data(), f.d.data());
        cudaDeviceSynchronize();
      },
      "rl::emu: kernel .*f8f6f4_e2m1_e4m3.*, block \\(0,0,0\\), thread \\([0-9]+,0,0\\): "
      "mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e4m3.f32: sm_120a / sm_121a "
      "only, and the emulated device is compute capability 10.0 \\(RL_EMU_CC=100\\)");
  EXPECT_DEATH(
      {
        setenv("RL_EMU_CC", "89", 1);
        rl::launch(sm120_wrappers::mxf4nvf4_ue4m3, dim3(1), dim3(32), 0, nullptr, f.a.data(),
                   f.b.data(), f.c.data(), f.sa.data(), f.sb.data(), f.d.data());
        cudaDeviceSynchronize();
      },
      "kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3: sm_120a / sm_121a only, "
      "and the emulated device is compute capability 8.9 \\(RL_EMU_CC=89\\)");
}

TEST(Sm120MmaWrappersDeathTest, lanes_that_disagree_on_the_selectors_stop_the_process) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Mma op{Kind::mxf4, Format::e2m1, Format::e2m1, Format::ue8m0, 2};
  Flat f = flatten(op, patterned(64));
  EXPECT_DEATH(
      {
        rl::launch(sm120_wrappers::mxf4_disagreeing_selectors, dim3(1), dim3(32), 0, nullptr,
                   f.a.data(), f.b.data(), f.c.data(), f.d.data());
        cudaDeviceSynchronize();
      },
      "kind::mxf4.*lane 5 passes other \\{byte-id, thread-id\\} selectors than lane 0");
}

}  // namespace
