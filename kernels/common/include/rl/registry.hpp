// The kernel registry: one record per variant.  The harness, the tests and the
// roofline all read it; adding a variant is adding one record (RL_REGISTER_KERNEL
// in the variant's .cu file).
#pragma once

#include "rl/cuda.hpp"
#include "rl/packed128.hpp"  // precision_name
#include "rl/roofline/cost.hpp"
#include "rl/roofline/precision.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rl {

enum class SizePreset { small, medium, large };
std::string_view size_preset_name(SizePreset preset);

// Ordered named dimensions: {"n", 1<<28} or {"rows", 8192}, {"C", 768}.
struct Shape {
  std::vector<std::pair<std::string, std::int64_t>> dims;

  std::int64_t at(std::string_view name) const;  // throws std::out_of_range if absent
  std::string to_string() const;                 // "rows=8192,C=768"
};

struct Validation {
  bool passed = false;
  double max_rel_err = 0;  // max |got - ref| / max(|ref|, abs_floor) over all outputs
  double max_abs_err = 0;
  std::string detail;  // first failing element, NaN found, ...
};

// The precision of storage type T (float, __nv_bfloat16, __half): the one
// precision_name<T>() spells, named at compile time.
template <typename T>
constexpr roofline::Precision precision_of() {
  constexpr std::optional<roofline::Precision> precision =
      roofline::parse_precision(precision_name<T>());
  static_assert(precision.has_value(), "precision_name<T>() spells no roofline::Precision");
  return *precision;
}

// One tensor an instance read or wrote, for --dump-tensors: values converted
// to float whatever the storage type (`precision` names that type: a storage
// format, "fp8_e4m3" where the record's Precision says fp8).
struct TensorDump {
  std::string name;                // "A", "Q", "y"
  std::string role;                // "input" | "output"
  std::string precision;           // storage type: "fp32", "bf16", "fp16", "fp8_e4m3", ...
  std::vector<std::int64_t> dims;  // row-major, outermost first
  std::vector<float> values;       // product of dims elements
};

// One problem instance on the device: inputs (seeded, never zeros), outputs,
// the float64 reference.  Built by a record's make_workload for one shape.
class Workload {
 public:
  virtual ~Workload() = default;
  // The timed region: the kernel launch(es) only, asynchronous on `stream`.
  virtual void run(cudaStream_t stream) = 0;
  // Poison the outputs, run once, synchronise, compare with the reference.
  virtual Validation validate(cudaStream_t stream) = 0;
  // How this instance does its work when that is only known at run time (a
  // library's chosen algorithm): the harness puts it in results (method).
  virtual std::string notes() const { return {}; }
  // The inputs as the kernel read them and the outputs of the last run, for
  // --dump-tensors (downloads; call after validate).  Empty: not exposed.
  virtual std::vector<TensorDump> tensors() const { return {}; }
};

