// Attention forward, O = softmax(Q·Kᵀ/√d + mask)·V: what every variant
// shares (shapes, cost model, memory footprint, the float64 reference and its
// error bound, the workload, the record builder).
//
// Q, K, V and O are tensors of one storage type T (float, __nv_bfloat16 or
// __half; every variant computes in fp32 and stores O as T) laid out
// [B, H, N, d] (contiguous): head (b, h) is an N×d row-major matrix at offset
// (b·H + h)·N·d.  With the causal mask, query i attends to keys j <= i only.
//
// The variants, one file each:
//   attention_naive.cu        three kernels, as an eager framework runs it: S =
//                             scale·QKᵀ to global memory, softmax(S) -> P to
//                             global memory, O = P·V.  Memory grows as N².
//   attention_fused_simt.cu   one kernel, K/V tiles through shared memory and
//                             the online softmax: S and P never leave the
//                             chip (FlashAttention-2's forward, fp32 SIMT).
//   attention_flash_mma_sync.cu  the same algorithm on the tensor cores, bf16
//                             and fp16: mma.sync fed by ldmatrix, P kept in
//                             registers, K/V tiles double-buffered by cp.async.
//   cuda_only/                library baselines (cuBLAS GEMMs around
//                             launch_attention_softmax, cuDNN SDPA).
//
// A variant is one record: make_record<T>(RecordSpec<T>{...}) with its
// launcher (a function of Args<T>), its cost model and its error model; the
// workload (AttentionWorkload<T>), the float64 reference, the tolerance and
// the memory footprint (KernelRecord::device_bytes) follow from those.
//
// Why fusion wins, in the cost model's terms: the naive path writes and
// re-reads two B·H·N² tensors, so its traffic grows like N² while its FLOPs
// grow like N²·d: its intensity is a small constant (a few FLOP/B) and it sits
// on the bandwidth diagonal.  The fused kernel's traffic is Q, K, V, O plus
// the K/V re-reads per query tile, so its intensity is about BlockM/2 FLOP/B
// in fp32 (BlockM in a 16-bit type) and it moves right towards the compute
// roof (FP32, or the tensor cores').
#pragma once

#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/packed128.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rl::attention {

// ---------------------------------------------------------------- shape

struct Dims {
  std::int64_t B, H, N, d;
  bool causal;

  std::int64_t heads() const { return B * H; }
  std::int64_t tensor_elements() const { return B * H * N * d; }  // one of Q, K, V, O
  std::int64_t score_elements() const { return B * H * N * N; }   // S or P
};

inline Dims dims(const Shape& shape) {
  const Dims p{shape.at("B"), shape.at("H"), shape.at("N"), shape.at("d"), shape.at("causal") != 0};
  if (p.B < 1 || p.H < 1 || p.N < 1 || p.d < 1 || shape.at("causal") < 0 || shape.at("causal") > 1)
    throw std::invalid_argument("attention: B, H, N, d must be >= 1 and causal 0 or 1, got " +
                                shape.to_string());
  return p;
}

inline Shape shape_of(std::int64_t B, std::int64_t H, std::int64_t N, std::int64_t d, bool causal) {
  return Shape{{{"B", B}, {"H", H}, {"N", N}, {"d", d}, {"causal", causal ? 1 : 0}}};
}

// small: the emulator's main-job cases (a few seconds in all): a block-sized
// N with and without the mask, an N one past a tile (ragged last tiles), and
// the 128 head dim.
// medium: a quick GPU look, one head dim each way.
// large: the FlashAttention papers' convention, B·N = 16k tokens and
// H·d = 2048, d in {64, 128}, N from 512 to 16k, causal and not.
inline std::vector<Shape> shapes(SizePreset preset) {
  std::vector<Shape> out;
  switch (preset) {
    case SizePreset::small:
      out = {shape_of(1, 2, 64, 64, false), shape_of(1, 2, 64, 64, true),
             shape_of(1, 2, 129, 64, true), shape_of(1, 1, 65, 128, false)};
      break;
    case SizePreset::medium:
      out = {shape_of(4, 16, 1024, 64, false), shape_of(4, 16, 1024, 64, true),
             shape_of(4, 8, 1024, 128, true)};
      break;
    case SizePreset::large:
      for (const std::int64_t d : {64, 128})
        for (const std::int64_t N : {512, 1024, 2048, 4096, 8192, 16384})
          for (const bool causal : {false, true})
            out.push_back(shape_of(16384 / N, 2048 / d, N, d, causal));
      break;
  }
  return out;
}

