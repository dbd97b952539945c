// rl::ptx wrappers and nvcuda::wmma inside real kernels launched through
// rl::launch on the emulator: the warp rendezvous, per-thread cp.async queues
// and shared memory together, against float64 references.  Fragment layouts
// in the kernels follow ptx-emulation-reference.md sections 1-4.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/ptx.hpp"

namespace {

// ---------------------------------------------------------------------------
// One m16n8k16 bf16 mma fed by ldmatrix (A: x4, B: x2.trans), C/D through
// the accumulator table.  A 16x16 and B 16x8 (K x N) row-major, C/D 16x8.
// ---------------------------------------------------------------------------

struct alignas(16) TileA {
  __nv_bfloat16 v[16 * 16];
};
struct alignas(16) TileB {
  __nv_bfloat16 v[16 * 8];
};

__global__ void mma_bf16_fed_by_ldmatrix(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                         const float* c, float* d) {
  __shared__ TileA as;
  __shared__ TileB bs;
  const unsigned lane = threadIdx.x;
  for (unsigned i = lane; i < 256; i += 32) as.v[i] = a[i];
  for (unsigned i = lane; i < 128; i += 32) bs.v[i] = b[i];
  __syncwarp();
  std::uint32_t ra[4];
  std::uint32_t rb[2];
  rl::ptx::ldmatrix_x4(ra, &as.v[(lane % 16) * 16 + 8 * (lane / 16)]);
  rl::ptx::ldmatrix_x2_trans(rb, &bs.v[(lane % 16) * 8]);
  const unsigned g = lane / 4, t = lane % 4;
  const unsigned idx[4] = {g * 8 + 2 * t, g * 8 + 2 * t + 1, (g + 8) * 8 + 2 * t,
                           (g + 8) * 8 + 2 * t + 1};
  float acc[4] = {c[idx[0]], c[idx[1]], c[idx[2]], c[idx[3]]};
  rl::ptx::mma_m16n8k16_bf16_f32(acc, ra, rb, acc);
  for (int i = 0; i < 4; ++i) d[idx[i]] = acc[i];
}

TEST(PtxKernels, bf16_mma_fed_by_ldmatrix_matches_float64) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(-64, 64);
  std::vector<__nv_bfloat16> a(256), b(128);
  std::vector<float> c(128), d(128, -1.0f);
  // Distinct small integers: every A/B position contributes a different value.
  for (int i = 0; i < 256; ++i) a[i] = __float2bfloat16(static_cast<float>(pick(rng)));
  for (int i = 0; i < 128; ++i) b[i] = __float2bfloat16(static_cast<float>(pick(rng)) / 64.0f);
  for (int i = 0; i < 128; ++i) c[i] = static_cast<float>(i);
  // The float2 conversions exist under the emulator too (rl/emu/fp16.hpp).
  const float2 pair = __bfloat1622float2(__halves2bfloat162(a[0], a[1]));
  EXPECT_EQ(pair.y, __bfloat162float(a[1]));
  rl::launch(mma_bf16_fed_by_ldmatrix, dim3(1), dim3(32), 0, nullptr, a.data(), b.data(), c.data(),
             d.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      double ref = c[m * 8 + n];
      for (int k = 0; k < 16; ++k)
        ref += double{__bfloat162float(a[m * 16 + k])} * __bfloat162float(b[k * 8 + n]);
      EXPECT_EQ(d[m * 8 + n], static_cast<float>(ref)) << m << "," << n;
    }
  }
}

// ---------------------------------------------------------------------------
// tf32 m16n8k8 with registers loaded by the PTX table and f32_to_tf32.
// ---------------------------------------------------------------------------

