#include "rl/roofline/fleet.hpp"

#include "fleet_labels.hpp"

#include "rl/roofline/results_io.hpp"

#include <fstream>
#include <map>
#include <system_error>

namespace rl::roofline {

namespace fs = std::filesystem;

namespace {

using fleet_detail::shape_label;

std::string rel_folder(const fs::path& folder, const fs::path& root) {
  std::string rel = folder.lexically_relative(root).generic_string();
  return rel.empty() ? "." : rel;
}

// The marker's "key=value" lines; a missing file reads as nothing.
std::map<std::string, std::string> read_marker(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw FleetInputError(fmt::format("{}: cannot read", path.string()));
  std::map<std::string, std::string> fields;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return fields;
}

// A run that never finished: interrupted, crashed or killed.
std::optional<std::string> incomplete(const Results& r) {
  if (!r.run.complete || *r.run.complete) return std::nullopt;
  return r.run.interrupted_by.empty()
             ? "run incomplete (crashed, killed, or still running)"
             : fmt::format("run incomplete (interrupted by {})", r.run.interrupted_by);
}

// Kernels that failed validation or errored.
std::vector<std::string> failed_kernels(const Results& r) {
  std::vector<std::string> out;
  for (const auto& k : r.kernels) {
    if (k.status == Status::failed_validation ||
        (k.status == Status::ok && k.time_s && !k.validated))
      out.push_back(fmt::format("{} failed validation{}", shape_label(k),
                                k.error.empty() ? "" : ": " + k.error));
    else if (k.status == Status::error)
      out.push_back(
          fmt::format("{} errored{}", shape_label(k), k.error.empty() ? "" : ": " + k.error));
  }
  return out;
}

}  // namespace

std::vector<std::string> FleetRun::failures() const {
  std::vector<std::string> out = task_failures;
  out.insert(out.end(), kernel_failures.begin(), kernel_failures.end());
  return out;
}

std::string FleetRun::key() const {
  return uuid.empty() ? host + "\n" + folder : uuid;
}

std::string FleetRun::label() const {
  return uuid.empty() ? fmt::format("{} (no uuid) {}", host, folder)
                      : fmt::format("{} {}", host, uuid);
}

std::vector<FleetRun> load_fleet(std::span<const fs::path> roots) {
  std::vector<FleetRun> runs;
  std::map<std::string, std::string> seen;  // key -> source
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      throw FleetInputError(fmt::format("{}: not a folder{}", root.string(),
                                        fs::exists(root, ec) ? "" : " (no such path)"));
    // Folders holding a results.json and/or a marker, in a stable order.
    std::map<fs::path, std::pair<bool, bool>> folders;
    fs::recursive_directory_iterator it(root, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const auto name = it->path().filename();
      if (name == "results.json") folders[it->path().parent_path()].first = true;
      if (name == kTaskFailedMarker) folders[it->path().parent_path()].second = true;
    }
    if (ec) throw FleetInputError(fmt::format("{}: cannot list: {}", root.string(), ec.message()));
    if (folders.empty())
      throw FleetInputError(
          fmt::format("{}: no results.json (nor {}) under it", root.string(), kTaskFailedMarker));
    for (const auto& [folder, found] : folders) {
      FleetRun run;
      run.folder = rel_folder(folder, root);
      if (found.first) {
        const fs::path path = folder / "results.json";
        run.source = path.string();
        try {
          run.results = load_results(path);
        } catch (const std::exception& e) {
          throw FleetInputError(e.what());
        }
        run.host = run.results->context.host;
        run.uuid = run.results->context.device.uuid;
        if (auto why = incomplete(*run.results)) run.task_failures.push_back(*why);
        run.kernel_failures = failed_kernels(*run.results);
      }
      if (found.second) {
        const fs::path path = folder / kTaskFailedMarker;
        auto marker = read_marker(path);
        if (!found.first) {
          run.source = path.string();
          run.host = marker["host"];
          run.uuid = marker["uuid"];
        }
        std::string why = marker["reason"].empty() ? "the task failed" : marker["reason"];
        if (!marker["exit_status"].empty()) why += fmt::format(" (exit {})", marker["exit_status"]);
        if (!marker["task"].empty()) why = fmt::format("task {}: {}", marker["task"], why);
        run.task_failures.insert(run.task_failures.begin(), why);
      }
      auto [prior, fresh] = seen.emplace(run.key(), run.source);
      if (!fresh)
        throw FleetInputError(fmt::format("two runs of GPU {}: {} and {} (one run per GPU)",
                                          run.label(), prior->second, run.source));
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

}  // namespace rl::roofline