// ---------------------------------------------------------------- storage types
//
// The compute unit a variant in storage type T is charged to, by default: the
// FP32 pipe for fp32, the tensor cores for bf16 and fp16 (what the flash
// kernel and the libraries run on).
template <typename T>
constexpr roofline::ComputeUnit default_compute_unit() {
  if constexpr (std::is_same_v<T, float>)
    return roofline::ComputeUnit::fp32;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return roofline::ComputeUnit::tc_bf16;
  else
    return roofline::ComputeUnit::tc_fp16;
}

// ---------------------------------------------------------------- cost model
//
// FLOPs: the FlashAttention convention, 4·B·H·N²·d: the two matrix products
// Q·Kᵀ and P·V, 2·N²·d each per head (an FMA counts 2).  The softmax (exp,
// max, sum, divide) is not counted.  With the causal mask the count is halved
// (N²/2, not N(N+1)/2), so rates compare with published numbers; a variant
// that computes the masked half anyway (the naive one) gets no credit for it.
//
// Bytes are counted at the storage size (element_bytes = sizeof(T)): a bf16
// variant moves half the bytes of an fp32 one for the same traffic pattern.
inline double flops(const Dims& p) {
  return 4.0 * static_cast<double>(p.heads()) * static_cast<double>(p.N) *
         static_cast<double>(p.N) * static_cast<double>(p.d) * (p.causal ? 0.5 : 1.0);
}

inline double tensor_bytes(const Dims& p, std::size_t element_bytes) {
  return static_cast<double>(p.tensor_elements()) * static_cast<double>(element_bytes);
}

inline double score_bytes(const Dims& p, std::size_t element_bytes) {
  return static_cast<double>(p.score_elements()) * static_cast<double>(element_bytes);
}

// bytes_min: Q, K, V read once, O written once.
inline double bytes_min(const Dims& p, std::size_t element_bytes) {
  return 4.0 * tensor_bytes(p, element_bytes);
}

// bytes_model follows the GEMM family's convention: the global traffic the
// block tiles request (a matrix re-read once per tile of the other operand),
// whether or not L2 serves the re-reads, so all variants are counted alike.
//
// Naive (16×16 output tiles, one thread per output element, see
// attention_naive.cu):
//   scores   Q and K each read ⌈N/16⌉ times, S written once;
//   softmax  S read twice (running max and sum, then normalise), P written once;
//   P·V      P read ⌈d/16⌉ times, V read ⌈N/16⌉ times, O written once.
// The mask changes nothing: S and P are computed and stored in full.
inline constexpr std::int64_t kNaiveTile = 16;

inline double naive_bytes_model(const Dims& p, std::size_t element_bytes) {
  const auto tiles = [](std::int64_t n) {
    return static_cast<double>((n + kNaiveTile - 1) / kNaiveTile);
  };
  const double t = tensor_bytes(p, element_bytes);
  const double s = score_bytes(p, element_bytes);
  const double scores = 2.0 * tiles(p.N) * t + s;
  const double softmax = 2.0 * s + s;
  const double pv = tiles(p.d) * s + tiles(p.N) * t + t;
  return scores + softmax + pv;
}

// Fused (block_m query rows per block, K/V tiles of block_n keys): Q read
// once, O written once, K and V read once per query tile.  Under the causal
// mask a query tile reads only the key tiles up to its last row (the ones
// wholly above the diagonal are skipped), about half of them.
inline double fused_key_rows_read(const Dims& p, std::int64_t block_m, std::int64_t block_n) {
  double rows = 0;
  for (std::int64_t m0 = 0; m0 < p.N; m0 += block_m) {
    if (!p.causal) {
      rows += static_cast<double>(p.N);
      continue;
    }
    const std::int64_t last_row = std::min(m0 + block_m, p.N) - 1;
    rows += static_cast<double>(std::min(p.N, (last_row / block_n + 1) * block_n));
  }
  return rows;
}

