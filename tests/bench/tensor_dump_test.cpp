// --dump-tensors' file format: what numpy.load expects of a version 1.0 file.
#include "rl/bench/tensor_dump.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace {

std::string header_of(const std::string& npy) {
  const std::size_t length = static_cast<unsigned char>(npy[8]) |
                             (static_cast<std::size_t>(static_cast<unsigned char>(npy[9])) << 8);
  return npy.substr(10, length);
}

TEST(NpyFloat32, header_names_dtype_order_and_shape_and_data_starts_64_byte_aligned) {
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> dims{2, 3};
  const std::string npy = rl::bench::npy_float32(values, dims);
  EXPECT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::string header = header_of(npy);
  EXPECT_EQ(header.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), 0u);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ((10 + header.size()) % 64, 0u);
  ASSERT_EQ(npy.size(), 10 + header.size() + values.size() * sizeof(float));
  float back[6];
  std::memcpy(back, npy.data() + 10 + header.size(), sizeof back);
  EXPECT_EQ(std::vector<float>(back, back + 6), values);
}

TEST(NpyFloat32, one_dimension_is_a_python_one_tuple) {
  const std::vector<float> values{7};
  const std::vector<std::int64_t> dims{1};
  EXPECT_NE(header_of(rl::bench::npy_float32(values, dims)).find("'shape': (1,), }"),
            std::string::npos);
}

TEST(NpyFloat32, a_count_that_does_not_match_the_shape_is_refused) {
  const std::vector<float> values{1, 2, 3};
  const std::vector<std::int64_t> dims{2, 2};
  EXPECT_THROW(rl::bench::npy_float32(values, dims), std::invalid_argument);
}

TEST(DumpDirectoryName, keeps_shape_text_and_replaces_path_separators) {
  EXPECT_EQ(rl::bench::dump_directory_name("gemm_wmma_bf16", "M=127,N=129,K=65"),
            "gemm_wmma_bf16/M=127,N=129,K=65");
  EXPECT_EQ(rl::bench::dump_directory_name("a/b", "n=1 2"), "a_b/n=1_2");
}

}  // namespace