__global__ void mma_tf32_from_table(const float* a, const float* b, float* d) {
  const unsigned lane = threadIdx.x, g = lane / 4, t = lane % 4;
  // A 16x8 row-major: a0 (g,t) a1 (g+8,t) a2 (g,t+4) a3 (g+8,t+4); B 8x8: b0 (t,g) b1 (t+4,g).
  const std::uint32_t ra[4] = {
      rl::ptx::f32_to_tf32(a[g * 8 + t]), rl::ptx::f32_to_tf32(a[(g + 8) * 8 + t]),
      rl::ptx::f32_to_tf32(a[g * 8 + t + 4]), rl::ptx::f32_to_tf32(a[(g + 8) * 8 + t + 4])};
  const std::uint32_t rb[2] = {rl::ptx::f32_to_tf32(b[t * 8 + g]),
                               rl::ptx::f32_to_tf32(b[(t + 4) * 8 + g])};
  const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float acc[4];
  rl::ptx::mma_m16n8k8_tf32_f32(acc, ra, rb, zero);
  d[g * 8 + 2 * t] = acc[0];
  d[g * 8 + 2 * t + 1] = acc[1];
  d[(g + 8) * 8 + 2 * t] = acc[2];
  d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

TEST(PtxKernels, tf32_mma_with_rounded_operands_matches_float64) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(128), b(64), d(128);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  rl::launch(mma_tf32_from_table, dim3(1), dim3(32), 0, nullptr, a.data(), b.data(), d.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  auto tf32 = [](float x) {
    return double{
        std::bit_cast<float>(rl::emu::ptx::f32_to_tf32_bits(std::bit_cast<std::uint32_t>(x)))};
  };
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      double ref = 0.0, unrounded = 0.0;
      for (int k = 0; k < 8; ++k) {
        ref += tf32(a[m * 8 + k]) * tf32(b[k * 8 + n]);
        unrounded += double{a[m * 8 + k]} * b[k * 8 + n];
      }
      EXPECT_EQ(d[m * 8 + n], static_cast<float>(ref)) << m << "," << n;
      EXPECT_NEAR(d[m * 8 + n], unrounded, 8 * 0x1p-11) << "tf32 error out of its bound";
    }
  }
}

// ---------------------------------------------------------------------------
// Every other mma wrapper through a kernel: registers filled from element
// codes by the PTX tables (8-bit: byte b of register r is element 4r + b;
// f16: half h of register r is element 2r + h), D compared with float64.
// ---------------------------------------------------------------------------

enum class Wrapper { f16, e4m3, e5m2, s8 };

// a: 16 x K codes, b: K x 8 codes, each code in the low bits of a uint32.
template <Wrapper W>
__global__ void mma_wrapper_from_codes(const std::uint32_t* a, const std::uint32_t* b, float* d) {
  constexpr int k_extent = W == Wrapper::f16 ? 16 : 32;
  constexpr int bits = W == Wrapper::f16 ? 16 : 8;
  constexpr int per_reg = 32 / bits;
  const int lane = static_cast<int>(threadIdx.x), g = lane / 4, t = lane % 4;
  std::uint32_t ra[4] = {};
  std::uint32_t rb[2] = {};
  for (int e = 0; e < 4 * per_reg; ++e) {
    // f16: row g + 8((e>>1)&1), col 2t + (e&1) + 8(e>>2); 8-bit: row g + 8((e>>2)&1), col 4t +
    // (e&3) + 16(e>>3)
    const int row = bits == 16 ? g + 8 * ((e >> 1) & 1) : g + 8 * ((e >> 2) & 1);
    const int col = bits == 16 ? 2 * t + (e & 1) + 8 * (e >> 2) : 4 * t + (e & 3) + 16 * (e >> 3);
    ra[e / per_reg] |= a[row * k_extent + col] << (bits * (e % per_reg));
  }
  for (int e = 0; e < 2 * per_reg; ++e) {
    const int k = bits == 16 ? 2 * t + (e & 1) + 8 * (e >> 1) : 4 * t + (e & 3) + 16 * (e >> 2);
    rb[e / per_reg] |= b[k * 8 + g] << (bits * (e % per_reg));
  }
  float out[4];
  if constexpr (W == Wrapper::s8) {
    const std::int32_t c[4] = {1, 2, 3, 4};
    std::int32_t acc[4];
    rl::ptx::mma_m16n8k32_s8_s32(acc, ra, rb, c);
    for (int i = 0; i < 4; ++i) out[i] = static_cast<float>(acc[i]);
  } else {
    const float c[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    if constexpr (W == Wrapper::f16) rl::ptx::mma_m16n8k16_f16_f32(out, ra, rb, c);
    if constexpr (W == Wrapper::e4m3) rl::ptx::mma_m16n8k32_e4m3_f32(out, ra, rb, c);
    if constexpr (W == Wrapper::e5m2) rl::ptx::mma_m16n8k32_e5m2_f32(out, ra, rb, c);
  }
  for (int i = 0; i < 4; ++i) d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = out[i];
}

template <Wrapper W>
void check_wrapper(std::uint32_t (*code)(int), double (*value)(std::uint32_t)) {
  constexpr int k_extent = W == Wrapper::f16 ? 16 : 32;
  std::mt19937 rng(static_cast<unsigned>(W) + 40);
  std::uniform_int_distribution<int> pick(-12, 12);
  std::vector<std::uint32_t> a(16 * k_extent), b(k_extent * 8);
  for (auto& v : a) v = code(pick(rng));
  for (auto& v : b) v = code(pick(rng));
  std::vector<float> d(128);
  rl::launch(mma_wrapper_from_codes<W>, dim3(1), dim3(32), 0, nullptr, a.data(), b.data(),
             d.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      double ref = 1 + (n % 2) + 2 * (m / 8);  // c = {1, 2, 3, 4} by accumulator slot
      for (int k = 0; k < k_extent; ++k) ref += value(a[m * k_extent + k]) * value(b[k * 8 + n]);
      EXPECT_EQ(d[m * 8 + n], static_cast<float>(ref)) << m << "," << n;
    }
  }
}

