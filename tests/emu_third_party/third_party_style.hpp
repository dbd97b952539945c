// What the third-party-style tests share: the error-check macro such code
// defines for itself (llm.c's cudaCheck: report file and line, stop), the
// two-schedule run and bitwise comparison, and a float64 tolerance check that
// reports how many elements it rejects (so each test can show its negative
// case: a perturbed reference that the same tolerance catches).
#pragma once

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "rl/cuda.hpp"

namespace third_party_style {

inline void cuda_check(cudaError_t error, const char* file, int line) {
  if (error != cudaSuccess)
    throw std::runtime_error(std::string("[CUDA ERROR] at file ") + file + ":" +
                             std::to_string(line) + ": " + cudaGetErrorString(error));
}

// Runs `run` under the forward and the reverse schedule on two host workers.
template <typename Run>
auto under_two_schedules(Run&& run) {
  rl::emu::set_worker_threads(2);
  auto outputs = rl::emu::run_under_schedules(run);
  rl::emu::set_worker_threads(1);
  return outputs;
}

template <typename T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Elements with |got - want| > tolerance[i].
inline int count_outside(const std::vector<double>& got, const std::vector<double>& want,
                         const std::vector<double>& tolerance) {
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance[i])) ++bad;
  return bad;
}

}  // namespace third_party_style

#define cudaCheck(err) (third_party_style::cuda_check(err, __FILE__, __LINE__))
