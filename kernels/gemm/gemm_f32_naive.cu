// GEMM gemm_f32_naive (FP32 SIMT ladder, its floor: no baseline): naive, one
// thread per output of C.
//
// Each thread computes one c_ij as a K-long dot product, reading its row of A
// and its column of B straight from global memory.  The 32 x 32 block is laid
// out with threadIdx.x walking DOWN a column of C, so the 32 lanes of a warp
// hold 32 different rows: at each k they read 32 elements of A that are K
// floats apart (32 separate 32-byte sectors for 128 useful bytes) and one
// element of B (a broadcast), and their stores of C are N floats apart.  This
// is the floor of the ladder: memory bound, and wasteful even at that.
//
// Roofline: reuse tile 32 x 1 (the warp's footprint; see gemm_cost.hpp), so
// A is requested N times over: about 2 FLOPs per 4 bytes, deep on the
// memory-bound side, and below even that roof because most of each sector
// fetched for A is thrown away.
//
// Large shapes: it refuses those above 2^37 FLOPs (4096^3 and below run).
// At a few hundred GFLOP/s (an estimate for a memory-bound kernel this
// wasteful, not a measurement), 8192^3 (1.1 TFLOP) and the Llama MLP shape
// would take seconds per launch and minutes per benchmark.
#include "gemm/gemm_launch.hpp"
#if !defined(__CUDA_ARCH__)  // the record: host pass only (rl/device_instances.hpp)
#include "gemm/gemm_workload.hpp"
#endif

namespace rl::gemm {

constexpr int kNaiveTile = 32;

// rl-static: kernel=gemm_f32_naive max_regs=64 max_smem=0
template <int BlockM, int BlockN>
__global__ void __launch_bounds__(BlockM* BlockN)
    gemm_f32_naive(float* __restrict__ C, const float* __restrict__ A, const float* __restrict__ B,
                   int M, int N, int K, int lda, int ldb, int ldc) {
  const int row = static_cast<int>(blockIdx.x * BlockM + threadIdx.x);
  const int col = static_cast<int>(blockIdx.y * BlockN + threadIdx.y);
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
  C[row * ldc + col] = acc;
}

void launch_gemm_f32_naive(const Args<float>& a, cudaStream_t stream) {
  // Grid x walks M (the warp runs down a column), y walks N.
  const dim3 grid(static_cast<unsigned>((a.M + kNaiveTile - 1) / kNaiveTile),
                  static_cast<unsigned>((a.N + kNaiveTile - 1) / kNaiveTile));
  launch_gemm(gemm_f32_naive<kNaiveTile, kNaiveTile>, grid, dim3(kNaiveTile, kNaiveTile), a,
              stream);
}

#if !defined(__CUDA_ARCH__)
constexpr double kNaiveMaxFlops = 0x1p37;  // see the header comment

RL_REGISTER_KERNEL(make_fp32_simt_record(
    "gemm_f32_naive", "", {.M = kNaiveTile, .N = 1}, &launch_gemm_f32_naive,
    "one thread per output; a warp walks down a column of C, so its A reads are uncoalesced",
    kNaiveMaxFlops));
#endif  // !__CUDA_ARCH__

}  // namespace rl::gemm
