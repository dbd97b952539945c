// Attention, cuDNN SDPA: NVIDIA's fused attention forward (a FlashAttention-
// style kernel chosen by cuDNN) through the cuDNN frontend's C++ graph API,
// bf16 and fp16, causal and not.  The fused library reference the family's
// tensor-core flash kernel is read against.
//
// One graph per shape, built in the workload's constructor (outside the timed
// region): Q, K, V and O as [B, H, N, d] with strides (H·N·d, N·d, d, 1), the
// project's contiguous layout; the attention scale 1/√d (the value every
// attention workload passes); fp32 intermediates and compute; under the causal
// mask the diagonal band's right bound is 0 with top-left alignment, i.e.
// query i sees keys j <= i; no softmax statistics (inference).  cuDNN's
// heuristics (mode A) pick the engine; the execution plan and the variant pack
// are built once, so the timed region is the execute call alone.  notes()
// names the plan.
//
// Cost model: FLOPs as the family counts them; S and P never leave the chip
// and the library's tiling is unknown, so bytes_model = bytes_min (Q, K, V
// read once, O written once).  Error model: the flash kernels' (S in fp32, P
// rounded to T for P·V, tensor-core sums).
//
// Memory: Q, K, V, O and the plan's workspace.  device_bytes must be known
// before any allocation, the workspace only once a plan exists, so the
// record declares kWorkspaceCapBytes, and an instance whose plan asks for more
// refuses to run (naming both figures) rather than exceed its declaration.
//
// Chart arrow: the bf16 record's baseline is attention_naive_cublas_bf16, the
// unfused path on the same library stack at the same precision, so the arrow
// is the fusion step alone.  There is no fp16 naive library path: the fp16
// record has no arrow rather than one that would also cross precisions.
//
// Compiled only where CMake found cuDNN and the frontend headers (PyPI's
// nvidia-cudnn-frontend, installed by scripts/setup): RL_HAVE_CUDNN_FRONTEND.
// GPU only (sm_80+).  Not yet run on a GPU.
//
// The FP8 record (attention_cudnn_sdpa_fp8_e4m3) is in
// attention_cudnn_sdpa_fp8.hpp, included at the end: it builds its graph with
// this file's bhnd_tensor, sdpa_options and build_plan, in this compile.

// GCC 12 reports a "potential null pointer dereference" in libstdc++'s
// vector::resize as inlined into the frontend's plans.h: a middle-end false
// positive issued where the code is inlined, which the SYSTEM include of the
// frontend cannot silence.  Off for this file only, before any header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wnull-dereference"
#endif

#include "attention/cuda_only/attention_library.hpp"

#if defined(RL_HAVE_CUDNN) && defined(RL_HAVE_CUDNN_FRONTEND)

#include "rl/check_libs.hpp"

#include <cudnn_frontend.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace rl::attention {
namespace {

namespace fe = cudnn_frontend;

constexpr std::size_t kWorkspaceCapBytes = std::size_t{256} << 20;

// The frontend reports through its own error object, not a cudnnStatus_t:
// thrown as the same rl::LibraryError as every library failure.
void check(fe::error_t status, const char* step) {
  if (status.is_bad())
    throw LibraryError("cuDNN frontend", static_cast<int>(status.get_code()),
                       std::string("cuDNN SDPA ") + step + " failed: " + status.get_message());
}

template <typename T>
constexpr fe::DataType_t frontend_type() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return fe::DataType_t::BFLOAT16;
  else
    return fe::DataType_t::HALF;
}

enum Uid : std::int64_t { kQ = 1, kK, kV, kO };

// [B, H, N, d] with strides (H·N·d, N·d, d, 1): the family's layout.
fe::graph::Tensor_attributes& as_bhnd(fe::graph::Tensor_attributes& t, const Dims& p,
                                      std::int64_t uid) {
  return t.set_uid(uid)
      .set_dim({p.B, p.H, p.N, p.d})
      .set_stride({p.H * p.N * p.d, p.N * p.d, p.d, 1});
}

std::shared_ptr<fe::graph::Tensor_attributes> bhnd_tensor(fe::graph::Graph& graph, const Dims& p,
                                                          const char* name, std::int64_t uid) {
  fe::graph::Tensor_attributes t;
  return graph.tensor(as_bhnd(t.set_name(name), p, uid));
}

// The SDPA options of both records: the scale, no statistics, the causal band.
fe::graph::SDPA_attributes sdpa_options(const Dims& p, float scale) {
  auto options =
      fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(false).set_attn_scale(scale);
  if (p.causal)
    options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
        .set_diagonal_band_right_bound(0);
  return options;
}

