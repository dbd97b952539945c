// LayerNorm library baseline: cuDNN's norm-forward operation (backend graph
// API, CUDNN_LAYER_NORM, training phase so it also writes mean and rstd).
//
// Not a rung of the ladder but the reference point on the chart: what the
// vendor library achieves on the same shapes, to which the hand-written rungs
// are compared.  cuDNN picks its engine by heuristics (mode A) for each shape;
// the execution plan is built once per shape and the variant pack once per
// set of buffers, so the timed region is the execute call alone.
//
// GPU only (the emulator has no cuDNN): compiled into the CUDA backend when
// cuDNN is found, registered with gpu_only = true.  cuDNN 9 has the operation
// (CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR); a shape its engines do
// not support fails the workload with cuDNN's own message.
#include "layernorm/layernorm_cost.hpp"
#include "layernorm/layernorm_launch.hpp"
#include "layernorm/layernorm_workload.hpp"

#if defined(RL_HAVE_CUDNN)

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "rl/check_libs.hpp"

namespace rl::layernorm {
namespace {

// Cost model: the library's kernels are not ours to inspect; counted as one
// pass over x (bytes_model = bytes_min), so its point shows how close it gets
// to the compulsory traffic.
double bytes_model_cudnn(const Dims& d) {
  return x_read_bytes(d, 1, 1.0) + bytes_except_x(d);
}

// One cuDNN backend descriptor, destroyed with its owner.
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    RL_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &handle_));
  }
  ~Descriptor() {
    if (handle_ != nullptr) cudnnBackendDestroyDescriptor(handle_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return handle_; }

  template <typename V>
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                  std::int64_t count, const V* values) {
    RL_CUDNN_CHECK(cudnnBackendSetAttribute(handle_, name, type, count, values));
    return *this;
  }
  Descriptor& set(cudnnBackendAttributeName_t name, const Descriptor& value) {
    const cudnnBackendDescriptor_t h = value.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &h);
  }
  void finalize() { RL_CUDNN_CHECK(cudnnBackendFinalize(handle_)); }

 private:
  cudnnBackendDescriptor_t handle_ = nullptr;
};

enum Uid : std::int64_t { kX = 1, kY, kMean, kRstd, kScale, kBias, kEpsilon };

// Packed tensor of `dims` (N, C, H, W) with C innermost, as cuDNN's
// layer-norm samples lay out a [rows, C] matrix.
std::unique_ptr<Descriptor> tensor(Uid uid, cudnnDataType_t type, std::int64_t n, std::int64_t c,
                                   bool by_value = false) {
  auto t = std::make_unique<Descriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::array<std::int64_t, 4> dims{n, c, 1, 1};
  const std::array<std::int64_t, 4> strides{c, 1, c, c};
  const std::int64_t id = uid;
  const std::int64_t alignment = 16;
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data())
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data())
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  if (by_value) {
    const bool yes = true;
    t->set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes);
  }
  t->finalize();
  return t;
}

template <typename T>
class CudnnLayerNorm {
 public:
  CudnnLayerNorm() = default;
  CudnnLayerNorm(const CudnnLayerNorm&) = delete;
  CudnnLayerNorm& operator=(const CudnnLayerNorm&) = delete;

  void operator()(const Args<T>& a, cudaStream_t stream) {
    if (handle_ == nullptr) RL_CUDNN_CHECK(cudnnCreate(&handle_));
    if (a.rows != rows_ || a.C != C_) build_plan(a.rows, a.C);
    const std::array<void*, 7> pointers{
        const_cast<T*>(a.x),    a.y,      a.mean, a.rstd, const_cast<T*>(a.weight),
        const_cast<T*>(a.bias), &epsilon_};
    if (pointers != pointers_) build_variant_pack(pointers);
    RL_CUDNN_CHECK(cudnnSetStream(handle_, stream));
    RL_CUDNN_CHECK(cudnnBackendExecute(handle_, plan_->get(), pack_->get()));
  }

 private:
  static constexpr cudnnDataType_t kStorage =
      std::is_same_v<T, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16;

