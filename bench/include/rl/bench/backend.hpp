// What differs between the two builds of the harness.  Implemented once for
// the CUDA backend (bench/cuda_only/backend_cuda.cpp: device attributes,
// cuBLAS/cuDNN versions, NVML) and once for the emulator backend
// (bench/emu_only/backend_emu.cpp); everything else is the same source.
#pragma once

#include "rl/bench/nvml.hpp"
#include "rl/roofline/results.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace rl::bench::backend {

std::string_view program_name();   // "bench_roofline" | "bench_roofline_emu"
roofline::Backend backend_kind();  // cuda | emulator (context.backend)
std::string_view default_size();   // preset when --size is not given

// The one line printed (after "<program>: ") when no device can run kernels;
// nullopt when one can.
std::optional<std::string> device_unavailable();

// Where a run goes without --out: results/<gpu-slug>-<time>/ on a GPU;
// out/emulator-<time>/ (git-ignored) on the emulator, so emulated runs never
// land in results/.
std::filesystem::path default_out_dir(const roofline::Context& context,
                                      std::string_view compact_utc_time);

// Device, versions and clocks of device 0.  `nvml` receives the NVML handle
// when it is usable (for the clock sampler); otherwise the context says why.
roofline::Context collect_context(std::unique_ptr<Nvml>* nvml);

}  // namespace rl::bench::backend