TEST(PtxKernels, f16_fp8_and_s8_mma_wrappers_match_float64) {
  // Quarters in [-3, 3]; the reference decodes the stored codes, so rounding
  // into a format (e5m2 keeps 3 bits) cannot hide a wrong position.
  check_wrapper<Wrapper::f16>(
      +[](int i) {
        return std::uint32_t{__half_as_ushort(__float2half(static_cast<float>(i) / 4.0f))};
      },
      +[](std::uint32_t c) {
        return double{__half2float(__ushort_as_half(static_cast<unsigned short>(c)))};
      });
  check_wrapper<Wrapper::e4m3>(
      +[](int i) { return std::uint32_t{__nv_fp8_e4m3(static_cast<float>(i) / 4.0f).__x}; },
      +[](std::uint32_t c) {
        __nv_fp8_e4m3 v;
        v.__x = static_cast<unsigned char>(c);
        return double{static_cast<float>(v)};
      });
  check_wrapper<Wrapper::e5m2>(
      +[](int i) { return std::uint32_t{__nv_fp8_e5m2(static_cast<float>(i) / 4.0f).__x}; },
      +[](std::uint32_t c) {
        __nv_fp8_e5m2 v;
        v.__x = static_cast<unsigned char>(c);
        return double{static_cast<float>(v)};
      });
  check_wrapper<Wrapper::s8>(
      +[](int i) { return static_cast<std::uint32_t>(static_cast<std::uint8_t>(i * 10)); },
      +[](std::uint32_t c) {
        return static_cast<double>(static_cast<std::int8_t>(static_cast<std::uint8_t>(c)));
      });
}

// ---------------------------------------------------------------------------
// cp.async: copies land at the covering wait; a read before it is stale.
// ---------------------------------------------------------------------------

struct alignas(16) Stage {
  float v[2][32 * 4];
};

__global__ void cp_async_two_stages(const float* src, float* early, float* after_first,
                                    float* after_all) {
  __shared__ Stage stage;
  const unsigned tid = threadIdx.x;
  for (int s = 0; s < 2; ++s)
    for (int i = 0; i < 4; ++i) stage.v[s][4 * tid + i] = -1.0f;
  rl::ptx::cp_async_16(&stage.v[0][4 * tid], src + 4 * tid);
  rl::ptx::cp_async_commit();
  // Second stage: the last lane's copy reads only 8 of 16 bytes (zero fill).
  rl::ptx::cp_async_16_zfill(&stage.v[1][4 * tid], src + 128 + 4 * tid, tid == 31 ? 8U : 16U);
  rl::ptx::cp_async_commit();
  early[tid] = stage.v[0][4 * tid];  // before any wait: still -1
  rl::ptx::cp_async_wait<1>();       // stage 0 done, stage 1 may be pending
  after_first[2 * tid] = stage.v[0][4 * tid + 3];
  after_first[2 * tid + 1] = stage.v[1][4 * tid];
  rl::ptx::cp_async_wait<0>();
  for (int i = 0; i < 4; ++i) after_all[4 * tid + i] = stage.v[1][4 * tid + i];
}

