// The harness on 3 emulated devices with records that run on other devices
// than 0 (KernelRecord::device) and one that needs more devices than there
// are (KernelRecord::min_devices).  Protects: each instance is built,
// validated and timed with its device current and on a stream of that device
// (the emulator refuses a launch into another device's stream), device 0 is
// current again after, and a record short of devices is recorded as skipped
// with the reason, never built.
#include "emu_harness_run.hpp"

#include "rl/check.hpp"
#include "rl/cuda.hpp"
#include "rl/device_buffer.hpp"
#include "rl/emu/launch.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/results_io.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

__global__ void measurer_test_fill(int* out, int value) {
  out[threadIdx.x] = value;
}

// Throws unless `device` is current: the harness records the instance as an
// error with this text.
void expect_current(int device, const char* where) {
  int current = -1;
  RL_CUDA_CHECK(cudaGetDevice(&current));
  if (current != device)
    throw std::logic_error(std::string(where) + " ran on device " + std::to_string(current) +
                           ", expected " + std::to_string(device));
}

// Writes its device's index from a kernel on the stream it is given.
class OnDevice final : public rl::Workload {
 public:
  explicit OnDevice(int device) : device_(device), out_(32) { expect_current(device_, "build"); }
  void run(cudaStream_t stream) override {
    expect_current(device_, "run");
    rl::launch(measurer_test_fill, dim3(1), dim3(32), 0, stream, out_.get(), device_);
  }
  rl::Validation validate(cudaStream_t stream) override {
    expect_current(device_, "validate");
    out_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
    rl::Validation v;
    v.passed = out_.download() == std::vector<int>(32, device_);
    return v;
  }

 private:
  int device_;
  rl::DeviceBuffer<int> out_;
};

rl::KernelRecord on_device_record(std::string name, int min_devices) {
  rl::KernelRecord r;
  r.name = std::move(name);
  r.family = "measurer_devices_test";
  r.variant = "fill";
  r.shapes = [](rl::SizePreset) {
    return std::vector<rl::Shape>{rl::Shape{{{"device", 2}}}, rl::Shape{{{"device", 0}}},
                                  rl::Shape{{{"device", 1}}}};
  };
  r.cost = [](const rl::Shape&) { return rl::roofline::Cost{0, 128, 128, {}}; };
  r.make_workload = [](const rl::Shape& s, std::uint64_t) {
    return std::unique_ptr<rl::Workload>(new OnDevice(static_cast<int>(s.at("device"))));
  };
  r.device = [](const rl::Shape& s) { return static_cast<int>(s.at("device")); };
  r.min_devices = min_devices;
  return r;
}

RL_REGISTER_KERNEL(on_device_record("measurer_devices_test_a_on_each", 2));
RL_REGISTER_KERNEL(on_device_record("measurer_devices_test_b_needs_4", 4));

TEST(MeasurerOnDevices, each_instance_runs_on_its_device_and_a_short_machine_skips) {
  ASSERT_EQ(rl::emu::set_device_count(3), cudaSuccess);
  rl::test::ScratchDir scratch("rl_measurer_devices_test");
  rl::bench::HarnessConfig config;
  config.selection.no_ceilings = true;
  EXPECT_EQ(rl::test::run_emu_harness(config, "^measurer_devices_test_", 1, scratch.path()).failed,
            0u);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0) << "the harness left another device current";

  const rl::roofline::Results results = rl::roofline::load_results(scratch.path() / "results.json");
  int on_each = 0, skipped = 0;
  for (const auto& k : results.kernels) {
    if (k.name == "measurer_devices_test_a_on_each") {
      ++on_each;
      EXPECT_EQ(k.status, rl::roofline::Status::ok) << k.error;
      EXPECT_TRUE(k.validated);
    } else if (k.name == "measurer_devices_test_b_needs_4") {
      ++skipped;
      EXPECT_EQ(k.status, rl::roofline::Status::skipped);
      EXPECT_EQ(k.error,
                "needs 4 devices; this machine has 3 (the emulator runs it as a node with "
                "RL_EMU_DEVICES=8, as scripts/run does)");
    }
  }
  EXPECT_EQ(on_each, 3);
  EXPECT_EQ(skipped, 3);
  rl::emu::set_device_count(1);
}

}  // namespace
