// nvcuda::wmma emulation, lane by lane without the runtime: fragments are
// loaded, multiplied and stored through the per-lane helpers that
// load_matrix_sync / mma_sync / store_matrix_sync use, and the stored D is
// compared with a float64 GEMM for every supported type and shape, in both
// memory layouts.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "rl/emu/wmma.hpp"

namespace {

namespace wmma = nvcuda::wmma;

template <typename T>
T to_element(double v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else {
    return T(v);
  }
}

// Runs one warp's load -> mma -> store over row/col-major inputs and checks D.
template <int M, int N, int K, typename TIn, typename TAcc, typename LayoutA, typename LayoutB>
void check_gemm(wmma::layout_t c_layout, wmma::layout_t d_layout, unsigned seed) {
  using Storage =
      typename wmma::fragment<wmma::matrix_a, M, N, K, TIn, LayoutA>::storage_element_type;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);
  // Operands are small multiples of 1/8: exact in every input type, including
  // tf32 and bf16, so the reference sees exactly what the tensor core sees.
  const bool a_row = std::is_same_v<LayoutA, wmma::row_major>;
  const bool b_row = std::is_same_v<LayoutB, wmma::row_major>;
  const unsigned lda = (a_row ? K : M) + 8, ldb = (b_row ? N : K) + 8,
                 ldc = static_cast<unsigned>(std::max(M, N)) + 4;
  std::vector<Storage> a(lda * (a_row ? M : K)), b(ldb * (b_row ? K : N));
  std::vector<TAcc> c(ldc * static_cast<unsigned>(std::max(M, N))), d(c.size());
  std::vector<double> av(M * K), bv(K * N), cv(M * N);
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) {
      av[m * K + k] = small(rng) / 8.0;
      a[a_row ? m * lda + k : k * lda + m] = to_element<Storage>(av[m * K + k]);
    }
  for (int k = 0; k < K; ++k)
    for (int n = 0; n < N; ++n) {
      bv[k * N + n] = small(rng) / 8.0;
      b[b_row ? k * ldb + n : n * ldb + k] = to_element<Storage>(bv[k * N + n]);
    }
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      cv[m * N + n] = small(rng) / 4.0;
      c[c_layout == wmma::mem_row_major ? m * ldc + n : n * ldc + m] =
          to_element<TAcc>(cv[m * N + n]);
    }

  using FragA = wmma::fragment<wmma::matrix_a, M, N, K, TIn, LayoutA>;
  using FragB = wmma::fragment<wmma::matrix_b, M, N, K, TIn, LayoutB>;
  using FragC = wmma::fragment<wmma::accumulator, M, N, K, TAcc>;
  FragA fa[32];
  FragB fb[32];
  FragC fc[32], fd[32];
  for (unsigned lane = 0; lane < 32; ++lane) {
    wmma::detail::load_lane(fa[lane], lane, a.data(), lda, a_row, K);
    wmma::detail::load_lane(fb[lane], lane, b.data(), ldb, b_row, N);
    wmma::detail::load_lane(fc[lane], lane, c.data(), ldc, c_layout == wmma::mem_row_major, N);
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    wmma::detail::mma_lane<M, N, K>(lane, fa, fb, fc[lane], fd[lane], false);
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    wmma::detail::store_lane(fd[lane], lane, d.data(), ldc, d_layout == wmma::mem_row_major, N);
  }
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double ref = cv[m * N + n];
      for (int k = 0; k < K; ++k) ref += av[m * K + k] * bv[k * N + n];
      const TAcc got = d[d_layout == wmma::mem_row_major ? m * ldc + n : n * ldc + m];
      ASSERT_EQ(static_cast<double>(static_cast<float>(got)), ref)
          << m << "," << n;  // exact at these values
    }
  }
}

TEST(Wmma, half_16x16x16_float_accumulator_matches_float64_gemm) {
  check_gemm<16, 16, 16, __half, float, wmma::row_major, wmma::col_major>(wmma::mem_row_major,
                                                                          wmma::mem_row_major, 1);
  check_gemm<16, 16, 16, __half, float, wmma::col_major, wmma::row_major>(wmma::mem_col_major,
                                                                          wmma::mem_row_major, 2);
}

TEST(Wmma, half_16x16x16_half_accumulator_matches_float64_gemm) {
  check_gemm<16, 16, 16, __half, __half, wmma::row_major, wmma::row_major>(wmma::mem_row_major,
                                                                           wmma::mem_col_major, 3);
}

TEST(Wmma, bf16_16x16x16_matches_float64_gemm) {
  check_gemm<16, 16, 16, __nv_bfloat16, float, wmma::row_major, wmma::col_major>(
      wmma::mem_row_major, wmma::mem_row_major, 4);
  check_gemm<16, 16, 16, __nv_bfloat16, float, wmma::col_major, wmma::col_major>(
      wmma::mem_col_major, wmma::mem_col_major, 5);
}

