#include "rl/bench/run_output.hpp"

#include "rl/bench/gbench.hpp"
#include "rl/roofline/report.hpp"
#include "rl/roofline/results_io.hpp"
#include "rl/roofline/sku.hpp"
#include "rl/roofline/svg.hpp"
#include "rl/roofline/verdict.hpp"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

namespace rl::bench {

namespace {

// "1m23s" / "45s".
std::string elapsed_text(std::chrono::steady_clock::duration elapsed) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
  char text[32];
  if (seconds >= 60)
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(seconds / 60),
                  static_cast<long long>(seconds % 60));
  else
    std::snprintf(text, sizeof text, "%llds", static_cast<long long>(seconds));
  return text;
}

// "0.41 ms", "12.3 us", "1.20 s".
std::string time_text(double seconds) {
  char text[32];
  if (seconds >= 1)
    std::snprintf(text, sizeof text, "%.2f s", seconds);
  else if (seconds >= 1e-3)
    std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  else
    std::snprintf(text, sizeof text, "%.3g us", seconds * 1e6);
  return text;
}

// The terminal's width for the end-of-run summary: $COLUMNS, else the
// window of `out` when it is a terminal, else 100.
int terminal_columns(std::FILE* out) {
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && std::atoi(columns) > 0)
    return std::atoi(columns);
  winsize window{};
  if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &window) == 0 && window.ws_col > 0)
    return window.ws_col;
  return 100;
}

// Whether a Google Benchmark entry belongs to one of `unfinished`: its
// run_name is the registered name plus Google Benchmark's suffixes
// ("/iterations:1/manual_time").
bool belongs_to(const nlohmann::ordered_json& entry, const std::set<std::string>& unfinished) {
  const std::string run_name = entry.value("run_name", "");
  const std::size_t cut = run_name.find("/iterations:");
  return unfinished.count(run_name.substr(0, cut)) > 0;
}

}  // namespace

void mark_benchmarks_json_incomplete(const std::filesystem::path& file,
                                     std::string_view signal_name,
                                     const std::set<std::string>& unfinished) {
  std::ifstream in(file);
  if (!in) return;
  std::stringstream text;
  text << in.rdbuf();
  // Google Benchmark writes a non-finite value as NaN or Infinity (the
  // coefficient of variation of a counter that is always 0, as FLOP/s of a
  // copy), which JSON does not have: null, as results.json writes it.
  const std::string valid =
      std::regex_replace(text.str(), std::regex(R"(": -?(NaN|Infinity))"), "\": null");
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(valid, nullptr, false);
  if (json.is_discarded() || !json.contains("benchmarks")) return;
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  for (auto& b : json["benchmarks"]) {
    const bool skipped_by_interrupt =
        b.value("error_occurred", false) && b.value("error_message", "") == kInterruptedMessage;
    if (!skipped_by_interrupt && !belongs_to(b, unfinished)) kept.push_back(std::move(b));
  }
  json["benchmarks"] = std::move(kept);
  json["context"]["bench_roofline_complete"] = false;
  if (!signal_name.empty())
    json["context"]["bench_roofline_interrupted_by"] = std::string(signal_name);
  roofline::write_file_atomic(file, json.dump(2) + "\n");
}

std::string progress_line(std::size_t done, std::size_t total, const roofline::KernelResult& k,
                          std::chrono::steady_clock::duration elapsed) {
  std::string what(roofline::to_string(k.status));
  if (k.status == roofline::Status::ok && k.time_s) {
    what += ' ';
    what += time_text(k.time_s->median);
    if (k.pct_of_roof) {
      char pct[64];
      std::snprintf(pct, sizeof pct, ", %.1f%% of roof%s", *k.pct_of_roof,
                    k.bound == roofline::Bound::above_roof ? " (above its roof: not trusted)" : "");
      what += pct;
    }
  } else if (!k.error.empty()) {
    what += ": ";
    what += k.error;
  }
  char head[64];
  std::snprintf(head, sizeof head, "[%zu/%zu] ", done, total);
  std::string line = head;
  line += k.name;
  line += ' ';
  for (std::size_t i = 0; i < k.shape.size(); ++i) {  // "rows=8192,C=768"
    if (i > 0) line += ',';
    line += k.shape[i].first;
    line += '=';
    line += std::to_string(k.shape[i].second);
  }
  line += " ... ";
  line += what;
  line += " (";
  line += elapsed_text(elapsed);
  line += ')';
  return line;
}

void print_summary(std::FILE* out, const roofline::Results& results,
                   const std::filesystem::path& out_dir) {
  const roofline::ReportOptions options = roofline::report_options_for(results);
  // The report's headline and a line per kernel, sized to the terminal.
  std::fprintf(out, "\n%s\n",
               roofline::render_summary_text(results, options, terminal_columns(out)).c_str());
  for (const auto& c : results.ceilings)
    std::fprintf(out, "ceiling %-12s %s%s (median; best %s) from %s\n", c.name.c_str(),
                 roofline::si(c.value).c_str(), c.unit.c_str(),
                 c.best ? roofline::si(*c.best).c_str() : "-", c.method.c_str());
  if (results.ceilings.empty())
    std::fprintf(out, "no ceiling was measured: %% of roof and bound are left empty\n");
  else if (options.sku != nullptr) {
    std::fprintf(out, "\nvendor-claim verdict (%s):\n", options.sku_reason.c_str());
    for (const std::string& line : roofline::verdict_lines(results))
      std::fprintf(out, "  %s\n", line.c_str());
  }
  std::fprintf(out, "wrote results.json, benchmarks.json, roofline.svg, report.html to %s\n",
               out_dir.string().c_str());
}

}  // namespace rl::bench
