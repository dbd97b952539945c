// Attention, naive on library GEMMs: the unfused path most users actually run
// (an eager framework calling cuBLAS for each matmul), fp32 and bf16.
//
//   S = scale·Q·Kᵀ   cublasGemmStridedBatchedEx, one GEMM per head (batch B·H),
//                    the scale folded into alpha; S is [B, H, N, N] in T
//   P = softmax(S)   the naive path's softmax kernel (launch_attention_softmax,
//                    attention_naive.cu), causal mask applied here
//   O = P·V          cublasGemmStridedBatchedEx again, O in T
//
// Row-major heads, column-major cuBLAS (rl::cublaslt::as_column_major):
// S = Q·Kᵀ with K stored N×d is computed as Sᵀ = K·Qᵀ ("TN"), O = P·V as
// Oᵀ = Vᵀ·Pᵀ ("NN"), on the tensors as they are: nothing is copied.  Both
// GEMMs accumulate in fp32 (CUBLAS_COMPUTE_32F; the fp32 record therefore uses
// no TF32) and cuBLAS picks its algorithm inside the call (CUBLAS_GEMM_DEFAULT).
//
// Cost model: attention_cost.hpp's naive_bytes_model at T's size (S and P
// written and read back; its 16×16-tile re-reads of Q, K, P and V stand in for
// the library's unknown tiling).  Memory: Q, K, V, O, S, P and cuBLAS's
// workspace (handed to it with cublasSetWorkspace, so the figure is exact).
// Error model: S and P stored in T between the kernels; cuBLAS's summation
// order is unknown, so the worst-case sum bound (kErrorUnfusedTensorCore),
// also for fp32.
//
// Chart: these records have no baseline arrow ("") — they are the starting
// point the fused kernels and cuDNN SDPA are read against.
//
// GPU only.  Not yet run on a GPU.
#include "attention/cuda_only/attention_library.hpp"

#include "rl/check_libs.hpp"
#include "rl/cublaslt.hpp"

#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace rl::attention {
namespace {

constexpr std::size_t kWorkspaceBytes = cublaslt::kDefaultWorkspaceBytes;

template <typename T>
constexpr cudaDataType_t cuda_data_type() {
  if constexpr (std::is_same_v<T, float>)
    return CUDA_R_32F;
  else
    return CUDA_R_16BF;
}

// The two per-head GEMMs in cuBLAS's terms.
cublaslt::ColumnMajorGemm scores_gemm(const Dims& p) {  // S (N×N) = Q (N×d) · Kᵀ, K stored N×d
  return cublaslt::as_column_major({.M = p.N,
                                    .N = p.N,
                                    .K = p.d,
                                    .a_transposed = false,
                                    .b_transposed = true,
                                    .lda = p.d,
                                    .ldb = p.d,
                                    .ldc = p.N});
}

cublaslt::ColumnMajorGemm output_gemm(const Dims& p) {  // O (N×d) = P (N×N) · V (N×d)
  return cublaslt::as_column_major({.M = p.N,
                                    .N = p.d,
                                    .K = p.N,
                                    .a_transposed = false,
                                    .b_transposed = false,
                                    .lda = p.N,
                                    .ldb = p.d,
                                    .ldc = p.d});
}

template <typename T>
class NaiveCublas final : public Library<T> {
 public:
  explicit NaiveCublas(const Dims& p) : p_(p), cublas_(CUBLAS_DEFAULT_MATH, kWorkspaceBytes) {}

  void launch(const Args<T>& a, cudaStream_t stream) override {
    require_same_problem(a, p_, attention_scale(p_));
    const cublasHandle_t handle = cublas_.on(stream);
    const long long head = p_.N * p_.d, scores = p_.N * p_.N;
    const int batch = static_cast<int>(p_.heads());
    const float zero = 0.0f, one = 1.0f;
    gemm(handle, scores_gemm(p_), &a.scale, a.K, head, a.Q, head, &zero, a.S, scores, batch);
    launch_attention_softmax<T>(a.P, a.S, p_.heads() * p_.N, static_cast<int>(p_.N), p_.causal,
                                stream);
    gemm(handle, output_gemm(p_), &one, a.V, head, a.P, scores, &zero, a.O, head, batch);
  }

  std::string notes() const override {
    return "cublasGemmStridedBatchedEx " + cublaslt::layout_name(scores_gemm(p_)) +
           " (S = scale·Q·Kᵀ as Sᵀ = K·Qᵀ) and " + cublaslt::layout_name(output_gemm(p_)) +
           " (O = P·V as Oᵀ = Vᵀ·Pᵀ), batch B·H = " + std::to_string(p_.heads()) +
           ", CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT; softmax: the naive path's kernel";
  }

 private:
  // D = alpha · op(first) · op(second) per head, column-major, T in and out.
  static void gemm(cublasHandle_t handle, const cublaslt::ColumnMajorGemm& g, const float* alpha,
                   const T* first, long long first_stride, const T* second, long long second_stride,
                   const float* beta, T* d, long long d_stride, int batch) {
    constexpr cudaDataType_t type = cuda_data_type<T>();
    RL_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        handle, g.trans_first, g.trans_second, static_cast<int>(g.m), static_cast<int>(g.n),
        static_cast<int>(g.k), alpha, first, type, static_cast<int>(g.ld_first), first_stride,
        second, type, static_cast<int>(g.ld_second), second_stride, beta, d, type,
        static_cast<int>(g.ldd), d_stride, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  Dims p_;
  cublaslt::CublasHandle cublas_;
};

template <typename T>
KernelRecord naive_cublas_record(std::string name) {
  return library_record<T>(
      {.name = std::move(name),
       .variant = "naive_cublas",
       .baseline = "",
       .launcher = {},
       .needs_scores = true,
       .bytes_model = [](const Dims& p) { return naive_bytes_model(p, sizeof(T)); },
       .error = kErrorUnfusedTensorCore,
       .unit = default_compute_unit<T>(),
       .min_cc = std::is_same_v<T, float> ? 0 : 80,
       .workspace_bytes =
           [](const Shape&) { return kWorkspaceBytes + cublaslt::kCublasHandleOwnBytes; },
       .idea = "QKᵀ and P·V as cuBLAS strided-batched GEMMs around the softmax kernel: the "
               "unfused path most users run",
       .library = "cuBLAS"},
      [](const Dims& p) -> std::unique_ptr<Library<T>> {
        return std::make_unique<NaiveCublas<T>>(p);
      });
}

}  // namespace

RL_REGISTER_KERNEL(naive_cublas_record<float>("attention_naive_cublas_fp32"));
RL_REGISTER_KERNEL(naive_cublas_record<__nv_bfloat16>("attention_naive_cublas_bf16"));

}  // namespace rl::attention