TEST(PtxKernels, cp_async_reads_before_the_wait_see_stale_data) {
  std::vector<float> src(256);
  for (int i = 0; i < 256; ++i) src[i] = static_cast<float>(i);
  std::vector<float> early(32), after_first(64), after_all(128);
  rl::launch(cp_async_two_stages, dim3(1), dim3(32), 0, nullptr, src.data(), early.data(),
             after_first.data(), after_all.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int tid = 0; tid < 32; ++tid) {
    EXPECT_EQ(early[tid], -1.0f) << tid;
    EXPECT_EQ(after_first[2 * tid], static_cast<float>(4 * tid + 3)) << tid;
    EXPECT_EQ(after_first[2 * tid + 1], -1.0f) << "stage 1 landed before its wait, thread " << tid;
    for (int i = 0; i < 4; ++i) {
      const float expected = tid == 31 && i >= 2 ? 0.0f : static_cast<float>(128 + 4 * tid + i);
      EXPECT_EQ(after_all[4 * tid + i], expected) << tid << " " << i;
    }
  }
}

// ---------------------------------------------------------------------------
// wmma 16x16x16 (half and bf16) and 16x16x8 tf32 through the public API.
// ---------------------------------------------------------------------------

template <typename In, typename Acc, int K>
__global__ void wmma_tile(
    const typename nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, K, In,
                                          nvcuda::wmma::row_major>::storage_element_type* a,
    const typename nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, K, In,
                                          nvcuda::wmma::col_major>::storage_element_type* b,
    Acc* d) {
  namespace wmma = nvcuda::wmma;
  wmma::fragment<wmma::matrix_a, 16, 16, K, In, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, K, In, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, K, Acc> acc;
  wmma::fill_fragment(acc, Acc(1.0f));
  wmma::load_matrix_sync(fa, a, K);
  wmma::load_matrix_sync(fb, b, K);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

template <typename In, typename Acc, int K, typename Storage>
void check_wmma(Storage (*make)(float)) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pick(-8, 8);
  std::vector<Storage> a(16 * K), b(16 * K);  // b is col-major: b[n * K + k]
  std::vector<double> av(16 * K), bv(16 * K);
  for (int i = 0; i < 16 * K; ++i) {
    av[i] = pick(rng) / 4.0;
    bv[i] = pick(rng) / 4.0;
    a[i] = make(static_cast<float>(av[i]));
    b[i] = make(static_cast<float>(bv[i]));
  }
  std::vector<Acc> d(256);
  rl::launch(wmma_tile<In, Acc, K>, dim3(1), dim3(32), 0, nullptr, a.data(), b.data(), d.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 16; ++n) {
      double ref = 1.0;
      for (int k = 0; k < K; ++k) ref += av[m * K + k] * bv[n * K + k];
      EXPECT_EQ(static_cast<double>(static_cast<float>(d[m * 16 + n])), ref) << m << "," << n;
    }
  }
}

TEST(PtxKernels, wmma_half_bf16_and_tf32_tiles_match_float64) {
  check_wmma<__half, float, 16>(+[](float f) { return __float2half(f); });
  check_wmma<__half, __half, 16>(+[](float f) { return __float2half(f); });
  check_wmma<__nv_bfloat16, float, 16>(+[](float f) { return __float2bfloat16(f); });
  check_wmma<nvcuda::wmma::precision::tf32, float, 8>(
      +[](float f) { return nvcuda::wmma::__float_to_tf32(f); });
}

// ---------------------------------------------------------------------------
// A 64x64x64 bf16 GEMM the way tensor-core kernels are written: cp.async
// tiles into shared memory, ldmatrix fragments, mma.sync.  4 warps, each
// computing a 32x32 quarter as 2 x 4 m16n8k16 tiles.
// ---------------------------------------------------------------------------

constexpr int kGemm = 64;

