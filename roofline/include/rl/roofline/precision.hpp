// A kernel's precision: the number format its inputs are stored and computed
// in, a registry field and a results.json field ("precision").  Its JSON
// spelling is converted here and nowhere else; the reports print the same
// word.  constexpr, so that a kernel's record can name the precision of its
// storage type at compile time (rl::precision_of<T> in rl/registry.hpp).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace rl::roofline {

enum class Precision {
  fp64,
  fp32,
  tf32,
  fp16,
  bf16,
  fp8,  // e4m3 or e5m2
  int8,
  fp6,    // e2m3 or e3m2 (Blackwell kind::f8f6f4)
  fp4,    // e2m1
  mxfp8,  // OCP MX: fp8 in blocks of 32 sharing a ue8m0 scale
  mxfp6,  // fp6, ue8m0 scale per 32
  mxfp4,  // fp4, ue8m0 scale per 32
  nvfp4,  // fp4 in blocks of 16 sharing a ue4m3 scale
};

namespace detail {
inline constexpr std::array<std::pair<Precision, std::string_view>, 13> kPrecisionSpellings{{
    {Precision::fp64, "fp64"},
    {Precision::fp32, "fp32"},
    {Precision::tf32, "tf32"},
    {Precision::fp16, "fp16"},
    {Precision::bf16, "bf16"},
    {Precision::fp8, "fp8"},
    {Precision::int8, "int8"},
    {Precision::fp6, "fp6"},
    {Precision::fp4, "fp4"},
    {Precision::mxfp8, "mxfp8"},
    {Precision::mxfp6, "mxfp6"},
    {Precision::mxfp4, "mxfp4"},
    {Precision::nvfp4, "nvfp4"},
}};
}  // namespace detail

// "fp32", "bf16", "nvfp4", ...: the JSON spelling.
constexpr std::string_view to_string(Precision precision) {
  for (const auto& [p, spelling] : detail::kPrecisionSpellings)
    if (p == precision) return spelling;
  return "";  // not an enumerator: cast from an int out of range
}
// The precision spelled `spelling`; nullopt for a spelling this build does not know.
constexpr std::optional<Precision> parse_precision(std::string_view spelling) {
  for (const auto& [p, s] : detail::kPrecisionSpellings)
    if (s == spelling) return p;
  return std::nullopt;
}

// A result's precision: one this build knows or, read from a results.json
// whose writer knew a format this build does not (the schema allows any
// string there), that file's spelling, kept so that the reports show it and
// the writer writes it back as it came.  Two results have the same precision
// when they spell it the same.
class ResultPrecision {
 public:
  // Implicit: every record's precision is a known one.
  ResultPrecision(Precision known = Precision::fp32) : known_(known) {}  // NOLINT
  // Any spelling: a known one gives that Precision, any other is kept as written.
  static ResultPrecision from_json(std::string_view spelling);

  std::optional<Precision> known() const {
    return unknown_ ? std::nullopt : std::optional<Precision>(known_);
  }
  std::string_view spelling() const {
    return unknown_ ? std::string_view(*unknown_) : to_string(known_);
  }

  friend bool operator==(const ResultPrecision& a, const ResultPrecision& b) {
    return a.spelling() == b.spelling();
  }

 private:
  Precision known_ = Precision::fp32;
  std::optional<std::string> unknown_;  // set: the file's spelling, not a Precision's
};

inline std::string_view to_string(const ResultPrecision& precision) {
  return precision.spelling();
}

}  // namespace rl::roofline
