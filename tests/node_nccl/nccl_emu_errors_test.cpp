// The emulator's NCCL on 2 emulated devices: each wrong argument or wrong use
// gets the code NCCL gives it (argcheck.cc, init.cc, group.cc), a message in
// ncclGetLastError, and moves nothing; a group with a failed call runs none
// of its calls; ranks whose calls disagree, or a communicator destroyed with
// a call no peer matched, are invalid usage; overlapping buffers other than
// NCCL's in-place layouts are invalid argument (an emulator check).
#include "nccl_emu_node.hpp"

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using rl::test::kCount;
using rl::test::kUnwritten;
using rl::test::NcclOnDevices;

class NcclErrors : public NcclOnDevices {
 protected:
  // Rank r's all_reduce of kCount floats from send to recv.
  ncclResult_t all_reduce(int r, const float* send, float* recv, std::size_t count = kCount) {
    return ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comms_[r], streams_[r]);
  }
};

std::string last_error() {
  return ncclGetLastError(nullptr);
}

TEST_P(NcclErrors, library_queries_answer_as_nccl) {
  int version = 0;
  EXPECT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
  EXPECT_STREQ(ncclGetErrorString(ncclInvalidUsage),
               "invalid usage (run with NCCL_DEBUG=WARN for details)");
  int count = 0, device = -1, rank = -1;
  EXPECT_EQ(ncclCommCount(comms_[1], &count), ncclSuccess);
  EXPECT_EQ(ncclCommCuDevice(comms_[1], &device), ncclSuccess);
  EXPECT_EQ(ncclCommUserRank(comms_[1], &rank), ncclSuccess);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(device, 1);
  EXPECT_EQ(rank, 1);
  ncclResult_t async = ncclInternalError;
  EXPECT_EQ(ncclCommGetAsyncError(comms_[0], &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);
  EXPECT_EQ(ncclCommCount(nullptr, &count), ncclInvalidArgument);
  EXPECT_EQ(ncclCommCount(comms_[0], nullptr), ncclInvalidArgument);
}

TEST_P(NcclErrors, comm_init_all_refuses_as_nccl_does) {
  std::vector<ncclComm_t> comms(2, nullptr);
  EXPECT_EQ(ncclCommInitAll(nullptr, 2, nullptr), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitAll(comms.data(), -1, nullptr), ncclInvalidArgument);
  // No device 2: without a devlist NCCL meets it when cudaSetDevice fails.
  EXPECT_EQ(ncclCommInitAll(comms.data(), 3, nullptr), ncclUnhandledCudaError);
  // In a devlist it is checked first (init.cc: "Invalid device %d (totalnDev=%d)").
  const int missing[] = {0, 5}, negative[] = {-1, 0}, twice[] = {1, 1}, reversed[] = {1, 0};
  EXPECT_EQ(ncclCommInitAll(comms.data(), 2, missing), ncclInvalidArgument);
  EXPECT_NE(last_error().find("Invalid device 5 (totalnDev=2)"), std::string::npos) << last_error();
  EXPECT_EQ(ncclCommInitAll(comms.data(), 2, negative), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitAll(comms.data(), 2, twice), ncclInvalidUsage);
  EXPECT_NE(last_error().find("listed twice"), std::string::npos) << last_error();
  ASSERT_EQ(ncclCommInitAll(comms.data(), 2, reversed), ncclSuccess);
  int device = -1;
  EXPECT_EQ(ncclCommCuDevice(comms[0], &device), ncclSuccess);
  EXPECT_EQ(device, 1);  // rank 0 on the first device listed
  for (ncclComm_t c : comms) EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comms[0]), ncclInvalidArgument);  // twice
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess);
}

