// Library ceilings: what a user gets from NVIDIA's own GEMMs, reported beside
// the kernel-loop ceilings.  cuBLASLt for tc.tf32, tc.fp16, tc.bf16, tc.fp8
// (e4m3, sm_89+, with A/B scale factors) and tc.int8; cuBLAS SGEMM for
// fp32.fma.  CUDA backend only (GPU-only records).
//
// Square M = N = K GEMMs, one shape per size (4096, 8192, 16384 at the large
// preset): the harness measures every shape and the ceiling keeps the best.
// Layout "TN" (A transposed, column-major), the one layout cuBLASLt supports
// for fp8 and int8 on every architecture; beta = 0.  The algorithm is
// cuBLASLt's first heuristic answer for a 32 MiB workspace (what a user who
// asks the library gets); Workload::notes() names it.  The cuBLASLt calls are
// the project's one launcher, rl/cublaslt.hpp, shared with the GEMM baselines.
//
// Validation: the inputs are random multiples of 0.5 in [-1, 1] (integers in
// [-2, 2] for int8), exact in every input type, so a float64 dot product is
// the exact answer.  A full CPU reference at 16384^3 is out of reach, so 256
// entries at seeded random positions are checked against a float64 CPU dot
// product, on the same shape and code path that is timed.
//
// FLOPs 2 M N K; bytes: A and B read once, D written once.
#include "rl/check.hpp"
#include "rl/check_libs.hpp"
#include "rl/cublaslt.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rl::ceilings {
namespace {

constexpr std::size_t kWorkspaceBytes = cublaslt::kDefaultWorkspaceBytes;
constexpr int kSpotChecks = 256;

// One precision: storage types, element encoding from a small integer code
// (value = code * kUnit), compute type.
struct GemmTypes {
  roofline::Precision precision;  // its spelling is the tolerance_for() key
  cudaDataType_t ab_type;         // A and B
  cudaDataType_t d_type;          // D (= C)
  cublasComputeType_t compute;    // accumulation
  cudaDataType_t scale_type;      // alpha / beta
  std::size_t ab_bytes, d_bytes;
  double unit;      // element value = code * unit
  bool fp8_scales;  // A/B scale factors (fp8 only)
};

// A and B scale factors of the fp8 GEMM: their product 0.5 is part of the
// reference, so a scale the library ignored fails validation.
constexpr float kFp8ScaleA = 2.0f;
constexpr float kFp8ScaleB = 0.25f;

// Encodes code in {-2..2} times `unit` into `bytes` bytes of the AB type.
void encode(const GemmTypes& t, int code, unsigned char* out) {
  const float value = static_cast<float>(code * t.unit);
  switch (t.ab_type) {
    case CUDA_R_32F:
      std::memcpy(out, &value, 4);
      return;
    case CUDA_R_16F: {
      const __half h = __float2half_rn(value);
      std::memcpy(out, &h, 2);
      return;
    }
    case CUDA_R_16BF: {
      const __nv_bfloat16 h = __float2bfloat16_rn(value);
      std::memcpy(out, &h, 2);
      return;
    }
    case CUDA_R_8F_E4M3: {
      // e4m3 (bias 7, 3 mantissa bits): 0.5 = 0x30, 1.0 = 0x38, sign 0x80.
      const int magnitude = code < 0 ? -code : code;
      unsigned char bits = magnitude == 0 ? 0x00 : (magnitude == 1 ? 0x30 : 0x38);
      if (code < 0) bits |= 0x80;
      *out = bits;
      return;
    }
    case CUDA_R_8I:
      *out = static_cast<unsigned char>(static_cast<signed char>(code));
      return;
    default:
      throw std::logic_error("cublaslt ceiling: unsupported input type");
  }
}

double decode_output(const GemmTypes& t, const unsigned char* in) {
  switch (t.d_type) {
    case CUDA_R_32F: {
      float v;
      std::memcpy(&v, in, 4);
      return v;
    }
    case CUDA_R_16F: {
      __half v;
      std::memcpy(&v, in, 2);
      return __half2float(v);
    }
    case CUDA_R_16BF: {
      __nv_bfloat16 v;
      std::memcpy(&v, in, 2);
      return __bfloat162float(v);
    }
    case CUDA_R_32I: {
      std::int32_t v;
      std::memcpy(&v, in, 4);
      return v;
    }
    default:
      throw std::logic_error("cublaslt ceiling: unsupported output type");
  }
}

std::int64_t square_size(const Shape& shape) {
  const std::int64_t m = shape.at("m");
  if (m != shape.at("n") || m != shape.at("k") || m < 16 || m % 16 != 0 || m > 65536)
    throw std::invalid_argument(
        "library GEMM ceiling: need m = n = k, a multiple of 16 in "
        "[16, 65536]; got " +
        shape.to_string());
  return m;
}

std::vector<Shape> gemm_shapes(SizePreset preset) {
  std::vector<std::int64_t> sizes{4096};
  if (preset != SizePreset::small) sizes.push_back(8192);
  if (preset == SizePreset::large) sizes.push_back(16384);
  std::vector<Shape> shapes;
  for (const std::int64_t s : sizes) shapes.push_back(Shape{{{"m", s}, {"n", s}, {"k", s}}});
  return shapes;
}

roofline::Cost gemm_cost(const Shape& shape, const GemmTypes& t, roofline::ComputeUnit unit) {
  const auto s = static_cast<double>(square_size(shape));
  const double bytes = s * s * static_cast<double>(2 * t.ab_bytes + t.d_bytes);
  return {2.0 * s * s * s, bytes, bytes, unit};
}

// Column-major storage; A is stored K x M (op(A) = A^T is M x K), B is K x N,
// D is M x N.  codes hold the small integers the elements encode.
struct GemmData {
  std::vector<signed char> a_codes, b_codes;
};

class LibraryGemm : public Workload {
 public:
  LibraryGemm(std::int64_t size, GemmTypes types, std::uint64_t seed)
      : n_(size), t_(std::move(types)) {
    const auto count = static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_);
    SeededRng rng(seed);
    codes_.a_codes.resize(count);
    codes_.b_codes.resize(count);
    const auto code = [&rng] {
      return static_cast<signed char>(static_cast<int>(rng.next_u64() % 5) - 2);
    };
    for (auto& c : codes_.a_codes) c = code();
    for (auto& c : codes_.b_codes) c = code();
    a_ = upload_encoded(codes_.a_codes);
    b_ = upload_encoded(codes_.b_codes);
    d_ = DeviceBuffer<unsigned char>(count * t_.d_bytes);
  }

