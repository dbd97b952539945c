// The cuBLAS and cuBLASLt calls the emulator declares but does not compute:
// each returns CUBLAS_STATUS_NOT_SUPPORTED after one line on stderr naming
// it, so code that reaches one stops with a reason instead of a link error or
// a silently wrong result.  The line is printed once per distinct text (a
// loop calling a refused GEMM does not flood the log).  To emulate one, move
// it to the file of its kind (cublas_gemm.cpp, ...) and onto the reference.
#include <cstdio>
#include <mutex>
#include <set>

#include "cublas_internal.hpp"

namespace rl::emu::cublas {

cublasStatus_t not_emulated(const std::string& what) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  const std::lock_guard<std::mutex> lock(mutex);
  if (printed.insert(what).second) {
    std::fprintf(stderr, "rl::emu: %s is not emulated (emu/README.md, \"cuBLAS\")\n", what.c_str());
  }
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

}  // namespace rl::emu::cublas

using rl::emu::cublas::not_emulated;

extern "C" {

cublasStatus_t cublasGetAtomicsMode(cublasHandle_t, cublasAtomicsMode_t*) {
  return not_emulated("cublasGetAtomicsMode");
}
cublasStatus_t cublasSetAtomicsMode(cublasHandle_t, cublasAtomicsMode_t) {
  return not_emulated("cublasSetAtomicsMode");
}
cublasStatus_t cublasSgemv(cublasHandle_t, cublasOperation_t, int, int, const float*, const float*,
                           int, const float*, int, const float*, float*, int) {
  return not_emulated("cublasSgemv");
}
cublasStatus_t cublasSgemmBatched(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const float*, const float* const[], int,
                                  const float* const[], int, const float*, float* const[], int,
                                  int) {
  return not_emulated("cublasSgemmBatched");
}
cublasStatus_t cublasGemmBatchedEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                   int, const void*, const void* const[], cudaDataType, int,
                                   const void* const[], cudaDataType, int, const void*,
                                   void* const[], cudaDataType, int, int, cublasComputeType_t,
                                   cublasGemmAlgo_t) {
  return not_emulated("cublasGemmBatchedEx");
}
cublasStatus_t cublasSgeam(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                           const float*, const float*, int, const float*, const float*, int, float*,
                           int) {
  return not_emulated("cublasSgeam");
}
cublasStatus_t cublasSaxpy(cublasHandle_t, int, const float*, const float*, int, float*, int) {
  return not_emulated("cublasSaxpy");
}
cublasStatus_t cublasSscal(cublasHandle_t, int, const float*, float*, int) {
  return not_emulated("cublasSscal");
}
cublasStatus_t cublasSdot(cublasHandle_t, int, const float*, int, const float*, int, float*) {
  return not_emulated("cublasSdot");
}
cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t,
                                                    cublasLtMatmulPreferenceAttributes_t, void*,
                                                    std::size_t, std::size_t*) {
  return not_emulated("cublasLtMatmulPreferenceGetAttribute");
}
cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t, cublasComputeType_t, cudaDataType_t,
                                      cudaDataType_t, cudaDataType_t, cudaDataType_t,
                                      cudaDataType_t, int, cublasLtMatmulAlgo_t*) {
  return not_emulated("cublasLtMatmulAlgoInit");
}

}  // extern "C"
