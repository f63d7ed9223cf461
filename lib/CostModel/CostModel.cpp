//===- CostModel.cpp - Analytic kernel costs with a profile override ------===//

#include "coop/CostModel/CostModel.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

using namespace coop::cost;

namespace {

/// FP32 (non-tensor-core) peaks and memory bandwidths from the vendors'
/// data sheets: the precision the exported steps use.
const Device kDevices[] = {
    {"a100", 19.5e12, 1.555e12},
    {"v100", 15.7e12, 0.9e12},
    {"h100", 67e12, 3.35e12},
    {"cpu", 1e12, 1e11},
};

/// "aten.add_.Tensor" -> "add_".
std::string_view baseName(std::string_view kernel) {
  if (kernel.substr(0, 5) == "aten.")
    kernel.remove_prefix(5);
  return kernel.substr(0, kernel.find('.'));
}

double numel(const TensorShape &shape) {
  return static_cast<double>(shape.numel());
}

/// Multiply-adds count twice. `out` has already been checked for rank.
double matmulFlops(const TensorShape &lhs, const TensorShape &rhs) {
  // [..., M, K] x [..., K, N]: every output element is a K-long dot product.
  double k = static_cast<double>(lhs.dims.back());
  double outputs = numel(lhs) / k * static_cast<double>(rhs.dims.back());
  return 2 * outputs * k;
}

/// A convolution's forward FLOPs: each output element of a (non-transposed)
/// convolution is a dot product over one filter of weight.numel() / Cout
/// values. A transposed convolution scatters each input element instead.
double convolutionFlops(const TensorShape &input, const TensorShape &weight,
                        const TensorShape &output, bool transposed) {
  double perFilter = numel(weight) / static_cast<double>(weight.dims[0]);
  return 2 * (transposed ? numel(input) : numel(output)) * perFilter;
}

double sumBytes(const std::vector<TensorShape> &shapes) {
  double bytes = 0;
  for (const TensorShape &shape : shapes)
    bytes += static_cast<double>(shape.bytes());
  return bytes;
}

double sumNumel(const std::vector<TensorShape> &shapes) {
  double elements = 0;
  for (const TensorShape &shape : shapes)
    elements += numel(shape);
  return elements;
}

bool hasRank(const std::vector<TensorShape> &shapes, size_t index,
             size_t minRank) {
  return shapes.size() > index && shapes[index].dims.size() >= minRank;
}

} // namespace

std::optional<Device> coop::cost::lookupDevice(std::string_view name) {
  for (const Device &device : kDevices)
    if (device.name == name)
      return device;
  return std::nullopt;
}

std::string coop::cost::deviceNames() {
  std::string names;
  for (const Device &device : kDevices)
    names += (names.empty() ? "" : ", ") + device.name;
  return names;
}

int64_t TensorShape::numel() const {
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= dim;
  return count;
}

std::string TensorShape::signature() const {
  std::string text;
  for (int64_t dim : dims)
    text += std::to_string(dim) + "x";
  return text + elementType;
}

Cost CostModel::analytic(const KernelCall &call) {
  Cost cost;
  if (call.isView)
    return cost;
  cost.bytes = sumBytes(call.operands) + sumBytes(call.results);
  std::string_view name = baseName(call.kernel);
  const auto &ops = call.operands;
  if ((name == "mm" || name == "bmm") && hasRank(ops, 0, 2) &&
      hasRank(ops, 1, 2)) {
    cost.flops = matmulFlops(ops[0], ops[1]);
  } else if ((name == "addmm" || name == "baddbmm") && hasRank(ops, 1, 2) &&
             hasRank(ops, 2, 2)) {
    // The product plus scaling and adding `self` to every output element.
    cost.flops = matmulFlops(ops[1], ops[2]) + 2 * sumNumel(call.results);
  } else if (name == "convolution" && hasRank(ops, 1, 3) &&
             hasRank(call.results, 0, 3)) {
    cost.flops =
        convolutionFlops(ops[0], ops[1], call.results[0], call.transposed);
  } else if (name == "convolution_backward" && hasRank(ops, 2, 3)) {
    // Operands: grad_output, input, weight. The input gradient and the
    // weight gradient each cost one forward convolution; the bias gradient
    // is a reduction of grad_output.
    double forward =
        convolutionFlops(ops[1], ops[2], ops[0], call.transposed);
    for (const TensorShape &result : call.results) {
      if (result.dims == ops[1].dims || result.dims == ops[2].dims)
        cost.flops += forward;
      else
        cost.flops += numel(ops[0]);
    }
  } else {
    // Element-wise, reductions, normalizations, losses: a few operations
    // per element touched; memory bound on any real device.
    cost.flops = std::max(sumNumel(call.operands), sumNumel(call.results));
  }
  return cost;
}

Cost CostModel::estimate(const KernelCall &call) const {
  Cost cost = analytic(call);
  if (std::optional<double> measured = profile.lookup(call)) {
    cost.microseconds = *measured;
    cost.fromProfile = true;
    return cost;
  }
  double seconds = std::max(cost.flops / device.peakFlopsPerSecond,
                            cost.bytes / device.bytesPerSecond);
  cost.microseconds = seconds * 1e6;
  return cost;
}

static std::string operandSignature(const KernelCall &call) {
  if (call.operands.empty())
    return "-";
  std::string text;
  for (const TensorShape &shape : call.operands)
    text += (text.empty() ? "" : ",") + shape.signature();
  return text;
}

std::optional<double> ProfileTable::lookup(const KernelCall &call) const {
  auto exact = entries.find({call.kernel, operandSignature(call)});
  if (exact != entries.end())
    return exact->second;
  auto any = entries.find({call.kernel, "*"});
  if (any != entries.end())
    return any->second;
  return std::nullopt;
}

bool ProfileTable::parse(std::string_view text, std::string &error) {
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int lineNumber = 1; std::getline(lines, line); ++lineNumber) {
    std::string_view content(line);
    content = content.substr(0, content.find('#'));
    std::istringstream fields{std::string(content)};
    std::string kernel, signature, time, extra;
    if (!(fields >> kernel))
      continue; // blank or comment
    auto fail = [&](const std::string &why) {
      error = "line " + std::to_string(lineNumber) + ": " + why;
      return false;
    };
    if (!(fields >> signature >> time) || (fields >> extra))
      return fail("expected 'kernel operand-signatures microseconds', got '" +
                  line + "'");
    double microseconds = 0;
    auto [end, status] =
        std::from_chars(time.data(), time.data() + time.size(), microseconds);
    if (status != std::errc() || end != time.data() + time.size() ||
        !std::isfinite(microseconds) || microseconds < 0)
      return fail("'" + time + "' is not a non-negative time in microseconds");
    if (!entries.emplace(std::make_pair(kernel, signature), microseconds)
             .second)
      return fail("a second entry for " + kernel + " " + signature);
  }
  return true;
}
