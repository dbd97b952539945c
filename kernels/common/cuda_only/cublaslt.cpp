// rl/cublaslt.hpp: the cuBLASLt launcher shared by the library ceilings and
// baselines.  Every status is checked (RL_CUBLAS_CHECK); the descriptors are
// created once, in the constructor, so the timed region is cublasLtMatmul.
#include "rl/cublaslt.hpp"

#include "rl/check_libs.hpp"

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace rl::cublaslt {

std::string layout_name(const ColumnMajorGemm& g) {
  const auto op = [](cublasOperation_t t) { return t == CUBLAS_OP_N ? "N" : "T"; };
  return std::string(op(g.trans_first)) + op(g.trans_second);
}

std::string describe(const AlgorithmInfo& info) {
  char waves[32];
  std::snprintf(waves, sizeof(waves), "%.2f", static_cast<double>(info.waves));
  return "algo id " + std::to_string(info.id) + ", tile id " + std::to_string(info.tile) +
         ", stages id " + std::to_string(info.stages) + ", workspace " +
         std::to_string(info.workspace_bytes) + " B, waves " + waves;
}

namespace {

template <typename V>
V algo_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t name) {
  V value{};
  std::size_t written = 0;
  RL_CUBLAS_CHECK(
      cublasLtMatmulAlgoConfigGetAttribute(&algo, name, &value, sizeof(value), &written));
  return value;
}

template <typename V>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t name, const V& value) {
  RL_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, name, &value, sizeof(value)));
}

}  // namespace

Matmul::Matmul(const ColumnMajorGemm& gemm, const MatmulTypes& types,
               std::size_t max_workspace_bytes, const float* first_scale, const float* second_scale)
    : gemm_(gemm), types_(types) {
  // A throw from the constructor skips the destructor: release what was
  // created so far before passing the error on.
  auto release = [this] {
    if (preference_ != nullptr) cublasLtMatmulPreferenceDestroy(preference_);
    if (d_layout_ != nullptr) cublasLtMatrixLayoutDestroy(d_layout_);
    if (second_layout_ != nullptr) cublasLtMatrixLayoutDestroy(second_layout_);
    if (first_layout_ != nullptr) cublasLtMatrixLayoutDestroy(first_layout_);
    if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
    if (handle_ != nullptr) cublasLtDestroy(handle_);
  };
  try {
    if (gemm.m < 1 || gemm.n < 1 || gemm.k < 1)
      throw std::invalid_argument("cuBLASLt GEMM: m, n, k must be >= 1");
    if (types.scale != CUDA_R_32F && types.scale != CUDA_R_32I)
      throw std::invalid_argument("cuBLASLt GEMM: run() passes alpha and beta as fp32 or int32");
    RL_CUBLAS_CHECK(cublasLtCreate(&handle_));
    RL_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, types.compute, types.scale));
    set_desc(op_, CUBLASLT_MATMUL_DESC_TRANSA, gemm.trans_first);
    set_desc(op_, CUBLASLT_MATMUL_DESC_TRANSB, gemm.trans_second);
    // A scale pointer off a 16-byte boundary makes cublasLtMatmul answer
    // NOT_SUPPORTED after the heuristic accepted it (seen on an H200): say so here.
    for (const float* scale : {first_scale, second_scale})
      if (reinterpret_cast<std::uintptr_t>(scale) % 16 != 0)
        throw std::invalid_argument("cuBLASLt GEMM: A/B scale pointers must be 16-byte aligned");
    if (first_scale != nullptr) set_desc(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, first_scale);
    if (second_scale != nullptr) set_desc(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, second_scale);

    // A layout is the stored matrix: rows x cols before op() is applied.
    const auto rows = [](cublasOperation_t t, std::int64_t r, std::int64_t c) {
      return static_cast<std::uint64_t>(t == CUBLAS_OP_N ? r : c);
    };
    const auto cols = [](cublasOperation_t t, std::int64_t r, std::int64_t c) {
      return static_cast<std::uint64_t>(t == CUBLAS_OP_N ? c : r);
    };
    RL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(
        &first_layout_, types.first, rows(gemm.trans_first, gemm.m, gemm.k),
        cols(gemm.trans_first, gemm.m, gemm.k), gemm.ld_first));
    RL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(
        &second_layout_, types.second, rows(gemm.trans_second, gemm.k, gemm.n),
        cols(gemm.trans_second, gemm.k, gemm.n), gemm.ld_second));
    RL_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_layout_, types.d,
                                               static_cast<std::uint64_t>(gemm.m),
                                               static_cast<std::uint64_t>(gemm.n), gemm.ldd));

    RL_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference_));
    RL_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &max_workspace_bytes, sizeof(max_workspace_bytes)));
    int returned = 0;
    RL_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, op_, first_layout_, second_layout_,
                                                   d_layout_, d_layout_, preference_, 1,
                                                   &heuristic_, &returned));
    if (returned == 0)
      throw std::runtime_error("cuBLASLt has no algorithm for " + layout_name(gemm) +
                               " m=" + std::to_string(gemm.m) + " n=" + std::to_string(gemm.n) +
                               " k=" + std::to_string(gemm.k) + " with these types on this device");
    info_ = {.id = algo_attribute<int>(heuristic_.algo, CUBLASLT_ALGO_CONFIG_ID),
             .tile = algo_attribute<int>(heuristic_.algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
             .stages = algo_attribute<int>(heuristic_.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
             .workspace_bytes = heuristic_.workspaceSize,
             .waves = heuristic_.wavesCount};
    workspace_ = DeviceBuffer<unsigned char>(max_workspace_bytes);
  } catch (...) {
    release();
    throw;
  }
}

Matmul::~Matmul() {
  // No throw from a destructor: statuses are ignored here.
  cublasLtMatmulPreferenceDestroy(preference_);
  cublasLtMatrixLayoutDestroy(d_layout_);
  cublasLtMatrixLayoutDestroy(second_layout_);
  cublasLtMatrixLayoutDestroy(first_layout_);
  cublasLtMatmulDescDestroy(op_);
  cublasLtDestroy(handle_);
}

void Matmul::run(const void* first, const void* second, void* d, cudaStream_t stream) const {
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const std::int32_t alpha_i = 1, beta_i = 0;
  const bool int_scale = types_.scale == CUDA_R_32I;
  const void* alpha = int_scale ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = int_scale ? static_cast<const void*>(&beta_i) : &beta_f;
  RL_CUBLAS_CHECK(cublasLtMatmul(handle_, op_, alpha, first, first_layout_, second, second_layout_,
                                 beta, d, d_layout_, d, d_layout_, &heuristic_.algo,
                                 workspace_.get(), workspace_.bytes(), stream));
}

std::string Matmul::notes() const {
  return "cuBLASLt " + layout_name(gemm_) + ", heuristic's first algorithm: " + describe(info_);
}

CublasHandle::CublasHandle(cublasMath_t math, std::size_t workspace_bytes)
    : workspace_(workspace_bytes) {
  RL_CUBLAS_CHECK(cublasCreate(&handle_));
  try {
    RL_CUBLAS_CHECK(cublasSetMathMode(handle_, math));
    RL_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_.get(), workspace_.bytes()));
  } catch (...) {
    cublasDestroy(handle_);
    throw;
  }
}

CublasHandle::~CublasHandle() {
  cublasDestroy(handle_);  // no throw from a destructor
}

cublasHandle_t CublasHandle::on(cudaStream_t stream) const {
  RL_CUBLAS_CHECK(cublasSetStream(handle_, stream));
  return handle_;
}

}  // namespace rl::cublaslt