TEST(Wmma, rectangular_shapes_match_float64_gemm) {
  check_gemm<32, 8, 16, __half, float, wmma::row_major, wmma::col_major>(wmma::mem_row_major,
                                                                         wmma::mem_row_major, 6);
  check_gemm<8, 32, 16, __nv_bfloat16, float, wmma::col_major, wmma::row_major>(
      wmma::mem_row_major, wmma::mem_col_major, 7);
  check_gemm<32, 8, 16, __nv_bfloat16, float, wmma::row_major, wmma::row_major>(
      wmma::mem_col_major, wmma::mem_row_major, 8);
}

TEST(Wmma, tf32_16x16x8_matches_float64_gemm) {
  check_gemm<16, 16, 8, wmma::precision::tf32, float, wmma::row_major, wmma::col_major>(
      wmma::mem_row_major, wmma::mem_row_major, 9);
  check_gemm<16, 16, 8, wmma::precision::tf32, float, wmma::col_major, wmma::row_major>(
      wmma::mem_col_major, wmma::mem_col_major, 10);
}

TEST(Wmma, num_elements_match_mma_h) {
  EXPECT_EQ((wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>::num_elements),
            16);
  EXPECT_EQ((wmma::fragment<wmma::matrix_b, 32, 8, 16, __half, wmma::col_major>::num_elements), 16);
  EXPECT_EQ(
      (wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>::num_elements),
      8);
  EXPECT_EQ(
      (wmma::fragment<wmma::matrix_a, 32, 8, 16, __nv_bfloat16, wmma::row_major>::num_elements),
      16);
  EXPECT_EQ(
      (wmma::fragment<wmma::matrix_b, 32, 8, 16, __nv_bfloat16, wmma::row_major>::num_elements), 4);
  EXPECT_EQ(
      (wmma::fragment<wmma::matrix_a, 8, 32, 16, __nv_bfloat16, wmma::row_major>::num_elements), 4);
  EXPECT_EQ(
      (wmma::fragment<wmma::matrix_b, 8, 32, 16, __nv_bfloat16, wmma::row_major>::num_elements),
      16);
  EXPECT_EQ((wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32,
                            wmma::row_major>::num_elements),
            4);
  EXPECT_EQ((wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32,
                            wmma::col_major>::num_elements),
            4);
  EXPECT_EQ((wmma::fragment<wmma::accumulator, 16, 16, 16, float>::num_elements), 8);
  EXPECT_EQ((wmma::fragment<wmma::accumulator, 8, 32, 16, __half>::num_elements), 8);
  EXPECT_EQ((wmma::fragment<wmma::accumulator, 16, 16, 8, float>::num_elements), 8);
  EXPECT_TRUE((std::is_same_v<wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32,
                                             wmma::row_major>::storage_element_type,
                              float>));
}

// Spare __half slots repeat real elements, so a uniform element-wise update
// (the one positional-free access CUDA sanctions) changes the product as the
// math says: scaling every x[i] of A by 2 doubles D.
TEST(Wmma, uniform_elementwise_update_of_every_slot_is_consistent) {
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
  using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
  using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
  std::vector<__half> a(256), b(256);
  for (int i = 0; i < 256; ++i) {
    a[i] = __half(static_cast<float>(i % 7) - 3.0f);
    b[i] = __half(static_cast<float>(i % 5) - 2.0f);
  }
  FragA fa[32];
  FragB fb[32];
  FragC zero, plain[32], scaled[32];
  wmma::fill_fragment(zero, 0.0f);
  for (unsigned lane = 0; lane < 32; ++lane) {
    wmma::detail::load_lane(fa[lane], lane, a.data(), 16, true, 16);
    wmma::detail::load_lane(fb[lane], lane, b.data(), 16, true, 16);
  }
  for (unsigned lane = 0; lane < 32; ++lane)
    wmma::detail::mma_lane<16, 16, 16>(lane, fa, fb, zero, plain[lane], false);
  for (auto& f : fa)
    for (int i = 0; i < FragA::num_elements; ++i) f.x[i] = __hmul(f.x[i], __half(2.0f));
  for (unsigned lane = 0; lane < 32; ++lane)
    wmma::detail::mma_lane<16, 16, 16>(lane, fa, fb, zero, scaled[lane], false);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (int i = 0; i < FragC::num_elements; ++i)
      ASSERT_EQ(scaled[lane].x[i], 2.0f * plain[lane].x[i]);
}