TEST_P(NcclErrors, wrong_arguments_are_invalid_argument_and_move_nothing) {
  float* in0 = inputs<float>(0, kCount);
  float* out0 = unwritten<float>(0, kCount);
  float* on_device_1 = unwritten<float>(1, kCount);
  std::vector<float> pageable(kCount);
  const auto type = static_cast<ncclDataType_t>(ncclNumTypes);
  EXPECT_EQ(ncclAllReduce(in0, out0, kCount, ncclFloat32, ncclSum, nullptr, streams_[0]),
            ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(in0, out0, kCount, type, ncclSum, comms_[0], streams_[0]),
            ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(in0, out0, kCount, ncclFloat32, ncclNumOps, comms_[0], streams_[0]),
            ncclInvalidArgument);
  EXPECT_EQ(ncclBroadcast(in0, out0, kCount, ncclFloat32, 2, comms_[0], streams_[0]),
            ncclInvalidArgument);
  EXPECT_EQ(ncclSend(in0, kCount, ncclFloat32, -1, comms_[0], streams_[0]), ncclInvalidArgument);
  EXPECT_EQ(all_reduce(0, nullptr, out0), ncclInvalidArgument);
  EXPECT_EQ(all_reduce(0, in0, on_device_1), ncclInvalidArgument);
  EXPECT_NE(last_error().find("allocated on device 1"), std::string::npos) << last_error();
  EXPECT_EQ(all_reduce(0, pageable.data(), out0), ncclInvalidArgument);
  EXPECT_EQ(all_reduce(0, in0, out0, kCount + 1), ncclInvalidArgument);  // past the end
  EXPECT_NE(last_error().find("past the end"), std::string::npos) << last_error();
  // A ReduceScatter's input holds a chunk per rank: kCount floats are one short.
  EXPECT_EQ(
      ncclReduceScatter(in0, out0, kCount / 2 + 1, ncclFloat32, ncclSum, comms_[0], streams_[0]),
      ncclInvalidArgument);
  // Rank 1 calls too (from a thread of its own, as outside a group NCCL needs):
  // had any call above been queued, this collective would run.
  float* in1 = inputs<float>(1, kCount);
  EXPECT_EQ(on_another_thread([&] { return all_reduce(1, in1, on_device_1); }), ncclSuccess);
  EXPECT_EQ(download(out0, 1)[0], kUnwritten);
  EXPECT_EQ(download(on_device_1, 1)[0], kUnwritten);  // waits for rank 0's call
  EXPECT_EQ(all_reduce(0, in0, out0), ncclSuccess);
  EXPECT_EQ(download(on_device_1, 1)[0], download(out0, 1)[0]);
}

TEST_P(NcclErrors, a_stream_of_another_device_or_destroyed_is_an_unhandled_cuda_error) {
  float* in0 = inputs<float>(0, kCount);
  float* out0 = unwritten<float>(0, kCount);
  EXPECT_EQ(ncclAllReduce(in0, out0, kCount, ncclFloat32, ncclSum, comms_[0], streams_[1]),
            ncclUnhandledCudaError);
  cudaStream_t gone = nullptr;
  ASSERT_EQ(cudaStreamCreate(&gone), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(gone), cudaSuccess);
  EXPECT_EQ(ncclAllReduce(in0, out0, kCount, ncclFloat32, ncclSum, comms_[0], gone),
            ncclUnhandledCudaError);
}

TEST_P(NcclErrors, reductions_the_emulator_does_not_model_are_refused_not_approximated) {
  float* in0 = inputs<float>(0, kCount);
  float* out0 = unwritten<float>(0, kCount);
  EXPECT_EQ(ncclAllReduce(in0, out0, kCount, ncclFloat32, ncclAvg, comms_[0], streams_[0]),
            ncclInvalidUsage);
  EXPECT_EQ(ncclAllReduce(in0, out0, kCount, ncclBfloat16, ncclSum, comms_[0], streams_[0]),
            ncclInvalidUsage);
  EXPECT_NE(last_error().find("not emulated"), std::string::npos) << last_error();
}

