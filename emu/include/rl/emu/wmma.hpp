// nvcuda::wmma (CUDA's mma.h) for the CPU emulator: __half and
// __nv_bfloat16 at 16x16x16, 32x8x16 and 8x32x16 (float or, for __half, half
// accumulators) and precision::tf32 at 16x16x8.
//
// Which matrix element a fragment slot x[i] holds is unspecified by CUDA; the
// emulator uses the simple mapping of ptx-emulation-reference.md section 7:
// with d distinct elements per lane (tile elements / 32), slot i of lane L
// holds row-major tile element L + 32 * (i mod d).  Spare slots (__half
// fragments always have 16) repeat elements, so uniform element-wise code
// stays correct, and float and __half accumulators share one map.
//
// mma_sync is one full-warp rendezvous; the last lane to arrive decodes the
// warp's A and B fragments once and computes every lane's D (mma_warp):
// exact products, the K products and C summed in double, one rounding to the
// accumulator type (mma_lane, the per-lane form, is the reference).  tf32 operands lose their low
// 13 bits, as on the hardware (load_matrix_sync does not round: use __float_to_tf32).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "rl/emu/fp16.hpp"
#include "rl/emu/ptx_warp.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/counters.hpp"
#include "rl/emu/warp.hpp"
#endif

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace precision {
struct tf32 {};
}  // namespace precision

namespace detail {

// Tile extent of a fragment: rows x cols of the matrix it holds.
template <typename Use, int M, int N, int K>
struct Tile;
template <int M, int N, int K>
struct Tile<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct Tile<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct Tile<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};

template <typename T>
struct Storage {
  using type = T;
};
template <>
struct Storage<precision::tf32> {
  using type = float;
};

template <typename Use, int M, int N, int K, typename T>
constexpr bool supported() {
  constexpr bool shape16 = (M == 16 && N == 16 && K == 16) || (M == 32 && N == 8 && K == 16) ||
                           (M == 8 && N == 32 && K == 16);
  if constexpr (std::is_same_v<Use, accumulator>) {
    return (shape16 && (std::is_same_v<T, float> || std::is_same_v<T, __half>)) ||
           (M == 16 && N == 16 && K == 8 && std::is_same_v<T, float>);
  } else {
    return (shape16 && (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)) ||
           (M == 16 && N == 16 && K == 8 && std::is_same_v<T, precision::tf32>);
  }
}

}  // namespace detail

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
class fragment {
  static_assert(detail::supported<Use, M, N, K, T>(),
                "wmma shape/type not emulated: __half and __nv_bfloat16 at 16x16x16, 32x8x16, "
                "8x32x16; precision::tf32 at 16x16x8 (float or __half accumulators)");
  static_assert(std::is_same_v<Use, accumulator> == std::is_same_v<Layout, void>,
                "matrix_a/matrix_b need row_major or col_major; accumulators take no layout");

 public:
  using storage_element_type = typename detail::Storage<T>::type;
  using element_type = T;
  // Distinct tile elements per lane.
  static constexpr int distinct =
      detail::Tile<Use, M, N, K>::rows * detail::Tile<Use, M, N, K>::cols / 32;
  // mma.h's values: __half A/B fragments always declare 16 slots.
  static constexpr int num_elements =
      std::is_same_v<T, __half> && !std::is_same_v<Use, accumulator> ? 16 : distinct;
  storage_element_type x[num_elements];
};

namespace detail {

// (row, col) of slot i of `lane` in the fragment's tile.
template <typename Frag>
constexpr int slot_element(unsigned lane, int i) {
  return static_cast<int>(lane) + 32 * (i % Frag::distinct);
}

inline std::size_t offset(int row, int col, unsigned ldm, bool row_major_memory) {
  return row_major_memory ? static_cast<std::size_t>(row) * ldm + static_cast<std::size_t>(col)
                          : static_cast<std::size_t>(col) * ldm + static_cast<std::size_t>(row);
}

// Pure per-lane parts (no runtime): exercised directly by the unit tests.
template <typename Frag, typename Ptr>
void load_lane(Frag& f, unsigned lane, const Ptr* p, unsigned ldm, bool row_major_memory,
               int cols) {
  for (int i = 0; i < Frag::num_elements; ++i) {
    const int e = slot_element<Frag>(lane, i);
    f.x[i] = p[offset(e / cols, e % cols, ldm, row_major_memory)];
  }
}

template <typename Frag, typename Ptr>
void store_lane(const Frag& f, unsigned lane, Ptr* p, unsigned ldm, bool row_major_memory,
                int cols) {
  for (int i = 0; i < Frag::distinct; ++i) {
    const int e = slot_element<Frag>(lane, i);
    p[offset(e / cols, e % cols, ldm, row_major_memory)] = f.x[i];
  }
}

template <typename T>
double operand_value(const T& v) {
  if constexpr (std::is_same_v<T, float>) {  // tf32 storage: the tensor core reads 19 bits
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) & 0xFFFFE000U);
  } else {
    return static_cast<float>(v);
  }
}

