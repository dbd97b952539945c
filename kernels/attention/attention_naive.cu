// Attention, naive: three kernels, the way an eager framework runs
// softmax(scale·QKᵀ + mask)·V one op at a time.  The baseline of the family.
//
//   attention_naive_scores   S = scale·Q·Kᵀ, a [B, H, N, N] tensor in global
//                            memory (16×16 output tiles through shared memory,
//                            one thread per element; the mask is not applied
//                            here, as a framework's matmul knows nothing of it)
//   attention_naive_softmax  one warp per row of S: running max and sum in one
//                            sweep, then P = exp(S - max) / sum in a second;
//                            masked entries (key j > query i) are exactly 0
//   attention_naive_pv       O = P·V, the same 16×16 tiling
//
// What it costs on the roofline: S and P are each written once and read back
// (S twice, P once per 16 columns of O), so traffic grows as N² while the
// arithmetic per byte stays a small constant: the point sits far left, on or
// near the bandwidth diagonal, and the N² scratch runs out of device memory
// at long sequences (device_bytes_needed_naive).  Under the causal mask it
// computes and stores the whole N×N anyway (half of it zeros), while the FLOP
// convention credits only half: that waste is part of what it shows.
#include "attention/attention_cost.hpp"
#include "attention/attention_launch.hpp"
#include "attention/attention_problem.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "attention/attention_error_model.hpp"
#include "attention/attention_workload.hpp"
#endif

namespace rl::attention {

// Cost model: rl::attention::naive_bytes_model in attention_cost.hpp (S and
// P written and re-read, and the 16×16 tiles' re-reads of Q, K, P and V).
// Error model: kErrorSimtFp32 (fp32 throughout).

constexpr int kTile = static_cast<int>(kNaiveTile);

// One 16×16 tile of C = alpha·A·op(B) for one head: A is M×K row-major,
// op(B) = Bᵀ with B N×K row-major (kTransposeB, for Q·Kᵀ) or B itself, K×N
// row-major (for P·V).  Thread (x, y) of the 16×16 block computes C[m0 + y][n0
// + x]; each step stages a 16×16 slice of A and of op(B) in shared memory,
// stored as b_tile[k][n] either way so the inner loop is the same.
template <bool kTransposeB>
__device__ __forceinline__ void tiled_matmul_16(float* __restrict__ C, const float* __restrict__ A,
                                                const float* __restrict__ Bm, int M, int N, int K,
                                                float alpha, float (*a_tile)[kTile + 1],
                                                float (*b_tile)[kTile + 1]) {
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int m0 = static_cast<int>(blockIdx.y) * kTile;
  const int n0 = static_cast<int>(blockIdx.x) * kTile;
  const std::int64_t head = blockIdx.z;
  A += head * M * K;
  Bm += head * N * K;
  C += head * M * N;

  float sum = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    const int am = m0 + ty, ak = k0 + tx;
    a_tile[ty][tx] = am < M && ak < K ? A[static_cast<std::int64_t>(am) * K + ak] : 0.0f;
    if constexpr (kTransposeB) {
      // Coalesced along k: lane x reads B[n0 + y][k0 + x] and stores it at b_tile[x][y].
      const int bn = n0 + ty, bk = k0 + tx;
      b_tile[tx][ty] = bn < N && bk < K ? Bm[static_cast<std::int64_t>(bn) * K + bk] : 0.0f;
    } else {
      const int bk = k0 + ty, bn = n0 + tx;
      b_tile[ty][tx] = bk < K && bn < N ? Bm[static_cast<std::int64_t>(bk) * N + bn] : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) sum += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();
  }
  const int m = m0 + ty, n = n0 + tx;
  if (m < M && n < N) C[static_cast<std::int64_t>(m) * N + n] = alpha * sum;
}

// rl-static: kernel=attention_naive_scores max_regs=48 max_smem=2176
__global__ void attention_naive_scores(float* __restrict__ S, const float* __restrict__ Q,
                                       const float* __restrict__ K, int N, int d, float scale) {
  __shared__ float a_tile[kTile][kTile + 1];
  __shared__ float b_tile[kTile][kTile + 1];
  tiled_matmul_16<true>(S, Q, K, N, N, d, scale, a_tile, b_tile);
}

// rl-static: kernel=attention_naive_pv max_regs=48 max_smem=2176
__global__ void attention_naive_pv(float* __restrict__ O, const float* __restrict__ P,
                                   const float* __restrict__ V, int N, int d) {
  __shared__ float a_tile[kTile][kTile + 1];
  __shared__ float b_tile[kTile][kTile + 1];
  tiled_matmul_16<false>(O, P, V, N, d, N, 1.0f, a_tile, b_tile);
}

