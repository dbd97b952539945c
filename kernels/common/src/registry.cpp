#include "rl/registry.hpp"

#include <stdexcept>

namespace rl {

std::string_view size_preset_name(SizePreset preset) {
  switch (preset) {
    case SizePreset::small: return "small";
    case SizePreset::medium: return "medium";
    case SizePreset::large: return "large";
  }
  return "unknown";
}

std::int64_t Shape::at(std::string_view name) const {
  for (const auto& [key, value] : dims)
    if (key == name) return value;
  throw std::out_of_range("shape has no dimension '" + std::string(name) + "'");
}

std::string Shape::to_string() const {
  std::string out;
  for (const auto& [key, value] : dims) {
    if (!out.empty()) out += ',';
    out += key + '=' + std::to_string(value);
  }
  return out;
}

std::vector<KernelRecord>& kernel_registry() {
  static std::vector<KernelRecord> records;  // function-local: safe during static init
  return records;
}

const KernelRecord* find_kernel(std::string_view name) {
  for (const auto& record : kernel_registry())
    if (record.name == name) return &record;
  return nullptr;
}

std::string project_relative_path(std::string_view path) {
  // The last `kernels/` or `tests/` path component: no folder inside either
  // carries one of these names, while the root above them might.
  std::size_t start = std::string_view::npos;
  for (const std::string_view folder : {std::string_view("kernels/"), std::string_view("tests/")}) {
    for (std::size_t at = path.find(folder); at != std::string_view::npos;
         at = path.find(folder, at + 1)) {
      if (at != 0 && path[at - 1] != '/') continue;
      if (start == std::string_view::npos || at > start) start = at;
    }
  }
  return std::string(start == std::string_view::npos ? path : path.substr(start));
}

KernelRegistrar::KernelRegistrar(KernelRecord record, std::string_view source_file) {
  record.source_file = project_relative_path(source_file);
  if (find_kernel(record.name) != nullptr)
    throw std::logic_error("kernel registered twice: " + record.name);
  kernel_registry().push_back(std::move(record));
}

}  // namespace rl
