// GEMM library baselines: what NVIDIA's own libraries reach on the ladder's
// problem, one record per precision, so each hand-written rung can be read as
// a share of the library at its precision.
//
//   gemm_cublas_sgemm_fp32   cublasSgemm, CUBLAS_DEFAULT_MATH: plain FP32 on
//                            the FP32 pipe.  DEFAULT_MATH, not PEDANTIC_MATH:
//                            since CUDA 11 DEFAULT_MATH never uses TF32 for an
//                            SGEMM unless the NVIDIA_TF32_OVERRIDE environment
//                            variable forces it, and it keeps cuBLAS's fast
//                            SGEMM kernels, the ones a user gets; PEDANTIC_MATH
//                            is cuBLAS's mode for numerical studies and may pick
//                            slower kernels, which would flatter the SIMT rungs.
//                            A forced TF32 would not pass unseen: the fp32 error
//                            bound (no input rounding) fails it.
//   gemm_cublas_tf32         cublasSgemm with CUBLAS_TF32_TENSOR_OP_MATH: fp32
//                            in and out, TF32 tensor cores inside.
//   gemm_cublaslt_fp16       cuBLASLt, fp16 A and B, fp32 accumulate, fp32 C.
//   gemm_cublaslt_bf16       the same with bf16 A and B.
//   gemm_cublaslt_fp8        cuBLASLt, e4m3 A and B (sm_89+), fp32 accumulate,
//                            fp32 C, no scale factors (scale 1).
//   gemm_cublaslt_mxfp8      cuBLASLt's block-scaled matmul (compute capability
//                            10.0+): e4m3 A and B with
//                            CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 on both
//                            (one ue8m0 per 32 K-elements, the tiled layout of
//                            gemm_block_scaled.hpp), fp32 C; beside
//                            gemm_tcgen05_mxfp8, on its workload
//                            (gemm_block_scaled_workload.hpp: B stored N x K,
//                            "TN", rows padded to 32 so the library multiplies
//                            K rounded up to 32 on zeros).
//
// The problem is the ladder's (gemm_problem.hpp): row-major A (M x K),
// B (K x N), C (M x N) in fp32.  cuBLAS is column-major, so every record computes the
// column-major Cᵀ = Bᵀ·Aᵀ on the same buffers (rl::cublaslt::as_column_major:
// the operands swap places, nothing is copied), layout "NN".  The exception is
// fp8: cuBLASLt runs fp8 only as "TN" (first operand transposed), so that
// record also stores B transposed (N x K, a copy made on the host when the
// inputs are drawn, outside the timed region) and multiplies the copy; the
// validation still reads the row-major A and B it was drawn from.
//
// Algorithm: cuBLAS chooses inside the call; cuBLASLt's is the heuristic's
// first answer for a 32 MiB workspace (what a user who asks the library gets),
// named in the results by Workload::notes().
//
// Cost model: FLOPs 2 M N K.  The library's tiling is unknown, so bytes_model
// is bytes_min (A and B read once, C written once): its point on the chart is
// placed at the compulsory traffic.
//
// Memory: A, B, C, the library workspace (cuBLAS is handed its workspace with
// cublasSetWorkspace so the figure is exact) and fp8's transposed B.
//
// GPU only (no library under the emulator).  Not yet run on a GPU.
#include "gemm/gemm_block_scaled_workload.hpp"
#include "gemm/gemm_launch.hpp"
#include "gemm/gemm_workload.hpp"

#include "rl/check.hpp"
#include "rl/check_libs.hpp"
#include "rl/cublaslt.hpp"