  void build_plan(int rows, int C) {
    descriptors_.clear();
    pack_.reset();
    pointers_ = {};
    auto keep = [&](std::unique_ptr<Descriptor> d) -> Descriptor& {
      descriptors_.push_back(std::move(d));
      return *descriptors_.back();
    };
    Descriptor& x = keep(tensor(kX, kStorage, rows, C));
    Descriptor& y = keep(tensor(kY, kStorage, rows, C));
    Descriptor& mean = keep(tensor(kMean, CUDNN_DATA_FLOAT, rows, 1));
    Descriptor& rstd = keep(tensor(kRstd, CUDNN_DATA_FLOAT, rows, 1));
    Descriptor& scale = keep(tensor(kScale, kStorage, 1, C));
    Descriptor& bias = keep(tensor(kBias, kStorage, 1, C));
    Descriptor& epsilon = keep(tensor(kEpsilon, CUDNN_DATA_FLOAT, 1, 1, /*by_value=*/true));

    Descriptor& op =
        keep(std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR));
    const cudnnBackendNormMode_t mode = CUDNN_LAYER_NORM;
    const cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_TRAINING;
    op.set(CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, mean)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, rstd)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, scale)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, bias)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, epsilon)
        .set(CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, y)
        .finalize();

    Descriptor& graph = keep(std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR));
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, op)
        .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_)
        .finalize();

    Descriptor& heuristics =
        keep(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR));
    const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode)
        .finalize();

    // The best-ranked engine configuration (left unfinalized for cuDNN to fill).
    Descriptor& config = keep(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    cudnnBackendDescriptor_t config_handle = config.get();
    std::int64_t configs = 0;
    RL_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs,
                                            &config_handle));
    if (configs == 0)
      throw std::runtime_error("cuDNN has no layer-norm engine for rows=" + std::to_string(rows) +
                               ", C=" + std::to_string(C));

    plan_ = &keep(std::make_unique<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
    plan_->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_)
        .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config)
        .finalize();
    std::int64_t workspace_bytes = 0;
    std::int64_t returned = 0;
    RL_CUDNN_CHECK(cudnnBackendGetAttribute(plan_->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, &returned, &workspace_bytes));
    workspace_ = DeviceBuffer<unsigned char>(static_cast<std::size_t>(workspace_bytes));
    rows_ = rows;
    C_ = C;
  }

  void build_variant_pack(const std::array<void*, 7>& pointers) {
    static constexpr std::array<std::int64_t, 7> kUids{kX,     kY,    kMean,   kRstd,
                                                       kScale, kBias, kEpsilon};
    void* workspace = workspace_.get();
    pack_ = std::make_unique<Descriptor>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack_->set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 7, kUids.data())
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 7, pointers.data())
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)
        .finalize();
    pointers_ = pointers;
  }

  cudnnHandle_t handle_ = nullptr;
  int rows_ = -1;
  int C_ = -1;
  float epsilon_ = kEps;  // passed by value: cuDNN reads it from the host
  std::vector<std::unique_ptr<Descriptor>> descriptors_;
  Descriptor* plan_ = nullptr;
  DeviceBuffer<unsigned char> workspace_;
  std::unique_ptr<Descriptor> pack_;
  std::array<void*, 7> pointers_{};
};

// All workloads of a record share one cuDNN handle and plan cache.  It is
// never destroyed: destroying a cuDNN handle or freeing device memory from a
// static destructor races the CUDA runtime's own teardown at exit.
template <typename T>
Launcher<T> cudnn_launcher() {
  auto* state = new CudnnLayerNorm<T>();
  return [state](const Args<T>& a, cudaStream_t stream) { (*state)(a, stream); };
}

}  // namespace

RL_REGISTER_KERNEL(make_record<float>({.name = "layernorm_cudnn_f32",
                                       .variant = "cudnn",
                                       .baseline = "layernorm_thread_per_row_naive_f32",
                                       .launcher = cudnn_launcher<float>(),
                                       .bytes_model = &bytes_model_cudnn,
                                       .gpu_only = true,
                                       .idea = "cuDNN's norm-forward graph (backend API)",
                                       .library = "cuDNN"}));
RL_REGISTER_KERNEL(make_record<__nv_bfloat16>({.name = "layernorm_cudnn_bf16",
                                               .variant = "cudnn",
                                               .baseline = "layernorm_thread_per_row_naive_bf16",
                                               .launcher = cudnn_launcher<__nv_bfloat16>(),
                                               .bytes_model = &bytes_model_cudnn,
                                               .gpu_only = true,
                                               .idea = "cuDNN's norm-forward graph (backend API)",
                                               .library = "cuDNN"}));

}  // namespace rl::layernorm

#endif  // RL_HAVE_CUDNN
