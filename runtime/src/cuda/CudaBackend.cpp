//===- CudaBackend.cpp - The CUDA backend ---------------------------------===//
//
// Built only when CMake finds the CUDA toolkit, as an object library that
// registers "cuda" with the runtime (BackendRegistry.cpp) when linked in;
// the CPU runtime never depends on it. The CUDA runtime is linked
// statically (it loads the driver at run time, so a machine without a GPU
// or driver gets "no CUDA device: ..." instead of a loader error), and
// cuBLAS is loaded with dlopen: without it the products run on the own
// kernel of CudaKernelsMatmul.cu.
//
// One cudaMalloc for the arena; every CUDA and cuBLAS call's status is
// checked, the first failure kept and reported by the runtime after the
// step (takeError / stopTimer); one non-blocking stream; two events time
// a step or, in profile mode, a launch.
//
// NOT YET RUN ON A GPU: this code has been compiled, and its "no device"
// path run, but no kernel of it has executed on a device (docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaBackend.h"

#include "Random.h"
#include "cuda/CudaBackendImpl.h"

#include <climits>

namespace coop::rt::cuda {
namespace {

//===----------------------------------------------------------------------===//
// Handlers: the CPU kernels' `prepare` has checked every launch already.
//===----------------------------------------------------------------------===//

template <Op K, int N> void elementwise(CudaBackend &b, const Call &c) {
  const Tensor &out = c.out(0);
  Elementwise p;
  p.op = K;
  p.shape = shapeOf(out);
  p.out = out.data;
  for (int k = 0; k < N; ++k) {
    const Tensor *t = c.tensor(k);
    if (!t) { // only `other` may be a scalar
      p.scalarB = true;
      break;
    }
    p.in[p.numInputs++] = operandOf(*t, out);
  }
  if (K == Op::Add || K == Op::Sub)
    p.alpha = c.f("alpha", 1);
  if (out.dtype == coop_pb::INT64) { // what the CPU computes on int64
    p.op = K == Op::Mul ? Op::MulInt64 : Op::AddInt64;
    p.alphaInt = c.i("alpha", 1);
    p.scalarInt = c.i("other");
    if (K == Op::Sub)
      p.alphaInt = -p.alphaInt;
  }
  if (p.scalarB)
    p.scalar = c.f("other");
  switch (K) {
  case Op::ThresholdBwd: p.scalar = c.f("threshold"); break;
  case Op::DropoutBwd: p.scalar = c.f("scale", 1); break;
  case Op::Addcmul: case Op::Addcdiv: p.scalar = c.f("value", 1); break;
  case Op::Gelu: case Op::GeluBwd: p.flag = c.s("approximate") == "tanh"; break;
  case Op::PowScalarBase: p.scalar = c.f("self"); break;
  default: break;
  }
  b.check(launchElementwise(p, b.stream), "elementwise kernel");
}

template <int Value> void fill(CudaBackend &b, const Call &c) {
  const Tensor &out = c.out(0);
  double value = Value == 2 ? c.f("fill_value") : Value;
  b.check(launchFill(out.data, out.dtype, out.numel(), value, b.stream), "fill kernel");
}

void copyHandler(CudaBackend &b, const Call &c) { b.copy(c.out(0), c.inputs[0]); }

void bernoulli(CudaBackend &b, const Call &c) {
  Random p;
  p.shape = shapeOf(c.out(0));
  p.out = c.out(0).data;
  p.key = streamKey(c.rngSeed);
  p.offset = c.rngOffset;
  p.p = c.f("p", 0.5);
  b.check(launchRandom(p, b.stream), "bernoulli kernel");
}

void nativeDropout(CudaBackend &b, const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  Random p;
  p.shape = shapeOf(out);
  p.in = operandOf(in, out);
  p.out = out.data;
  p.mask = c.out(1).data;
  p.key = streamKey(c.rngSeed);
  p.offset = c.rngOffset;
  p.p = c.b("train", true) ? c.f("p") : 0;
  p.scale = p.p < 1 ? static_cast<float>(1 / (1 - p.p)) : 0.f;
  b.check(launchRandom(p, b.stream), "native_dropout kernel");
}

template <bool Mean> void reduce(CudaBackend &b, const Call &c) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  int64_t dims[kMaxRank];
  int n = c.ints("dim", dims, kMaxRank);
  bool reduced[kMaxRank];
  std::fill(reduced, reduced + kMaxRank, n <= 0);
  for (int k = 0; k < n; ++k)
    reduced[normDim(dims[k], in.rank)] = true;
  Reduce p;
  p.kept = shapeOf(in);
  p.reduced = shapeOf(in);
  p.count = 1;
  for (int d = 0; d < in.rank; ++d) {
    (reduced[d] ? p.kept : p.reduced).dims[d] = 1;
    if (reduced[d])
      p.count *= in.shape[d];
  }
  p.in = stridedOf(in);
  p.out = out.data;
  p.outCount = out.numel();
  p.mean = Mean;
  p.integer = out.dtype == coop_pb::INT64;
  b.check(launchReduce(p, b.stream), "reduction kernel");
}

template <bool Log, bool Backward> void softmax(CudaBackend &b, const Call &c) {
  const Tensor &out = c.out(0);
  Softmax p;
  int dim = normDim(c.i("dim"), out.rank);
  p.outer = shapeOf(out);
  p.length = out.rank ? out.shape[dim] : 1;
  if (out.rank)
    p.outer.dims[dim] = 1;
  for (int k = 0; k < (Backward ? 2 : 1); ++k) {
    p.in[k] = stridedOf(*c.tensor(k));
    p.lineStride[k] = out.rank ? c.tensor(k)->strides[dim] : 0;
  }
  std::copy(out.strides, out.strides + out.rank, p.outStrides);
  p.lineStride[2] = out.rank ? out.strides[dim] : 0;
  p.out = out.data;
  p.log = Log;
  p.backward = Backward;
  b.check(launchSoftmax(p, b.stream), "softmax kernel");
}

void nllCommon(const Call &c, const Tensor &self, const Tensor &target, Nll &p) {
  p.self = self.data;
  p.N = self.rank == 2 ? self.shape[0] : 1;
  p.C = self.shape[self.rank - 1];
  p.classStride = self.strides[self.rank - 1];
  p.rowStride = self.rank == 2 ? self.strides[0] : 0;
  p.target = target.data;
  p.targetStride = target.rank ? target.strides[0] : 0;
  p.ignore = c.i("ignore_index", -100);
  p.mean = c.i("reduction", 1) == 1;
}

void nllForward(CudaBackend &b, const Call &c) {
  Nll p;
  nllCommon(c, *c.tensor(0), *c.tensor(1), p);
  p.out = c.out(0).data;
  p.totalWeight = c.out(1).data;
  b.check(launchNllForward(p, b.stream), "nll_loss_forward kernel");
}

void nllBackward(CudaBackend &b, const Call &c) {
  Nll p;
  nllCommon(c, *c.tensor(1), *c.tensor(2), p);
  p.grad = c.tensor(0)->data;
  p.total = c.tensor(4)->data;
  p.out = c.out(0).data;
  b.check(launchNllBackward(p, b.stream), "nll_loss_backward kernel");
}

/// How cuBLAS (column-major) sees a row-major-indexed matrix: stored as
/// its transpose (`rowMajor`, op N gives X^T) or as itself (op T gives X^T).
bool blasView(const Tensor &t, int r, bool &rowMajor, int64_t &ld) {
  int64_t R = t.shape[r], C = t.shape[r + 1], sr = t.strides[r], sc = t.strides[r + 1];
  if ((sc == 1 || C == 1) && (R == 1 || sr >= std::max<int64_t>(C, 1))) {
    rowMajor = true;
    ld = R == 1 ? std::max<int64_t>(C, 1) : sr;
  } else if ((sr == 1 || R == 1) && (C == 1 || sc >= std::max<int64_t>(R, 1))) {
    rowMajor = false;
    ld = C == 1 ? std::max<int64_t>(R, 1) : sc;
  } else {
    return false;
  }
  return ld <= INT_MAX;
}

/// out = alpha * a @ b (+ beta * bias), batched when a is rank 3.
void matmul(CudaBackend &b, const Tensor &a, const Tensor &bm, const Tensor &out,
            const Tensor *bias, double beta, double alpha) {
  int r = a.rank - 2;
  int64_t batch = r ? a.shape[0] : 1, M = a.shape[r], K = a.shape[r + 1], N = bm.shape[r + 1];
  if (batch * M * N == 0)
    return;
  bool aRow = false, bRow = false;
  int64_t lda = 0, ldb = 0;
  bool blas = b.blasHandle && blasView(a, r, aRow, lda) && blasView(bm, r, bRow, ldb) &&
              M <= INT_MAX && N <= INT_MAX && K <= INT_MAX && batch <= INT_MAX;
  if (!blas) {
    Matmul p;
    p.a = a.data;
    p.b = bm.data;
    p.batch = batch;
    p.M = M;
    p.N = N;
    p.K = K;
    p.as0 = a.strides[r];
    p.as1 = a.strides[r + 1];
    p.bs0 = bm.strides[r];
    p.bs1 = bm.strides[r + 1];
    p.ab = r ? a.strides[0] : 0;
    p.bb = r ? bm.strides[0] : 0;
    if (bias) {
      p.hasBias = true;
      p.bias = operandOf(*bias, out);
    }
    p.outShape = shapeOf(out);
    p.alpha = alpha;
    p.beta = beta;
    p.out = out.data;
    b.check(launchMatmul(p, b.stream), "matmul kernel");
    return;
  }
  float blasBeta = 0;
  if (bias && beta != 0) { // out = beta * bias first, then accumulate
    Elementwise p;
    p.op = Op::Scale;
    p.shape = shapeOf(out);
    p.out = out.data;
    p.numInputs = 1;
    p.in[0] = operandOf(*bias, out);
    p.alpha = beta;
    if (!b.check(launchElementwise(p, b.stream), "addmm bias kernel"))
      return;
    blasBeta = 1;
  }
  float blasAlpha = static_cast<float>(alpha);
  // Row-major out = a @ b is column-major out^T = b^T a^T.
  cublasOperation_t opB = bRow ? CUBLAS_OP_N : CUBLAS_OP_T;
  cublasOperation_t opA = aRow ? CUBLAS_OP_N : CUBLAS_OP_T;
  const float *A = reinterpret_cast<const float *>(a.data);
  const float *B = reinterpret_cast<const float *>(bm.data);
  float *C = reinterpret_cast<float *>(out.data);
  cublasStatus_t s;
  if (r == 0)
    s = b.blas.sgemm(b.blasHandle, opB, opA, int(N), int(M), int(K), &blasAlpha, B, int(ldb), A,
                     int(lda), &blasBeta, C, int(N));
  else
    s = b.blas.sgemmStridedBatched(b.blasHandle, opB, opA, int(N), int(M), int(K), &blasAlpha,
                                   B, int(ldb), bm.strides[0], A, int(lda), a.strides[0],
                                   &blasBeta, C, int(N), M * N, int(batch));
  if (s != CUBLAS_STATUS_SUCCESS)
    b.fail("cublasSgemm: " + blasText(s));
}

void mm(CudaBackend &b, const Call &c) {
  matmul(b, *c.tensor(0), *c.tensor(1), c.out(0), nullptr, 0, 1);
}
void addmm(CudaBackend &b, const Call &c) {
  matmul(b, *c.tensor(1), *c.tensor(2), c.out(0), c.tensor(0), c.f("beta", 1), c.f("alpha", 1));
}

} // namespace