template <typename T>
T saturate_finite(T v) {
  const float f = static_cast<float>(v);
  if (std::isnan(f)) {
    return T(0.0f);
  }
  if constexpr (std::is_same_v<T, __half>) {
    return std::isinf(f) ? T(f > 0.0f ? 65504.0f : -65504.0f) : v;
  } else {
    constexpr float max = std::numeric_limits<float>::max();
    return std::isinf(f) ? (f > 0.0f ? max : -max) : v;
  }
}

// One lane's D from every lane's A and B fragments and its own C.
template <int M, int N, int K, typename FragA, typename FragB, typename FragC>
void mma_lane(unsigned lane, const FragA* all_a, const FragB* all_b, const FragC& c, FragC& d,
              bool satf) {
  using Acc = typename FragC::storage_element_type;
  Acc result[FragC::num_elements];
  for (int i = 0; i < FragC::num_elements; ++i) {
    const int e = slot_element<FragC>(lane, i);
    const int m = e / N;
    const int n = e % N;
    double sum = static_cast<float>(c.x[i]);
    for (int k = 0; k < K; ++k) {
      const int ea = m * K + k;  // row-major index in A (M x K)
      const int eb = k * N + n;  // row-major index in B (K x N)
      sum += operand_value(all_a[ea % 32].x[ea / 32]) * operand_value(all_b[eb % 32].x[eb / 32]);
    }
    result[i] = Acc(sum);  // one rounding (double -> __half rounds once too)
    if constexpr (std::is_same_v<Acc, float>) {
      if (std::isnan(sum)) {
        result[i] = std::bit_cast<float>(0x7FFFFFFFU);  // canonical NaN, as on the GPU
      }
    }
    if (satf) {
      result[i] = saturate_finite(result[i]);
    }
  }
  for (int i = 0; i < FragC::num_elements; ++i) {
    d.x[i] = result[i];  // after all reads: d may alias c
  }
}

// Every lane's D at once: a[L], b[L], c[L], d[L] are lane L's fragments.
// Each A and B element is decoded once, and D is summed as a dense M x N
// tile with k outermost (N independent sums per row instead of one chain of
// dependent adds).  Each sum still starts from C and adds k = 0, 1, ... as
// mma_lane does, so the results are bit-identical to it.
template <int M, int N, int K, typename FragA, typename FragB, typename FragC>
void mma_warp(const FragA* const* a, const FragB* const* b, const FragC* const* c, FragC* const* d,
              bool satf) {
  using Acc = typename FragC::storage_element_type;
  double a_values[M * K];
  double b_values[K * N];
  double sums[M * N];
  // Slot i of lane L holds tile element L + 32 * i (i < distinct); spare
  // slots repeat them, so distinct slots carry all of A, B and C.  Lane by
  // lane: each lane's fragment lives on its own fiber stack, so walking one
  // fragment at a time touches each stack once instead of 32 stacks per slot.
  for (unsigned lane = 0; lane < 32; ++lane) {
    const FragA& fa = *a[lane];
    const FragB& fb = *b[lane];
    const FragC& fc = *c[lane];
    for (int i = 0; i < FragA::distinct; ++i) a_values[lane + 32 * i] = operand_value(fa.x[i]);
    for (int i = 0; i < FragB::distinct; ++i) b_values[lane + 32 * i] = operand_value(fb.x[i]);
    for (int i = 0; i < FragC::distinct; ++i) sums[lane + 32 * i] = static_cast<float>(fc.x[i]);
  }
  for (int m = 0; m < M; ++m) {
    double row[N];  // one row of sums, kept in registers across k
    for (int n = 0; n < N; ++n) row[n] = sums[m * N + n];
    for (int k = 0; k < K; ++k) {
      const double a_mk = a_values[m * K + k];
      for (int n = 0; n < N; ++n) row[n] += a_mk * b_values[k * N + n];
    }
    for (int n = 0; n < N; ++n) sums[m * N + n] = row[n];
  }
  for (unsigned lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < FragC::num_elements; ++i) {
      const double sum = sums[slot_element<FragC>(lane, i)];
      Acc result = Acc(sum);  // one rounding (double -> __half rounds once too)
      if constexpr (std::is_same_v<Acc, float>) {
        if (std::isnan(sum)) {
          result = std::bit_cast<float>(0x7FFFFFFFU);  // canonical NaN, as on the GPU
        }
      }
      // d may alias c, but only its own lane's, and C was read above.
      d[lane]->x[i] = satf ? saturate_finite(result) : result;
    }
  }
}

