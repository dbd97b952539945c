// The block-scaled (MXFP8) GEMM workload and record builder: e4m3 A and Bᵀ
// with their ue8m0 scale tensors (gemm_block_scaled.hpp's layout), fp32 C;
// what gemm_workload.hpp is for the unscaled rungs.  Host code.
//
// K: any K.  A's and B's rows are stored padded with zeros to a multiple of
// 32 (one whole k-block; also TMA's 16-byte pitch), the last k-block's scale
// multiplies those zeros, so no shape is refused: the problem keeps its K,
// and a launcher that needs whole k-blocks multiplies K rounded up to 32.
//
// Validation, as GemmWorkload's, twice:
//   1. exact by construction: A and B from {-2, -1, 1, 2}, scales 2^-2 .. 2^2.
//      Multiplied by 4 each, every scaled element is an integer of magnitude
//      at most 32 (an int8), so 16 C is the integer product of those, every
//      partial sum below 2^24 in magnitude (K <= 16384): gemm_exact_check.hpp
//      compares it exactly (all of C, or sampled plus Freivalds' identities).
//      A wrong scale (one exponent off) or a dropped k-block changes C.
//   2. the timed inputs: normals rounded to e4m3, scales 2^-1 .. 2^1, within
//      gemm_reference.hpp's bound (kHopperFp8Error, as for the unscaled fp8
//      records: how wide a Blackwell fp8 pipe accumulates is not documented)
//      of the float64 product of the scaled values (exact in fp32).
#pragma once

#include "gemm/gemm_block_scaled.hpp"
#include "gemm/gemm_cost.hpp"
#include "gemm/gemm_exact_check.hpp"
#include "gemm/gemm_problem.hpp"
#include "gemm/gemm_reference.hpp"
#include "gemm/gemm_storage.hpp"
#include "rl/device_buffer.hpp"
#include "rl/inspectable_workload.hpp"
#include "rl/registry.hpp"
#include "rl/validate.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rl::gemm {

// Host copies of one set of inputs: values as drawn (A M x K, Bᵀ N x K,
// row-major, unpadded) and the scale exponents (rows x ceil(K / 32)).
struct ScaledInputs {
  std::vector<float> a, bt;
  std::vector<int> a_exp, b_exp;
};

class BlockScaledWorkload final : public InspectableWorkload {
 public:
  ScaledLauncher launch;
  // Test hook: the exact check uploads A's scale of this row, k-block 0, one
  // exponent too high, while its reference keeps the right one.
  std::optional<std::int64_t> wrong_scale_row;
  std::string notes_text;  // what notes() says (a library: which call)

  BlockScaledWorkload(ScaledLauncher launcher, const Dims& d, std::uint64_t seed)
      : launch(std::move(launcher)),
        d_(d),
        seed_(seed),
        ld_(padded_ld(d.K, kScaleBlock)),
        blocks_((d.K + kScaleBlock - 1) / kScaleBlock),
        a_(static_cast<std::size_t>(d.M * ld_)),
        b_(static_cast<std::size_t>(d.N * ld_)),
        scale_a_(static_cast<std::size_t>(scale_tensor_bytes(d.M, d.K))),
        scale_b_(static_cast<std::size_t>(scale_tensor_bytes(d.N, d.K))),
        c_(static_cast<std::size_t>(d.M * d.N)) {
    redraw_inputs(InputSpec{}, seed);
  }

  void run(cudaStream_t stream) override {
    launch(ScaledArgs{{c_.get(), a_.get(), b_.get(), static_cast<int>(d_.M), static_cast<int>(d_.N),
                       static_cast<int>(d_.K), static_cast<int>(ld_), static_cast<int>(ld_),
                       static_cast<int>(d_.N)},
                      scale_a_.get(),
                      scale_b_.get()},
           stream);
  }

