//===- CpuKernelsReduction.cpp - CPU kernels: sums and means over dimensions ===//
//
// sum and mean, over the listed dimensions or all of them. CUDA:
// CudaKernelsReduction.cu's reduction kernel.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"


namespace coop::rt {
namespace {

using namespace cpu;

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Which dimensions of `in` the reduction folds (all when 'dim' is absent
/// or empty).
int reducedDims(const Call &c, const Tensor &in, bool *reduced) {
  int64_t dims[kMaxRank];
  int n = c.ints("dim", dims, kMaxRank);
  std::fill(reduced, reduced + kMaxRank, n <= 0);
  for (int k = 0; k < n; ++k)
    reduced[normDim(dims[k], in.rank)] = true;
  return n;
}

std::string prepareReduce(const Signature &sig) {
  TRY(expect(sig, 1, /*floatOutputs=*/false));
  const Tensor *self = sig.call.tensor(0);
  if (!self)
    return "has no tensor argument 'self'";
  const Tensor &in = *self;
  const coop_pb::DType outType = sig.outputs[0].dtype;
  // Float sums (and means) of float32, bool or int64; integer sums of bool
  // or int64 (a count of mask elements, as amax's backward takes).
  const bool integerSum = outType == coop_pb::INT64 && *sig.kernel != "aten.mean" &&
                          *sig.kernel != "aten.mean.dim" && in.dtype != coop_pb::FLOAT32;
  if (outType != coop_pb::FLOAT32 && !integerSum)
    return std::string("output is ") + dtypeName(outType) + " for a " + dtypeName(in.dtype) +
           " input; expected float32, or int64 summing bool or int64";
  if (in.dtype != coop_pb::FLOAT32 && in.dtype != coop_pb::BOOL && in.dtype != coop_pb::INT64)
    return std::string("self is ") + dtypeName(in.dtype) + ", expected float32, bool or int64";
  int64_t dims[kMaxRank];
  int n = sig.call.ints("dim", dims, kMaxRank);
  if (n > kMaxRank)
    return "reduces too many dimensions";
  for (int k = 0; k < n; ++k)
    if (dims[k] < -std::max(in.rank, 1) || dims[k] >= std::max(in.rank, 1))
      return "dimension " + std::to_string(dims[k]) + " is out of range";
  bool reduced[kMaxRank];
  reducedDims(sig.call, in, reduced);
  int64_t kept = 1;
  for (int d = 0; d < in.rank; ++d)
    kept *= reduced[d] ? 1 : in.shape[d];
  if (kept != sig.outputs[0].numel())
    return "output " + shapeText(sig.outputs[0]) + " does not match the reduction of " +
           shapeText(in);
  return "";
}

void reduce(const Call &c, bool mean) {
  const Tensor &in = *c.tensor(0), &out = c.out(0);
  bool reduced[kMaxRank];
  reducedDims(c, in, reduced);
  Tensor keptT = in, redT = in;
  int64_t count = 1;
  for (int d = 0; d < in.rank; ++d) {
    (reduced[d] ? keptT : redT).shape[d] = 1;
    if (reduced[d])
      count *= in.shape[d];
  }
  Walk outer(keptT);
  int io = outer.add(in);
  for (int64_t i = 0, n = out.numel(); i < n; ++i, outer.next()) {
    Walk inner(redT);
    int ii = inner.add(in);
    if (out.dtype == coop_pb::INT64) {
      int64_t sum = 0;
      for (int64_t k = 0; k < count; ++k, inner.next()) {
        const int64_t off = outer.off[io] + inner.off[ii];
        sum += in.dtype == coop_pb::BOOL ? in.ptr<uint8_t>()[off] : in.ptr<int64_t>()[off];
      }
      out.ptr<int64_t>()[i] = sum;
      continue;
    }
    double sum = 0;
    for (int64_t k = 0; k < count; ++k, inner.next())
      sum += asFloat(in, outer.off[io] + inner.off[ii]);
    outf(out)[i] = static_cast<float>(mean ? sum / count : sum);
  }
}
void runSum(const Call &c) { reduce(c, false); }
void runMean(const Call &c) { reduce(c, true); }

} // namespace

std::vector<KernelDef> reductionCpuKernels() {
  std::vector<KernelDef> k;
  KernelAdder add{k};
  // Reductions.
  add("aten.sum.dim_IntList", {"self"}, "dim:ints? keepdim:bool?", prepareReduce, runSum);
  add("aten.sum", {"self"}, "", prepareReduce, runSum);
  add("aten.mean.dim", {"self"}, "dim:ints? keepdim:bool?", prepareReduce, runMean);
  add("aten.mean", {"self"}, "", prepareReduce, runMean);
  return k;
}

} // namespace coop::rt