inline double fused_bytes_model(const Dims& p, std::int64_t block_m, std::int64_t block_n,
                                std::size_t element_bytes) {
  const double kv_rereads = 2.0 * static_cast<double>(p.heads()) *
                            fused_key_rows_read(p, block_m, block_n) * static_cast<double>(p.d) *
                            static_cast<double>(element_bytes);
  return 2.0 * tensor_bytes(p, element_bytes) + kv_rereads;
}

inline roofline::Cost cost(const Dims& p, double bytes_model, std::size_t element_bytes,
                           roofline::ComputeUnit unit) {
  return {.flops = flops(p),
          .bytes_min = bytes_min(p, element_bytes),
          .bytes_model = bytes_model,
          .unit = unit};
}

// ---------------------------------------------------------------- memory footprint
//
// Device memory an instance allocates (KernelRecord::device_bytes), so the
// harness can skip what does not fit before allocating.  Naive: Q, K, V, O
// and the two B·H·N² scratch tensors S and P, all of T (at B·N = 16k, d = 64,
// N = 16k in fp32 that is 69 GB).  Fused: Q, K, V, O only.
template <typename T = float>
std::size_t device_bytes_needed_naive(const Shape& shape) {
  const Dims p = dims(shape);
  return static_cast<std::size_t>(4 * p.tensor_elements() + 2 * p.score_elements()) * sizeof(T);
}

template <typename T = float>
std::size_t device_bytes_needed_fused(const Shape& shape) {
  return static_cast<std::size_t>(4 * dims(shape).tensor_elements()) * sizeof(T);
}

// ---------------------------------------------------------------- validation
//
// The float64 reference is computed on the query rows listed by
// checked_rows(): every row while N <= full_check_max_n, else 64 rows per
// head spread evenly from the first to the last (both always included).
inline constexpr std::int64_t kFullCheckMaxN = 256;
inline constexpr std::int64_t kSampledRowsPerHead = 64;

inline std::vector<std::int64_t> checked_rows(std::int64_t N,
                                              std::int64_t full_check_max_n = kFullCheckMaxN) {
  std::vector<std::int64_t> rows;
  if (N <= full_check_max_n || N <= kSampledRowsPerHead) {
    for (std::int64_t i = 0; i < N; ++i) rows.push_back(i);
    return rows;
  }
  for (std::int64_t k = 0; k < kSampledRowsPerHead; ++k)
    rows.push_back((k * (N - 1) + (kSampledRowsPerHead - 1) / 2) / (kSampledRowsPerHead - 1));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

struct Reference {
  std::vector<std::int64_t> rows;  // checked query rows of every head
  std::vector<double> O;           // [B·H][rows.size()][d]
  double max_abs_logit_terms = 0;  // max over rows and visible keys of scale·Σ_k |q_ik·k_jk|
  double max_weighted_abs_v = 0;   // max over rows and columns of Σ_j P_ij·|V_jc|
  double max_abs_v = 0;            // max |V_jc|
};

// Float64 reference on exactly the values (inputs as stored in T, and the
// fp32 scale) the kernels read, with the magnitudes the error bound needs.
template <typename T>
Reference reference(const Dims& p, float scale, std::span<const T> q, std::span<const T> k,
                    std::span<const T> v, std::vector<std::int64_t> rows) {
  const auto d = static_cast<std::size_t>(p.d);
  const auto N = static_cast<std::size_t>(p.N);
  const double sc = scale;
  Reference ref;
  ref.rows = std::move(rows);
  ref.O.assign(static_cast<std::size_t>(p.heads()) * ref.rows.size() * d, 0.0);
  for (const T x : v) ref.max_abs_v = std::max(ref.max_abs_v, std::fabs(double{to_f32(x)}));
  std::vector<double> logits(N), weighted_abs_v(d), qi(d);
  for (std::size_t head = 0; head < static_cast<std::size_t>(p.heads()); ++head) {
    const T* qh = q.data() + head * N * d;
    const T* kh = k.data() + head * N * d;
    const T* vh = v.data() + head * N * d;
    for (std::size_t r = 0; r < ref.rows.size(); ++r) {
      const auto i = static_cast<std::size_t>(ref.rows[r]);
      for (std::size_t c = 0; c < d; ++c) qi[c] = to_f32(qh[i * d + c]);
      const std::size_t visible = p.causal ? i + 1 : N;
      double row_max = -INFINITY;
      for (std::size_t j = 0; j < visible; ++j) {
        double dot = 0, abs_terms = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double term = qi[c] * to_f32(kh[j * d + c]);
          dot += term;
          abs_terms += std::fabs(term);
        }
        logits[j] = sc * dot;
        row_max = std::max(row_max, logits[j]);
        ref.max_abs_logit_terms = std::max(ref.max_abs_logit_terms, std::fabs(sc) * abs_terms);
      }
      double sum = 0;
      for (std::size_t j = 0; j < visible; ++j) sum += (logits[j] = std::exp(logits[j] - row_max));
      double* out = ref.O.data() + (head * ref.rows.size() + r) * d;
      std::fill(weighted_abs_v.begin(), weighted_abs_v.end(), 0.0);
      for (std::size_t j = 0; j < visible; ++j) {
        const double w = logits[j] / sum;
        for (std::size_t c = 0; c < d; ++c) {
          const double vjc = to_f32(vh[j * d + c]);
          out[c] += w * vjc;
          weighted_abs_v[c] += w * std::fabs(vjc);
        }
      }
      for (const double a : weighted_abs_v)
        ref.max_weighted_abs_v = std::max(ref.max_weighted_abs_v, a);
    }
  }
  return ref;
}

