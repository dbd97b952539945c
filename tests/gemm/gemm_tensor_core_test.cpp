// GEMM tensor-core rungs (wmma; mma.sync fed by ldmatrix from a swizzled
// multistage cp.async pipeline) in tf32, fp16, bf16 and fp8: every record
// against the float64 reference with its precision's bound at odd shapes
// (1x1x1, no dimension a multiple of any tile, K below BlockK, 16-byte rows
// with tails for the cp.async path, an exact multiple) under two emulator
// schedules; a dropped K step and a wrong leading dimension failing validation;
// the swizzle's bank-conflict freedom for every read and write phase (and a
// plain layout failing it); storage types, error model, cost model, records.
// Built twice: label emu (emulator) and label gpu (CUDA device).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "emu_kernel_test.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_swizzle.hpp"
#include "gemm/gemm_workload.hpp"
#include "gemm_test_support.hpp"
#if defined(RL_EMULATE)
#include "rl/ptx.hpp"  // host code of the CUDA backend does not compile device wrappers
#endif

namespace {

using rl::gemm::Dims;

struct TensorCoreRecord {
  std::string name;
  std::string precision;
};

// Up the tensor-core ladder, per precision.
const std::vector<TensorCoreRecord> kTensorCoreRecords = {
    {"gemm_wmma_tf32", "tf32"},
    {"gemm_wmma_fp16", "fp16"},
    {"gemm_wmma_bf16", "bf16"},
    {"gemm_mma_sync_multistage_tf32", "tf32"},
    {"gemm_mma_sync_multistage_fp16", "fp16"},
    {"gemm_mma_sync_multistage_bf16", "bf16"},
    {"gemm_mma_sync_multistage_fp8", "fp8"},
};

// BlockM = BlockN = 128; BlockK 32 (wmma), 64 bytes of k (mma.sync: 16 tf32,
// 32 fp16/bf16, 64 fp8).  lda = K and ldb = N: rows are 16-byte aligned (the
// cp.async path) when K and N are multiples of 16 bytes / element size.
const std::vector<Dims> kTensorCoreShapes = {
    {1, 1, 1},       // one output, one term (unaligned: the element-load path)
    {67, 45, 33},    // no dimension a multiple of 4, 8, 16, 32, 64 or 128
    {129, 127, 65},  // one past / one short of the 128 tile, K one past 64
    {70, 50, 5},     // K smaller than every BlockK
    {144, 80, 48},   // 16-byte rows for every type (cp.async) with tails in M, N and K
    {128, 128, 64},  // an exact multiple of every tile
};

std::string to_string(const Dims& d) {
  return std::to_string(d.M) + "x" + std::to_string(d.N) + "x" + std::to_string(d.K);
}

std::unique_ptr<rl::InspectableWorkload> make_workload(const std::string& name, const Dims& d,
                                                       std::uint64_t seed) {
  return rl::test::make_inspectable_workload(name, rl::gemm::make_shape(d.M, d.N, d.K), seed);
}

// Makes the workload launch its kernel with the arguments changed by `edit`
// (whatever the storage type of A and B).
bool wrap_launch(rl::InspectableWorkload& workload,
                 const std::function<void(int& M, int& K, int& lda)>& edit) {
  auto wrap = [&]<typename T>(rl::gemm::GemmWorkload<T>* w) {
    if (w == nullptr) return false;
    w->launch = [inner = w->launch, edit](const rl::gemm::Args<T>& a, cudaStream_t stream) {
      rl::gemm::Args<T> changed = a;
      edit(changed.M, changed.K, changed.lda);
      inner(changed, stream);
    };
    return true;
  };
  return wrap(dynamic_cast<rl::gemm::GemmWorkload<float>*>(&workload)) ||
         wrap(dynamic_cast<rl::gemm::GemmWorkload<__half>*>(&workload)) ||
         wrap(dynamic_cast<rl::gemm::GemmWorkload<__nv_bfloat16>*>(&workload)) ||
         wrap(dynamic_cast<rl::gemm::GemmWorkload<__nv_fp8_e4m3>*>(&workload));
}

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const TensorCoreRecord& r, std::ostream* os) {
  *os << r.name;
}

class TensorCoreRung : public ::testing::TestWithParam<TensorCoreRecord> {};