constexpr int kSoftmaxWarpsPerBlock = 8;

// One warp per row of S (row = head·N + i).  Sweep 1: each lane keeps a
// running max and a sum rescaled whenever the max grows, over the visible
// columns it owns; the lanes then merge their (max, sum) pairs with xor
// butterflies, so every lane ends with the same pair.  Sweep 2 writes P.
// S and P are stored as T (fp32 here; bf16 or fp16 for the library baselines
// in cuda_only/, which reuse it through launch_attention_softmax); the
// arithmetic is fp32 either way.
//
// rl-static: kernel=attention_naive_softmax max_regs=40 max_smem=0
template <typename T>
__global__ void attention_naive_softmax(T* __restrict__ P, const T* __restrict__ S,
                                        std::int64_t rows, int N, bool causal) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kSoftmaxWarpsPerBlock +
                           static_cast<std::int64_t>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;  // the whole warp leaves together: the shuffles see 32 lanes
  const T* s = S + row * N;
  T* p = P + row * N;
  const int visible = causal ? static_cast<int>(row % N) + 1 : N;

  float row_max = -INFINITY, sum = 0.0f;
  for (int j = lane; j < visible; j += 32) {
    const float x = to_f32(s[j]);
    if (x > row_max) {
      sum = sum * expf(row_max - x) + 1.0f;
      row_max = x;
    } else {
      sum += expf(x - row_max);
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other_max = __shfl_xor_sync(0xffffffffu, row_max, offset);
    const float other_sum = __shfl_xor_sync(0xffffffffu, sum, offset);
    const float merged = fmaxf(row_max, other_max);
    // A lane with no visible column yet has (-inf, 0): it contributes nothing.
    sum = merged == -INFINITY ? 0.0f
                              : sum * expf(row_max - merged) + other_sum * expf(other_max - merged);
    row_max = merged;
  }
  const float inv_sum = 1.0f / sum;
  for (int j = lane; j < N; j += 32)
    p[j] = from_f32<T>(j < visible ? expf(to_f32(s[j]) - row_max) * inv_sum : 0.0f);
}

template <typename T>
void launch_attention_softmax(T* P, const T* S, std::int64_t rows, int N, bool causal,
                              cudaStream_t stream) {
  rl::launch(
      attention_naive_softmax<T>,
      dim3(static_cast<unsigned>((rows + kSoftmaxWarpsPerBlock - 1) / kSoftmaxWarpsPerBlock)),
      dim3(32 * kSoftmaxWarpsPerBlock), 0, stream, P, S, rows, N, causal);
}

template void launch_attention_softmax<float>(float*, const float*, std::int64_t, int, bool,
                                              cudaStream_t);
template void launch_attention_softmax<__nv_bfloat16>(__nv_bfloat16*, const __nv_bfloat16*,
                                                      std::int64_t, int, bool, cudaStream_t);
template void launch_attention_softmax<__half>(__half*, const __half*, std::int64_t, int, bool,
                                               cudaStream_t);

void launch_attention_naive(const Args<float>& a, cudaStream_t stream) {
  const std::int64_t heads = static_cast<std::int64_t>(a.B) * a.H;
  if (heads > 65535)
    throw std::invalid_argument("attention_f32_naive: B·H = " + std::to_string(heads) +
                                " exceeds the grid's z limit of 65535");
  const auto tiles = [](int n) { return static_cast<unsigned>((n + kTile - 1) / kTile); };
  const dim3 tile_block(kTile, kTile);
  const auto z = static_cast<unsigned>(heads);
  rl::launch(attention_naive_scores, dim3(tiles(a.N), tiles(a.N), z), tile_block, 0, stream, a.S,
             a.Q, a.K, a.N, a.d, a.scale);
  launch_attention_softmax(a.P, a.S, heads * a.N, a.N, a.causal, stream);
  rl::launch(attention_naive_pv, dim3(tiles(a.d), tiles(a.N), z), tile_block, 0, stream, a.O, a.P,
             a.V, a.N, a.d);
}

#if !defined(__CUDA_ARCH__)
RL_REGISTER_KERNEL(make_record<float>(
    {.name = "attention_f32_naive",
     .variant = "naive",
     .baseline = "",
     .launcher = &launch_attention_naive,
     .needs_scores = true,
     .bytes_model = [](const Dims& p) { return naive_bytes_model(p, sizeof(float)); },
     .error = kErrorSimtFp32,
     .idea = "three kernels: S = scale·QKᵀ and P = softmax(S) written to memory and read back"}));
#endif  // !__CUDA_ARCH__

}  // namespace rl::attention
