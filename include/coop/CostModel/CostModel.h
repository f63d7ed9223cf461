//===- CostModel.h - Analytic kernel costs with a profile override -*- C++ -*-===//
//
// Plain C++, no MLIR: the run time of one aten kernel on a device, from its
// operand and result shapes. A roofline per op family: the kernel takes
// max(FLOPs / peak FLOP/s, bytes moved / bandwidth). A measured profile
// table, when given, overrides the estimate for the kernels it lists.
//
//===----------------------------------------------------------------------===//

#ifndef COOP_COSTMODEL_COSTMODEL_H
#define COOP_COSTMODEL_COSTMODEL_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace coop::cost {

struct Device {
  std::string name;
  double peakFlopsPerSecond;
  double bytesPerSecond;
};

/// The built-in devices ("a100", "v100", "h100", "cpu"), or nullopt.
std::optional<Device> lookupDevice(std::string_view name);
/// Names of the built-in devices, comma separated, for diagnostics.
std::string deviceNames();

struct TensorShape {
  std::vector<int64_t> dims;
  /// Element type as MLIR prints it ("f32", "i64", "i1").
  std::string elementType;
  int64_t elementBytes;

  int64_t numel() const;
  int64_t bytes() const { return numel() * elementBytes; }
  /// "512x256xf32", the form profile tables use.
  std::string signature() const;
};

struct KernelCall {
  std::string kernel; // "aten.convolution", overload suffix allowed
  std::vector<TensorShape> operands;
  std::vector<TensorShape> results;
  bool isView = false;
  bool transposed = false; // convolution's `transposed` argument
};

struct Cost {
  double flops = 0;
  double bytes = 0;
  double microseconds = 0;
  bool fromProfile = false;
};

/// Measured kernel times. Text format, one entry per line:
///
///   # comment
///   aten.mm  512x256xf32,256x128xf32  8.6
///   aten.relu_  *  0.4
///
/// kernel name, the operand signatures joined by commas (`*`: any shapes;
/// `-` for a kernel without tensor operands), and the time in
/// microseconds. An exact signature wins over `*`.
class ProfileTable {
public:
  /// Parses `text`; on failure returns false and sets `error` to a message
  /// naming the line.
  bool parse(std::string_view text, std::string &error);
  std::optional<double> lookup(const KernelCall &call) const;
  size_t size() const { return entries.size(); }

private:
  std::map<std::pair<std::string, std::string>, double> entries;
};

class CostModel {
public:
  explicit CostModel(Device device, ProfileTable profile = {})
      : device(std::move(device)), profile(std::move(profile)) {}

  /// The analytic FLOPs and bytes of `call`, whatever the profile says.
  static Cost analytic(const KernelCall &call);
  /// The time of `call` on the device: the profile's, else the roofline.
  Cost estimate(const KernelCall &call) const;

private:
  Device device;
  ProfileTable profile;
};

} // namespace coop::cost

#endif // COOP_COSTMODEL_COSTMODEL_H