  Validation validate(cudaStream_t stream) override {
    d_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    SeededRng rng(0x5EED);
    std::vector<float> got;
    std::vector<double> ref;
    const double scale = t_.fp8_scales ? double{kFp8ScaleA} * kFp8ScaleB : 1.0;
    const auto n = static_cast<std::size_t>(n_);
    for (int s = 0; s < kSpotChecks; ++s) {
      const std::size_t row = rng.next_u64() % n;
      const std::size_t col = rng.next_u64() % n;
      double dot = 0;
      for (std::size_t k = 0; k < n; ++k)
        dot += codes_.a_codes[row * n + k] * t_.unit * codes_.b_codes[col * n + k] * t_.unit;
      ref.push_back(scale * dot);
      unsigned char raw[4] = {};
      RL_CUDA_CHECK(cudaMemcpy(raw, d_.get() + (col * n + row) * t_.d_bytes, t_.d_bytes,
                               cudaMemcpyDeviceToHost));
      got.push_back(static_cast<float>(decode_output(t_, raw)));
    }
    return compare_to_reference(got, ref, tolerance_for(to_string(t_.precision)));
  }

  std::string notes() const override { return notes_; }

 protected:
  std::int64_t n_;
  GemmTypes t_;
  GemmData codes_;
  DeviceBuffer<unsigned char> a_, b_, d_;
  std::string notes_;

 private:
  DeviceBuffer<unsigned char> upload_encoded(const std::vector<signed char>& codes) const {
    std::vector<unsigned char> bytes(codes.size() * t_.ab_bytes);
    for (std::size_t i = 0; i < codes.size(); ++i) encode(t_, codes[i], &bytes[i * t_.ab_bytes]);
    DeviceBuffer<unsigned char> buffer(bytes.size());
    buffer.upload(bytes);
    return buffer;
  }
};

// cuBLASLt (rl/cublaslt.hpp): D = op(A) op(B) (fp8: times the A and B scales).
class CublasLtGemm final : public LibraryGemm {
 public:
  CublasLtGemm(std::int64_t size, const GemmTypes& types, std::uint64_t seed)
      : LibraryGemm(size, types, seed) {
    const float* a_scale = nullptr;
    const float* b_scale = nullptr;
    if (t_.fp8_scales) {
      // Each scale in its own 128-byte slot: with B's scale 4 bytes after A's,
      // cuBLASLt 13.1 on an H200 offered an algorithm and then answered
      // NOT_SUPPORTED at cublasLtMatmul; 128 bytes apart it ran (first GPU
      // visit, 2026-11-26).
      constexpr std::size_t kSlot = 128 / sizeof(float);
      std::vector<float> host_scales(2 * kSlot, 0.0f);
      host_scales[0] = kFp8ScaleA;
      host_scales[kSlot] = kFp8ScaleB;
      scales_ = DeviceBuffer<float>(host_scales.size());
      scales_.upload(host_scales);
      a_scale = scales_.get();
      b_scale = scales_.get() + kSlot;
    }
    const cublaslt::ColumnMajorGemm tn{.trans_first = CUBLAS_OP_T,
                                       .trans_second = CUBLAS_OP_N,
                                       .m = n_,
                                       .n = n_,
                                       .k = n_,
                                       .ld_first = n_,
                                       .ld_second = n_,
                                       .ldd = n_};
    matmul_ = std::make_unique<cublaslt::Matmul>(
        tn, cublaslt::MatmulTypes{t_.ab_type, t_.ab_type, t_.d_type, t_.compute, t_.scale_type},
        kWorkspaceBytes, a_scale, b_scale);
    notes_ = matmul_->notes();
  }