TEST_P(TensorCoreRung, MatchesFloat64ReferenceAtOddShapesUnderTwoSchedules) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_IF_CANNOT_RUN(GetParam().name);
  for (const Dims& d : kTensorCoreShapes) {
    SCOPED_TRACE(to_string(d));
    auto workload = make_workload(GetParam().name, d, 4000 + static_cast<std::uint64_t>(d.M * d.K));
    ASSERT_NE(workload, nullptr);
    rl::test::expect_passes_under_two_schedules(*workload);
  }
}

// A launch that stops one step short of K: every output misses one term,
// which the exact check on integer inputs sees.  At 67 x 45 x 33
// (element-load path) and 144 x 80 x 48 (cp.async path).
TEST_P(TensorCoreRung, DroppedLastKStepFailsTheExactCheck) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  RL_SKIP_IF_CANNOT_RUN(GetParam().name);
  for (const Dims& d : {Dims{67, 45, 33}, Dims{144, 80, 48}}) {
    SCOPED_TRACE(to_string(d));
    auto workload = make_workload(GetParam().name, d, 7);
    ASSERT_NE(workload, nullptr);
    ASSERT_TRUE(wrap_launch(*workload, [](int&, int& K, int&) { K -= 1; }));
    const rl::Validation v = workload->validate(nullptr);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.detail.find("exact check on integer inputs: element "), std::string::npos)
        << v.detail;
  }
}

// A wrong row stride of A (lda = K - 1), an indexing bug that keeps every
// read inside the buffer.
TEST_P(TensorCoreRung, WrongLeadingDimensionFailsTheExactCheck) {
  RL_KERNEL_TEST_SETUP();
  RL_SKIP_UNDER_RACECHECK();
  RL_SKIP_IF_CANNOT_RUN(GetParam().name);
  auto workload = make_workload(GetParam().name, {67, 45, 33}, 8);
  ASSERT_NE(workload, nullptr);
  ASSERT_TRUE(wrap_launch(*workload, [](int&, int&, int& lda) { lda -= 1; }));
  EXPECT_FALSE(workload->validate(nullptr).passed);
}

INSTANTIATE_TEST_SUITE_P(TensorCore, TensorCoreRung, ::testing::ValuesIn(kTensorCoreRecords),
                         [](const auto& p) { return p.param.name; });

// ------------------------------------------------------------ swizzle

// Bank group (4 banks, 16 bytes) of a shared-memory byte offset.
int bank_group(int offset) {
  return (offset / 16) % 8;
}

// Tile geometries of the mma.sync rung: rows of 64 bytes for A, BlockN x
// element size for B.
constexpr int kARowBytes = 64;
constexpr int kBRowBytes16 = 128 * 2, kBRowBytesTf32 = 128 * 4, kBRowBytesFp8 = 128;

// The 8 chunks one ldmatrix phase (lanes 8q..8q+7) reads, as offsets.
template <typename Source>
bool ldmatrix_phases_conflict_free(rl::gemm::Swizzle s, int row_bytes, Source source) {
  for (int q = 0; q < 4; ++q) {
    std::set<int> groups;
    for (int lane = 8 * q; lane < 8 * q + 8; ++lane) {
      const rl::gemm::ChunkAt at = source(lane);
      groups.insert(bank_group(rl::gemm::swizzled_offset(s, row_bytes, at.row, at.chunk)));
    }
    if (groups.size() != 8) return false;
  }
  return true;
}

// Every ldmatrix of A (rows m of a 128 x 64-byte tile, two k steps of 2 chunks).
bool a_reads_conflict_free(rl::gemm::Swizzle s) {
  for (int row0 = 0; row0 < 128; row0 += 16)
    for (int chunk0 = 0; chunk0 < 4; chunk0 += 2)
      if (!ldmatrix_phases_conflict_free(s, kARowBytes, [&](int lane) {
            return rl::gemm::ldmatrix_x4_source(lane, row0, chunk0);
          }))
        return false;
  return true;
}