#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rl::gemm {
namespace {

// A reuse tile as large as any C: A and B are each counted once, so
// bytes_model = bytes_min.
constexpr ReuseTile kWholeMatrix{std::numeric_limits<int>::max(), std::numeric_limits<int>::max()};

constexpr std::size_t kWorkspaceBytes = cublaslt::kDefaultWorkspaceBytes;

// The workload's row-major problem (lda = K, ldb = N or, stored transposed, K;
// ldc = N).
cublaslt::RowMajorGemm row_major(const Dims& d, bool b_transposed) {
  return {.M = d.M,
          .N = d.N,
          .K = d.K,
          .a_transposed = false,
          .b_transposed = b_transposed,
          .lda = d.K,
          .ldb = b_transposed ? d.K : d.N,
          .ldc = d.N};
}

// The launcher receives the workload's Args; a library state is built for one
// shape, so a mismatch is a programming error, never a silent wrong answer.
template <typename T>
void require_same_problem(const Args<T>& a, const Dims& d) {
  if (a.M != d.M || a.N != d.N || a.K != d.K || a.lda != d.K || a.ldb != d.N || a.ldc != d.N)
    throw std::logic_error(
        "gemm library baseline: launched on another problem than it was built for");
}

// ---------------------------------------------------------------- library state

// One instance's library objects (handle, descriptors, workspace), behind
// GemmWorkload's launcher.
template <typename T>
class Library {
 public:
  virtual ~Library() = default;
  virtual void launch(const Args<T>& args, cudaStream_t stream) = 0;
  virtual std::string notes() const = 0;
  // New inputs were uploaded (drawn, or the exact check's integers): refresh
  // any copy of them the library reads.
  virtual void inputs_changed(const std::vector<T>& /*host_b*/) {}
};

// cublasSgemm in the given math mode, on the row-major problem as Cᵀ = Bᵀ·Aᵀ.
class CublasSgemm final : public Library<float> {
 public:
  CublasSgemm(const Dims& d, cublasMath_t math, std::string math_name)
      : d_(d), math_name_(std::move(math_name)), cublas_(math, kWorkspaceBytes) {}

  void launch(const Args<float>& a, cudaStream_t stream) override {
    require_same_problem(a, d_);
    const cublaslt::ColumnMajorGemm g = cublaslt::as_column_major(row_major(d_, false));
    const float alpha = 1.0f, beta = 0.0f;
    RL_CUBLAS_CHECK(cublasSgemm(
        cublas_.on(stream), g.trans_first, g.trans_second, static_cast<int>(g.m),
        static_cast<int>(g.n), static_cast<int>(g.k), &alpha, a.B, static_cast<int>(g.ld_first),
        a.A, static_cast<int>(g.ld_second), &beta, a.C, static_cast<int>(g.ldd)));
  }

  std::string notes() const override {
    return "cublasSgemm " + cublaslt::layout_name(cublaslt::as_column_major(row_major(d_, false))) +
           " (row-major C = A·B as column-major Cᵀ = Bᵀ·Aᵀ), " + math_name_;
  }

 private:
  Dims d_;
  std::string math_name_;
  cublaslt::CublasHandle cublas_;
};

template <typename T>
constexpr cudaDataType_t cuda_data_type();
template <>
constexpr cudaDataType_t cuda_data_type<__half>() {
  return CUDA_R_16F;
}
template <>
constexpr cudaDataType_t cuda_data_type<__nv_bfloat16>() {
  return CUDA_R_16BF;
}
template <>
constexpr cudaDataType_t cuda_data_type<__nv_fp8_e4m3>() {
  return CUDA_R_8F_E4M3;
}

// cuBLASLt with T inputs, fp32 accumulate and fp32 C, through the shared
// launcher.  kTransposedB: the library multiplies a transposed copy of B
// (fp8's "TN"), refreshed whenever the inputs are drawn.
template <typename T, bool kTransposedB>
class CublasLtGemm final : public Library<T> {
 public:
  explicit CublasLtGemm(const Dims& d)
      : d_(d),
        b_transposed_(kTransposedB ? static_cast<std::size_t>(d.N * d.K) : 0),
        matmul_(cublaslt::as_column_major(row_major(d, kTransposedB)),
                cublaslt::MatmulTypes{.first = cuda_data_type<T>(),
                                      .second = cuda_data_type<T>(),
                                      .d = CUDA_R_32F,
                                      .compute = CUBLAS_COMPUTE_32F,
                                      .scale = CUDA_R_32F},
                kWorkspaceBytes) {}

