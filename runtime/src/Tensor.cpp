//===- Tensor.cpp - Tensors, calls and the random argument init -----------===//

#include "Kernel.h"
#include "Random.h"

#include <algorithm>
#include <cstring>

namespace coop::rt {

int64_t elementSize(coop_pb::DType dtype) {
  switch (dtype) {
  case coop_pb::FLOAT32: case coop_pb::INT32: return 4;
  case coop_pb::FLOAT16: case coop_pb::BFLOAT16: case coop_pb::INT16: return 2;
  case coop_pb::FLOAT64: case coop_pb::INT64: case coop_pb::COMPLEX64: return 8;
  case coop_pb::INT8: case coop_pb::UINT8: case coop_pb::BOOL: return 1;
  default: return 0;
  }
}

const char *dtypeName(coop_pb::DType dtype) {
  switch (dtype) {
  case coop_pb::FLOAT32: return "float32";
  case coop_pb::FLOAT16: return "float16";
  case coop_pb::BFLOAT16: return "bfloat16";
  case coop_pb::FLOAT64: return "float64";
  case coop_pb::INT64: return "int64";
  case coop_pb::INT32: return "int32";
  case coop_pb::INT16: return "int16";
  case coop_pb::INT8: return "int8";
  case coop_pb::UINT8: return "uint8";
  case coop_pb::BOOL: return "bool";
  case coop_pb::COMPLEX64: return "complex64";
  default: return "unknown dtype";
  }
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}

char *Tensor::at(int64_t linear) const {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (linear % shape[d]) * strides[d];
    linear /= shape[d];
  }
  return data + offset * elementSize(dtype);
}