// ---------------------------------------------------------------- error model
//
// How far a variant's O may be from the float64 result, per element, by a
// first-order rounding-error analysis.  The inputs are exact (the reference
// reads the values as stored in T); the error comes from the arithmetic and
// from what the variant rounds to T on the way.  With M = max_abs_logit_terms,
// A = max_weighted_abs_v, u = 2^-24 (fp32) and u_T the unit roundoff of the
// storage type (bf16 2^-8, fp16 2^-11, fp32 0: covered by the plain fp32
// tolerance):
//
//  1. A logit s_j = scale·q·k_j is a sum of d products (exact in fp32 for
//     bf16 and fp16 inputs), off by at most Σ_d·M, where the sum factor is
//       SIMT fp32 (round to nearest)  Σ_n = λ·√n·u, the probabilistic bound of
//         an n-term sum (Higham & Mary, "A New Approach to Probabilistic
//         Rounding Error Analysis", SIAM J. Sci. Comput. 41(5), 2019: it holds
//         with probability at least 1 - 2n·exp(-λ²/2) under their model of
//         independent rounding errors; λ = 6);
//       tensor cores                  Σ_n = n·2u, the worst case of a
//         recursive sum that truncates (2u) once per term: the PTX ISA leaves
//         mma's accumulation order and rounding unspecified, and tensor cores
//         truncate rather than round (Fasi et al., "Numerical behavior of
//         NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330, 2021), so the
//         errors are biased and the probabilistic √n bound does not apply.
//     Scaling (folding log2 e into the scale) and subtracting the row max
//     (|s - m| <= 2M) add 4u·M; storing S in T before the softmax (the naive
//     path in bf16/fp16) adds u_T·M.  exp / exp2 (expf, exp2f or
//     ex2.approx.f32, all within 2 ulp on the GPU, CUDA C++ Programming
//     Guide, "Mathematical Functions") adds kExpError = 2^-21 (4 ulp).  The
//     sum ε of these is a relative error on each weight p_j = exp(s_j - m).
//     (The max's own error cancels: it divides numerator and denominator.)
//  2. O = Σ p_j·v_j / Σ p_j.  Relative errors of at most a on the numerator's
//     weights and b on the denominator's move O by at most a·A + b·|O| <=
//     (a + b)·A.  Both carry ε (2ε·A); the numerator also carries u_T when P
//     is rounded to T before P·V (the flash kernel rounds the unnormalised
//     p_j in registers, the naive path the normalised P in memory); each of
//     the two sums over the N keys adds Σ_N, the division u.
//  3. fp16 has subnormals below 2^-14: a weight that small is rounded with an
//     absolute error up to 2^-25, not a relative one, which adds up to
//     N·2^-25·max|V| (the row sum is >= 1: the max key weighs 1).
//  4. Rounding O to T is a relative error u_T: the tolerance's rtol.
//
// So |O - O_ref| <= (2ε + 2Σ_N + u + [u_T if P in T])·A + [fp16] N·2^-25·max|V|,
// on top of rtol = u_T (or the plain fp32 tolerance, rl::tolerance_for("fp32")).
// Sizes at N = 129, d = 64, N(0, 1) inputs: fp32 SIMT ~1.5e-4 absolute, ~100x
// the error the fp32 kernels show, and a 0.1% error in the scale (~2e-3) fails;
// bf16 ~4e-3 + 2^-8·|O|, dominated by rounding P, and a 2% scale error, one
// masked key let through or a missing rescale of the accumulator fails (the
// tests show each).
inline constexpr double kUnitRoundoff = 0x1p-24;
inline constexpr double kLambda = 6.0;
inline constexpr double kExpError = 0x1p-21;

