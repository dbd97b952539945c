// Names and stamps of a run: host, UTC time, output-folder slug.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace rl::bench {

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3".
std::string device_slug(std::string_view device_name);
// One instant, two spellings: "20261121T233714Z" for directory names and
// "2026-11-21T23:37:14Z" (ISO 8601) for the context.
std::string utc_compact_timestamp(std::chrono::system_clock::time_point when);
std::string utc_iso_timestamp(std::chrono::system_clock::time_point when);

std::string host_name();  // gethostname, or "unknown"

// The commit this binary was built from, "<sha>-dirty" with uncommitted
// changes to tracked files, "unknown" outside a git checkout.
const char* build_git_commit();

// What --version prints for `program`: version, git commit, build type, the
// CUDA toolkit the build used, the backends built.  Several lines.
std::string version_text(std::string_view program);

}  // namespace rl::bench
