// A Workload that tests can steer: re-draw its inputs from another
// distribution (large common offsets, tiny variance) and read its outputs back
// (to compare two emulator schedules bit for bit).  The harness only needs
// rl::Workload; the kernel tests of a family use these two hooks on every
// record of the family through the registry.
#pragma once

#include "rl/device_buffer.hpp"
#include "rl/packed128.hpp"
#include "rl/registry.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rl {

// Inputs are drawn from SeededRng::normal(mean, stddev).
struct InputSpec {
  double mean = 0.0;
  double stddev = 1.0;
};

class InspectableWorkload : public Workload {
 public:
  // Replace the inputs (uploaded) and recompute the float64 reference.
  virtual void redraw_inputs(const InputSpec& spec, std::uint64_t seed) = 0;
  // Every output of the last run, converted to float, concatenated.
  virtual std::vector<float> download_outputs() const = 0;
};

// A device buffer of fp32 or bf16 read back as float, for download_outputs().
template <typename T>
std::vector<float> download_as_float(const DeviceBuffer<T>& buffer) {
  const std::vector<T> raw = buffer.download();
  std::vector<float> out(raw.size());
  std::transform(raw.begin(), raw.end(), out.begin(), [](T v) { return to_f32(v); });
  return out;
}

// A device buffer as a --dump-tensors entry (values as float, the storage
// precision named).
template <typename T>
TensorDump tensor_dump(std::string name, std::string role, std::vector<std::int64_t> dims,
                       const DeviceBuffer<T>& buffer) {
  return {std::move(name), std::move(role), precision_name<T>(), std::move(dims),
          download_as_float(buffer)};
}

}  // namespace rl