enum class Accumulation {
  simt_fp32,    // fp32 FMAs and adds, rounded to nearest
  tensor_core,  // mma.sync / library GEMMs with fp32 accumulators
};

struct ErrorModel {
  Accumulation accumulation;
  bool scores_in_storage_type;         // S stored in T before the softmax
  bool probabilities_in_storage_type;  // P rounded to T before P·V
};

// The fp32 SIMT kernels (naive and fused): nothing rounded below fp32.
inline constexpr ErrorModel kErrorSimtFp32{Accumulation::simt_fp32, false, false};
// The unfused path on library GEMMs: S and P stored in T between the kernels.
inline constexpr ErrorModel kErrorUnfusedTensorCore{Accumulation::tensor_core, true, true};
// Flash attention on tensor cores (this family's mma.sync kernel, cuDNN
// SDPA): S stays fp32 in registers, P is rounded to T as the A operand of P·V.
inline constexpr ErrorModel kErrorFlashTensorCore{Accumulation::tensor_core, false, true};

struct StorageRounding {
  double relative;       // unit roundoff u_T
  double tiny_absolute;  // absolute rounding error below the normal range (fp16)
};

template <typename T>
StorageRounding storage_rounding() {
  if constexpr (std::is_same_v<T, float>)
    return {0.0, 0.0};  // within the plain fp32 tolerance
  else  // u_T; fp16 also rounds absolutely below 2^-14 (bf16 has fp32's exponent range)
    return {unit_roundoff(precision_name<T>()), std::is_same_v<T, __half> ? 0x1p-25 : 0.0};
}

// Σ_n of item 1: the error factor of an n-term fp32 sum.
inline double sum_error_factor(std::int64_t n, Accumulation accumulation) {
  const double u = kUnitRoundoff;
  if (accumulation == Accumulation::simt_fp32)
    return kLambda * std::sqrt(static_cast<double>(n)) * u;
  return static_cast<double>(n) * 2.0 * u;
}

template <typename T>
Tolerance tolerance(const Dims& p, const Reference& ref, const ErrorModel& model) {
  const double u = kUnitRoundoff;
  const StorageRounding t = storage_rounding<T>();
  const double logit_error = sum_error_factor(p.d, model.accumulation) + 4.0 * u +
                             (model.scores_in_storage_type ? t.relative : 0.0);
  const double weight_error = logit_error * ref.max_abs_logit_terms + kExpError;
  const double relative_to_a = 2.0 * weight_error +
                               2.0 * sum_error_factor(p.N, model.accumulation) + u +
                               (model.probabilities_in_storage_type ? t.relative : 0.0);
  const double tiny_weights = model.probabilities_in_storage_type
                                  ? static_cast<double>(p.N) * t.tiny_absolute * ref.max_abs_v
                                  : 0.0;
  const double extra = relative_to_a * ref.max_weighted_abs_v + tiny_weights;
  if constexpr (std::is_same_v<T, float>) {
    const Tolerance base = tolerance_for("fp32");
    return {base.rtol, base.atol + extra};
  } else {
    // O rounded to T: relative u_T, absolute t.tiny_absolute below the normal range.
    return {t.relative, extra * (1.0 + t.relative) + t.tiny_absolute};
  }
}

