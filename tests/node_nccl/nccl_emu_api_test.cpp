// The emulator's NCCL (emu/cuda_include/nccl.h, emu/src/nccl_*.cpp) on 2 and
// 8 emulated devices: every collective the records use, in and out of place,
// gives every rank exactly what NCCL documents (integer values, so sums are
// exact); a group runs nothing before its ncclGroupEnd and a call outside a
// group waits for the last rank's, made by another thread (one thread driving
// several ranks outside a group is refused); and each wrong argument gets
// NCCL's code.
// The collectives are host copies, no kernel, so there is no schedule to vary.
#include "nccl_emu_node.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using rl::test::kCount;
using rl::test::kUnwritten;
using rl::test::NcclOnDevices;
using rl::test::value;

template <typename T>
T fold(ncclRedOp_t op, int n, std::size_t i) {
  T acc = value<T>(0, i);
  for (int r = 1; r < n; ++r) {
    const T v = value<T>(r, i);
    acc = op == ncclSum    ? acc + v
          : op == ncclProd ? acc * v
          : op == ncclMax  ? std::max(acc, v)
                           : std::min(acc, v);
  }
  return acc;
}

TEST_P(NcclOnDevices, all_reduce_gives_every_rank_the_exact_reduction_for_each_op_and_type) {
  auto run = [&](auto zero, ncclDataType_t type, ncclRedOp_t op, bool in_place) {
    using T = decltype(zero);
    std::vector<T*> send(comms_.size()), recv(comms_.size());
    for (int r = 0; r < n_; ++r) {
      send[r] = inputs<T>(r, kCount);
      recv[r] = in_place ? send[r] : unwritten<T>(r, kCount);
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n_; ++r)
      ASSERT_EQ(ncclAllReduce(send[r], recv[r], kCount, type, op, comms_[r], streams_[r]),
                ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < n_; ++r) {
      const std::vector<T> got = download(recv[r], kCount);
      for (std::size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(got[i], fold<T>(op, n_, i)) << "type " << type << " op " << op << " rank " << r
                                              << " element " << i << " in place " << in_place;
    }
  };
  for (const ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin}) {
    run(std::int32_t{}, ncclInt32, op, false);
    run(float{}, ncclFloat32, op, true);
  }
  run(std::int64_t{}, ncclInt64, ncclSum, false);
  run(double{}, ncclFloat64, ncclSum, true);
}

