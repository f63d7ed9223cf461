//===- ByteSize.cpp - Byte counts as people write them --------------------===//

#include "coop/Planner/ByteSize.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace coop::planner {

bool parseByteSize(const std::string &text, int64_t *bytes) {
  const char *begin = text.c_str();
  char *end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value) || value < 0 || std::isspace(*begin))
    return false;
  const std::string unit(end);
  static const struct {
    const char *name;
    double scale;
  } units[] = {{"", 1},         {"B", 1},         {"KiB", 0x1p10},
               {"MiB", 0x1p20}, {"GiB", 0x1p30},  {"TiB", 0x1p40},
               {"KB", 1e3},     {"MB", 1e6},      {"GB", 1e9},
               {"TB", 1e12}};
  for (const auto &u : units) {
    if (unit != u.name)
      continue;
    double scaled = value * u.scale;
    // A byte count is whole: "1.5B" is not one.
    if (scaled >= 0x1p63 || scaled != std::floor(scaled))
      return false;
    *bytes = static_cast<int64_t>(scaled);
    return true;
  }
  return false;
}

std::string formatByteSize(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[64];
  if (unit == 0)
    std::snprintf(buffer, sizeof(buffer), "%lld (%lld B)",
                  static_cast<long long>(bytes), static_cast<long long>(bytes));
  else
    std::snprintf(buffer, sizeof(buffer), "%lld (%.2f %s)",
                  static_cast<long long>(bytes), value, units[unit]);
  return buffer;
}

} // namespace coop::planner