template <typename Layout>
constexpr bool is_row_major() {
  return std::is_same_v<Layout, row_major>;
}

}  // namespace detail

template <typename Use, int M, int N, int K, typename T, typename Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f,
                   const typename fragment<Use, M, N, K, T, Layout>::storage_element_type& v) {
  for (auto& slot : f.x) {
    slot = v;
  }
}

// __float_to_tf32: cvt.rna.tf32.f32, returned as a float.
inline float __float_to_tf32(float in) {
  return std::bit_cast<float>(rl::emu::ptx::f32_to_tf32_bits(std::bit_cast<std::uint32_t>(in)));
}

#if defined(RL_EMULATE)

template <typename Use, int M, int N, int K, typename T, typename Layout>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& a,
                      const typename fragment<Use, M, N, K, T, Layout>::storage_element_type* p,
                      unsigned ldm) {
  static_assert(!std::is_same_v<Use, accumulator>,
                "accumulators are loaded with a layout_t argument");
  detail::load_lane(a, rl::emu::lane_id(), p, ldm, detail::is_row_major<Layout>(),
                    detail::Tile<Use, M, N, K>::cols);
}

template <int M, int N, int K, typename T>
void load_matrix_sync(fragment<accumulator, M, N, K, T>& a, const T* p, unsigned ldm,
                      layout_t layout) {
  detail::load_lane(a, rl::emu::lane_id(), p, ldm, layout == mem_row_major, N);
}

template <int M, int N, int K, typename T>
void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T>& a, unsigned ldm,
                       layout_t layout) {
  detail::store_lane(a, rl::emu::lane_id(), p, ldm, layout == mem_row_major, N);
}

template <int M, int N, int K, typename TA, typename LayoutA, typename TB, typename LayoutB,
          typename TC>
void mma_sync(fragment<accumulator, M, N, K, TC>& d,
              const fragment<matrix_a, M, N, K, TA, LayoutA>& a,
              const fragment<matrix_b, M, N, K, TB, LayoutB>& b,
              const fragment<accumulator, M, N, K, TC>& c, bool satf = false) {
  static_assert(std::is_same_v<TA, TB>, "wmma::mma_sync needs A and B of the same element type");
  static_assert(std::is_same_v<TC, float> || std::is_same_v<TA, __half>,
                "only __half inputs may accumulate in __half");
  using FragA = fragment<matrix_a, M, N, K, TA, LayoutA>;
  using FragB = fragment<matrix_b, M, N, K, TB, LayoutB>;
  using FragC = fragment<accumulator, M, N, K, TC>;
  struct Post {
    const FragA* a;
    const FragB* b;
    const FragC* c;
    FragC* d;
    bool satf;
  };
  Post post{&a, &b, &c, &d, satf};
  // One exchange function per instantiation, so lanes that disagree on the
  // shape or types never complete one rendezvous (reported as a deadlock).
  rl::emu::detail::warp_collective(
      0xffffffffu,
      [](void* const* posts, unsigned participants) {
        rl::emu::ptx::require_full_warp("wmma::mma_sync", participants);
        const FragA* all_a[32];
        const FragB* all_b[32];
        const FragC* all_c[32];
        FragC* all_d[32];
        for (int lane = 0; lane < 32; ++lane) {
          const auto* p = static_cast<const Post*>(posts[lane]);
          all_a[lane] = p->a;
          all_b[lane] = p->b;
          all_c[lane] = p->c;
          all_d[lane] = p->d;
        }
        detail::mma_warp<M, N, K>(all_a, all_b, all_c, all_d,
                                  static_cast<const Post*>(posts[0])->satf);
        // rl/emu/counters.hpp: once per warp instruction.
        constexpr const char* role = std::is_same_v<TA, precision::tf32> ? "tensor_tf32"
                                     : !std::is_same_v<TA, __half>       ? "tensor_bf16"
                                     : std::is_same_v<TC, __half>        ? "tensor_fp16_f16"
                                                                         : "tensor_fp16_f32";
        rl::emu::count_tensor_ops(role, 2.0 * M * N * K);
      },
      &post);
}

#endif  // RL_EMULATE

}  // namespace nvcuda::wmma
