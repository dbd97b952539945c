#include "dump_instance.hpp"

#include "rl/bench/tensor_dump.hpp"
#include "rl/roofline/results_io.hpp"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace rl::bench {

void dump_instance(const std::filesystem::path& dir, const KernelRecord& record, const Shape& shape,
                   std::uint64_t seed, const std::vector<TensorDump>& tensors) {
  const std::filesystem::path instance_dir =
      dir / dump_directory_name(record.name, shape.to_string());
  std::filesystem::create_directories(instance_dir);
  nlohmann::ordered_json dims = nlohmann::ordered_json::object();
  for (const auto& [dim, extent] : shape.dims) dims[dim] = extent;
  nlohmann::ordered_json manifest = {{"kernel", record.name},
                                     {"shape", std::move(dims)},
                                     {"seed", seed},
                                     {"format",
                                      "NumPy .npy 1.0, float32 values whatever the "
                                      "storage precision, C order"},
                                     {"tensors", nlohmann::ordered_json::array()}};
  if (tensors.empty()) manifest["note"] = "this kernel's workload does not expose its tensors";
  for (const TensorDump& t : tensors) {
    const std::string file = t.name + ".npy";
    roofline::write_file_atomic(instance_dir / file, npy_float32(t.values, t.dims));
    manifest["tensors"].push_back({{"name", t.name},
                                   {"file", file},
                                   {"role", t.role},
                                   {"dims", t.dims},
                                   {"precision", t.precision}});
  }
  roofline::write_file_atomic(instance_dir / "manifest.json", manifest.dump(2) + "\n");
}

}  // namespace rl::bench