  void launch(const Args<T>& a, cudaStream_t stream) override {
    require_same_problem(a, d_);
    matmul_.run(kTransposedB ? b_transposed_.get() : a.B, a.A, a.C, stream);
  }

  std::string notes() const override {
    return matmul_.notes() + (kTransposedB ? " (B stored transposed, N x K)" : "");
  }

  void inputs_changed(const std::vector<T>& host_b) override {
    if constexpr (kTransposedB) {
      const auto N = static_cast<std::size_t>(d_.N), K = static_cast<std::size_t>(d_.K);
      std::vector<T> bt(N * K);
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t n = 0; n < N; ++n) bt[n * K + k] = host_b[k * N + n];
      b_transposed_.upload(bt);
    }
  }

 private:
  Dims d_;
  DeviceBuffer<T> b_transposed_;
  cublaslt::Matmul matmul_;
};

// cuBLASLt's MXFP8 matmul on the block-scaled workload's buffers: row-major
// C = (A . scale_A)(B . scale_B) as column-major Cᵀ = op(first) op(second),
// first = Bᵀ as stored (N x K, transposed: "TN"), second = A; the library's
// "A" scales are therefore the scales of B's columns and its "B" scales A's.
// The descriptors and the heuristic's algorithm are made once per instance,
// the scale pointers set at each launch (host-only descriptor writes).
// (rl::cublaslt::Matmul takes fp32 scalar scale pointers only; with a scale
// mode it could build these descriptors too.)
class CublasLtMxfp8 {
 public:
  explicit CublasLtMxfp8(const Dims& d)
      : gemm_(cublaslt::as_column_major({.M = d.M,
                                         .N = d.N,
                                         .K = padded_ld(d.K, kScaleBlock),
                                         .a_transposed = false,
                                         .b_transposed = true,
                                         .lda = padded_ld(d.K, kScaleBlock),
                                         .ldb = padded_ld(d.K, kScaleBlock),
                                         .ldc = d.N})),
        workspace_(kWorkspaceBytes) {
    RL_CUBLAS_CHECK(cublasLtCreate(&handle_));
    RL_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    set(CUBLASLT_MATMUL_DESC_TRANSA, gemm_.trans_first);
    set(CUBLASLT_MATMUL_DESC_TRANSB, gemm_.trans_second);
    const std::int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
    set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
    auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    RL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&first_, CUDA_R_8F_E4M3, u64(gemm_.k), u64(gemm_.m),
                                               gemm_.ld_first));
    RL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&second_, CUDA_R_8F_E4M3, u64(gemm_.k), u64(gemm_.n),
                                               gemm_.ld_second));
    RL_CUBLAS_CHECK(
        cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, u64(gemm_.m), u64(gemm_.n), gemm_.ldd));
    cublasLtMatmulPreference_t preference = nullptr;
    RL_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    const std::uint64_t bytes = kWorkspaceBytes;
    RL_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof bytes));
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        handle_, op_, first_, second_, d_, d_, preference, 1, &heuristic_, &returned);
    cublasLtMatmulPreferenceDestroy(preference);
    RL_CUBLAS_CHECK(status);
    if (returned == 0)
      throw std::runtime_error("cuBLASLt has no MXFP8 (VEC32_UE8M0) algorithm for " +
                               cublaslt::layout_name(gemm_) + " m=" + std::to_string(gemm_.m) +
                               " n=" + std::to_string(gemm_.n) + " k=" + std::to_string(gemm_.k) +
                               " on this device");
  }
  CublasLtMxfp8(const CublasLtMxfp8&) = delete;
  CublasLtMxfp8& operator=(const CublasLtMxfp8&) = delete;
  ~CublasLtMxfp8() {  // statuses ignored: no throw from a destructor
    cublasLtMatrixLayoutDestroy(d_);
    cublasLtMatrixLayoutDestroy(second_);
    cublasLtMatrixLayoutDestroy(first_);
    cublasLtMatmulDescDestroy(op_);
    cublasLtDestroy(handle_);
  }

  void launch(const ScaledArgs& s, cudaStream_t stream) {
    set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(s.scale_b));
    set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(s.scale_a));
    const float alpha = 1.0f, beta = 0.0f;
    RL_CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &alpha, s.gemm.B, first_, s.gemm.A, second_, &beta,
                                   s.gemm.C, d_, s.gemm.C, d_, &heuristic_.algo, workspace_.get(),
                                   workspace_.bytes(), stream));
  }

 private:
  template <typename V>
  void set(cublasLtMatmulDescAttributes_t name, const V& value) {
    RL_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, name, &value, sizeof value));
  }

  cublaslt::ColumnMajorGemm gemm_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, d_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  DeviceBuffer<unsigned char> workspace_;
};

