// The GPU-only ceiling records (cuBLASLt / cuBLAS library GEMMs, the sm_90a
// wgmma loop) as the CUDA backend registers them.  Nothing here launches
// anything, so it runs without a GPU: it checks what the harness will read.
#include "rl/registry.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace rl {
namespace {

struct LibraryCeiling {
  const char* name;
  const char* ceiling;
  int min_cc;
};

constexpr LibraryCeiling kLibraryCeilings[] = {
    {"cublaslt_gemm_tf32", "tc.tf32", 80}, {"cublaslt_gemm_fp16", "tc.fp16", 80},
    {"cublaslt_gemm_bf16", "tc.bf16", 80}, {"cublaslt_gemm_fp8_e4m3", "tc.fp8", 89},
    {"cublaslt_gemm_int8", "tc.int8", 80}, {"cublas_sgemm_fp32", "fp32.fma", 0},
};

TEST(LibraryCeilings, every_precision_has_a_gpu_only_record_with_its_minimum_architecture) {
  for (const auto& expected : kLibraryCeilings) {
    const KernelRecord* record = find_kernel(expected.name);
    ASSERT_NE(record, nullptr) << expected.name;
    EXPECT_EQ(record->ceiling, expected.ceiling) << expected.name;
    EXPECT_EQ(record->min_cc, expected.min_cc) << expected.name;
    EXPECT_TRUE(record->gpu_only) << expected.name;
    EXPECT_EQ(record->family, "ceilings");
  }
}

TEST(LibraryCeilings, large_preset_sweeps_square_sizes_up_to_16384_and_counts_2mnk) {
  for (const auto& expected : kLibraryCeilings) {
    const KernelRecord* record = find_kernel(expected.name);
    ASSERT_NE(record, nullptr);
    const auto shapes = record->shapes(SizePreset::large);
    ASSERT_EQ(shapes.size(), 3u) << expected.name;
    EXPECT_EQ(shapes.front().at("m"), 4096);
    EXPECT_EQ(shapes.back().at("k"), 16384);
    EXPECT_EQ(record->shapes(SizePreset::small).size(), 1u);
    const Shape s{{{"m", 4096}, {"n", 4096}, {"k", 4096}}};
    EXPECT_EQ(record->cost(s).flops, 2.0 * 4096 * 4096 * 4096) << expected.name;
    EXPECT_GT(record->cost(s).bytes_model, 0) << expected.name;
  }
}

TEST(LibraryCeilings, non_square_or_unaligned_shapes_are_rejected_before_any_allocation) {
  const KernelRecord* record = find_kernel("cublaslt_gemm_bf16");
  ASSERT_NE(record, nullptr);
  EXPECT_THROW(record->make_workload(Shape{{{"m", 4096}, {"n", 2048}, {"k", 4096}}}, 1),
               std::invalid_argument);
  EXPECT_THROW(record->make_workload(Shape{{{"m", 100}, {"n", 100}, {"k", 100}}}, 1),
               std::invalid_argument);
}

TEST(WgmmaCeiling, is_a_gpu_only_hopper_record_counting_64x256x16_per_wgmma) {
  const KernelRecord* record = find_kernel("wgmma_loop_bf16_m64n256k16");
  ASSERT_NE(record, nullptr);
  EXPECT_TRUE(record->gpu_only);
  EXPECT_EQ(record->min_cc, 90);
  EXPECT_EQ(record->ceiling, "tc.bf16");
  const Shape s{{{"blocks", 2}, {"threads", 128}, {"iters", 10}}};
  // 2 warpgroups x 10 iterations x 4 wgmma x 2 * 64 * 256 * 16.
  EXPECT_EQ(record->cost(s).flops, 2.0 * 10 * 4 * 2 * 64 * 256 * 16);
  EXPECT_THROW(record->make_workload(Shape{{{"blocks", 2}, {"threads", 256}, {"iters", 10}}}, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace rl
