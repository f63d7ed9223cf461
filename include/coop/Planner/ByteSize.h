//===- ByteSize.h - Byte counts as people write them -------------*- C++ -*-===//

#ifndef COOP_PLANNER_BYTESIZE_H
#define COOP_PLANNER_BYTESIZE_H

#include <cstdint>
#include <string>

namespace coop::planner {

/// Parses "4096", "512MiB", "1.5GiB", "6GB" (binary units KiB..TiB, decimal
/// units KB..TB, optional "B"). Returns false on anything else, on negative
/// values and on overflow.
bool parseByteSize(const std::string &text, int64_t *bytes);

/// "1536 (1.50 KiB)": exact bytes for scripts, a binary unit for people.
std::string formatByteSize(int64_t bytes);

} // namespace coop::planner

#endif // COOP_PLANNER_BYTESIZE_H