TEST_P(NcclErrors, group_errors_and_mismatches_run_none_of_the_groups_calls) {
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);  // not in a group
  float* in[] = {inputs<float>(0, kCount), inputs<float>(1, kCount)};
  float* out[] = {unwritten<float>(0, kCount), unwritten<float>(1, kCount)};
  // One call of the group fails: ncclGroupEnd returns its error, nothing runs.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(all_reduce(0, in[0], out[0]), ncclSuccess);
  EXPECT_EQ(all_reduce(1, in[1], nullptr), ncclInvalidArgument);
  EXPECT_EQ(all_reduce(1, in[1], out[1]), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);
  EXPECT_EQ(download(out[0], 1)[0], kUnwritten);
  // The ranks disagree on the count: invalid usage, neither output written.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(all_reduce(0, in[0], out[0], kCount), ncclSuccess);
  EXPECT_EQ(all_reduce(1, in[1], out[1], kCount - 1), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_NE(last_error().find("do not match"), std::string::npos) << last_error();
  EXPECT_EQ(download(out[0], 1)[0], kUnwritten);
  EXPECT_EQ(download(out[1], 1)[0], kUnwritten);
  // A send whose receive has another count: invalid usage, nothing received.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclSend(in[0], kCount, ncclFloat32, 1, comms_[0], streams_[0]), ncclSuccess);
  EXPECT_EQ(ncclRecv(out[1], kCount - 1, ncclFloat32, 0, comms_[1], streams_[1]), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  EXPECT_EQ(download(out[1], 1)[0], kUnwritten);
  // Count 0: checked, then dropped without waiting for the other rank.
  EXPECT_EQ(all_reduce(0, nullptr, nullptr, 0), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(all_reduce(0, in[0], out[0]), ncclSuccess);  // pairs with rank 1's next call
  EXPECT_EQ(all_reduce(1, in[1], out[1]), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(download(out[0], 1)[0], download(out[1], 1)[0]);
  EXPECT_NE(download(out[0], 1)[0], kUnwritten);
}

TEST_P(NcclErrors, destroying_a_comm_with_an_unmatched_call_is_invalid_usage) {
  float* in0 = inputs<float>(0, kCount);
  float* out0 = unwritten<float>(0, kCount);
  EXPECT_EQ(all_reduce(0, in0, out0), ncclSuccess);  // rank 1 never calls
  EXPECT_EQ(ncclCommDestroy(comms_[0]), ncclInvalidUsage);
  EXPECT_NE(last_error().find("no peer matched"), std::string::npos) << last_error();
  comms_[0] = nullptr;  // destroyed all the same
  EXPECT_EQ(download(out0, 1)[0], kUnwritten);
}

// Overlapping buffers other than NCCL's in-place layouts (its user guide,
// "In-place Operations") give garbage on a GPU, while the emulator, which
// stages results, would give the ideal answer: an emulator check refuses them
// (invalid argument), each kind below one element or one slot off its layout.
TEST_P(NcclErrors, overlapping_buffers_outside_the_in_place_layout_are_invalid_argument) {
  auto refused = [](ncclResult_t result) {
    EXPECT_EQ(result, ncclInvalidArgument);
    EXPECT_NE(last_error().find("emulator check"), std::string::npos) << last_error();
  };
  float* one = inputs<float>(1, 2 * kCount);  // two slots on rank 1's device
  refused(all_reduce(1, one, one + 1));
  refused(ncclBroadcast(one, one + 1, kCount, ncclFloat32, 1, comms_[1], streams_[1]));
  refused(ncclAllGather(one, one, kCount, ncclFloat32, comms_[1], streams_[1]));  // slot 0
  refused(ncclAllGather(one + 3, one, 2, ncclFloat32, comms_[1], streams_[1]));   // one + 2
  refused(ncclReduceScatter(one, one, kCount, ncclFloat32, ncclSum, comms_[1], streams_[1]));
  refused(ncclReduceScatter(one, one + 1, 2, ncclFloat32, ncclSum, comms_[1], streams_[1]));
  // (Nothing was queued: the fixture's ncclCommDestroy finds no unmatched call.)
}

INSTANTIATE_TEST_SUITE_P(TwoDevices, NcclErrors, testing::Values(2));

}  // namespace