  void run(cudaStream_t stream) override { matmul_->run(a_.get(), b_.get(), d_.get(), stream); }

 private:
  DeviceBuffer<float> scales_;  // before matmul_, which reads it at every run
  std::unique_ptr<cublaslt::Matmul> matmul_;
};

// cuBLAS SGEMM in plain fp32 (CUBLAS_DEFAULT_MATH: no TF32 unless the
// NVIDIA_TF32_OVERRIDE environment variable forces it).
class CublasSgemm final : public LibraryGemm {
 public:
  CublasSgemm(std::int64_t size, const GemmTypes& types, std::uint64_t seed)
      : LibraryGemm(size, types, seed) {
    RL_CUBLAS_CHECK(cublasCreate(&handle_));
    RL_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
    notes_ = "cublasSgemm TN, CUBLAS_DEFAULT_MATH";
  }
  CublasSgemm(const CublasSgemm&) = delete;
  CublasSgemm& operator=(const CublasSgemm&) = delete;
  ~CublasSgemm() override { cublasDestroy(handle_); }

  void run(cudaStream_t stream) override {
    const float alpha = 1.0f, beta = 0.0f;
    const int n = static_cast<int>(n_);
    RL_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    RL_CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha,
                                reinterpret_cast<const float*>(a_.get()), n,
                                reinterpret_cast<const float*>(b_.get()), n, &beta,
                                reinterpret_cast<float*>(d_.get()), n));
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

template <typename Gemm>
KernelRecord library_record(std::string name, roofline::ComputeUnit unit, int min_cc,
                            GemmTypes types) {
  return KernelRecord{
      .name = std::move(name),
      .family = "ceilings",
      .variant = std::is_same_v<Gemm, CublasSgemm> ? "cublas" : "cublaslt",
      .precision = types.precision,
      .unit = unit,
      .baseline = "",
      .ceiling = std::string(roofline::compute_ceiling_name(unit)),
      .gpu_only = true,
      .min_cc = min_cc,
      .shapes = gemm_shapes,
      .cost = [=](const Shape& shape) { return gemm_cost(shape, types, unit); },
      .make_workload = [=](const Shape& shape, std::uint64_t seed) -> std::unique_ptr<Workload> {
        return std::make_unique<Gemm>(square_size(shape), types, seed);
      },
      // A, B, D and, for cuBLASLt, the workspace offered to its heuristic.
      .device_bytes =
          [=](const Shape& shape) {
            const auto s = static_cast<std::size_t>(square_size(shape));
            return s * s * (2 * types.ab_bytes + types.d_bytes) +
                   (std::is_same_v<Gemm, CublasSgemm> ? 0 : kWorkspaceBytes);
          },
  };
}

using roofline::ComputeUnit;
using roofline::Precision;

}  // namespace

RL_REGISTER_KERNEL(library_record<CublasLtGemm>("cublaslt_gemm_tf32", ComputeUnit::tc_tf32, 80,
                                                {Precision::tf32, CUDA_R_32F, CUDA_R_32F,
                                                 CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 4, 4,
                                                 0.5, false}));
RL_REGISTER_KERNEL(library_record<CublasLtGemm>(
    "cublaslt_gemm_fp16", ComputeUnit::tc_fp16, 80,
    {Precision::fp16, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2, 0.5, false}));
RL_REGISTER_KERNEL(library_record<CublasLtGemm>(
    "cublaslt_gemm_bf16", ComputeUnit::tc_bf16, 80,
    {Precision::bf16, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2, 0.5, false}));
RL_REGISTER_KERNEL(library_record<CublasLtGemm>("cublaslt_gemm_fp8_e4m3", ComputeUnit::tc_fp8, 89,
                                                {Precision::fp8, CUDA_R_8F_E4M3, CUDA_R_16BF,
                                                 CUBLAS_COMPUTE_32F, CUDA_R_32F, 1, 2, 0.5, true}));
RL_REGISTER_KERNEL(library_record<CublasLtGemm>(
    "cublaslt_gemm_int8", ComputeUnit::tc_int8, 80,
    {Precision::int8, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 1, 4, 1.0, false}));
RL_REGISTER_KERNEL(library_record<CublasSgemm>("cublas_sgemm_fp32", ComputeUnit::fp32, 0,
                                               {Precision::fp32, CUDA_R_32F, CUDA_R_32F,
                                                CUBLAS_COMPUTE_32F, CUDA_R_32F, 4, 4, 0.5, false}));

}  // namespace rl::ceilings