TEST_P(NcclOnDevices, reduce_scatter_gives_rank_r_the_sum_of_slot_r_in_and_out_of_place) {
  for (const bool in_place : {false, true}) {
    std::vector<float*> send(comms_.size()), recv(comms_.size());
    for (int r = 0; r < n_; ++r) {
      send[r] = inputs<float>(r, kCount * n_);
      recv[r] = in_place ? send[r] + r * kCount : unwritten<float>(r, kCount);
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n_; ++r)
      ASSERT_EQ(
          ncclReduceScatter(send[r], recv[r], kCount, ncclFloat32, ncclSum, comms_[r], streams_[r]),
          ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < n_; ++r) {
      const std::vector<float> got = download(recv[r], kCount);
      for (std::size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(got[i], fold<float>(ncclSum, n_, r * kCount + i)) << r << " " << in_place;
    }
  }
}

TEST_P(NcclOnDevices, all_gather_puts_rank_p_input_in_slot_p_of_every_rank_in_and_out_of_place) {
  for (const bool in_place : {false, true}) {
    std::vector<float*> send(comms_.size()), recv(comms_.size());
    for (int r = 0; r < n_; ++r) {
      // In place: the input is the rank's own slot of its output.
      recv[r] = upload<float>(r, kCount * n_, [&](std::size_t j) {
        return in_place && j / kCount == static_cast<std::size_t>(r) ? value<float>(r, j % kCount)
                                                                     : float{kUnwritten};
      });
      send[r] = in_place ? recv[r] + r * kCount : inputs<float>(r, kCount);
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n_; ++r)
      ASSERT_EQ(ncclAllGather(send[r], recv[r], kCount, ncclFloat32, comms_[r], streams_[r]),
                ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < n_; ++r) {
      const std::vector<float> got = download(recv[r], kCount * n_);
      for (std::size_t j = 0; j < got.size(); ++j)
        ASSERT_EQ(got[j], value<float>(static_cast<int>(j / kCount), j % kCount)) << r;
    }
  }
}

TEST_P(NcclOnDevices, broadcast_copies_the_last_ranks_buffer_to_every_rank) {
  const int root = n_ - 1;  // not rank 0, so a root taken as 0 shows
  for (const bool in_place : {false, true}) {
    std::vector<float*> send(comms_.size()), recv(comms_.size());
    for (int r = 0; r < n_; ++r) {
      send[r] = r == root || !in_place ? inputs<float>(r, kCount) : unwritten<float>(r, kCount);
      recv[r] = in_place ? send[r] : unwritten<float>(r, kCount);
    }
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int r = 0; r < n_; ++r)
      ASSERT_EQ(ncclBroadcast(send[r], recv[r], kCount, ncclFloat32, root, comms_[r], streams_[r]),
                ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    for (int r = 0; r < n_; ++r) {
      const std::vector<float> got = download(recv[r], kCount);
      for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(got[i], value<float>(root, i)) << r;
    }
  }
}

TEST_P(NcclOnDevices, send_and_recv_to_every_rank_in_one_group_is_an_alltoall) {
  std::vector<float*> send(comms_.size()), recv(comms_.size());
  for (int r = 0; r < n_; ++r) {
    send[r] = inputs<float>(r, kCount * n_);
    recv[r] = unwritten<float>(r, kCount * n_);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int r = 0; r < n_; ++r)
    for (int p = 0; p < n_; ++p) {  // the record's order: to p, then from p; p == r too
      ASSERT_EQ(ncclSend(send[r] + p * kCount, kCount, ncclFloat32, p, comms_[r], streams_[r]),
                ncclSuccess);
      ASSERT_EQ(ncclRecv(recv[r] + p * kCount, kCount, ncclFloat32, p, comms_[r], streams_[r]),
                ncclSuccess);
    }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  for (int r = 0; r < n_; ++r) {
    const std::vector<float> got = download(recv[r], kCount * n_);
    for (std::size_t j = 0; j < got.size(); ++j)  // slot p: what p sent to r
      ASSERT_EQ(got[j], value<float>(static_cast<int>(j / kCount), r * kCount + j % kCount)) << r;
  }
}

TEST_P(NcclOnDevices, nothing_moves_before_group_end_or_before_the_last_ranks_call) {
  std::vector<float*> send(comms_.size()), recv(comms_.size());
  for (int r = 0; r < n_; ++r) {
    send[r] = inputs<float>(r, kCount);
    recv[r] = unwritten<float>(r, kCount);
  }
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);  // groups nest: only the outermost end runs
  for (int r = 0; r < n_; ++r)
    ASSERT_EQ(ncclAllReduce(send[r], recv[r], kCount, ncclFloat32, ncclSum, comms_[r], streams_[r]),
              ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(download(recv[0], 1)[0], kUnwritten);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(download(recv[0], 1)[0], fold<float>(ncclSum, n_, 0));
  // Outside a group each call is its own group: it runs with the last rank's,
  // each rank driven by a thread of its own (one thread for every rank must
  // use a group: nothing_but_a_group_lets_one_thread_drive_several_ranks).
  auto max_of = [&](int r) {
    return ncclAllReduce(send[r], recv[r], kCount, ncclFloat32, ncclMax, comms_[r], streams_[r]);
  };
  for (int r = 0; r < n_; ++r) {
    EXPECT_EQ(download(recv[0], 1)[0], fold<float>(ncclSum, n_, 0)) << "before rank " << r;
    ASSERT_EQ(on_another_thread([&] { return max_of(r); }), ncclSuccess);
  }
  EXPECT_EQ(download(recv[0], 1)[0], fold<float>(ncclMax, n_, 0));
}

// NCCL's group docs: "When a single thread is managing multiple devices, group
// semantics must be used": a call outside a group may block until its peers
// call, so the thread never reaches the next rank's call.  The emulator would
// run it; it refuses it instead (an emulator check), and nothing runs.
TEST_P(NcclOnDevices, nothing_but_a_group_lets_one_thread_drive_several_ranks) {
  std::vector<float*> send(comms_.size()), recv(comms_.size());
  for (int r = 0; r < n_; ++r) {
    send[r] = inputs<float>(r, kCount);
    recv[r] = unwritten<float>(r, kCount);
  }
  auto sum_of = [&](int r) {
    return ncclAllReduce(send[r], recv[r], kCount, ncclFloat32, ncclSum, comms_[r], streams_[r]);
  };
  ASSERT_EQ(sum_of(0), ncclSuccess);  // waits for the other ranks
  EXPECT_EQ(sum_of(1), ncclInvalidUsage);
  const std::string why = ncclGetLastError(nullptr);
  EXPECT_NE(why.find("emulator check"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;  // one line
  // Inside a group too: this thread is still in rank 0's call.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(sum_of(1), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  // A send outside a group waits for its receive the same way.
  ASSERT_EQ(ncclSend(send[0], kCount, ncclFloat32, 1, comms_[0], streams_[0]), ncclSuccess);
  EXPECT_EQ(ncclRecv(recv[1], kCount, ncclFloat32, 0, comms_[1], streams_[1]), ncclInvalidUsage);
  EXPECT_EQ(download(recv[1], 1)[0], kUnwritten);
  // The same rank again is no other device: it queues behind the first call.
  ASSERT_EQ(sum_of(0), ncclSuccess);
  // Other threads complete what rank 0 waits for (two all_reduces, a receive).
  for (int r = 1; r < n_; ++r)
    for (int k = 0; k < 2; ++k)
      ASSERT_EQ(on_another_thread([&] { return sum_of(r); }), ncclSuccess);
  EXPECT_EQ(on_another_thread(
                [&] { return ncclRecv(recv[1], kCount, ncclFloat32, 0, comms_[1], streams_[1]); }),
            ncclSuccess);
  EXPECT_EQ(download(recv[1], 1)[0], value<float>(0, 0));  // the send, after the sums
  EXPECT_EQ(download(recv[0], 1)[0], fold<float>(ncclSum, n_, 0));
}

INSTANTIATE_TEST_SUITE_P(Devices, NcclOnDevices, testing::Values(2, 8));

}  // namespace