// ---------------------------------------------------------------- shared-memory swizzle
//
// The tensor-core kernel's Q, K and V tiles in shared memory are [rows][D]
// 16-bit elements, a row of D/8 chunks of 16 bytes.  ldmatrix reads an 8×8
// matrix per 8-lane phase: 8 rows, one 16-byte chunk each, at the same column.
// Shared memory has 32 banks of 4 bytes (a 128-byte line), so chunk c of any
// row whose pitch is a multiple of 128 bytes (D = 64: 128 B, D = 128: 256 B)
// sits on banks 4·(c % 8) .. +3: the 8 rows of a phase would all hit the same
// 4 banks, an 8-way conflict.  XOR-ing the chunk index with row % 8 spreads
// any 8 consecutive rows over the 8 bank quads, for reads (ldmatrix, .trans
// too) and for the cp.async writes of a row alike.  Here (not in the kernel's
// file) so a host test can check exactly that.
inline constexpr int kSwizzleChunkElements = 8;  // 16 bytes of a 16-bit type

__host__ __device__ constexpr int swizzled_chunk(int row, int chunk) {
  return chunk ^ (row & 7);
}

// Element offset of (row, col) in a swizzled [rows][D] tile; col % 8 is kept.
template <int D>
__host__ __device__ constexpr int swizzled_index(int row, int col) {
  static_assert(D % (8 * kSwizzleChunkElements) == 0, "the XOR needs 8 chunks per row");
  return row * D + swizzled_chunk(row, col / kSwizzleChunkElements) * kSwizzleChunkElements +
         col % kSwizzleChunkElements;
}

// ---------------------------------------------------------------- workload

template <typename T>
struct Args {
  T* O;
  const T* Q;
  const T* K;
  const T* V;
  T* S;  // the naive path's [B, H, N, N] scores, nullptr for the fused ones
  T* P;  // the naive path's [B, H, N, N] probabilities
  int B, H, N, d;
  bool causal;
  float scale;  // 1/√d
};

template <typename T>
using Launcher = std::function<void(const Args<T>&, cudaStream_t)>;

// The naive path's softmax, shared with the library baselines (cuda_only/):
// P = softmax(S) row by row for `rows` = B·H·N rows of N scores (row
// head·N + i is query i of a head), S already scaled; under the causal mask
// P[i][j] = 0 for j > i.  Reads S as T, computes in fp32, writes P as T.
// Defined in attention_naive.cu for float, __nv_bfloat16 and __half.
template <typename T>
void launch_attention_softmax(T* P, const T* S, std::int64_t rows, int N, bool causal,
                              cudaStream_t stream);

// ---------------------------------------------------------------- fused launches
//
// What the fused kernels' launchers share (device code: the host compiler of
// the CUDA backend's tests sees this header too).  Every fused kernel takes
// (O, Q, K, V, N, causal, scale·log2 e) and runs on the grid (B·H, ⌈N /
// block_m⌉): heads on x, query tiles on y (at most 65535); its dynamic shared
// memory is opted in once (needed above 48 KB).  The head dim is a template
// parameter compiled for 64 and 128: dispatch_head_dim refuses any other.
#if defined(__CUDACC__) || defined(RL_EMULATE)

inline constexpr float kLog2e = 1.44269504088896341f;  // exp(x) = exp2(x·log2 e)

template <auto Kernel, typename T>
void launch_fused(const std::string& name, const Args<T>& a, int block_m, int threads,
                  std::size_t shared_bytes, cudaStream_t stream) {
  const int query_tiles = (a.N + block_m - 1) / block_m;
  if (query_tiles > 65535)
    throw std::invalid_argument(name + ": N = " + std::to_string(a.N) +
                                " needs more than 65535 query tiles");
  static const bool opted_in = [shared_bytes] {
    RL_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared_bytes)));
    return true;
  }();
  (void)opted_in;
  rl::launch(Kernel, dim3(static_cast<unsigned>(a.B * a.H), static_cast<unsigned>(query_tiles)),
             dim3(static_cast<unsigned>(threads)), shared_bytes, stream, a.O, a.Q, a.K, a.V, a.N,
             a.causal, a.scale * kLog2e);
}

// launch(std::integral_constant<int, D>{}) for d = D in {64, 128}.
template <typename Launch>
void dispatch_head_dim(const std::string& name, int d, Launch&& launch) {
  switch (d) {
    case 64:
      return launch(std::integral_constant<int, 64>{});
    case 128:
      return launch(std::integral_constant<int, 128>{});
    default:
      throw std::invalid_argument(name + ": head dim d=" + std::to_string(d) +
                                  " is not compiled (supported: 64, 128)");
  }
}

#endif  // __CUDACC__ || RL_EMULATE

inline constexpr InputSpec kDefaultInputs{.mean = 0.0, .stddev = 1.0};

