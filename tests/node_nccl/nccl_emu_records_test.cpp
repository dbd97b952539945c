// The node_nccl_* records in the emulator build, on 2 and 8 emulated devices:
// the same code as on a GPU node (kernels/node/nccl_collectives.cpp) against
// the emulator's NCCL.  Each record validates (every rank's output compared
// exactly) at one float per rank, 37 per rank and 1 KiB per rank, in and out
// of place, then runs timed launches; the harness may run them here (not
// GPU-only, nothing refused) and they say the NCCL was the emulator's.
#include <gtest/gtest.h>

#include "node/nccl_library.hpp"
#include "node/nccl_plan.hpp"
#include "rl/check.hpp"
#include "rl/emu/launch.hpp"
#include "rl/registry.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr const char* kRecords[] = {"node_nccl_all_reduce", "node_nccl_all_gather",
                                    "node_nccl_reduce_scatter", "node_nccl_alltoall",
                                    "node_nccl_broadcast"};

TEST(NcclEmuRecords, run_here_and_say_the_nccl_is_the_emulators) {
  EXPECT_FALSE(rl::nccl::nccl_unavailable());
  EXPECT_EQ(rl::nccl::nccl_api().path, rl::nccl::kEmulatedNccl);
  for (const char* name : kRecords) {
    const rl::KernelRecord* record = rl::find_kernel(name);
    ASSERT_NE(record, nullptr) << name;
    EXPECT_FALSE(record->gpu_only) << name;
    EXPECT_EQ(record->library, "NCCL (emulated)") << name;
    EXPECT_EQ(record->source_file, "kernels/node/nccl_collectives.cpp") << name;
  }
}

class NcclEmuRecordsOn : public testing::TestWithParam<int> {
 protected:
  void SetUp() override { ASSERT_EQ(rl::emu::set_device_count(GetParam()), cudaSuccess); }
  // The records' communicators and streams live until the process ends, so
  // the device count cannot go back down: each ctest entry is its own process.
  void TearDown() override { rl::emu::set_device_count(1); }
};

TEST_P(NcclEmuRecordsOn, every_record_validates_on_every_rank_in_and_out_of_place) {
  const int n = GetParam();
  cudaStream_t stream = nullptr;
  RL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::vector<std::int64_t> sizes = {4 * n, 4 * 37 * n, 1024 * n};
  for (const char* name : kRecords) {
    const rl::KernelRecord& record = *rl::find_kernel(name);
    for (const std::int64_t bytes : sizes)
      for (const int in_place : {0, 1}) {
        const rl::Shape shape{{{"bytes", bytes}, {"in_place", in_place}}};
        SCOPED_TRACE(std::string(name) + "/" + shape.to_string());
        if (const std::optional<std::string> why = record.refuse_shape(shape)) {
          EXPECT_TRUE(in_place == 1 && std::string(name) == "node_nccl_alltoall") << *why;
          continue;
        }
        const std::unique_ptr<rl::Workload> workload = record.make_workload(shape, 3);
        const rl::Validation v = workload->validate(stream);
        EXPECT_TRUE(v.passed) << v.detail;
        const std::string notes = workload->notes();
        EXPECT_NE(notes.find(std::to_string(n) + " ranks"), std::string::npos) << notes;
        EXPECT_NE(notes.find(rl::nccl::kEmulatedNccl), std::string::npos) << notes;
        for (int i = 0; i < 3; ++i) workload->run(stream);
        RL_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
  }
  RL_CUDA_CHECK(cudaStreamDestroy(stream));
}

INSTANTIATE_TEST_SUITE_P(Devices, NcclEmuRecordsOn, testing::Values(2, 8));

}  // namespace
