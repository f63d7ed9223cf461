//===- PlanFileFormat.h - Plan files: a Plan with length and checksum -----===//
//
// The one writer and reader of the PlanFile envelope (plan.proto), shared
// by the compiler (coop-translate) and the runtime. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PROTO_PLANFILEFORMAT_H
#define COOP_PROTO_PLANFILEFORMAT_H

#include "plan.pb.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace coop::planfile {

/// The Plan format version this build writes and reads (a PlanFile's and
/// its Plan's).
constexpr uint32_t kFormatVersion = 2;

/// FNV-1a, 64-bit: detects a cut or altered file, not a forgery.
uint64_t checksum(std::string_view bytes);

/// The bytes of a Plan file holding `plan` (whose format_version the
/// caller sets); false when the plan cannot be serialized (over 2 GiB).
bool write(const coop_pb::Plan &plan, std::string &out);

/// Reads the bytes of a Plan file into `plan`: "" on success, else what is
/// wrong (not a Plan file, another version, cut short, altered).
std::string read(std::string_view bytes, coop_pb::Plan &plan);

} // namespace coop::planfile

#endif // COOP_PROTO_PLANFILEFORMAT_H
