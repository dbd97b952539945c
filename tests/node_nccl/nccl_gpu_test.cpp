// The NCCL collective records on a node: every record validated (every
// rank's output compared exactly) at the smallest size that splits over the
// ranks, at an odd number of floats per rank and at 1 MiB, in and out of
// place, then timed launches run without an error.  Skips with the reason
// without a GPU, with one device, or without NCCL.
#include <gtest/gtest.h>

#include "gpu.hpp"
#include "node/nccl_library.hpp"
#include "rl/check.hpp"
#include "rl/registry.hpp"
#include "rl/scoped_device.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

TEST(NcclGpu, every_record_validates_on_every_rank_in_and_out_of_place) {
  RL_REQUIRE_GPU();
  const int n = rl::visible_device_count();
  if (n < 2) GTEST_SKIP() << "needs 2 devices; this machine has " << n;
  if (const std::optional<std::string> why = rl::nccl::nccl_unavailable()) GTEST_SKIP() << *why;
  const rl::ScopedDevice on(0);
  cudaStream_t stream = nullptr;
  RL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // One float per rank; 37 per rank (no multiple of 16 bytes); 1 MiB.
  const std::vector<std::int64_t> sizes = {4 * n, 4 * 37 * n, std::int64_t{1} << 20};
  for (const char* name :
       {"node_nccl_all_reduce", "node_nccl_all_gather", "node_nccl_reduce_scatter",
        "node_nccl_alltoall", "node_nccl_broadcast"}) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    for (const std::int64_t bytes : sizes)
      for (const int in_place : {0, 1}) {
        const rl::Shape shape{{{"bytes", bytes}, {"in_place", in_place}}};
        SCOPED_TRACE(std::string(name) + "/" + shape.to_string());
        if (const std::optional<std::string> why = record->refuse_shape(shape)) {
          // Only the documented refusals: in-place alltoall, 1 MiB over n ranks.
          EXPECT_TRUE((in_place == 1 && std::string(name) == "node_nccl_alltoall") ||
                      bytes == (std::int64_t{1} << 20))
              << *why;
          continue;
        }
        const std::unique_ptr<rl::Workload> workload = record->make_workload(shape, 3);
        const rl::Validation v = workload->validate(stream);
        EXPECT_TRUE(v.passed) << v.detail;
        EXPECT_NE(workload->notes().find(std::to_string(n) + " ranks"), std::string::npos)
            << workload->notes();
        for (int i = 0; i < 3; ++i) workload->run(stream);
        RL_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
  }
  RL_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