struct KernelRecord {
  std::string name;     // unique, says what it is: "layernorm_warp_per_row_twopass_f32"
  std::string family;   // "gelu", "layernorm", "ceilings", ...
  std::string variant;  // label within the family ("vec4", "warp_per_row")
  roofline::Precision precision = roofline::Precision::fp32;  // what it computes in
  roofline::ComputeUnit unit = roofline::ComputeUnit::fp32;
  std::string baseline;   // the naive sibling this variant improves on (chart arrow), or ""
  std::string ceiling;    // for ceiling kernels: the ceiling it measures ("hbm.copy"), else ""
  bool gpu_only = false;  // cannot run under the emulator (wgmma, TMA, libraries)
  int min_cc = 0;         // minimum compute capability x10 (89 for fp8), 0 = any
  int max_cc = 0;         // maximum compute capability x10 (90 for sm_90a-only code), 0 = any
  std::function<std::vector<Shape>(SizePreset)> shapes;
  std::function<roofline::Cost(const Shape&)> cost;
  std::function<std::unique_ptr<Workload>(const Shape&, std::uint64_t seed)> make_workload;
  // Device memory an instance allocates (inputs, outputs, scratch, library
  // workspace), known before it allocates anything: the harness compares it
  // with the free memory and records the instance as skipped, with both
  // figures, instead of running out of memory.  Empty: not declared (the
  // allocation itself reports an out-of-memory error).
  std::function<std::size_t(const Shape&)> device_bytes = {};
  // One line for the report's ladder tables: what this variant changes from
  // its baseline ("128-bit loads, A transposed in shared memory").
  std::string idea = {};
  // The library a baseline calls ("cuBLAS", "cuBLASLt", "cuDNN"); "" for a
  // hand-written kernel.  The report measures each rung against the library
  // record of the same family, precision and shape.
  std::string library = {};
  // The architectures it must not run on although they are within min_cc and
  // max_cc, as a predicate on the device's compute capability x10 returning
  // the reason (fp8 mma.sync runs only where it is a tensor instruction: the
  // allow-list rl::ptx::fp8_mma_sync_is_native).  The harness records the
  // instance as skipped with that reason.  Empty: none.
  std::function<std::optional<std::string>(int cc_x10)> refuse_on = {};
  // The shapes of its list (or of a --shape override) it refuses, as a
  // predicate returning the reason (a rung's time limit at the largest
  // shapes, a library's alignment).  The harness records the instance as
  // skipped with that reason, so a ladder table shows every rung at every
  // shape, a refusal spelled out.  Empty: none.
  std::function<std::optional<std::string>(const Shape&)> refuse_shape = {};
  // For a fused kernel: the unfused record it replaces at the same shape (the
  // report's fusion pair), declared, never inferred from `baseline`, which
  // names the ladder rung below.  "" for the others.
  std::string fuses = {};
  // For a ceiling kernel: the instruction its roof is made of, as the report
  // names it beside the roof ("wgmma.mma_async (HGMMA)"); "" for the others.
  std::string instruction = {};
  // The device whose stream times the work, for records that run on other
  // devices than 0 (the node family: a shape's `dst` or `device`).  The
  // harness makes it current (cudaSetDevice) before it builds, validates and
  // times the instance, and times on that device's stream.  Empty: device 0.
  std::function<int(const Shape&)> device = {};
  // The devices the machine must have: below it the harness records every
  // instance as skipped, "needs 2 devices; this machine has 1".
  int min_devices = 1;
  // run() may wait on the host for its own work (cudaMemcpyAsync with pageable
  // memory can wait for the stream or the staging): the harness times it
  // without the blocking kernel, which would hold that work until its timeout,
  // so the launch latency is part of its time.
  bool host_synchronous = false;
  // Where the record is registered, relative to the project root
  // ("kernels/gemm/gemm_f32_naive.cu"): set by RL_REGISTER_KERNEL from
  // __FILE__ (project_relative_path), for --list.
  std::string source_file = {};
};

std::vector<KernelRecord>& kernel_registry();
const KernelRecord* find_kernel(std::string_view name);

// The part of a source path from the project's `kernels/` or `tests/` folder
// on (the folders that register records): "/abs/root/kernels/gemm/x.cu" and
// "../../kernels/gemm/x.cu" both give "kernels/gemm/x.cu".  __FILE__ is
// absolute or relative depending on how the build names the file (ccache's
// base_dir makes it relative to the build folder), so only this suffix is
// the same on every machine.  A path with neither folder is returned whole.
std::string project_relative_path(std::string_view path);

struct KernelRegistrar {
  // source_file: __FILE__ of the registering file (kept as project_relative_path).
  KernelRegistrar(KernelRecord record, std::string_view source_file);
};

}  // namespace rl

#define RL_CONCAT_INNER_(a, b) a##b
#define RL_CONCAT_(a, b) RL_CONCAT_INNER_(a, b)
// RL_REGISTER_KERNEL(rl::KernelRecord{...});  at namespace scope in the variant's file.
// The record's source_file is this file.
#define RL_REGISTER_KERNEL(...)                                                   \
  static const ::rl::KernelRegistrar RL_CONCAT_(rl_kernel_registrar_, __LINE__) { \
    __VA_ARGS__, __FILE__                                                         \
  }