// ---------------------------------------------------------------- workload

// GemmWorkload (inputs, float64 reference, bounded comparison) with a library
// behind its launcher, plus the library's notes.
template <typename T>
class LibraryGemmWorkload final : public InspectableWorkload {
 public:
  LibraryGemmWorkload(std::unique_ptr<Library<T>> library, ErrorModel error, const Dims& d,
                      std::uint64_t seed)
      : library_(std::move(library)),
        gemm_([lib = library_.get()](const Args<T>& a, cudaStream_t s) { lib->launch(a, s); },
              error, d, seed) {
    gemm_.b_uploaded = [lib = library_.get()](const std::vector<T>& b) { lib->inputs_changed(b); };
    library_->inputs_changed(gemm_.host_b());
  }

  void run(cudaStream_t stream) override { gemm_.run(stream); }
  Validation validate(cudaStream_t stream) override { return gemm_.validate(stream); }
  std::string notes() const override { return library_->notes(); }
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    gemm_.redraw_inputs(spec, seed);
  }
  std::vector<float> download_outputs() const override { return gemm_.download_outputs(); }
  std::vector<TensorDump> tensors() const override { return gemm_.tensors(); }

 private:
  std::unique_ptr<Library<T>> library_;  // declared first: outlives gemm_, whose launcher uses it
  GemmWorkload<T> gemm_;
};

// ---------------------------------------------------------------- records

template <typename T>
struct LibrarySpec {
  std::string name;
  std::string variant;
  roofline::Precision precision;
  roofline::ComputeUnit unit;
  int min_cc;
  ErrorModel error;
  std::function<std::unique_ptr<Library<T>>(const Dims&)> make_library;
  std::function<std::size_t(const Dims&)> library_bytes;  // workspace and copies
  std::int64_t dim_multiple = 1;  // M, N and K must be multiples of it (fp8: 16)
};

// Why the library refuses a shape (M, N and K must be multiples of
// `multiple`), or nullopt: the harness shows the instance as skipped with it.
inline std::optional<std::string> library_refusal(const std::string& name, const Shape& shape,
                                                  std::int64_t multiple) {
  const Dims d = dims(shape);
  if (d.M % multiple == 0 && d.N % multiple == 0 && d.K % multiple == 0) return std::nullopt;
  return name + ": the library needs M, N and K multiples of " + std::to_string(multiple) +
         ", got " + shape.to_string();
}

