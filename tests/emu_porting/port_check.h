// What the third-party drivers of this folder share: a float64 comparison that
// prints the first mismatch, and a deterministic input generator.  Plain C++,
// as a CUDA project's own test code would be; nothing here knows the emulator.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace port_check {

// Elements where |got - ref| > abs_tol + rel_tol * |ref|; prints the first.
template <typename Got>
inline int mismatches(const char* what, const Got* got, const double* ref, std::size_t n,
                      double rel_tol, double abs_tol) {
  int bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]);
    const double allowed = abs_tol + rel_tol * std::fabs(ref[i]);
    if (!(std::fabs(g - ref[i]) <= allowed)) {
      if (bad == 0)
        std::printf("%s: element %zu is %.9g, float64 reference %.9g (allowed %.3g)\n", what, i, g,
                    ref[i], allowed);
      ++bad;
    }
  }
  return bad;
}

// Uniform values in [-1, 1) from a fixed seed (an LCG: the same on every host).
inline std::vector<float> uniform(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  std::uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (float& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(static_cast<double>(s >> 40) / 8388608.0 - 1.0);
  }
  return v;
}

// A driver's verdict: it exits non-zero when anything failed.
struct Tally {
  int failed = 0;
  void check(bool ok, const char* what) {
    if (!ok) {
      std::printf("FAILED: %s\n", what);
      ++failed;
    }
  }
  int finish(const char* driver) const {
    std::printf("%s: %s\n", driver, failed == 0 ? "all checks passed" : "checks FAILED");
    return failed == 0 ? 0 : 1;
  }
};

}  // namespace port_check