__global__ void gemm_bf16_ldmatrix_mma_64(const __nv_bfloat16* a, const __nv_bfloat16* b,
                                          float* c) {
  // The CUDA idiom for cp.async / ldmatrix targets: 16-byte aligned arrays.
  __shared__ __align__(16) __nv_bfloat16 tile_a[kGemm * 16];  // A[:, k0:k0+16], row-major 64 x 16
  __shared__ __align__(16) __nv_bfloat16 tile_b[16 * kGemm];  // B[k0:k0+16, :], row-major 16 x 64
  const unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const unsigned warp_row = 32 * (warp / 2), warp_col = 32 * (warp % 2);
  float acc[2][4][4] = {};
  for (int k0 = 0; k0 < kGemm; k0 += 16) {
    // 128 threads, 128 16-byte chunks per tile.
    const unsigned a_row = tid / 2, a_half = tid % 2;
    rl::ptx::cp_async_16(&tile_a[a_row * 16 + 8 * a_half], &a[a_row * kGemm + k0 + 8 * a_half]);
    const unsigned b_row = tid / 8, b_chunk = tid % 8;
    rl::ptx::cp_async_16(&tile_b[b_row * kGemm + 8 * b_chunk],
                         &b[(k0 + b_row) * kGemm + 8 * b_chunk]);
    rl::ptx::cp_async_wait_all();
    __syncthreads();
    for (int mi = 0; mi < 2; ++mi) {
      std::uint32_t ra[4];
      rl::ptx::ldmatrix_x4(ra, &tile_a[(warp_row + 16 * mi + lane % 16) * 16 + 8 * (lane / 16)]);
      for (int ni = 0; ni < 4; ++ni) {
        std::uint32_t rb[2];
        rl::ptx::ldmatrix_x2_trans(rb, &tile_b[(lane % 16) * kGemm + warp_col + 8 * ni]);
        rl::ptx::mma_m16n8k16_bf16_f32(acc[mi][ni], ra, rb, acc[mi][ni]);
      }
    }
    __syncthreads();  // before the next k-step overwrites the tiles
  }
  const unsigned g = lane / 4, t = lane % 4;
  for (int mi = 0; mi < 2; ++mi) {
    for (int ni = 0; ni < 4; ++ni) {
      const unsigned row = warp_row + 16 * mi + g, col = warp_col + 8 * ni + 2 * t;
      c[row * kGemm + col] = acc[mi][ni][0];
      c[row * kGemm + col + 1] = acc[mi][ni][1];
      c[(row + 8) * kGemm + col] = acc[mi][ni][2];
      c[(row + 8) * kGemm + col + 1] = acc[mi][ni][3];
    }
  }
}

TEST(PtxKernels, gemm_64_with_cp_async_ldmatrix_and_mma_matches_float64_under_two_schedules) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<__nv_bfloat16> a(kGemm * kGemm), b(kGemm * kGemm);
  for (auto& v : a) v = __float2bfloat16(dist(rng));
  for (auto& v : b) v = __float2bfloat16(dist(rng));
  const auto outputs = rl::emu::run_under_schedules([&] {
    std::vector<float> c(kGemm * kGemm, std::nanf(""));
    rl::launch(gemm_bf16_ldmatrix_mma_64, dim3(1), dim3(128), 0, nullptr, a.data(), b.data(),
               c.data());
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    return c;
  });
  ASSERT_EQ(outputs.size(), 2U);
  EXPECT_EQ(outputs[0], outputs[1]) << "result depends on the thread schedule";
  for (int m = 0; m < kGemm; ++m) {
    for (int n = 0; n < kGemm; ++n) {
      double ref = 0.0;
      for (int k = 0; k < kGemm; ++k)
        ref += double{__bfloat162float(a[m * kGemm + k])} * __bfloat162float(b[k * kGemm + n]);
      // Four k-steps, each rounded once to fp32: a few ulps of the partial sums.
      EXPECT_NEAR(outputs[0][m * kGemm + n], ref, 1e-5 * (1.0 + std::fabs(ref))) << m << "," << n;
    }
  }
}

// ---------------------------------------------------------------------------
// .sync.aligned instructions in a partial warp stop with a clear message.
// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// The runtime computes mma.sync and ldmatrix once per warp; each lane must
// still get exactly what the per-lane reference gives it.  Random registers
// (any bit pattern), two warps, every mma type and every ldmatrix form.
// ---------------------------------------------------------------------------

