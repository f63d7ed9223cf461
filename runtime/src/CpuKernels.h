//===- CpuKernels.h - What the CPU kernel families share --------*- C++ -*-===//
//
// The CPU reference kernels live in one file per family,
// CpuKernels<Family>.cpp (the CUDA backend's under the same family name in
// cuda/, see docs/runtime.md); each family returns its table, which the
// registry (CpuBackend.cpp) concatenates. Straightforward kernels with a
// fixed summation order (sequential, in double), so a result depends only
// on the input values: not on where the buffers live, nor on the run.
// `prepare` checks a launch by name and shape; `run` neither fails nor
// allocates memory; inputs may be strided, outputs are contiguous (unless
// a kernel declares stridedOutputs).
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_CPUKERNELS_H
#define COOP_RUNTIME_CPUKERNELS_H

#include "Backend.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace coop::rt {

/// The kernel tables of the families, in registry order.
std::vector<KernelDef> elementwiseCpuKernels();
std::vector<KernelDef> mathCpuKernels();
std::vector<KernelDef> fillCpuKernels();
std::vector<KernelDef> reductionCpuKernels();
std::vector<KernelDef> matmulCpuKernels();
std::vector<KernelDef> lossCpuKernels();
std::vector<KernelDef> normCpuKernels();
std::vector<KernelDef> convCpuKernels();
std::vector<KernelDef> layoutCpuKernels();
std::vector<KernelDef> indexingCpuKernels();

/// Helpers of the family files (each `using namespace cpu;`).
namespace cpu {

/// Appends to a family's table: add(name, params, args, prepare, run[,
/// stridedOutputs]), KernelDef's fields.
struct KernelAdder {
  std::vector<KernelDef> &table;
  void operator()(const char *name, std::vector<std::string> params, const char *args,
                  PrepareFn prepare, RunFn run, bool stridedOutputs = false) const {
    table.push_back({name, std::move(params), args, prepare, run, stridedOutputs});
  }
};

//===----------------------------------------------------------------------===//
// Iteration and element access
//===----------------------------------------------------------------------===//

/// Walks a shape in row-major order keeping the element offsets of up to
/// four tensors (strides 0 broadcast).
struct Walk {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t idx[kMaxRank] = {};
  int count = 0;
  int64_t strides[4][kMaxRank] = {};
  int64_t off[4] = {};

  explicit Walk(const Tensor &like) : rank(like.rank) {
    std::copy(like.shape, like.shape + rank, shape);
  }
  /// Adds `t`, broadcast to the walked shape (right-aligned).
  int add(const Tensor &t) {
    int shift = rank - t.rank;
    for (int d = 0; d < rank; ++d) {
      int s = d - shift;
      strides[count][d] = s >= 0 && t.shape[s] != 1 ? t.strides[s] : 0;
    }
    return count++;
  }
  void next() {
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[d];
      for (int t = 0; t < count; ++t)
        off[t] += strides[t][d];
      if (idx[d] < shape[d])
        return;
      for (int t = 0; t < count; ++t)
        off[t] -= strides[t][d] * shape[d];
      idx[d] = 0;
    }
  }
};

inline float ldf(const Tensor &t, int64_t off) { return t.ptr<float>()[off]; }
inline int64_t ldi(const Tensor &t, int64_t off) {
  switch (t.dtype) {
  case coop_pb::INT64: return t.ptr<int64_t>()[off];
  case coop_pb::INT32: return t.ptr<int32_t>()[off];
  default: return t.ptr<uint8_t>()[off];
  }
}
inline float *outf(const Tensor &t) { return t.ptr<float>(); }

/// Element i of an optional float32 tensor (weight, bias), `fallback`
/// without one.
inline float at1(const Tensor *t, int64_t i, float fallback) {
  return t ? *reinterpret_cast<float *>(t->at(i)) : fallback;
}

/// Element (a, b, c, d) of a rank-4 float32 tensor, through its strides.
inline float ld4(const Tensor &t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return t.ptr<float>()[a * t.strides[0] + b * t.strides[1] + c * t.strides[2] +
                        d * t.strides[3]];
}

/// An element of a float32, bool or int64 operand, as float32 (what
/// prepareElementwise accepts).
inline float asFloat(const Tensor &t, int64_t off) {
  if (t.dtype == coop_pb::INT64)
    return static_cast<float>(t.ptr<int64_t>()[off]);
  return t.dtype == coop_pb::BOOL ? static_cast<float>(t.ptr<uint8_t>()[off]) : ldf(t, off);
}

//===----------------------------------------------------------------------===//
// Prepare helpers
//===----------------------------------------------------------------------===//

inline std::string shapeText(const Tensor &t) {
  std::string text = "[";
  for (int d = 0; d < t.rank; ++d)
    text += (d ? "," : "") + std::to_string(t.shape[d]);
  return text + "]";
}