// Every ldmatrix.trans of 16-bit B (32 k rows of 16 chunks).
bool b16_reads_conflict_free(rl::gemm::Swizzle s) {
  for (int k0 = 0; k0 < 32; k0 += 16)
    for (int chunk0 = 0; chunk0 < 16; chunk0 += 2)
      if (!ldmatrix_phases_conflict_free(s, kBRowBytes16, [&](int lane) {
            return rl::gemm::ldmatrix_x4_source(lane, k0, chunk0);
          }))
        return false;
  return true;
}

// Every ldmatrix.trans of fp8 B (64 k rows of 8 chunks).
bool fp8_b_reads_conflict_free(rl::gemm::Swizzle s) {
  for (int k0 = 0; k0 < 64; k0 += 32)
    for (int chunk = 0; chunk < 8; ++chunk)
      if (!ldmatrix_phases_conflict_free(s, kBRowBytesFp8, [&](int lane) {
            return rl::gemm::fp8_b_ldmatrix_x4_trans_source(lane, k0, chunk);
          }))
        return false;
  return true;
}

// Every 32-bit B load of tf32 (16 k rows of 32 chunks): lane (g, t) reads
// (k0 + t + 4h, n0 + g); the warp's 32 words must lie in 32 distinct banks.
bool tf32_b_reads_conflict_free(rl::gemm::Swizzle s) {
  for (int k0 = 0; k0 < 16; k0 += 8)
    for (int h = 0; h < 2; ++h)
      for (int n0 = 0; n0 < 128; n0 += 8) {
        std::set<int> banks;
        for (int lane = 0; lane < 32; ++lane) {
          const int k = k0 + lane % 4 + 4 * h, n = n0 + lane / 4;
          const int offset = rl::gemm::swizzled_offset(s, kBRowBytesTf32, k, n / 4) + (n % 4) * 4;
          banks.insert((offset / 4) % 32);
        }
        if (banks.size() != 32) return false;
      }
  return true;
}

// cp.async: thread i of the block writes chunk i % chunks_per_row of row
// i / chunks_per_row; 8 consecutive threads form a phase.
bool cp_async_writes_conflict_free(rl::gemm::Swizzle s, int rows, int row_bytes) {
  const int chunks_per_row = row_bytes / 16;
  for (int first = 0; first < rows * chunks_per_row; first += 8) {
    std::set<int> groups;
    for (int i = first; i < first + 8; ++i)
      groups.insert(bank_group(
          rl::gemm::swizzled_offset(s, row_bytes, i / chunks_per_row, i % chunks_per_row)));
    if (groups.size() != 8) return false;
  }
  return true;
}

TEST(GemmSwizzle, EveryReadPhaseOfTheMmaSyncRungIsConflictFree) {
  using rl::gemm::Swizzle;
  EXPECT_TRUE(a_reads_conflict_free(Swizzle::rows64B));
  EXPECT_TRUE(b16_reads_conflict_free(Swizzle::rows8));
  EXPECT_TRUE(fp8_b_reads_conflict_free(Swizzle::fp8_b));
  EXPECT_TRUE(tf32_b_reads_conflict_free(Swizzle::tf32_b));
}

TEST(GemmSwizzle, EveryCpAsyncWritePhaseIsConflictFree) {
  using rl::gemm::Swizzle;
  EXPECT_TRUE(cp_async_writes_conflict_free(Swizzle::rows64B, 128, kARowBytes));
  EXPECT_TRUE(cp_async_writes_conflict_free(Swizzle::rows8, 32, kBRowBytes16));
  EXPECT_TRUE(cp_async_writes_conflict_free(Swizzle::tf32_b, 16, kBRowBytesTf32));
  EXPECT_TRUE(cp_async_writes_conflict_free(Swizzle::fp8_b, 64, kBRowBytesFp8));
}

// The counter-examples: the same reads from a plain row-major tile conflict,
// and a swizzle meant for another read pattern does not fit this one.
TEST(GemmSwizzle, APlainLayoutConflicts) {
  using rl::gemm::Swizzle;
  EXPECT_FALSE(a_reads_conflict_free(Swizzle::none));
  EXPECT_FALSE(b16_reads_conflict_free(Swizzle::none));
  EXPECT_FALSE(fp8_b_reads_conflict_free(Swizzle::none));
  EXPECT_FALSE(tf32_b_reads_conflict_free(Swizzle::none));
  EXPECT_FALSE(fp8_b_reads_conflict_free(Swizzle::rows8));
  EXPECT_FALSE(tf32_b_reads_conflict_free(Swizzle::rows8));
  EXPECT_TRUE(cp_async_writes_conflict_free(Swizzle::none, 32, kBRowBytes16))
      << "plain writes of a row's consecutive chunks never conflict: the swizzle keeps them so";
}