  Validation validate(cudaStream_t stream) override {
    Validation exact = validate_exactly(stream);
    if (!exact.passed) return exact;
    run_once(stream);
    const std::vector<float> a = scaled(timed_.a, timed_.a_exp, d_.M);
    const std::vector<float> bt = scaled(timed_.bt, timed_.b_exp, d_.N);
    const Reference ref =
        reference<float>(a, transposed(bt, d_.N, d_.K), d_, kHopperFp8Error, sampled(), seed_);
    const std::vector<float> all = download_outputs();
    if (ref.positions.empty()) return compare_with_bounds(all, ref.value, ref.bound);
    std::vector<float> got(ref.positions.size());
    for (std::size_t p = 0; p < got.size(); ++p)
      got[p] = all[static_cast<std::size_t>(ref.positions[p])];
    Validation v = compare_with_bounds(got, ref.value, ref.bound);
    if (!v.passed) v.detail = "sampled check of the timed inputs: " + v.detail;
    return v;
  }

  // Normals rounded to e4m3 (an exact zero redrawn), scales 2^-1 .. 2^1.
  void redraw_inputs(const InputSpec& spec, std::uint64_t seed) override {
    SeededRng rng(seed);
    auto draw = [&](std::int64_t count) {
      std::vector<float> out(static_cast<std::size_t>(count));
      for (float& v : out) {
        do {
          v = input_to_f32(input_from_f32<__nv_fp8_e4m3>(
              static_cast<float>(rng.normal(spec.mean, spec.stddev))));
        } while (v == 0.0f);
      }
      return out;
    };
    timed_.a = draw(d_.M * d_.K);
    timed_.bt = draw(d_.N * d_.K);
    timed_.a_exp = exponents(d_.M * blocks_, -1, 1, rng);
    timed_.b_exp = exponents(d_.N * blocks_, -1, 1, rng);
    upload(timed_, std::nullopt);
  }

  std::vector<float> download_outputs() const override { return c_.download(); }
  std::string notes() const override { return notes_text; }

  // A, Bᵀ and the scales (as the factors 2^e) as drawn, C as written.
  std::vector<TensorDump> tensors() const override {
    auto factors = [](const std::vector<int>& e) {
      std::vector<float> out(e.size());
      for (std::size_t i = 0; i < e.size(); ++i) out[i] = std::ldexp(1.0f, e[i]);
      return out;
    };
    return {{"A", "input", "fp8_e4m3", {d_.M, d_.K}, timed_.a},
            {"B_transposed", "input", "fp8_e4m3", {d_.N, d_.K}, timed_.bt},
            {"scale_A", "input", "ue8m0", {d_.M, blocks_}, factors(timed_.a_exp)},
            {"scale_B", "input", "ue8m0", {d_.N, blocks_}, factors(timed_.b_exp)},
            {"C", "output", "fp32", {d_.M, d_.N}, c_.download()}};
  }

  bool sampled() const {
    return d_.M * d_.N * d_.K > kFullCheckMaxMacs || d_.M * d_.N > kFullCheckMaxOutputs;
  }

 private:
  static std::vector<int> exponents(std::int64_t count, int lo, int hi, SeededRng& rng) {
    std::vector<int> out(static_cast<std::size_t>(count));
    for (int& e : out)
      e = lo + static_cast<int>(rng.next_u64() % static_cast<unsigned>(hi - lo + 1));
    return out;
  }