inline bool sameShape(const Tensor &a, const Tensor &b) {
  return a.rank == b.rank && std::equal(a.shape, a.shape + a.rank, b.shape);
}

/// Counts, float32 everywhere except where `allow` says otherwise.
inline std::string expect(const Signature &sig, int outputs, bool floatOutputs = true) {
  if (sig.call.numOutputs != outputs)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected " +
           std::to_string(outputs);
  if (floatOutputs)
    for (int o = 0; o < outputs; ++o)
      if (sig.outputs[o].dtype != coop_pb::FLOAT32)
        return "output #" + std::to_string(o) + " is " + dtypeName(sig.outputs[o].dtype) +
               "; the CPU kernel computes float32";
  return "";
}

inline std::string needTensor(const Signature &sig, int p, const char *name,
                       coop_pb::DType dtype = coop_pb::FLOAT32) {
  const Tensor *t = sig.call.tensor(p);
  if (!t)
    return std::string("has no tensor argument '") + name + "'";
  if (dtype != coop_pb::DTYPE_UNSPECIFIED && t->dtype != dtype)
    return std::string("tensor argument '") + name + "' is " + dtypeName(t->dtype) +
           ", expected " + dtypeName(dtype);
  return "";
}

inline bool broadcastsTo(const Tensor &in, const Tensor &out) {
  if (in.rank > out.rank)
    return false;
  for (int d = 0; d < in.rank; ++d) {
    int64_t a = in.shape[d], b = out.shape[d + out.rank - in.rank];
    if (a != 1 && a != b)
      return false;
  }
  return true;
}

/// A backward with output_mask: as many float32 outputs as the mask asks
/// for (maskedOutputs).
inline std::string prepareMaskedBackward(const Signature &sig) {
  int64_t mask[3] = {1, 1, 1};
  int n = sig.call.ints("output_mask", mask, 3);
  int expected = n < 0 ? 3 : int(mask[0] != 0) + int(mask[1] != 0) + int(mask[2] != 0);
  return expect(sig, expected);
}

/// Returns the problem `expr` names, if any (one statement, safe in an if).
#define TRY(expr)                                                              \
  do {                                                                         \
    std::string error_ = (expr);                                               \
    if (!error_.empty())                                                       \
      return error_;                                                           \
  } while (0)

/// One output and schema parameters 0..inputs-1 present.
inline std::string operands(const Signature &sig, int inputs) {
  if (sig.call.numOutputs != 1)
    return "has " + std::to_string(sig.call.numOutputs) + " outputs, expected 1";
  for (int p = 0; p < inputs; ++p)
    if (!sig.call.tensor(p))
      return "has no tensor argument #" + std::to_string(p);
  return "";
}

inline std::string dtypeIs(const Tensor &t, const char *what, coop_pb::DType dtype) {
  if (t.dtype == dtype)
    return "";
  return std::string(what) + " is " + dtypeName(t.dtype) + ", expected " + dtypeName(dtype);
}

/// The logical index of row-major element `linear` of `shape`.
inline void unflatten(const Tensor &shape, int64_t linear, int64_t *idx) {
  for (int d = shape.rank - 1; d >= 0; --d) {
    idx[d] = shape.shape[d] ? linear % shape.shape[d] : 0;
    linear = shape.shape[d] ? linear / shape.shape[d] : 0;
  }
}

/// The element of `t` at the index `idx` of a tensor of rank `rank` that
/// t broadcasts to (right-aligned, size-1 dimensions repeat).
inline char *broadcastAt(const Tensor &t, const int64_t *idx, int rank) {
  int64_t off = 0;
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] != 1)
      off += idx[d + rank - t.rank] * t.strides[d];
  return t.data + off * elementSize(t.dtype);
}

inline float floatAt(const Tensor &t, int64_t linear) {
  return *reinterpret_cast<const float *>(t.at(linear));
}

/// A value of a float32, int64 or bool tensor, as double.
inline double valueAt(const char *p, coop_pb::DType dtype) {
  switch (dtype) {
  case coop_pb::FLOAT32: return *reinterpret_cast<const float *>(p);
  case coop_pb::INT64: return static_cast<double>(*reinterpret_cast<const int64_t *>(p));
  default: return *reinterpret_cast<const uint8_t *>(p);
  }
}

inline void store(char *p, coop_pb::DType dtype, double value) {
  switch (dtype) {
  case coop_pb::FLOAT32: *reinterpret_cast<float *>(p) = static_cast<float>(value); break;
  case coop_pb::INT64: *reinterpret_cast<int64_t *>(p) = static_cast<int64_t>(value); break;
  default: *reinterpret_cast<uint8_t *>(p) = value != 0; break;
  }
}

inline bool numeric(coop_pb::DType dtype) {
  return dtype == coop_pb::FLOAT32 || dtype == coop_pb::INT64 || dtype == coop_pb::BOOL;
}

} // namespace cpu
} // namespace coop::rt

#endif // COOP_RUNTIME_CPUKERNELS_H