// The fp8 B lanes address every (k, chunk) of a 32 x 16-column block once per
// chunk: 4 matrices x 8 rows = 32 rows, k0..k0 + 31.
TEST(GemmSwizzle, Fp8BSourcesCoverTheKBlockOnce) {
  std::set<int> rows;
  for (int lane = 0; lane < 32; ++lane)
    rows.insert(rl::gemm::fp8_b_ldmatrix_x4_trans_source(lane, 32, 5).row);
  EXPECT_EQ(rows.size(), 32u);
  EXPECT_EQ(*rows.begin(), 32);
  EXPECT_EQ(*rows.rbegin(), 63);
}

// ------------------------------------------------------------ storage types

// Each storage type rounds to nearest even and reads back exactly what it
// stored; e4m3 saturates at 448.
TEST(GemmStorageTypes, RoundToNearestAndReadBackExactly) {
  using rl::gemm::input_from_f32;
  using rl::gemm::input_to_f32;
  EXPECT_EQ(input_to_f32(input_from_f32<float>(1.1f)), 1.1f);
  EXPECT_EQ(input_to_f32(input_from_f32<__half>(1.0f + 0x1p-11f)), 1.0f);  // tie to even
  EXPECT_EQ(input_to_f32(input_from_f32<__half>(1.0f + 0x1p-10f)), 1.0f + 0x1p-10f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_bfloat16>(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_bfloat16>(1.0f + 0x1p-7f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(1.0f + 0x1p-4f)), 1.0f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(1.0f + 0x1p-3f)), 1.0f + 0x1p-3f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(1000.0f)), 448.0f);
  EXPECT_EQ(input_to_f32(input_from_f32<__nv_fp8_e4m3>(-0.3f)), -0.3125f);
}

// The reference of stored fp8 inputs is the exact dot product of the stored
// values: 1.125 * 3 + (-0.3125) * 5 (both operands exact in e4m3).
TEST(GemmStorageTypes, ReferenceReadsTheStoredValues) {
  const std::vector<__nv_fp8_e4m3> a = {__nv_fp8_e4m3(1.125f), __nv_fp8_e4m3(-0.3f)};
  const std::vector<__nv_fp8_e4m3> b = {__nv_fp8_e4m3(3.0f), __nv_fp8_e4m3(5.0f)};
  const rl::gemm::Reference ref =
      rl::gemm::reference<__nv_fp8_e4m3>(a, b, {1, 1, 2}, rl::gemm::kTensorCoreError, false, 1);
  ASSERT_EQ(ref.value.size(), 1u);
  EXPECT_EQ(ref.value[0], 1.125 * 3 - 0.3125 * 5);
  EXPECT_DOUBLE_EQ(ref.bound[0], (1.125 * 3 + 0.3125 * 5) *
                                     rl::gemm::error_bound_factor(2, rl::gemm::kTensorCoreError));
}

// ------------------------------------------------------------ error model

TEST(GemmTensorCoreErrorModel, CountsKTruncatingRoundingsAndTf32InputRounding) {
  for (const std::int64_t K : {1, 64, 4096, 8192}) {
    const double ku = static_cast<double>(K) * 0x1p-22;
    EXPECT_NEAR(rl::gemm::error_bound_factor(K, rl::gemm::kTensorCoreError), ku / (1 - ku),
                1e-9 * ku);
    EXPECT_GT(rl::gemm::error_bound_factor(K, rl::gemm::kTensorCoreError),
              2 * rl::gemm::error_bound_factor(K, rl::gemm::kFp32SimtError) * (1 - 1e-6));
  }
  const double tf32 = rl::gemm::error_bound_factor(1, rl::gemm::kTensorCoreTf32Error);
  EXPECT_NEAR(tf32, (1 + 0x1p-11) * (1 + 0x1p-11) * (1 + 0x1p-22 / (1 - 0x1p-22)) - 1, 1e-15);
  // Beyond K u = 1 nothing is guaranteed.
  EXPECT_TRUE(
      std::isinf(rl::gemm::error_bound_factor(std::int64_t{1} << 22, rl::gemm::kTensorCoreError)));
}