  // rows x K values times their k-block's 2^e (exact: e4m3 times a power of two).
  std::vector<float> scaled(const std::vector<float>& v, const std::vector<int>& e,
                            std::int64_t rows) const {
    std::vector<float> out(v.size());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < d_.K; ++k) {
        const auto i = static_cast<std::size_t>(r * d_.K + k);
        out[i] = std::ldexp(v[i], e[static_cast<std::size_t>(r * blocks_ + k / kScaleBlock)]);
      }
    return out;
  }

  template <typename V>
  static std::vector<V> transposed(const std::vector<V>& v, std::int64_t rows, std::int64_t cols) {
    std::vector<V> out(v.size());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        out[static_cast<std::size_t>(c * rows + r)] = v[static_cast<std::size_t>(r * cols + c)];
    return out;
  }

  // Step 1 of validate(): integer inputs and power-of-two scales, C compared
  // exactly as 16 C = (4 A . scale_A)(4 B . scale_B); the timed inputs
  // uploaded again whatever the outcome.
  Validation validate_exactly(cudaStream_t stream) {
    auto integers = [](std::int64_t count, std::uint64_t seed) {
      const std::vector<std::int8_t> v = exact_inputs(static_cast<std::size_t>(count), seed);
      return std::vector<float>(v.begin(), v.end());
    };
    ScaledInputs in;
    in.a = integers(d_.M * d_.K, SeededRng::stream_seed(seed_, 1));
    in.bt = integers(d_.N * d_.K, SeededRng::stream_seed(seed_, 2));
    SeededRng rng(SeededRng::stream_seed(seed_, 3));
    in.a_exp = exponents(d_.M * blocks_, -2, 2, rng);
    in.b_exp = exponents(d_.N * blocks_, -2, 2, rng);
    upload(in, wrong_scale_row);
    run_once(stream);
    std::vector<float> c = download_outputs();
    upload(timed_, std::nullopt);
    for (float& x : c) x *= 16.0f;  // exact: a power of two
    auto as_int8 = [](const std::vector<float>& v) {
      std::vector<std::int8_t> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<std::int8_t>(4.0f * v[i]);
      return out;
    };
    const std::vector<std::int8_t> a = as_int8(scaled(in.a, in.a_exp, d_.M));
    const std::vector<std::int8_t> b =
        transposed(as_int8(scaled(in.bt, in.b_exp, d_.N)), d_.N, d_.K);
    Validation v = exact_check(c, a, b, d_, sampled(), seed_);
    if (!v.passed) v.detail = "exact check on integer inputs (C times 16): " + v.detail;
    return v;
  }

  void run_once(cudaStream_t stream) {
    c_.poison(stream);
    run(stream);
    RL_CUDA_CHECK(cudaGetLastError());
    RL_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  // Rows padded with zeros to ld_; scale tensors in their atoms, the pad
  // scale 1 (it multiplies zeros).  wrong_row: that row's k-block 0 scale of
  // A uploaded one exponent higher.
  void upload(const ScaledInputs& in, std::optional<std::int64_t> wrong_row) {
    auto values = [&](DeviceBuffer<__nv_fp8_e4m3>& buffer, const std::vector<float>& v,
                      std::int64_t rows) {
      std::vector<__nv_fp8_e4m3> host(buffer.size(), input_from_f32<__nv_fp8_e4m3>(0.0f));
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t k = 0; k < d_.K; ++k)
          host[static_cast<std::size_t>(r * ld_ + k)] =
              input_from_f32<__nv_fp8_e4m3>(v[static_cast<std::size_t>(r * d_.K + k)]);
      buffer.upload(host);
    };
    auto scales = [&](DeviceBuffer<std::uint8_t>& buffer, const std::vector<int>& e,
                      std::int64_t rows, std::optional<std::int64_t> wrong) {
      std::vector<std::uint8_t> host(buffer.size(), 127);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < blocks_; ++j)
          host[static_cast<std::size_t>(scale_offset(r, j, d_.K))] = static_cast<std::uint8_t>(
              127 + e[static_cast<std::size_t>(r * blocks_ + j)] + (wrong == r && j == 0 ? 1 : 0));
      buffer.upload(host);
    };
    values(a_, in.a, d_.M);
    values(b_, in.bt, d_.N);
    scales(scale_a_, in.a_exp, d_.M, wrong_row);
    scales(scale_b_, in.b_exp, d_.N, std::nullopt);
  }

  Dims d_;
  std::uint64_t seed_;
  std::int64_t ld_;
  std::int64_t blocks_;
  DeviceBuffer<__nv_fp8_e4m3> a_;
  DeviceBuffer<__nv_fp8_e4m3> b_;
  DeviceBuffer<std::uint8_t> scale_a_;
  DeviceBuffer<std::uint8_t> scale_b_;
  DeviceBuffer<float> c_;
  ScaledInputs timed_;
};