template <typename T>
class AttentionWorkload final : public InspectableWorkload {
 public:
  // Public so a test can wrap it (a wrong scale, a batch left unwritten).
  Launcher<T> launch;

  AttentionWorkload(Launcher<T> launcher, const Dims& p, const ErrorModel& error, bool needs_scores,
                    std::uint64_t seed)
      : launch(std::move(launcher)),
        p_(p),
        error_(error),
        scale_(static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)))),
        q_(count()),
        k_(count()),
        v_(count()),
        o_(count()),
        s_(needs_scores ? static_cast<std::size_t>(p.score_elements()) : 0),
        p_scratch_(needs_scores ? static_cast<std::size_t>(p.score_elements()) : 0) {
    redraw_inputs(kDefaultInputs, seed);
  }

  void run(cudaStream_t stream) override {
    launch(Args<T>{o_.get(), q_.get(), k_.get(), v_.get(), s_.get(), p_scratch_.get(),
                   static_cast<int>(p_.B), static_cast<int>(p_.H), static_cast<int>(p_.N),
                   static_cast<int>(p_.d), p_.causal, scale_},
           stream);
  }

  Validation validate(cudaStream_t stream) override {
    o_.poison(stream);
    if (s_.size() != 0) {
      s_.poison(stream);
      p_scratch_.poison(stream);
    }
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    return compare(download_outputs());
  }

  // Q, K, V ~ spec, rounded to T.  With the default N(0, 1) the logits
  // q·k/√d have a standard deviation of about 1: softmax rows neither
  // uniform nor one-hot.
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    std::vector<T> q(count()), k(count()), v(count());
    for (auto* x : {&q, &k, &v})
      for (T& e : *x) e = from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
    upload_and_reference(q, k, v);
  }

  // Redraws K and V of keys first_key..N-1 in every head (from `spec`) and
  // recomputes the reference: under the causal mask, query rows before
  // first_key must not change.
  void redraw_keys_from(std::int64_t first_key, const InputSpec& spec, std::uint64_t seed) {
    SeededRng rng(seed);
    std::vector<T> k = k_.download(), v = v_.download();
    const auto d = static_cast<std::size_t>(p_.d);
    for (std::size_t head = 0; head < static_cast<std::size_t>(p_.heads()); ++head)
      for (auto j = static_cast<std::size_t>(first_key); j < static_cast<std::size_t>(p_.N); ++j)
        for (std::size_t c = 0; c < d; ++c)
          for (auto* x : {&k, &v})
            (*x)[(head * static_cast<std::size_t>(p_.N) + j) * d + c] =
                from_f32<T>(static_cast<float>(rng.normal(spec.mean, spec.stddev)));
    upload_and_reference(q_.download(), k, v);
  }

  std::vector<float> download_outputs() const override { return download_as_float(o_); }

  std::vector<TensorDump> tensors() const override {
    const std::vector<std::int64_t> bhnd{p_.B, p_.H, p_.N, p_.d};
    return {tensor_dump("Q", "input", bhnd, q_), tensor_dump("K", "input", bhnd, k_),
            tensor_dump("V", "input", bhnd, v_), tensor_dump("O", "output", bhnd, o_)};
  }

  // Test hook: check sampled rows from this N on (checked_rows), so a small
  // instance exercises the sampled path.  Recomputes the reference.
  void set_full_check_max_n(std::int64_t full_check_max_n) {
    full_check_max_n_ = full_check_max_n;
    upload_and_reference(q_.download(), k_.download(), v_.download());
  }

  const Reference& reference_rows() const { return ref_; }
  Tolerance current_tolerance() const { return tolerance<T>(p_, ref_, error_); }

 private:
  std::size_t count() const { return static_cast<std::size_t>(p_.tensor_elements()); }

  void upload_and_reference(const std::vector<T>& q, const std::vector<T>& k,
                            const std::vector<T>& v) {
    q_.upload(q);
    k_.upload(k);
    v_.upload(v);
    ref_ = reference<T>(p_, scale_, q, k, v, checked_rows(p_.N, full_check_max_n_));
  }

  // Compares the checked rows; the first failure names its (b, h, i) row.
  Validation compare(const std::vector<float>& out) const {
    const Tolerance tol = current_tolerance();
    const auto d = static_cast<std::size_t>(p_.d);
    const std::size_t rows = ref_.rows.size();
    Validation result;
    bool failed = false;
    for (std::size_t head = 0; head < static_cast<std::size_t>(p_.heads()); ++head) {
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = static_cast<std::size_t>(ref_.rows[r]);
        const std::span<const float> got(
            out.data() + (head * static_cast<std::size_t>(p_.N) + i) * d, d);
        const std::span<const double> want(ref_.O.data() + (head * rows + r) * d, d);
        result = compare_to_reference(got, want, tol, result);
        if (!failed && !result.passed) {
          failed = true;
          result.detail = "O row (b=" + std::to_string(head / static_cast<std::size_t>(p_.H)) +
                          ", h=" + std::to_string(head % static_cast<std::size_t>(p_.H)) +
                          ", i=" + std::to_string(i) + "), " + result.detail;
        }
      }
    }
    return result;
  }

  Dims p_;
  ErrorModel error_;
  float scale_;
  std::int64_t full_check_max_n_ = kFullCheckMaxN;
  DeviceBuffer<T> q_, k_, v_, o_;
  DeviceBuffer<T> s_, p_scratch_;
  Reference ref_;
};

