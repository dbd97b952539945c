#include "rl/bench/run_info.hpp"

#include <unistd.h>

#include <cctype>
#include <ctime>

namespace rl::bench {

namespace {

std::string format_utc(std::chrono::system_clock::time_point when, const char* format) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  const std::size_t n = std::strftime(buffer, sizeof buffer, format, &tm);
  return std::string(buffer, n);
}

}  // namespace

std::string device_slug(std::string_view device_name) {
  std::string slug;
  for (const char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "unknown-device" : slug;
}

std::string utc_compact_timestamp(std::chrono::system_clock::time_point when) {
  return format_utc(when, "%Y%m%dT%H%M%SZ");
}

std::string utc_iso_timestamp(std::chrono::system_clock::time_point when) {
  return format_utc(when, "%Y-%m-%dT%H:%M:%SZ");
}

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

std::string version_text(std::string_view program) {
  std::string text = std::string(program) + " " + RL_PROJECT_VERSION + "\n";
  text += std::string("git commit:     ") + build_git_commit() + "\n";
  text += std::string("build type:     ") + RL_BUILD_TYPE + "\n";
  text += std::string("CUDA toolkit:   ") + RL_CUDA_TOOLKIT + "\n";
  text += std::string("backends built: ") + RL_BACKENDS_BUILT + "\n";
  text += std::string("Google Benchmark: ") + RL_BENCHMARK_LIB_VERSION + "\n";
  return text;
}

}  // namespace rl::bench
