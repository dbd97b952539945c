// The one JSON reader/writer for results.json (schema v1, described by
// results/schema-v1.json).
//
// Encoding rules a reader of the file needs to know:
//  - JSON has no NaN or infinity.  A non-finite number (e.g. max_rel_err of a
//    validation that produced NaN or +inf) is written as null.  Reading
//    max_rel_err, null means "not finite" and becomes +inf, so a failed
//    validation never reads back as error 0.  Optional fields (roof,
//    pct_of_roof, datasheet, ...) are null when unknown.
//  - time_s is null for a kernel that was not timed (failed validation, skipped).
//  - shape is an object whose key order is the kernel's dimension order.
//  - "analysis" is derived from the kernels and ceilings: written for scripts
//    (analyse() in analysis.hpp, once per write), never read back; a reader
//    that needs it calls analyse() on what it read.
//
// Every reading error is a ResultsError whose what() is one line naming the
// source and where the problem is: line/column/byte for malformed JSON, a JSON
// pointer ("/kernels/3/time_s/median") for a well-formed file with bad content.
#pragma once

#include "rl/roofline/results.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rl::roofline {

class ResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Deeper documents are rejected before parsing (results.json nests 4 levels).
inline constexpr int kMaxResultsJsonDepth = 64;

nlohmann::json to_json(const Results& results);
// Throws ResultsError("results: /pointer: problem").
Results results_from_json(const nlohmann::json& json);

// The file text as written by write_results_atomic (2-space indented, keys in
// schema order, trailing newline).
std::string results_to_text(const Results& results);
// Throws ResultsError("<source_name>: ...") on any malformed or invalid input.
Results parse_results(std::string_view text, std::string_view source_name);
Results load_results(const std::filesystem::path& path);

// Writes to a temporary file in the same directory, fsyncs it, renames it over
// `path` and fsyncs the directory: a reader sees the old file or the new one,
// never a torn one.  Throws std::runtime_error naming the path on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);
void write_results_atomic(const std::filesystem::path& path, const Results& results);

}  // namespace rl::roofline
