// 2-D TMA tensor maps: the parameters of cuTensorMapEncodeTiled for a
// row-major matrix (pure, unit-tested in tests/hopper) and the encoded map a
// kernel receives.  Host code; a part of rl/ptx_sm90.hpp.
#pragma once

#if !defined(RL_PTX_SM90A)
#error "rl/ptx_sm90_tensor_map.hpp is a part of rl/ptx.hpp; include that instead"
#endif

#include <cstdint>
#include <stdexcept>
#include <string>

#include "rl/cuda.hpp"

#if defined(RL_EMULATE)
#include "rl/emu/arch.hpp"
#include "rl/emu/hopper.hpp"
#else
#include <cuda.h>  // CUtensorMap and its enums (types only: no libcuda link)
#endif

// A kernel parameter that lives in constant parameter space and whose address
// may be taken (the tensor map TMA reads): __grid_constant__ on the GPU.
#if defined(RL_EMULATE)
#define RL_PTX_GRID_CONSTANT
#else
#define RL_PTX_GRID_CONSTANT __grid_constant__
#endif

namespace rl::ptx {

// ---------------------------------------------------------------------------
// 2-D TMA tensor map for a row-major rows x cols matrix (the parameters of
// cuTensorMapEncodeTiled, innermost dimension first), a box of box_rows x
// box_cols elements, 128-byte swizzle, out-of-bounds elements read as zero.
// The driver's constraints, checked here with the reason: the global address
// and every row pitch (globalStrides) a multiple of 16 bytes (so a 16-bit
// matrix needs ld % 8 == 0), pitch < 2^40, box dimensions 1..256, and with
// the 128B swizzle the box's inner extent at most 128 bytes (a multiple of
// 16).  Host code.
// ---------------------------------------------------------------------------

struct TensorMap2d {
  std::uint64_t global_dim[2];           // {cols, rows}
  std::uint64_t global_stride_bytes[1];  // row pitch; dimension 0 is contiguous
  std::uint32_t box_dim[2];              // {box_cols, box_rows}
  std::uint32_t element_strides[2];      // {1, 1}: every element of the box
  std::uint32_t element_bytes;
  std::uint32_t box_bytes;  // what one copy delivers (mbarrier transaction count)
};

inline TensorMap2d tensor_map_2d(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                 std::uint32_t element_bytes, std::uint32_t box_rows,
                                 std::uint32_t box_cols) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("TMA tensor map: " + why); };
  if (rows < 1 || cols < 1 || rows > 0xFFFFFFFFll || cols > 0xFFFFFFFFll)
    fail("dimensions must be 1 .. 2^32-1 (got " + std::to_string(rows) + " x " +
         std::to_string(cols) + ")");
  if (ld < cols)
    fail("leading dimension " + std::to_string(ld) + " < cols " + std::to_string(cols));
  const std::int64_t pitch = ld * element_bytes;
  if (pitch % 16 != 0)
    fail("row pitch " + std::to_string(pitch) +
         " bytes is not a multiple of 16 (leading dimension " + std::to_string(ld) + " of " +
         std::to_string(element_bytes) + "-byte elements)");
  if (pitch >= (std::int64_t{1} << 40)) fail("row pitch must be < 2^40 bytes");
  if (box_rows < 1 || box_rows > 256 || box_cols < 1 || box_cols > 256)
    fail("box dimensions must be 1 .. 256");
  if (box_cols * element_bytes > 128 || (box_cols * element_bytes) % 16 != 0)
    fail("with the 128B swizzle the box's inner extent must be a multiple of 16 bytes, <= 128");
  return TensorMap2d{
      .global_dim = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows)},
      .global_stride_bytes = {static_cast<std::uint64_t>(pitch)},
      .box_dim = {box_cols, box_rows},
      .element_strides = {1, 1},
      .element_bytes = element_bytes,
      .box_bytes = box_rows * box_cols * element_bytes};
}

// The encoded, opaque map (128 bytes, 64-byte aligned) a kernel receives as a
// `const RL_PTX_GRID_CONSTANT TensorMap` parameter.
#if defined(RL_EMULATE)
using TensorMap = rl::emu::hopper::TensorMap;  // the emulated CUtensorMap
#else
using TensorMap = CUtensorMap;
#endif

// uint8: any 1-byte element (e4m3 and e5m2 too: TMA copies bytes and never
// reads them as numbers).
enum class TensorMapElement { bf16, fp16, uint8, fp32 };

// cuTensorMapEncodeTiled, reached through the runtime's driver entry point
// (cudaGetDriverEntryPointByVersion: the unversioned cudaGetDriverEntryPoint is
// deprecated in CUDA 13), so nothing links against libcuda.  Throws
// std::runtime_error with the driver's code when encoding fails.  Under the
// emulator there is no driver: it throws.
inline TensorMap encode_tensor_map_2d(const TensorMap2d& p, TensorMapElement element,
                                      const void* global_address) {
#if defined(RL_EMULATE)
  namespace h = rl::emu::hopper;
  if (!rl::emu::has_tma()) {
    const int cc = rl::emu::compute_capability();
    throw std::runtime_error(
        "rl::ptx::encode_tensor_map_2d: TMA exists from sm_90 on; the emulated device is "
        "compute capability " +
        std::to_string(cc / 10) + "." + std::to_string(cc % 10) +
        " (RL_EMU_CC=90, 100, 103, 120 or 121 emulates one that has it)");
  }
  TensorMap map{};
  const char* why = "";
  const std::uint64_t strides[1] = {p.global_stride_bytes[0]};
  if (h::encode_tensor_map_tiled(&map,
                                 element == TensorMapElement::bf16   ? h::TmaDataType::bfloat16
                                 : element == TensorMapElement::fp16 ? h::TmaDataType::float16
                                 : element == TensorMapElement::fp32 ? h::TmaDataType::float32
                                                                     : h::TmaDataType::uint8,
                                 2, global_address, p.global_dim, strides, p.box_dim,
                                 p.element_strides, h::TmaInterleave::none, h::TmaSwizzle::b128,
                                 h::TmaOobFill::zeros, &why) != 0)
    throw std::runtime_error(std::string("cuTensorMapEncodeTiled (emulated) failed: ") + why);
  return map;
#else
  using Encode =
      CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static const Encode encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn,
                                                                12000, cudaEnableDefault, &found);
    if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw std::runtime_error(std::string("cuTensorMapEncodeTiled not found through the driver "
                                           "entry point: ") +
                               cudaGetErrorString(status));
    return reinterpret_cast<Encode>(fn);
  }();
  if ((reinterpret_cast<std::uintptr_t>(global_address) & 15u) != 0)
    throw std::invalid_argument("TMA tensor map: global address not 16-byte aligned");
  CUtensorMap map{};
  const CUresult result =
      encode(&map,
             element == TensorMapElement::bf16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
             : element == TensorMapElement::fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
             : element == TensorMapElement::fp32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                                 : CU_TENSOR_MAP_DATA_TYPE_UINT8,
             2, const_cast<void*>(global_address), p.global_dim, p.global_stride_bytes, p.box_dim,
             p.element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(result)));
  return map;
#endif
}

}  // namespace rl::ptx