// ------------------------------------------------------------ records

TEST(GemmTensorCoreRegistry, RecordsNamePrecisionUnitAndBaseline) {
  using rl::roofline::ComputeUnit;
  const auto unit_of = [](const std::string& p) {
    return p == "tf32"   ? ComputeUnit::tc_tf32
           : p == "fp16" ? ComputeUnit::tc_fp16
           : p == "bf16" ? ComputeUnit::tc_bf16
                         : ComputeUnit::tc_fp8;
  };
  for (const TensorCoreRecord& r : kTensorCoreRecords) {
    SCOPED_TRACE(r.name);
    const rl::KernelRecord* record = rl::find_kernel(r.name);
    ASSERT_NE(record, nullptr);
    EXPECT_EQ(record->family, "gemm");
    EXPECT_EQ(to_string(record->precision), r.precision);
    EXPECT_EQ(record->unit, unit_of(r.precision));
    EXPECT_FALSE(record->gpu_only);
    EXPECT_FALSE(record->idea.empty());
    EXPECT_EQ(record->min_cc, r.precision == "fp8" ? 89 : 0);
    ASSERT_TRUE(record->device_bytes);
    const std::size_t in = r.precision == "tf32" ? 4 : r.precision == "fp8" ? 1 : 2;
    EXPECT_EQ(record->device_bytes(rl::gemm::make_shape(100, 200, 300)),
              (100u * 300 + 300 * 200) * in + 100u * 200 * 4);
    const rl::roofline::Cost c = record->cost(rl::gemm::make_shape(127, 129, 65));
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 127 * 129 * 65);
    EXPECT_DOUBLE_EQ(c.bytes_min,
                     static_cast<double>(in) * (127 * 65 + 65 * 129) + 4.0 * 127 * 129);
    EXPECT_EQ(record->shapes(rl::SizePreset::large).size(),
              rl::find_kernel("gemm_f32_warptiled")->shapes(rl::SizePreset::large).size());
  }
}

// mma.sync's baseline is the wmma rung of its precision, wmma's the FP32
// top rung; fp8 enters at mma.sync with bf16's mma.sync rung as baseline.
TEST(GemmTensorCoreRegistry, BaselinesClimbPerPrecision) {
  for (const std::string p : {"tf32", "fp16", "bf16"}) {
    EXPECT_EQ(rl::find_kernel("gemm_wmma_" + p)->baseline, "gemm_f32_warptiled");
    EXPECT_EQ(rl::find_kernel("gemm_mma_sync_multistage_" + p)->baseline, "gemm_wmma_" + p);
  }
  EXPECT_EQ(rl::find_kernel("gemm_mma_sync_multistage_fp8")->baseline,
            "gemm_mma_sync_multistage_bf16");
}

#if defined(RL_EMULATE)
// Where the fp8 record refuses to run: the SASS of nvcc 13.0 (rl/ptx.hpp).
TEST(GemmTensorCoreRegistry, Fp8MmaSyncIsNativeOnSm89AndSm120Only) {
  EXPECT_TRUE(rl::ptx::fp8_mma_sync_is_native(8, 9));
  EXPECT_TRUE(rl::ptx::fp8_mma_sync_is_native(12, 0));
  EXPECT_FALSE(rl::ptx::fp8_mma_sync_is_native(9, 0));
  EXPECT_FALSE(rl::ptx::fp8_mma_sync_is_native(10, 0));
  EXPECT_FALSE(rl::ptx::fp8_mma_sync_is_native(8, 0));
}
#endif

TEST(GemmCostModel, DeviceBytesCountInputsAtStorageSize) {
  const Dims d{100, 200, 300};
  EXPECT_EQ(rl::gemm::device_bytes(d, 2), (100u * 300 + 300 * 200) * 2 + 100u * 200 * 4);
  EXPECT_EQ(rl::gemm::device_bytes(d, 1), (100u * 300 + 300 * 200) * 1 + 100u * 200 * 4);
}

}  // namespace