// regs[thread][0..3] = A, [4..5] = B, [6..9] = C bits; out[thread][0..3] = D bits
// for each of the six mma forms, then 4 + 2 + 1 registers of ldmatrix
// x4/x2/x1 and 4 + 2 + 1 of the .trans forms.
constexpr int kOutPerThread = 6 * 4 + 14;

__global__ void tensor_ops_on_random_registers(const std::uint32_t* regs, const std::uint16_t* tile,
                                               std::uint32_t* out) {
  const std::uint32_t* mine = regs + 10 * threadIdx.x;
  std::uint32_t* res = out + kOutPerThread * threadIdx.x;
  const std::uint32_t a[4] = {mine[0], mine[1], mine[2], mine[3]};
  const std::uint32_t b[2] = {mine[4], mine[5]};
  float c[4];
  std::memcpy(c, mine + 6, sizeof c);
  float d[4];
  const auto keep = [&](int slot) { std::memcpy(res + 4 * slot, d, sizeof d); };
  rl::ptx::mma_m16n8k16_f16_f32(d, a, b, c);
  keep(0);
  rl::ptx::mma_m16n8k16_bf16_f32(d, a, b, c);
  keep(1);
  rl::ptx::mma_m16n8k8_tf32_f32(d, a, b, c);
  keep(2);
  rl::ptx::mma_m16n8k32_e4m3_f32(d, a, b, c);
  keep(3);
  rl::ptx::mma_m16n8k32_e5m2_f32(d, a, b, c);
  keep(4);
  std::int32_t ci[4], di[4];
  std::memcpy(ci, mine + 6, sizeof ci);
  rl::ptx::mma_m16n8k32_s8_s32(di, a, b, ci);
  std::memcpy(res + 20, di, sizeof di);
  // Row addresses: a lane-dependent scramble of the 64 rows of `tile`.
  const std::uint16_t* row = tile + 8 * ((threadIdx.x * 37 + 11) % 64);
  std::uint32_t r4[4], r2[2], r1;
  rl::ptx::ldmatrix_x4(r4, row);
  rl::ptx::ldmatrix_x2(r2, row);
  rl::ptx::ldmatrix_x1(r1, row);
  std::uint32_t* l = res + 24;
  l[0] = r4[0], l[1] = r4[1], l[2] = r4[2], l[3] = r4[3], l[4] = r2[0], l[5] = r2[1], l[6] = r1;
  rl::ptx::ldmatrix_x4_trans(r4, row);
  rl::ptx::ldmatrix_x2_trans(r2, row);
  rl::ptx::ldmatrix_x1_trans(r1, row);
  l[7] = r4[0], l[8] = r4[1], l[9] = r4[2], l[10] = r4[3], l[11] = r2[0], l[12] = r2[1], l[13] = r1;
}

