// RL_CUBLAS_CHECK / RL_CUDNN_CHECK: a failed status becomes an rl::LibraryError
// naming the call site and the status; success passes silently.  The status
// names come from the libraries themselves, which need no GPU.
#include "rl/check_libs.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

cublasStatus_t returns_cublas(cublasStatus_t status, int* calls) {
  ++*calls;
  return status;
}

TEST(LibraryChecks, CublasSuccessDoesNotThrowAndEvaluatesOnce) {
  int calls = 0;
  EXPECT_NO_THROW(RL_CUBLAS_CHECK(returns_cublas(CUBLAS_STATUS_SUCCESS, &calls)));
  EXPECT_EQ(calls, 1);
}

TEST(LibraryChecks, CublasFailureNamesFileLineCallAndStatus) {
  int calls = 0;
  const int line = __LINE__ + 2;
  try {
    RL_CUBLAS_CHECK(returns_cublas(CUBLAS_STATUS_NOT_INITIALIZED, &calls));
    FAIL() << "no exception";
  } catch (const rl::LibraryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("check_libs_test.cpp:" + std::to_string(line) + ": "), std::string::npos)
        << what;
    EXPECT_NE(what.find("returns_cublas(CUBLAS_STATUS_NOT_INITIALIZED, &calls) failed"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("CUBLAS_STATUS_NOT_INITIALIZED ("), std::string::npos) << what;
    EXPECT_EQ(e.library(), "cuBLAS");
    EXPECT_EQ(e.status(), static_cast<int>(CUBLAS_STATUS_NOT_INITIALIZED));
  }
  EXPECT_EQ(calls, 1);
}

#if defined(RL_HAVE_CUDNN)
TEST(LibraryChecks, CudnnFailureNamesFileLineCallAndStatus) {
  EXPECT_NO_THROW(RL_CUDNN_CHECK(CUDNN_STATUS_SUCCESS));
  const int line = __LINE__ + 2;
  try {
    RL_CUDNN_CHECK(CUDNN_STATUS_BAD_PARAM);
    FAIL() << "no exception";
  } catch (const rl::LibraryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("check_libs_test.cpp:" + std::to_string(line) + ": "), std::string::npos)
        << what;
    EXPECT_NE(what.find("CUDNN_STATUS_BAD_PARAM failed: CUDNN_STATUS_BAD_PARAM"), std::string::npos)
        << what;
    EXPECT_EQ(e.library(), "cuDNN");
  }
}

TEST(LibraryChecks, CudnnDetailOfARealFailedCallIsKept) {
  // A null descriptor pointer is rejected by cuDNN itself, without a GPU, and
  // cuDNN says which argument it rejected.
  try {
    RL_CUDNN_CHECK(cudnnCreateTensorDescriptor(nullptr));
    FAIL() << "no exception";
  } catch (const rl::LibraryError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "cudnnCreateTensorDescriptor(nullptr) failed: CUDNN_STATUS_BAD_PARAM ("),
              std::string::npos)
        << e.what();
  }
}
#else
TEST(LibraryChecks, CudnnFailureNamesFileLineCallAndStatus) {
  GTEST_SKIP() << "cuDNN not found at configure time (RL_HAVE_CUDNN unset)";
}
#endif

}  // namespace
