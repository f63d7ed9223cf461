//===- PlanFileFormat.cpp - Plan files: a Plan with length and checksum ---===//

#include "PlanFileFormat.h"

#include <climits>
#include <cstdio>

namespace coop::planfile {

uint64_t checksum(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

bool write(const coop_pb::Plan &plan, std::string &out) {
  coop_pb::PlanFile file;
  file.set_format_version(kFormatVersion);
  if (!plan.SerializeToString(file.mutable_plan()))
    return false;
  file.set_plan_bytes(file.plan().size());
  file.set_plan_checksum(checksum(file.plan()));
  return file.SerializeToString(&out);
}

std::string read(std::string_view bytes, coop_pb::Plan &plan) {
  if (bytes.empty())
    return "empty file, not a Plan file";
  coop_pb::PlanFile file;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !file.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return "not a Plan file (truncated or corrupted protobuf, " + std::to_string(bytes.size()) +
           " bytes)";
  if (file.format_version() != kFormatVersion) {
    std::string error = "format version " + std::to_string(file.format_version()) +
                        " is not the supported version " + std::to_string(kFormatVersion);
    if (file.format_version() == 1)
      error += " (a bare Plan without length and checksum: translate it again)";
    return error;
  }
  if (file.plan_bytes() == 0 && file.plan().empty())
    return "the file holds no plan (a bare Plan without length and checksum?)";
  if (file.plan().size() != file.plan_bytes())
    return "truncated: the file holds " + std::to_string(file.plan().size()) + " of the plan's " +
           std::to_string(file.plan_bytes()) + " bytes";
  uint64_t actual = checksum(file.plan());
  if (actual != file.plan_checksum()) {
    char text[80];
    std::snprintf(text, sizeof text, "checksum 0x%016llx, the file says 0x%016llx",
                  static_cast<unsigned long long>(actual),
                  static_cast<unsigned long long>(file.plan_checksum()));
    return std::string("corrupted: the plan's bytes were altered (") + text + ")";
  }
  if (!plan.ParseFromString(file.plan()))
    return "corrupted: the checksummed payload is not a serialized Plan";
  if (plan.format_version() != kFormatVersion)
    return "the plan says format version " + std::to_string(plan.format_version()) + ", its file " +
           std::to_string(kFormatVersion);
  return "";
}

} // namespace coop::planfile
