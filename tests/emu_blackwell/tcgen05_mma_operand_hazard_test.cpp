// tcgen05.mma's shared-memory operands are in flight from its issue until
// the issuing thread's tcgen05.commit has performed it (PTX ISA 9.7.16.6,
// "Asynchronous Operations"): a write into them in between is reported
// (emu/docs/hopper.md, "Operands in flight"), the same write after the commit
// is clean.  One thread issues a 128 x 64 x 16 f16 MMA from shared memory
// (tcgen05_mma_kernel_test's layout) and copies 16 bytes over B's first row
// with cp.async.bulk, before or after its commit.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "rl/cuda.hpp"
#include "rl/emu/hopper.hpp"
#include "rl/emu/tcgen05.hpp"
#include "rl/ptx_sm100_mma.hpp"

namespace {

namespace t5 = rl::emu::tcgen05;
namespace h = rl::emu::hopper;
namespace ptx = rl::ptx;

constexpr unsigned kM = 128, kN = 64;
constexpr unsigned kBOffset = 8192;  // B after A's 128 rows of 16 f16

__global__ void copy_over_b(const std::uint16_t* source, std::uint32_t idesc, int after_commit) {
  RL_DYNAMIC_SHARED(unsigned char, smem);
  __shared__ std::uint32_t tmem_base;
  __shared__ std::uint64_t bars[2];
  for (unsigned i = threadIdx.x; i < 16384; i += blockDim.x) smem[i] = 0;
  if (threadIdx.x < 32) t5::alloc(&tmem_base, 64);
  if (threadIdx.x == 0) {
    h::mbarrier_init(&bars[0], 1);
    h::mbarrier_init(&bars[1], 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint32_t base = h::shared_address(smem);
    const auto none = ptx::Tcgen05Swizzle::none;
    ptx::tcgen05_mma<ptx::Tcgen05Kind::f16>(
        tmem_base, ptx::tcgen05_smem_descriptor(base, 128, 256, none),
        ptx::tcgen05_smem_descriptor(base + kBOffset, 128, 256, none), idesc, false);
    if (after_commit != 0) t5::commit(&bars[0]);
    h::mbarrier_expect_tx(&bars[1], 16);
    h::mbarrier_arrive(&bars[1]);
    h::bulk_load(smem + kBOffset, source, 16, &bars[1]);
    if (after_commit == 0) t5::commit(&bars[0]);
  }
  while (!h::mbarrier_try_wait_parity(&bars[0], 0)) {
  }
  while (!h::mbarrier_try_wait_parity(&bars[1], 0)) {
  }
  __syncthreads();
  if (threadIdx.x < 32) t5::dealloc(tmem_base, 64);
}

TEST(Tcgen05OperandsInFlight, a_copy_over_b_before_the_commit_is_reported_after_it_is_clean) {
  std::uint16_t* source = nullptr;
  ASSERT_EQ(cudaMalloc(&source, 16), cudaSuccess);
  ASSERT_EQ(cudaMemset(source, 0, 16), cudaSuccess);
  const std::uint32_t idesc = ptx::tcgen05_idesc_f16(ptx::Tcgen05F16Type::f16, kM, kN);
  rl::launch(copy_over_b, dim3(1), dim3(128), 16384, nullptr,
             static_cast<const std::uint16_t*>(source), idesc, 1);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "after the commit: clean";
  (void)cudaGetLastError();
  testing::internal::CaptureStderr();
  rl::launch(copy_over_b, dim3(1), dim3(128), 16384, nullptr,
             static_cast<const std::uint16_t*>(source), idesc, 0);
  EXPECT_NE(cudaDeviceSynchronize(), cudaSuccess) << "before the commit: reported";
  (void)cudaGetLastError();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("thread 0: cp.async.bulk.shared::cluster.global wrote shared bytes ["),
            std::string::npos)
      << err;
  EXPECT_NE(err.find(", read by a tcgen05.mma still in flight (issued, not yet performed by its "
                     "thread's tcgen05.commit) of its thread 0"),
            std::string::npos)
      << err;
  cudaFree(source);
}

}  // namespace
