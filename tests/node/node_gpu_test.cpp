// The node family on a GPU (label gpu): every record except NCCL's (their own
// test, tests/node_nccl) validates exactly at every shape its small preset
// lists on this machine's devices, copy engines included, then runs timed
// launches without an error.  Records that need more devices than the machine
// has are skipped with the reason in the test's output; on one device that is
// every pair record.
#include "gpu.hpp"
#include "rl/check.hpp"
#include "rl/registry.hpp"
#include "rl/scoped_device.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace rl {
namespace {

TEST(NodeGpu, every_record_validates_and_runs_at_every_shape_it_lists) {
  RL_REQUIRE_GPU();
  const int devices = visible_device_count();
  int validated = 0;
  for (const KernelRecord& record : kernel_registry()) {
    if (record.family != "node" || record.name.starts_with("node_nccl")) continue;
    if (devices < record.min_devices) {
      std::printf("[skip] %s: needs %d devices; this machine has %d\n", record.name.c_str(),
                  record.min_devices, devices);
      continue;
    }
    for (const Shape& shape : record.shapes(SizePreset::small)) {
      SCOPED_TRACE(record.name + " " + shape.to_string());
      const ScopedDevice on(record.device(shape));
      cudaStream_t stream = nullptr;
      RL_CUDA_CHECK(cudaStreamCreate(&stream));
      {
        const std::unique_ptr<Workload> workload = record.make_workload(shape, 7);
        const Validation v = workload->validate(stream);
        EXPECT_TRUE(v.passed) << v.detail;
        for (int i = 0; i < 3; ++i) workload->run(stream);
        RL_CUDA_CHECK(cudaStreamSynchronize(stream));
        RL_CUDA_CHECK(cudaGetLastError());
      }
      RL_CUDA_CHECK(cudaStreamDestroy(stream));
      ++validated;
    }
  }
  // On one device: the two host copies by SM, the five copy-engine host
  // records and the host chase at least.
  EXPECT_GE(validated, 8);
}

}  // namespace
}  // namespace rl
