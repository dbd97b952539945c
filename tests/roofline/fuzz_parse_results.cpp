// libFuzzer target for the results.json reader: any input must end either in
// a Results or in a ResultsError with a one-line message, never in a crash,
// a hang or another exception type.
#include "rl/roofline/results_io.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    rl::roofline::Results results = rl::roofline::parse_results(text, "fuzz");
    // What was read must write and read back.
    rl::roofline::parse_results(rl::roofline::results_to_text(results), "round-trip");
  } catch (const rl::roofline::ResultsError& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) std::abort();
  }
  return 0;
}