// ---------------------------------------------------------------- record

// What differs between attention records; the rest follows from it.
template <typename T>
struct RecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  Launcher<T> launcher;
  bool needs_scores;                               // allocates S and P ([B, H, N, N] of T)
  std::function<double(const Dims&)> bytes_model;  // the cost model's bytes_model
  ErrorModel error;                                // kErrorSimtFp32, kErrorFlashTensorCore, ...
  std::vector<std::int64_t> head_dims = {};        // compiled head dims; empty: any d
  roofline::ComputeUnit unit = default_compute_unit<T>();
  bool gpu_only = false;  // library baselines (cuda_only/)
  int min_cc = 0;         // 80 for mma.sync with bf16
  // Device memory beyond Q, K, V, O (and S, P): a library's workspace.
  std::function<std::size_t(const Shape&)> workspace_bytes = {};
  std::string idea = {};     // one line for the report: what it changes from its baseline
  std::string library = {};  // "cuBLAS", "cuDNN" for a library baseline
  std::string fuses = {};    // the unfused record a fused one replaces (the fusion pair)
};

template <typename T>
KernelRecord make_record(RecordSpec<T> spec) {
  const std::string name = spec.name;
  const std::size_t element_bytes = sizeof(T);
  return KernelRecord{
      .name = std::move(spec.name),
      .family = "attention",
      .variant = std::move(spec.variant),
      .precision = precision_name<T>(),
      .unit = spec.unit,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = spec.gpu_only,
      .min_cc = spec.min_cc,
      .shapes = [](SizePreset preset) { return shapes(preset); },
      .cost =
          [bytes_model = spec.bytes_model, unit = spec.unit, element_bytes](const Shape& shape) {
            return cost(dims(shape), bytes_model(dims(shape)), element_bytes, unit);
          },
      .make_workload =
          [name, launcher = spec.launcher, error = spec.error, needs_scores = spec.needs_scores,
           head_dims = spec.head_dims](const Shape& shape, std::uint64_t seed) {
            const Dims p = dims(shape);
            if (!head_dims.empty() &&
                std::find(head_dims.begin(), head_dims.end(), p.d) == head_dims.end()) {
              std::string supported;
              for (const std::int64_t d : head_dims)
                supported += (supported.empty() ? "" : ", ") + std::to_string(d);
              throw std::invalid_argument(name + ": head dim d=" + std::to_string(p.d) +
                                          " is not compiled (supported: " + supported + ")");
            }
            return std::unique_ptr<Workload>(
                new AttentionWorkload<T>(launcher, p, error, needs_scores, seed));
          },
      .device_bytes =
          [needs_scores = spec.needs_scores, workspace = spec.workspace_bytes](const Shape& shape) {
            return (needs_scores ? device_bytes_needed_naive<T>(shape)
                                 : device_bytes_needed_fused<T>(shape)) +
                   (workspace ? workspace(shape) : std::size_t{0});
          },
      .idea = std::move(spec.idea),
      .library = std::move(spec.library),
      .refuse_on = {},
      .fuses = std::move(spec.fuses),
  };
}

}  // namespace rl::attention