// From a complete graph to an executable plan (heuristics mode A), its
// workspace (at most kWorkspaceCapBytes) and its name.
void build_plan(fe::graph::Graph& graph, cudnnHandle_t handle,
                DeviceBuffer<unsigned char>& workspace_buffer, std::string& plan) {
  check(graph.validate(), "validate");
  check(graph.build_operation_graph(handle), "build_operation_graph");
  check(graph.create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans");
  check(graph.check_support(handle), "check_support");
  check(graph.build_plans(handle), "build_plans");
  std::int64_t workspace = 0;
  check(graph.get_workspace_size(workspace), "get_workspace_size");
  if (workspace < 0 || static_cast<std::size_t>(workspace) > kWorkspaceCapBytes)
    throw std::runtime_error("cuDNN SDPA: the plan needs " + std::to_string(workspace) +
                             " B of workspace, more than the " +
                             std::to_string(kWorkspaceCapBytes) + " B its record declares");
  workspace_buffer = DeviceBuffer<unsigned char>(static_cast<std::size_t>(workspace));
  check(graph.get_plan_name(plan), "get_plan_name");
}

template <typename T>
class CudnnSdpa final : public Library<T> {
 public:
  explicit CudnnSdpa(const Dims& p) : p_(p), scale_(attention_scale(p)) {
    RL_CUDNN_CHECK(cudnnCreate(&handle_));
    try {
      build();
    } catch (...) {
      cudnnDestroy(handle_);
      throw;
    }
  }
  CudnnSdpa(const CudnnSdpa&) = delete;
  CudnnSdpa& operator=(const CudnnSdpa&) = delete;
  ~CudnnSdpa() override { cudnnDestroy(handle_); }  // no throw from a destructor

  void launch(const Args<T>& a, cudaStream_t stream) override {
    require_same_problem(a, p_, scale_);
    RL_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    pack_[kQ] = const_cast<T*>(a.Q);  // the frontend's variant pack takes void*
    pack_[kK] = const_cast<T*>(a.K);
    pack_[kV] = const_cast<T*>(a.V);
    pack_[kO] = a.O;
    check(graph_->execute(handle_, pack_, workspace_.get()), "execute");
  }

  std::string notes() const override {
    return "cuDNN " + std::to_string(cudnnGetVersion()) + " SDPA forward (frontend " +
           std::to_string(CUDNN_FRONTEND_VERSION) + " graph API), heuristics mode A, plan " +
           plan_ + ", workspace " + std::to_string(workspace_.bytes()) + " B" +
           (p_.causal ? ", causal (top-left diagonal, right bound 0)" : "");
  }

 private:
  void build() {
    graph_->set_io_data_type(frontend_type<T>())
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    const auto outputs =
        graph_->sdpa(bhnd_tensor(*graph_, p_, "Q", kQ), bhnd_tensor(*graph_, p_, "K", kK),
                     bhnd_tensor(*graph_, p_, "V", kV), sdpa_options(p_, scale_));
    as_bhnd(outputs[0]->set_output(true), p_, kO);
    build_plan(*graph_, handle_, workspace_, plan_);
  }

  Dims p_;
  float scale_;
  cudnnHandle_t handle_ = nullptr;
  std::shared_ptr<fe::graph::Graph> graph_ = std::make_shared<fe::graph::Graph>();
  std::unordered_map<std::int64_t, void*> pack_;
  DeviceBuffer<unsigned char> workspace_;
  std::string plan_;
};

template <typename T>
KernelRecord cudnn_sdpa_record(std::string name, std::string baseline) {
  return library_record<T>({.name = std::move(name),
                            .variant = "cudnn_sdpa",
                            .baseline = std::move(baseline),
                            .launcher = {},
                            .needs_scores = false,
                            .bytes_model = [](const Dims& p) { return bytes_min(p, sizeof(T)); },
                            .error = kErrorFlashTensorCore,
                            .unit = default_compute_unit<T>(),
                            .min_cc = 80,
                            .workspace_bytes = [](const Shape&) { return kWorkspaceCapBytes; },
                            .idea = "cuDNN's fused SDPA (frontend graph API)",
                            .library = "cuDNN"},
                           [](const Dims& p) -> std::unique_ptr<Library<T>> {
                             return std::make_unique<CudnnSdpa<T>>(p);
                           });
}

}  // namespace

RL_REGISTER_KERNEL(cudnn_sdpa_record<__nv_bfloat16>("attention_cudnn_sdpa_bf16",
                                                    "attention_naive_cublas_bf16"));
RL_REGISTER_KERNEL(cudnn_sdpa_record<__half>("attention_cudnn_sdpa_fp16", ""));

}  // namespace rl::attention

// The FP8 record, on this file's graph code (one compile of the frontend).
#include "attention/cuda_only/attention_cudnn_sdpa_fp8.hpp"

#endif  // RL_HAVE_CUDNN && RL_HAVE_CUDNN_FRONTEND