TEST(PtxKernels, warp_tensor_ops_give_every_lane_the_per_lane_reference_result) {
  std::mt19937 rng(77);
  constexpr int kThreads = 64;
  std::vector<std::uint32_t> regs(10 * kThreads);
  struct alignas(16) Tile {
    std::uint16_t v[64 * 8];
  };
  auto tile = std::make_unique<Tile>();
  for (int trial = 0; trial < 20; ++trial) {
    for (auto& r : regs) r = static_cast<std::uint32_t>(rng());
    for (auto& e : tile->v) e = static_cast<std::uint16_t>(rng());
    std::vector<std::uint32_t> out(kOutPerThread * kThreads);
    rl::launch(tensor_ops_on_random_registers, dim3(1), dim3(kThreads), 0, nullptr, regs.data(),
               tile->v, out.data());
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    for (int warp = 0; warp < kThreads / 32; ++warp) {
      rl::emu::ptx::MmaA a;
      rl::emu::ptx::MmaB b;
      float c[32][4];
      const void* rows[32];
      for (int lane = 0; lane < 32; ++lane) {
        const std::uint32_t* mine = &regs[10 * (32 * warp + lane)];
        std::memcpy(a[lane], mine, sizeof a[lane]);
        std::memcpy(b[lane], mine + 4, sizeof b[lane]);
        std::memcpy(c[lane], mine + 6, sizeof c[lane]);
        rows[lane] = tile->v + 8 * (((32 * warp + lane) * 37 + 11) % 64);
      }
      for (unsigned lane = 0; lane < 32; ++lane) {
        const std::uint32_t* got = &out[kOutPerThread * (32 * warp + lane)];
        int slot = 0;
        for (auto input : {rl::emu::ptx::MmaInput::f16, rl::emu::ptx::MmaInput::bf16,
                           rl::emu::ptx::MmaInput::tf32, rl::emu::ptx::MmaInput::e4m3,
                           rl::emu::ptx::MmaInput::e5m2}) {
          float ref[4];
          rl::emu::ptx::mma_f32_lane(input, lane, a, b, c[lane], ref);
          ASSERT_EQ(std::memcmp(ref, got + 4 * slot, sizeof ref), 0)
              << "mma form " << slot << " warp " << warp << " lane " << lane;
          ++slot;
        }
        std::int32_t ci[4], ref_i[4];
        std::memcpy(ci, c[lane], sizeof ci);
        rl::emu::ptx::mma_m16n8k32_s8_s32_lane(lane, a, b, ci, ref_i);
        ASSERT_EQ(std::memcmp(ref_i, got + 20, sizeof ref_i), 0) << "s8 lane " << lane;
        int at = 24;
        for (bool trans : {false, true}) {
          for (int matrices : {4, 2, 1}) {
            std::uint32_t ref_l[4] = {};
            rl::emu::ptx::ldmatrix_lane(lane, matrices, trans, rows, ref_l);
            for (int j = 0; j < matrices; ++j)
              ASSERT_EQ(got[at + j], ref_l[j]) << "ldmatrix x" << matrices << " trans " << trans
                                               << " lane " << lane << " register " << j;
            at += matrices;
          }
        }
      }
    }
  }
}

// ex2.approx.ftz.f32 on the emulator: exactly the plain form's 2^x except
// where .ftz flushes.  A subnormal input counts as zero (2^0 = 1, either
// sign); a result below 2^-126 becomes +0 where the plain form keeps it.
TEST(PtxArith, ex2_approx_ftz_flushes_subnormal_inputs_and_results) {
  const float min_normal = std::numeric_limits<float>::min();  // 2^-126
  const float subnormal = min_normal / 4.0f;
  EXPECT_EQ(rl::ptx::ex2_approx_ftz(subnormal), 1.0f);
  EXPECT_EQ(rl::ptx::ex2_approx_ftz(-subnormal), 1.0f);
  EXPECT_EQ(rl::ptx::ex2_approx_ftz(-126.0f), min_normal);  // the smallest normal result stays
  for (const float x : {-126.5f, -127.0f, -140.0f, -149.0f}) {
    EXPECT_GT(rl::ptx::ex2_approx(x), 0.0f) << x;  // subnormal in the plain form ...
    const float y = rl::ptx::ex2_approx_ftz(x);    // ... +0 (not -0) under ftz
    EXPECT_EQ(std::bit_cast<std::uint32_t>(y), 0u) << x;
  }
  EXPECT_EQ(std::bit_cast<std::uint32_t>(rl::ptx::ex2_approx_ftz(-INFINITY)), 0u);
  EXPECT_EQ(rl::ptx::ex2_approx_ftz(INFINITY), INFINITY);
  EXPECT_EQ(rl::ptx::ex2_approx_ftz(128.0f), INFINITY);
  EXPECT_TRUE(std::isnan(rl::ptx::ex2_approx_ftz(NAN)));
  for (const float x : {-100.0f, -1.5f, 0.0f, 0.75f, 3.0f, 127.0f})
    EXPECT_EQ(rl::ptx::ex2_approx_ftz(x), rl::ptx::ex2_approx(x)) << x;
}

__global__ void mma_in_half_a_warp(float* d) {
  const std::uint32_t a[4] = {};
  const std::uint32_t b[2] = {};
  const float c[4] = {};
  float acc[4];
  rl::ptx::mma_m16n8k16_bf16_f32(acc, a, b, c);
  d[threadIdx.x] = acc[0];
}

TEST(PtxKernelsDeathTest, mma_in_an_incomplete_warp_is_reported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<float> d(16);
  EXPECT_DEATH(rl::launch(mma_in_half_a_warp, dim3(1), dim3(16), 0, nullptr, d.data()),
               "mma.sync executed by an incomplete warp \\(lanes present: 0x0000ffff\\)");
}

}  // namespace
