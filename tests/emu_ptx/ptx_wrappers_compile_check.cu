// Compiles every rl::ptx wrapper for each configured GPU architecture, so a
// malformed inline-PTX string or operand constraint fails the build (ptxas
// checks them).  Nothing runs this kernel.
#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

__global__ void rl_ptx_wrappers_compile_check(float* out, const float* in, int which) {
  __shared__ __align__(16) unsigned short tile[16 * 16];
  __shared__ __align__(16) float stage[64];
  const unsigned lane = threadIdx.x % 32;
  rl::ptx::cp_async_16(&stage[4 * lane % 64], in + 4 * lane);
  rl::ptx::cp_async_8(&stage[2 * lane % 64], in + 2 * lane);
  rl::ptx::cp_async_4(&stage[lane], in + lane);
  rl::ptx::cp_async_16_zfill(&stage[0], in, static_cast<unsigned>(which) & 15U);
  rl::ptx::cp_async_commit();
  rl::ptx::cp_async_wait<1>();
  rl::ptx::cp_async_wait_all();
  __syncthreads();
  std::uint32_t streamed[4];
  rl::ptx::ld_global_nc_cs_v4(streamed, in + 4 * lane);
  rl::ptx::st_global_cs_v4(out + 4 * lane, streamed);
  std::uint32_t a[4];
  std::uint32_t b[2];
  std::uint32_t r1;
  rl::ptx::ldmatrix_x4(a, &tile[(lane % 16) * 16 + 8 * (lane / 16)]);
  rl::ptx::ldmatrix_x2_trans(b, &tile[(lane % 16) * 16]);
  rl::ptx::ldmatrix_x1(r1, &tile[(lane % 8) * 16]);
  rl::ptx::ldmatrix_x1_trans(r1, &tile[(lane % 8) * 16]);
  rl::ptx::ldmatrix_x2(b, &tile[(lane % 16) * 16]);
  rl::ptx::ldmatrix_x4_trans(a, &tile[(lane % 16) * 16]);
  float acc[4] = {stage[lane], 0.0f, 0.0f, static_cast<float>(r1)};
  rl::ptx::mma_m16n8k16_f16_f32(acc, a, b, acc);
  rl::ptx::mma_m16n8k16_bf16_f32(acc, a, b, acc);
  rl::ptx::mma_m16n8k8_tf32_f32(acc, a, b, acc);
  if (which == 89) {  // fp8 exists from sm_89; the wrapper traps below that
    rl::ptx::mma_m16n8k32_e4m3_f32(acc, a, b, acc);
    rl::ptx::mma_m16n8k32_e5m2_f32(acc, a, b, acc);
  }
  std::int32_t iacc[4] = {which, 0, 0, 0};
  rl::ptx::mma_m16n8k32_s8_s32(iacc, a, b, iacc);
  std::uint32_t hacc[2] = {a[0], b[1]};
  rl::ptx::mma_m16n8k16_f16_f16(hacc, a, b, hacc);
  iacc[3] += static_cast<std::int32_t>(hacc[0] ^ hacc[1]);
  out[threadIdx.x] = acc[0] + acc[1] + acc[2] + acc[3] + static_cast<float>(iacc[0] + iacc[3]) +
                     __uint_as_float(rl::ptx::f32_to_tf32(in[0])) + rl::ptx::tanh_approx(in[1]) +
                     rl::ptx::ex2_approx(in[2]) + rl::ptx::ex2_approx_ftz(in[3]);
}

// The Hopper wrappers of rl/ptx_sm90.hpp that no suite kernel uses yet (the
// others compile with the wgmma ceilings and the GEMM rung): register-A
// wgmma, TMA store, plain bulk copies and bulk async-groups.  They are
// sm_90a-only (they trap elsewhere), so ptxas checks them in the 90a build.
__global__ void rl_ptx_sm90_wrappers_compile_check(
    const RL_PTX_GRID_CONSTANT rl::ptx::TensorMap map, float* out, const float* in) {
  __shared__ __align__(1024) unsigned char tile[64 * 128];
  __shared__ std::uint64_t bar;
  if (threadIdx.x == 0) {
    rl::ptx::mbarrier_init(&bar, 1);
    rl::ptx::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    rl::ptx::mbarrier_arrive_expect_tx(&bar, 256);
    rl::ptx::bulk_load(tile, in, 256, &bar);
  }
  rl::ptx::mbarrier_wait_parity(&bar, 0);
  std::uint32_t a[4] = {threadIdx.x, 0, 0, 0};
  float d[64] = {};
  const std::uint64_t desc_b = rl::ptx::smem_descriptor(rl::ptx::shared_address(tile), 8192, 1024,
                                                        rl::ptx::SmemSwizzle::b128);
  rl::ptx::wgmma_fence();
  rl::ptx::wgmma_m64n128k16_f32_rs<__nv_bfloat16, true>(d, a, desc_b, 0);
  rl::ptx::wgmma_m64n128k16_f32_rs<__half, false>(d, a, desc_b, 1);
  float d64[32] = {};
  rl::ptx::wgmma_m64n64k16_f32_rs<__nv_bfloat16, true>(d64, a, desc_b, 0);
  rl::ptx::wgmma_m64n64k16_f32_rs<__half, true>(d64, a, desc_b, 1);
  rl::ptx::wgmma_commit_group();
  rl::ptx::wgmma_wait_group<0>();
  rl::ptx::wgmma_fence_operand(d);
  rl::ptx::wgmma_fence_operand(d64);
  rl::ptx::fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    rl::ptx::tma_store_2d(&map, 0, 0, tile);
    rl::ptx::bulk_store(out, tile, 256);
    rl::ptx::bulk_commit_group();
    rl::ptx::bulk_wait_group_read<0>();
    rl::ptx::bulk_wait_group<0>();
  }
  out[threadIdx.x] = d[0] + d[63] + d64[31];
}

// Named barriers (rl/ptx_barrier.hpp), with the id and the count in registers
// as a pingpong kernel computes them.
__global__ void rl_ptx_named_barrier_compile_check(float* out, unsigned warpgroup,
                                                   unsigned threads) {
  rl::ptx::named_barrier_arrive(1 + (warpgroup ^ 1U), threads);
  rl::ptx::named_barrier_sync(1 + warpgroup, threads);
  out[threadIdx.x] = 1.0f;
}