TEST(Wmma, tf32_operands_are_truncated_and_float_to_tf32_rounds_to_nearest_away) {
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
  using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
  using FragC = wmma::fragment<wmma::accumulator, 16, 16, 8, float>;
  const float unrounded = 1.0f + 0x1p-12f + 0x1p-20f;  // tf32 keeps 1.0 of it
  EXPECT_EQ(wmma::__float_to_tf32(unrounded), 1.0f);
  EXPECT_EQ(wmma::__float_to_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f);  // tie: away from zero
  FragA fa[32];
  FragB fb[32];
  FragC c, d;
  for (auto& f : fa) wmma::fill_fragment(f, unrounded);
  for (auto& f : fb) wmma::fill_fragment(f, 1.0f);
  wmma::fill_fragment(c, 0.0f);
  wmma::detail::mma_lane<16, 16, 8>(0, fa, fb, c, d, false);
  EXPECT_EQ(d.x[0], 8.0f);  // 8 * 1.0, not 8 * 1.000244
}

TEST(Wmma, satf_clamps_infinity_and_zeroes_nan) {
  using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
  using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
  using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, __half>;
  FragA fa[32];
  FragB fb[32];
  for (auto& f : fa) wmma::fill_fragment(f, __half(60000.0f));
  for (auto& f : fb) wmma::fill_fragment(f, __half(60000.0f));
  FragC c, d, unsaturated;
  wmma::fill_fragment(c, __half(0.0f));
  wmma::detail::mma_lane<16, 16, 16>(5, fa, fb, c, unsaturated, false);
  wmma::detail::mma_lane<16, 16, 16>(5, fa, fb, c, d, true);
  EXPECT_TRUE(std::isinf(static_cast<float>(unsaturated.x[0])));
  EXPECT_EQ(static_cast<float>(d.x[0]), 65504.0f);
  wmma::fill_fragment(c, __ushort_as_half(0x7E00));  // NaN accumulator
  wmma::detail::mma_lane<16, 16, 16>(5, fa, fb, c, d, true);
  EXPECT_EQ(__half_as_ushort(d.x[3]), 0x0000);
}

// The runtime executes mma_sync once per warp (mma_warp, fragments decoded
// once); mma_lane is the per-lane reference it replaced.  Same bits on random
// fragments (random bit patterns: NaN, Inf, subnormals), with and without
// satf, for every element type and each accumulator type.
template <int M, int N, int K, typename TIn, typename TAcc>
void expect_warp_equals_lanes(unsigned seed) {
  using FragA = wmma::fragment<wmma::matrix_a, M, N, K, TIn, wmma::row_major>;
  using FragB = wmma::fragment<wmma::matrix_b, M, N, K, TIn, wmma::col_major>;
  using FragC = wmma::fragment<wmma::accumulator, M, N, K, TAcc>;
  std::mt19937 rng(seed);
  const auto randomise = [&](auto& fragment) {
    for (auto& x : fragment.x) {
      const auto bits = static_cast<std::uint32_t>(rng());
      std::memcpy(&x, &bits, sizeof x);
    }
  };
  for (int trial = 0; trial < 50; ++trial) {
    FragA fa[32];
    FragB fb[32];
    FragC fc[32], warp[32];
    const FragA* pa[32];
    const FragB* pb[32];
    const FragC* pc[32];
    FragC* pd[32];
    for (int lane = 0; lane < 32; ++lane) {
      randomise(fa[lane]);
      randomise(fb[lane]);
      randomise(fc[lane]);
      pa[lane] = &fa[lane];
      pb[lane] = &fb[lane];
      pc[lane] = &fc[lane];
      pd[lane] = &warp[lane];
    }
    const bool satf = trial % 2 == 1;
    wmma::detail::mma_warp<M, N, K>(pa, pb, pc, pd, satf);
    for (unsigned lane = 0; lane < 32; ++lane) {
      FragC reference;
      wmma::detail::mma_lane<M, N, K>(lane, fa, fb, fc[lane], reference, satf);
      ASSERT_EQ(std::memcmp(&reference.x, &warp[lane].x, sizeof reference.x), 0)
          << M << "x" << N << "x" << K << " trial " << trial << " lane " << lane;
    }
  }
}

TEST(Wmma, once_per_warp_mma_is_bit_identical_to_the_per_lane_reference) {
  expect_warp_equals_lanes<16, 16, 16, __half, float>(1);
  expect_warp_equals_lanes<16, 16, 16, __half, __half>(2);
  expect_warp_equals_lanes<32, 8, 16, __half, float>(3);
  expect_warp_equals_lanes<8, 32, 16, __nv_bfloat16, float>(4);
  expect_warp_equals_lanes<16, 16, 16, __nv_bfloat16, float>(5);
  expect_warp_equals_lanes<16, 16, 8, wmma::precision::tf32, float>(6);
}

}  // namespace