/// The kernels this backend runs, by the CPU registry's names.
const HandlerTable &handlerTable() {
  static const HandlerTable handlers = [] {
    HandlerTable h;
    for (const char *name : {"aten.add", "aten.add_"})
      h[name] = elementwise<Op::Add, 2>;
    for (const char *name : {"aten.sub", "aten.sub_"})
      h[name] = elementwise<Op::Sub, 2>;
    for (const char *name : {"aten.mul", "aten.mul_"})
      h[name] = elementwise<Op::Mul, 2>;
    for (const char *name : {"aten.div", "aten.div_"})
      h[name] = elementwise<Op::Div, 2>;
    for (const char *name : {"aten.relu", "aten.relu_"})
      h[name] = elementwise<Op::Relu, 1>;
    for (const char *name : {"aten.sqrt", "aten.sqrt_"})
      h[name] = elementwise<Op::Sqrt, 1>;
    for (const char *name : {"aten.sigmoid", "aten.sigmoid_"})
      h[name] = elementwise<Op::Sigmoid, 1>;
    for (const char *name : {"aten.tanh", "aten.tanh_"})
      h[name] = elementwise<Op::Tanh, 1>;
    for (const char *name : {"aten.neg", "aten.neg_"})
      h[name] = elementwise<Op::Neg, 1>;
    h["aten.pow.Scalar"] = elementwise<Op::PowScalarBase, 1>;
    h["aten.sigmoid_backward"] = elementwise<Op::SigmoidBwd, 2>;
    h["aten.tanh_backward"] = elementwise<Op::TanhBwd, 2>;
    h["aten.gelu"] = elementwise<Op::Gelu, 1>;
    h["aten.gelu_backward"] = elementwise<Op::GeluBwd, 2>;
    h["aten.threshold_backward"] = elementwise<Op::ThresholdBwd, 2>;
    h["aten.native_dropout_backward"] = elementwise<Op::DropoutBwd, 2>;
    for (const char *name : {"aten.addcmul", "aten.addcmul_"})
      h[name] = elementwise<Op::Addcmul, 3>;
    for (const char *name : {"aten.addcdiv", "aten.addcdiv_"})
      h[name] = elementwise<Op::Addcdiv, 3>;
    for (const char *name : {"aten.zeros_like", "aten.empty_like", "aten.zeros",
                             "aten.empty.memory_format", "aten.new_zeros", "aten.new_empty"})
      h[name] = fill<0>;
    for (const char *name : {"aten.ones_like", "aten.ones"})
      h[name] = fill<1>;
    for (const char *name : {"aten.full_like", "aten.full"})
      h[name] = fill<2>;
    for (const char *name : {"coop.copy", "aten.clone", "aten._unsafe_view", "aten.view",
                             "aten.reshape", "aten.contiguous", "aten.alias", "aten.detach"})
      h[name] = copyHandler;
    h["aten.bernoulli_.float"] = bernoulli;
    h["aten.native_dropout"] = nativeDropout;
    for (const char *name : {"aten.sum.dim_IntList", "aten.sum"})
      h[name] = reduce<false>;
    for (const char *name : {"aten.mean.dim", "aten.mean"})
      h[name] = reduce<true>;
    h["aten.mm"] = mm;
    h["aten.bmm"] = mm;
    h["aten.addmm"] = addmm;
    h["aten._softmax"] = softmax<false, false>;
    h["aten._log_softmax"] = softmax<true, false>;
    h["aten._softmax_backward_data"] = softmax<false, true>;
    h["aten._log_softmax_backward_data"] = softmax<true, true>;
    h["aten.nll_loss_forward"] = nllForward;
    h["aten.nll_loss_backward"] = nllBackward;
    addConvHandlers(h);
    addNormHandlers(h);
    addLayoutHandlers(h);
    return h;
  }();
  return handlers;
}

bool CudaBackend::implements(const KernelDef &kernel) const {
  if (handlers.count(&kernel))
    return true;
  auto it = handlerTable().find(kernel.name);
  if (it == handlerTable().end()) {
#ifdef COOP_CUDA_EMULATION
    return cpuFallback();
#else
    return false;
#endif
  }
  handlers.emplace(&kernel, it->second);
  return true;
}

namespace {

std::unique_ptr<Backend> createCudaBackend(std::string &error) {
  auto backend = std::make_unique<CudaBackend>();
  error = backend->init();
  if (!error.empty())
    return nullptr;
  return backend;
}

[[maybe_unused]] const bool registered = registerBackend("cuda", createCudaBackend);

} // namespace
} // namespace coop::rt::cuda

namespace coop::rt {

bool cudaHasKernel(const std::string &name) {
  const KernelDef *kernel = findKernel(name);
  return kernel && cuda::handlerTable().count(kernel->name);
}

} // namespace coop::rt
