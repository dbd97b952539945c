// The `roofline` CLI (rl::roofline::cli_main) with the kernel registry passed
// in, so `roofline model --sku NAME` can place every registered kernel.  Only
// the registry's cost functions run here: nothing touches a device.
#include "rl/bench/run_info.hpp"
#include "rl/cuda.hpp"
#include "rl/registry.hpp"
#include "rl/roofline/cli.hpp"

#include <vector>

int main(int argc, char** argv) {
  std::vector<rl::roofline::RegisteredKernel> registered;
  // The large preset: the sizes a GPU run measures, so the predicted
  // placement is the one a real run would be compared against.
  for (const auto& record : rl::kernel_registry())
    for (const rl::Shape& shape : record.shapes(rl::SizePreset::large))
      registered.push_back({.name = record.name,
                            .family = record.family,
                            .variant = record.variant,
                            .precision = std::string(rl::roofline::to_string(record.precision)),
                            .unit = record.unit,
                            .baseline = record.baseline,
                            .min_cc = record.min_cc,
                            .max_cc = record.max_cc,
                            .shape = shape.dims,
                            .cost = record.cost(shape),
                            .cost_of = [cost = record.cost](const rl::roofline::ShapeDims& dims) {
                              return cost(rl::Shape{dims});
                            }});
  // Ceiling loops list one wave of the device the registry sees here (the
  // emulator's, or a GPU's); the model re-sizes them to the SKU it models.
  int sm_count = 0;
  if (cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess ||
      sm_count <= 0) {
    cudaGetLastError();
    sm_count = 1;
  }
  return rl::roofline::cli_main(argc, argv, registered, sm_count,
                                rl::bench::version_text("roofline"));
}
