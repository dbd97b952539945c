// Every record whose cost model declares bytes_l2_load, bytes_l2_store or
// tensor_ops (issue 28) is run once on the emulator at small odd shapes, and
// the emulator's exact counts (rl/emu/counters.hpp) must equal the declared
// values: a failure names record, shape, quantity, counted and modelled.
// Each ctest entry sets one RL_EMU_CC (89, 90, 100, 120); a record is checked in
// the lowest of them it runs at, so each is checked once.  Negative case: a
// copy of the bf16 mma.sync GEMM's cost off by one k-tile of A, or by one
// mma.sync, fails the same comparison.
#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "rl/cuda.hpp"
#include "rl/emu/arch.hpp"
#include "rl/emu/counters.hpp"
#include "rl/registry.hpp"

namespace {

using rl::roofline::Cost;

// The emulator test shapes: small, with tails, and (GEMM) rows 16-byte
// aligned at 1, 2 and 4 bytes an element so cp.async and TMA rungs load
// through their counted paths, plus one that is not (only tensor_ops then).
const std::map<std::string, std::vector<rl::Shape>> kShapes = {
    {"gemm",
     {rl::Shape{{{"M", 129}, {"N", 136}, {"K", 80}}},
      rl::Shape{{{"M", 67}, {"N", 45}, {"K", 33}}}}},
    {"gelu", {rl::Shape{{{"n", 8 * 513}}}}},  // a multiple of 4 and 8 lanes: no scalar tail
    // N past one 128-row query tile and not a multiple of any key tile;
    // both head dims (key tiles of 64 and 32), causal and not.
    {"attention",
     {rl::Shape{{{"B", 1}, {"H", 2}, {"N", 131}, {"d", 64}, {"causal", 0}}},
      rl::Shape{{{"B", 2}, {"H", 1}, {"N", 131}, {"d", 128}, {"causal", 1}}}}},
    // The tensor roofs' loops: a warpgroup or four warps a block, odd iters
    // (the sign-alternating loops' closing step).
    {"ceilings", {rl::Shape{{{"blocks", 2}, {"threads", 128}, {"iters", 3}}}}},
};

std::vector<rl::Shape> shapes_of(const rl::KernelRecord& record) {
  const auto it = kShapes.find(record.family);
  return it != kShapes.end() ? it->second : record.shapes(rl::SizePreset::small);
}

bool declares(const Cost& c) {
  return c.bytes_l2_load || c.bytes_l2_store || c.tensor_ops;
}

bool runs_at(const rl::KernelRecord& r, int cc) {
  if (r.gpu_only || cc < r.min_cc || (r.max_cc != 0 && cc > r.max_cc)) return false;
  return !r.refuse_on || !r.refuse_on(cc);
}

// Checked where it first runs among the emulated devices of the ctest entries.
bool checked_at(const rl::KernelRecord& r, int cc) {
  for (const int lower : {89, 90, 100, 120}) {
    if (lower >= cc) break;
    if (runs_at(r, lower)) return false;
  }
  return runs_at(r, cc);
}

// The declared quantities the counts disagree with, one line each.
std::vector<std::string> mismatches(const rl::emu::Counts& counted, const Cost& declared) {
  std::vector<std::string> out;
  auto check = [&](const char* quantity, double got, const std::optional<double>& modelled) {
    if (modelled && got != *modelled)
      out.push_back(std::string(quantity) + ": counted " + std::to_string(got) + ", modelled " +
                    std::to_string(*modelled));
  };
  double ops = 0;
  for (const auto& [role, value] : counted.tensor_ops) ops += value;
  check("bytes_l2_load", counted.global_load_bytes, declared.bytes_l2_load);
  check("bytes_l2_store", counted.global_store_bytes, declared.bytes_l2_store);
  check("tensor_ops", ops, declared.tensor_ops);
  return out;
}

// The counter role a record's tensor-core unit is counted under (rl/emu/
// counters.hpp: the block-scaled formats under their element types').
std::string role_prefix(rl::roofline::ComputeUnit unit) {
  using U = rl::roofline::ComputeUnit;
  switch (unit) {
    case U::tc_tf32:
      return "tensor_tf32";
    case U::tc_fp16:
      return "tensor_fp16_";
    case U::tc_bf16:
      return "tensor_bf16";
    case U::tc_fp8:
    case U::tc_mxfp8:
      return "tensor_fp8_";
    case U::tc_int8:
      return "tensor_int8";
    case U::tc_fp6:
    case U::tc_mxfp6:
      return "tensor_fp6_fp4_";
    case U::tc_fp4:
    case U::tc_mxfp4:
    case U::tc_nvfp4:
      return "tensor_fp4";
    default:
      return "(no tensor unit)";
  }
}

// One run of the record's workload at `shape`, counted.
rl::emu::Counts count_once(const rl::KernelRecord& record, const rl::Shape& shape) {
  auto workload = record.make_workload(shape, 1);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the inputs' uploads are not counted
  rl::emu::reset_counts();
  workload->run(nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  rl::emu::stop_counting();
  return rl::emu::read_counts();
}

TEST(RegistryCounts, every_declared_count_equals_the_emulators_exact_count) {
  const int cc = rl::emu::compute_capability();
  int checked = 0;
  for (const rl::KernelRecord& record : rl::kernel_registry()) {
    if (!checked_at(record, cc)) continue;
    for (const rl::Shape& shape : shapes_of(record)) {
      Cost declared;
      try {
        declared = record.cost(shape);
      } catch (const std::exception&) {
        continue;  // a record of the family with other dimensions (hbm.copy's n)
      }
      if (!declares(declared)) continue;
      if (record.refuse_shape && record.refuse_shape(shape)) continue;
      const rl::emu::Counts counted = count_once(record, shape);
      for (const std::string& m : mismatches(counted, declared))
        ADD_FAILURE() << record.name << " at " << shape.to_string() << ": " << m;
      for (const auto& [role, ops] : counted.tensor_ops)
        EXPECT_EQ(role.rfind(role_prefix(record.unit), 0), 0U)
            << record.name << " at " << shape.to_string() << ": " << ops
            << " tensor ops counted under " << role << ", a "
            << rl::roofline::compute_unit_name(record.unit) << " record";
      std::cout << "checked " << record.name << " at " << shape.to_string() << "\n";
      ++checked;
    }
  }
  // Every emulated device of the ctest entries has records that declare.
  EXPECT_GT(checked, 0) << "no record declares counts at compute capability " << cc;
}

TEST(RegistryCounts, a_cost_off_by_one_k_tile_or_one_mma_fails_the_check) {
  const rl::KernelRecord* record = rl::find_kernel("gemm_mma_sync_multistage_bf16");
  ASSERT_NE(record, nullptr);
  if (!checked_at(*record, rl::emu::compute_capability()))
    GTEST_SKIP() << "checked in the ctest entry of another compute capability";
  const rl::Shape shape = kShapes.at("gemm").front();
  const rl::emu::Counts counted = count_once(*record, shape);
  const Cost right = record->cost(shape);
  ASSERT_TRUE(right.bytes_l2_load && right.tensor_ops);
  EXPECT_TRUE(mismatches(counted, right).empty());
  Cost short_a = right;
  *short_a.bytes_l2_load -= 128.0 * 32 * 2;  // one block's bf16 A k-tile, 128 x 32
  EXPECT_EQ(mismatches(counted, short_a).size(), 1U);
  Cost one_mma_more = right;
  *one_mma_more.tensor_ops += 2.0 * 16 * 8 * 16;  // one m16n8k16
  EXPECT_EQ(mismatches(counted, one_mma_more).size(), 1U);
}

}  // namespace