template <typename T>
KernelRecord library_record(LibrarySpec<T> spec) {
  const std::int64_t multiple = spec.dim_multiple;
  std::string library = spec.variant.starts_with("cublaslt") ? "cuBLASLt" : "cuBLAS";
  return KernelRecord{
      .name = spec.name,
      .family = "gemm",
      .variant = std::move(spec.variant),
      .precision = spec.precision,
      .unit = spec.unit,
      .baseline = "",
      .ceiling = "",
      .gpu_only = true,
      .min_cc = spec.min_cc,
      .shapes = [](SizePreset preset) { return shapes(preset); },
      .cost = [unit = spec.unit](
                  const Shape& shape) { return cost(dims(shape), kWholeMatrix, sizeof(T), unit); },
      .make_workload = [name = spec.name, multiple, error = spec.error,
                        make_library = spec.make_library](
                           const Shape& shape, std::uint64_t seed) -> std::unique_ptr<Workload> {
        if (std::optional<std::string> why = library_refusal(name, shape, multiple))
          throw std::invalid_argument(*why);
        const Dims d = dims(shape);
        return std::make_unique<LibraryGemmWorkload<T>>(make_library(d), error, d, seed);
      },
      .device_bytes =
          [library_bytes = spec.library_bytes](const Shape& shape) {
            const Dims d = dims(shape);
            return device_bytes(d, sizeof(T)) + library_bytes(d);
          },
      .idea = "",
      .library = std::move(library),
      .refuse_shape = [name = spec.name, multiple](
                          const Shape& shape) { return library_refusal(name, shape, multiple); },
  };
}

std::size_t workspace_only(const Dims&) {
  return kWorkspaceBytes;
}

// cuBLAS (cublasCreate) records: our workspace and the handle's own.
std::size_t workspace_and_cublas_handle(const Dims&) {
  return kWorkspaceBytes + cublaslt::kCublasHandleOwnBytes;
}

// fp8: the workspace and B stored transposed (N x K bytes).
std::size_t workspace_and_transposed_b(const Dims& d) {
  return kWorkspaceBytes + static_cast<std::size_t>(d.N * d.K) * sizeof(__nv_fp8_e4m3);
}

// Error models (gemm_reference.hpp's bound, per element against sum |a||b|):
//  - cuBLAS SGEMM: FFMA on the FP32 pipe, the SIMT ladder's bound.
//  - TF32: the tensor-core accumulation bound; cuBLAS does not document
//    whether it rounds fp32 inputs to tf32 to nearest (2^-11) or truncates
//    (2^-10), so the bound allows truncation (the hand-written rungs use
//    cvt.rna, 2^-11).
//  - fp16, bf16: inputs exact as stored, the tensor-core accumulation bound.
//  - fp8: Hopper's fp8 tensor cores accumulate in about 14 bits; cuBLASLt,
//    with its default of no "fast accumulation"
//    (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0), promotes the partial sums to fp32
//    periodically, at an interval it does not document: kHopperFp8Error
//    (gemm_reference.hpp), the model of gemm_wgmma_inflight_fp8 too.
constexpr ErrorModel kLibraryTf32Error{
    .unit_roundoff_accumulate = kTensorCoreError.unit_roundoff_accumulate,
    .unit_roundoff_inputs = 0x1p-10};

using roofline::ComputeUnit;

}  // namespace

RL_REGISTER_KERNEL(library_record<float>(
    {.name = "gemm_cublas_sgemm_fp32",
     .variant = "cublas_sgemm",
     .precision = roofline::Precision::fp32,
     .unit = ComputeUnit::fp32,
     .min_cc = 0,
     .error = kFp32SimtError,
     .make_library = [](const Dims& d) -> std::unique_ptr<Library<float>> {
       return std::make_unique<CublasSgemm>(d, CUBLAS_DEFAULT_MATH, "CUBLAS_DEFAULT_MATH");
     },
     .library_bytes = workspace_and_cublas_handle}));

RL_REGISTER_KERNEL(
    library_record<float>({.name = "gemm_cublas_tf32",
                           .variant = "cublas_tf32",
                           .precision = roofline::Precision::tf32,
                           .unit = ComputeUnit::tc_tf32,
                           .min_cc = 80,
                           .error = kLibraryTf32Error,
                           .make_library = [](const Dims& d) -> std::unique_ptr<Library<float>> {
                             return std::make_unique<CublasSgemm>(d, CUBLAS_TF32_TENSOR_OP_MATH,
                                                                  "CUBLAS_TF32_TENSOR_OP_MATH");
                           },
                           .library_bytes = workspace_and_cublas_handle}));