// Cost: FLOPs 2 M N K (the scaling is not counted); bytes_min A, B (1 byte an
// element), their scales (1 byte per 32 elements) and C once; bytes_model A
// and its scales read once per tile column, B and its scales once per tile
// row (gemm_cost.hpp's reuse tile), the scale tensors at their padded size.
inline roofline::Cost scaled_cost(const Dims& d, ReuseTile tile, roofline::ComputeUnit unit) {
  roofline::Cost c = cost(d, tile, 1, unit);
  const double blocks = std::ceil(static_cast<double>(d.K) / kScaleBlock);
  c.bytes_min += (static_cast<double>(d.M) + static_cast<double>(d.N)) * blocks;
  c.bytes_model += static_cast<double>(scale_tensor_bytes(d.M, d.K)) *
                       ceil_div(static_cast<double>(d.N), tile.N) +
                   static_cast<double>(scale_tensor_bytes(d.N, d.K)) *
                       ceil_div(static_cast<double>(d.M), tile.M);
  return c;
}

// What differs between block-scaled records (RecordSpec's fields that apply).
struct ScaledRecordSpec {
  std::string name;
  std::string variant;
  std::string baseline;
  roofline::Precision precision;
  roofline::ComputeUnit unit;
  ReuseTile tile;
  ScaledLauncher launcher;  // a kernel's; or, for a library's state per instance:
  std::function<ScaledLauncher(const Dims&)> make_launcher = {};
  int min_cc = 0;
  int max_cc = 0;
  bool gpu_only = false;
  std::string idea = {};
  std::string library = {};
  // What the counters check, added to the cost (nullptr: nothing declared).
  void (*declare_counted)(roofline::Cost& c, const Dims& d) = nullptr;
  // KernelRecord::refuse_on: the devices skipped, with the reason.
  std::optional<std::string> (*refuse_on)(int cc_x10) = nullptr;
  // KernelRecord::refuse_shape; make_workload throws std::invalid_argument
  // with the same reason.
  std::optional<std::string> (*refuse_shape)(const Shape& shape) = nullptr;
  std::size_t library_bytes = 0;  // device memory beyond the operands (a workspace)
  std::string notes = {};         // each instance's Workload::notes()
};

inline KernelRecord make_scaled_record(ScaledRecordSpec spec) {
  KernelRecord record{
      .name = std::move(spec.name),
      .family = "gemm",
      .variant = std::move(spec.variant),
      .precision = spec.precision,
      .unit = spec.unit,
      .baseline = std::move(spec.baseline),
      .ceiling = "",
      .gpu_only = spec.gpu_only,
      .min_cc = spec.min_cc,
      .shapes = [](SizePreset preset) { return shapes(preset); },
      .cost =
          [tile = spec.tile, unit = spec.unit, declare = spec.declare_counted](const Shape& shape) {
            const Dims d = dims(shape);
            roofline::Cost c = scaled_cost(d, tile, unit);
            if (declare != nullptr) declare(c, d);
            return c;
          },
      .make_workload = [launcher = spec.launcher, make_launcher = spec.make_launcher,
                        refuse = spec.refuse_shape, notes = spec.notes](
                           const Shape& shape, std::uint64_t seed) -> std::unique_ptr<Workload> {
        if (refuse != nullptr)
          if (std::optional<std::string> why = refuse(shape)) throw std::invalid_argument(*why);
        const Dims d = dims(shape);
        auto w = std::make_unique<BlockScaledWorkload>(make_launcher ? make_launcher(d) : launcher,
                                                       d, seed);
        w->notes_text = notes;
        return w;
      },
      .device_bytes =
          [extra = spec.library_bytes](const Shape& shape) {
            const Dims d = dims(shape);
            const auto ld = static_cast<std::size_t>(padded_ld(d.K, kScaleBlock));
            return static_cast<std::size_t>(d.M + d.N) * ld +
                   static_cast<std::size_t>(scale_tensor_bytes(d.M, d.K) +
                                            scale_tensor_bytes(d.N, d.K)) +
                   static_cast<std::size_t>(d.M * d.N) * sizeof(float) + extra;
          },
      .idea = std::move(spec.idea),
      .library = std::move(spec.library),
      .refuse_on = spec.refuse_on,
      .refuse_shape = spec.refuse_shape,
  };
  record.max_cc = spec.max_cc;
  return record;
}

}  // namespace rl::gemm
