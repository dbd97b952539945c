// A failed call into a library (cuBLAS, cuDNN, NCCL): the library, its own
// status code and one line, so the harness records the instance as failed and
// goes on.  Plain C++: both backends throw it (the emulator's NCCL too); the
// CUDA-only status checks that throw it are in rl/check_libs.hpp.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace rl {

class LibraryError : public std::runtime_error {
 public:
  LibraryError(std::string library, int status, const std::string& what)
      : std::runtime_error(what), library_(std::move(library)), status_(status) {}
  // "cuBLAS", "cuDNN" or "NCCL"; status is the library's own status code.
  const std::string& library() const noexcept { return library_; }
  int status() const noexcept { return status_; }

 private:
  std::string library_;
  int status_;
};

}  // namespace rl