RL_REGISTER_KERNEL(
    library_record<__half>({.name = "gemm_cublaslt_fp16",
                            .variant = "cublaslt",
                            .precision = roofline::Precision::fp16,
                            .unit = ComputeUnit::tc_fp16,
                            .min_cc = 80,
                            .error = kTensorCoreError,
                            .make_library = [](const Dims& d) -> std::unique_ptr<Library<__half>> {
                              return std::make_unique<CublasLtGemm<__half, false>>(d);
                            },
                            .library_bytes = workspace_only}));

RL_REGISTER_KERNEL(library_record<__nv_bfloat16>(
    {.name = "gemm_cublaslt_bf16",
     .variant = "cublaslt",
     .precision = roofline::Precision::bf16,
     .unit = ComputeUnit::tc_bf16,
     .min_cc = 80,
     .error = kTensorCoreError,
     .make_library = [](const Dims& d) -> std::unique_ptr<Library<__nv_bfloat16>> {
       return std::make_unique<CublasLtGemm<__nv_bfloat16, false>>(d);
     },
     .library_bytes = workspace_only}));

// cuBLASLt runs fp8 as "TN" only, with 16-byte-aligned matrices and leading
// dimensions: M, N and K multiples of 16 (the ladder's odd shapes are left out).
RL_REGISTER_KERNEL(library_record<__nv_fp8_e4m3>(
    {.name = "gemm_cublaslt_fp8",
     .variant = "cublaslt",
     .precision = roofline::Precision::fp8,
     .unit = ComputeUnit::tc_fp8,
     .min_cc = 89,
     .error = kHopperFp8Error,
     .make_library = [](const Dims& d) -> std::unique_ptr<Library<__nv_fp8_e4m3>> {
       return std::make_unique<CublasLtGemm<__nv_fp8_e4m3, true>>(d);
     },
     .library_bytes = workspace_and_transposed_b,
     .dim_multiple = 16}));

// cuBLASLt's block-scaled matmul exists from compute capability 10.0 on; the
// error model is the fp8 records' (gemm_block_scaled_workload.hpp).
RL_REGISTER_KERNEL(make_scaled_record(
    {.name = "gemm_cublaslt_mxfp8",
     .variant = "cublaslt",
     .baseline = "",
     .precision = roofline::Precision::mxfp8,
     .unit = ComputeUnit::tc_mxfp8,
     .tile = kWholeMatrix,
     .launcher = nullptr,
     .make_launcher = [](const Dims& d) -> ScaledLauncher {
       auto library = std::make_shared<CublasLtMxfp8>(d);
       return [library](const ScaledArgs& s, cudaStream_t stream) { library->launch(s, stream); };
     },
     .min_cc = 100,
     .gpu_only = true,
     .library = "cuBLASLt",
     .refuse_on = [](int cc_x10) -> std::optional<std::string> {
       if (cc_x10 >= 100) return std::nullopt;
       return "gemm_cublaslt_mxfp8: cuBLASLt's block-scaled matmul (VEC32_UE8M0 scales) needs "
              "compute capability 10.0 or later";
     },
     .refuse_shape = [](const Shape& shape) -> std::optional<std::string> {
       // As gemm_cublaslt_fp8: 16-byte-aligned rows of D and matrices; K is
       // padded to 32 by the workload.
       const Dims d = dims(shape);
       if (d.M % 16 == 0 && d.N % 16 == 0) return std::nullopt;
       return "gemm_cublaslt_mxfp8: the library needs M and N multiples of 16, got " +
              shape.to_string();
     },
     .library_bytes = kWorkspaceBytes,
     .notes = "cuBLASLt TN, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 on A and B, heuristic's "
              "first algorithm"}));

}  // namespace rl::gemm
