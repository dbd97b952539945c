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

KernelRegistrar::KernelRegistrar(KernelRecord record) {
  if (find_kernel(record.name) != nullptr)
    throw std::logic_error("kernel registered twice: " + record.name);
  kernel_registry().push_back(std::move(record));
}

}  // namespace rl
