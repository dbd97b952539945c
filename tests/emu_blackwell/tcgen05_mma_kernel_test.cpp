// tcgen05.mma inside emulated kernels (RL_EMU_CC=100): one thread issues
// through rl/ptx_sm100_mma.hpp, the MMA is performed at its tcgen05.commit,
// the commit's mbarrier releases the block, every warp reads its lane quarter
// of D with tcgen05.ld; the result equals the plain loop and is the same
// under two schedules.  Misuse stops the launch with one line naming the
// kernel, the block and the rule.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/launch.hpp"
#include "rl/emu/tcgen05.hpp"
#include "rl/ptx_sm100_mma.hpp"

namespace {

namespace t5 = rl::emu::tcgen05;
namespace ptx = rl::ptx;

constexpr unsigned kM = 128, kN = 64, kK = 16;

// A (M x K) and B (N x K) f16, K-major without swizzle, in dynamic shared
// memory: LBO 128 (the second 16-byte core matrix along K), SBO 256 (the
// next 8 rows).  idesc decides the kind and shape.
__global__ void mma_f16(const std::uint16_t* a, const std::uint16_t* b, std::uint32_t idesc,
                        float* out) {
  RL_DYNAMIC_SHARED(unsigned char, smem);
  __shared__ std::uint32_t tmem_base;
  __shared__ std::uint64_t bar;
  auto place = [&](const std::uint16_t* src, unsigned rows, unsigned offset) {
    for (unsigned i = threadIdx.x; i < rows * kK; i += blockDim.x) {
      const unsigned r = i / kK, k = i % kK, kb = 2 * k;
      std::memcpy(smem + offset + (r / 8) * 256 + (kb / 16) * 128 + (r % 8) * 16 + kb % 16, src + i,
                  2);
    }
  };
  place(a, kM, 0);
  place(b, kN, 8192);
  if (threadIdx.x < 32) t5::alloc(&tmem_base, 64);
  if (threadIdx.x == 0) rl::emu::hopper::mbarrier_init(&bar, 1);
  __syncthreads();
  const std::uint32_t d = tmem_base;
  if (threadIdx.x == 0) {
    const std::uint32_t base = rl::emu::hopper::shared_address(smem);
    const auto none = ptx::Tcgen05Swizzle::none;
    ptx::tcgen05_mma<ptx::Tcgen05Kind::f16>(
        d, ptx::tcgen05_smem_descriptor(base, 128, 256, none),
        ptx::tcgen05_smem_descriptor(base + 8192, 128, 256, none), idesc, false);
    t5::commit(&bar);
  }
  while (!rl::emu::hopper::mbarrier_try_wait_parity(&bar, 0)) {
  }
  // Warp w reads lanes 32 w .. 32 w + 31: lane t of the warp holds row 32 w + t.
  std::uint32_t regs[kN];
  const unsigned warp = threadIdx.x / 32;
  t5::ld(t5::Shape::s32x32b, kN, d + ((32 * warp) << 16), regs);
  t5::wait_ld();
  const unsigned row = threadIdx.x;
  for (unsigned n = 0; n < kN; ++n) out[row * kN + n] = std::bit_cast<float>(regs[n]);
  __syncthreads();
  if (threadIdx.x < 32) t5::dealloc(d, 64);
}

std::uint16_t f16_of_int(int v) {  // small integers are exact in f16
  if (v == 0) return 0;
  const float f = static_cast<float>(v);
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  return static_cast<std::uint16_t>(((bits >> 16) & 0x8000U) |
                                    ((((bits >> 23) & 0xFF) - 127 + 15) << 10) |
                                    ((bits >> 13) & 0x3FF));
}

TEST(Tcgen05MmaKernel, one_thread_issues_commit_performs_and_every_warp_reads_its_lanes) {
  std::mt19937 rng(11);
  std::vector<int> av(kM * kK), bv(kN * kK);
  std::vector<std::uint16_t> a(kM * kK), b(kN * kK);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = f16_of_int(av[i] = static_cast<int>(rng() % 9) - 4);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = f16_of_int(bv[i] = static_cast<int>(rng() % 9) - 4);
  std::uint16_t *da = nullptr, *db = nullptr;
  float* dout = nullptr;
  ASSERT_EQ(cudaMalloc(&da, a.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, b.size() * 2), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dout, kM * kN * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice), cudaSuccess);
  const std::uint32_t idesc = ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::f16, kM, kN);
  const auto outputs = rl::emu::run_under_schedules([&] {
    rl::launch(mma_f16, dim3(1), dim3(128), 16384, nullptr, da, db, idesc, dout);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> out(kM * kN);
    EXPECT_EQ(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  });
  ASSERT_EQ(outputs.size(), 2U);
  EXPECT_EQ(outputs[0], outputs[1]) << "D differs between schedules";
  for (unsigned m = 0; m < kM; ++m)
    for (unsigned n = 0; n < kN; ++n) {
      int sum = 0;
      for (unsigned k = 0; k < kK; ++k) sum += av[m * kK + k] * bv[n * kK + k];
      ASSERT_EQ(outputs[0][m * kN + n], static_cast<float>(sum)) << "row " << m << " col " << n;
    }
  // A descriptor field out of range: the launch fails naming kernel, block,
  // field and value.
  testing::internal::CaptureStderr();
  rl::launch(mma_f16, dim3(1), dim3(128), 16384, nullptr, da, db,
             (idesc & ~(31U << 24)) | (5U << 24), dout);
  EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("mma_f16"), std::string::npos) << err;
  EXPECT_NE(err.find("block (0,0,0)"), std::string::npos) << err;
  EXPECT_NE(err.find("instruction descriptor field M >> 4 (bits 24-28) = 5"), std::string::npos)
      << err;
  cudaGetLastError();
  cudaFree(da);
  cudaFree(db);
  cudaFree(dout);
}

}  // namespace
