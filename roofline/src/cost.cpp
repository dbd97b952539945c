#include "rl/roofline/cost.hpp"

#include <array>
#include <utility>

namespace rl::roofline {

namespace {
struct UnitNames {
  ComputeUnit unit;
  std::string_view unit_name;
  std::string_view ceiling_name;
};
constexpr std::array<UnitNames, kComputeUnitCount> kUnitNames{{
    {ComputeUnit::fp32, "fp32", "fp32.fma"},
    {ComputeUnit::fp64, "fp64", "fp64.fma"},
    {ComputeUnit::fp16, "fp16", "fp16.hfma2"},
    {ComputeUnit::bf16, "bf16", "bf16.hfma2"},
    {ComputeUnit::tc_tf32, "tc_tf32", "tc.tf32"},
    {ComputeUnit::tc_fp16, "tc_fp16", "tc.fp16"},
    {ComputeUnit::tc_bf16, "tc_bf16", "tc.bf16"},
    {ComputeUnit::tc_fp8, "tc_fp8", "tc.fp8"},
    {ComputeUnit::tc_int8, "tc_int8", "tc.int8"},
    {ComputeUnit::tc_fp6, "tc_fp6", "tc.fp6"},
    {ComputeUnit::tc_fp4, "tc_fp4", "tc.fp4"},
    {ComputeUnit::tc_mxfp8, "tc_mxfp8", "tc.mxfp8"},
    {ComputeUnit::tc_mxfp6, "tc_mxfp6", "tc.mxfp6"},
    {ComputeUnit::tc_mxfp4, "tc_mxfp4", "tc.mxfp4"},
    {ComputeUnit::tc_nvfp4, "tc_nvfp4", "tc.nvfp4"},
}};

constexpr bool names_in_enum_order() {
  for (std::size_t i = 0; i < kUnitNames.size(); ++i)
    if (kUnitNames[i].unit != static_cast<ComputeUnit>(i)) return false;
  return true;
}
static_assert(names_in_enum_order(), "kUnitNames lists every ComputeUnit once, in enum order");
}  // namespace

std::string_view compute_ceiling_name(ComputeUnit unit) {
  for (const auto& n : kUnitNames)
    if (n.unit == unit) return n.ceiling_name;
  return "unknown";
}

std::string_view compute_unit_name(ComputeUnit unit) {
  for (const auto& n : kUnitNames)
    if (n.unit == unit) return n.unit_name;
  return "unknown";
}

std::optional<ComputeUnit> parse_compute_unit(std::string_view name) {
  for (const auto& n : kUnitNames)
    if (n.unit_name == name || n.ceiling_name == name) return n.unit;
  return std::nullopt;
}

}  // namespace rl::roofline