bool Tensor::contiguous() const {
  int64_t expected = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

const coop_pb::Value *Call::arg(std::string_view name) const {
  auto it = args->find(name);
  return it == args->end() ? nullptr : &it->second;
}

bool Call::has(std::string_view name) const {
  const coop_pb::Value *value = arg(name);
  return value && value->kind_case() != coop_pb::Value::kNone;
}

double Call::f(std::string_view name, double fallback) const {
  const coop_pb::Value *value = arg(name);
  if (!value)
    return fallback;
  switch (value->kind_case()) {
  case coop_pb::Value::kFloatValue: return value->float_value();
  case coop_pb::Value::kIntValue: return static_cast<double>(value->int_value());
  case coop_pb::Value::kBoolValue: return value->bool_value();
  default: return fallback;
  }
}

int64_t Call::i(std::string_view name, int64_t fallback) const {
  const coop_pb::Value *value = arg(name);
  if (!value)
    return fallback;
  if (value->kind_case() == coop_pb::Value::kIntValue)
    return value->int_value();
  if (value->kind_case() == coop_pb::Value::kBoolValue)
    return value->bool_value();
  if (value->kind_case() == coop_pb::Value::kList && value->list().items_size() == 1)
    return value->list().items(0).int_value();
  return fallback;
}

bool Call::b(std::string_view name, bool fallback) const {
  const coop_pb::Value *value = arg(name);
  if (!value)
    return fallback;
  if (value->kind_case() == coop_pb::Value::kBoolValue)
    return value->bool_value();
  if (value->kind_case() == coop_pb::Value::kIntValue)
    return value->int_value() != 0;
  return fallback;
}

std::string_view Call::s(std::string_view name) const {
  const coop_pb::Value *value = arg(name);
  if (!value || value->kind_case() != coop_pb::Value::kStringValue)
    return {};
  return value->string_value();
}

int Call::ints(std::string_view name, int64_t *out, int max) const {
  const coop_pb::Value *value = arg(name);
  if (!value)
    return -1;
  if (value->kind_case() == coop_pb::Value::kIntValue) {
    if (max > 0)
      out[0] = value->int_value();
    return 1;
  }
  if (value->kind_case() != coop_pb::Value::kList)
    return -1;
  int n = value->list().items_size();
  for (int k = 0; k < n && k < max; ++k) {
    const coop_pb::Value &item = value->list().items(k);
    out[k] = item.kind_case() == coop_pb::Value::kBoolValue ? item.bool_value()
                                                            : item.int_value();
  }
  return n;
}

int64_t Call::listItem(std::string_view name, int index, int64_t fallback) const {
  int64_t items[kMaxRank * 2];
  int n = ints(name, items, kMaxRank * 2);
  if (n <= 0)
    return fallback;
  return index < n ? items[index] : items[n - 1]; // one value repeats
}

Tensor convolutionAs2d(const Tensor &t) {
  if (t.rank != 3)
    return t;
  Tensor view = t;
  view.rank = 4;
  view.shape[3] = t.shape[2];
  view.strides[3] = t.strides[2];
  view.shape[2] = 1;
  view.strides[2] = 0; // a unit dimension is never stepped over
  return view;
}

int64_t convolutionItem(const Call &c, std::string_view name, int axis, int64_t fallback) {
  const Tensor *first = c.tensor(0);
  if (first && first->rank == 3)
    return axis == 0 ? fallback : c.listItem(name, 0, fallback);
  return c.listItem(name, axis, fallback);
}

void fillRandomArgument(const std::string &name, coop_role_t role, const Tensor &layout,
                        uint64_t seed, char *out) {
  int64_t n = layout.numel();
  uint64_t key = streamKey(seed);
  bool isVariance = name.size() >= 11 && name.compare(name.size() - 11, 11, "running_var") == 0;
  for (int64_t i = 0; i < n; ++i) {
    float u = uniform(key, static_cast<uint64_t>(i));
    switch (layout.dtype) {
    case coop_pb::FLOAT32: {
      float v = 0;
      if (role == COOP_ROLE_PARAMETER)
        v = (u * 2 - 1) * 0.1f;
      else if (role == COOP_ROLE_INPUT)
        v = u * 2 - 1;
      else if (isVariance)
        v = 1;
      std::memcpy(out + i * 4, &v, 4);
      break;
    }
    case coop_pb::INT64: {
      int64_t v = role == COOP_ROLE_INPUT ? static_cast<int64_t>(u * 2) : 0;
      std::memcpy(out + i * 8, &v, 8);
      break;
    }
    default:
      std::memset(out + i * elementSize(layout.dtype), 0, elementSize(layout.dtype));
    }
  }
}

int64_t pooledSize(int64_t in, int64_t span, int64_t stride, int64_t pad, bool ceil) {
  // In 128 bits: the arguments come from the plan.
  __int128 room = static_cast<__int128>(in) + 2 * static_cast<__int128>(pad) - span;
  if (room < 0 || stride < 1)
    return -1;
  __int128 out = (ceil ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceil && (out - 1) * stride >= static_cast<__int128>(in) + pad)
    --out;
  return static_cast<int64_t>(out);
}

int normDim(int64_t dim, int rank) {
  return static_cast<int>(dim < 0 ? dim + std::max(rank, 1) : dim);
}

Tensor narrowed(const Tensor &t, int dim, int64_t start, int64_t count, int64_t step) {
  Tensor v = t;
  v.data += start * t.strides[dim] * elementSize(t.dtype);
  v.shape[dim] = count;
  v.strides[dim] *= step;
  return v;
}

Tensor selected(const Tensor &t, int dim, int64_t index) {
  Tensor v = narrowed(t, dim, index, 1);
  for (int d = dim; d + 1 < t.rank; ++d) {
    v.shape[d] = v.shape[d + 1];
    v.strides[d] = v.strides[d + 1];
  }
  v.rank = t.rank - 1;
  return v;
}

Tensor contiguousLike(const Tensor &t) {
  Tensor v = t;
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= t.shape[d];
  }
  return v;
}

int listInputs(const Call &c, std::string_view name, const Tensor **out) {
  const coop_pb::Value *list = c.arg(name);
  int n = 0;
  if (list && list->kind_case() == coop_pb::Value::kList) {
    for (const coop_pb::Value &item : list->list().items())
      if (item.kind_case() == coop_pb::Value::kOperand && n < kMaxOperands)
        out[n++] = &c.inputs[item.operand()];
    return n;
  }
  for (; n < c.numInputs && n < kMaxOperands; ++n)
    out[n] = &c.inputs[n];
  return n;
}

SliceWindow sliceWindow(const Call &c, int64_t size) {
  int64_t start = c.has("start") ? c.i("start") : 0;
  int64_t end = c.has("end") ? c.i("end") : size;
  int64_t step = c.i("step", 1);
  if (start < 0)
    start += size;
  if (end < 0)
    end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  return {start, step > 0 ? (end - start + step - 1) / step : 0, step};
}

void maskedOutputs(const Call &c, int out[3]) {
  int64_t mask[3] = {1, 1, 1};
  c.ints("output_mask", mask, 3);
  int next = 0;
  for (int k = 0; k < 3; ++k)
    out[k] = mask[k] && next < c.numOutputs ? next++ : -1;
}

} // namespace coop::rt
