//===- PackingBench.cpp - Offline packing quality and time ----------------===//
//
// For each interval kind and set size, packs seeded generated sets (see
// IntervalGenerator.h) with packBuffers and with packBestFitOnline, checks
// every packing, and prints a Markdown table: peak / lower bound (mean and
// worst) of both, how many packBuffers results are proved optimal, and the
// time per set.
//
//   coop-packing-bench [--kinds perfect,random,stack,mixed]
//                      [--sizes 100,200,500,1000,10000,100000]
//                      [--seeds N] [--node-limit N]
//   coop-packing-bench --csv FILE[,FILE...] [--capacity BYTES] [--node-limit N]
//
// --seeds defaults to 20 for sets of up to 1,000 buffers and to 3 above;
// --node-limit to PackOptions' default. --csv packs instances from files
// instead, one row each, in MiniMalloc's format (a header naming the
// columns, among them start or lower, end or upper (exclusive), and size;
// others are ignored), and with --capacity also packs each to fit it, as a
// plan packs to fit its budget.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/IntervalGenerator.h"
#include "coop/Planner/Packer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace coop::planner;

namespace {

struct Config {
  std::vector<IntervalKind> kinds{kIntervalKinds.begin(), kIntervalKinds.end()};
  std::vector<int64_t> sizes{100, 200, 500, 1000, 10000, 100000};
  int64_t seeds = 0; // 0: by size
  PackOptions options;
  std::vector<std::string> csvFiles;
  int64_t capacity = 0; // 0: none
};

/// Mean and maximum of a series of samples.
struct Series {
  double sum = 0, max = 0;
  int count = 0;
  void add(double sample) {
    sum += sample;
    max = count++ ? std::max(max, sample) : sample;
  }
  double mean() const { return count ? sum / count : 0; }
};

std::vector<std::string> splitAtCommas(const std::string &list) {
  std::vector<std::string> items;
  size_t begin = 0;
  for (size_t comma; (comma = list.find(',', begin)) != std::string::npos;
       begin = comma + 1)
    items.push_back(list.substr(begin, comma - begin));
  items.push_back(list.substr(begin));
  return items;
}

bool parseCount(const std::string &text, int64_t *value) {
  char *end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || parsed < 0)
    return false;
  *value = parsed;
  return true;
}

bool parseKind(const std::string &name, IntervalKind *kind) {
  for (IntervalKind k : kIntervalKinds)
    if (name == intervalKindName(k)) {
      *kind = k;
      return true;
    }
  return false;
}

/// Reads `--name value` or `--name=value` pairs; false on anything else.
bool parseArguments(int argc, char **argv, Config *config) {
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i], value;
    if (const size_t equals = name.find('='); equals != std::string::npos) {
      value = name.substr(equals + 1);
      name.resize(equals);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return false;
    }
    if (name == "--kinds") {
      config->kinds.clear();
      for (const std::string &item : splitAtCommas(value))
        if (!parseKind(item, &config->kinds.emplace_back()))
          return false;
    } else if (name == "--sizes") {
      config->sizes.clear();
      for (const std::string &item : splitAtCommas(value))
        if (!parseCount(item, &config->sizes.emplace_back()))
          return false;
    } else if (name == "--seeds") {
      if (!parseCount(value, &config->seeds) || config->seeds == 0)
        return false;
    } else if (name == "--node-limit") {
      if (!parseCount(value, &config->options.searchNodeLimit))
        return false;
    } else if (name == "--csv") {
      config->csvFiles = splitAtCommas(value);
    } else if (name == "--capacity") {
      if (!parseCount(value, &config->capacity) || config->capacity == 0)
        return false;
    } else {
      return false;
    }
  }
  return true;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Packs `buffers` one way, checks the packing and adds to the series;
/// false (after saying why) when packing or its check fails.
template <typename PackFn>
bool measure(const char *packer, const std::vector<PackBuffer> &buffers,
             int64_t alignment, PackFn pack, Series *ratio, Series *seconds,
             PackResult *result) {
  const auto start = std::chrono::steady_clock::now();
  Status st = pack(result);
  seconds->add(secondsSince(start));
  if (st)
    st = checkPacking(buffers, result->offsets, alignment);
  if (!st) {
    std::fprintf(stderr, "%s: %s\n", packer, st.message().c_str());
    return false;
  }
  ratio->add(result->lowerBound ? double(result->peak) / result->lowerBound
                                : 1.0);
  return true;
}

/// One table row; false when a packing fails.
bool benchRow(IntervalKind kind, int64_t size, const Config &config) {
  const int64_t seeds = config.seeds ? config.seeds : size <= 1000 ? 20 : 3;
  const PackOptions &options = config.options;
  Series packRatio, packSeconds, onlineRatio, onlineSeconds;
  int64_t proved = 0;
  for (int64_t seed = 0; seed < seeds; ++seed) {
    IntervalShape shape;
    shape.kind = kind;
    shape.buffers = size;
    IntervalSet set;
    if (Status st = generateIntervals(uint64_t(seed), shape, &set); !st) {
      std::fprintf(stderr, "generator: %s\n", st.message().c_str());
      return false;
    }
    PackResult packed, online;
    const bool ok =
        measure(
            "packBuffers", set.buffers, options.alignment,
            [&](PackResult *r) { return packBuffers(set.buffers, options, r); },
            &packRatio, &packSeconds, &packed) &&
        measure(
            "packBestFitOnline", set.buffers, options.alignment,
            [&](PackResult *r) {
              return packBestFitOnline(set.buffers, options.alignment, r);
            },
            &onlineRatio, &onlineSeconds, &online);
    if (!ok) {
      std::fprintf(stderr, "on %s set of %lld buffers, seed %lld\n",
                   intervalKindName(kind), (long long)size, (long long)seed);
      return false;
    }
    proved += packed.provedOptimal;
  }
  std::printf("| %s | %lld | %lld | %.4f | %.4f | %.4f | %.4f | %lld/%lld | "
              "%.2f | %.2f | %.2f |\n",
              intervalKindName(kind), (long long)size, (long long)seeds,
              packRatio.mean(), packRatio.max, onlineRatio.mean(),
              onlineRatio.max, (long long)proved, (long long)seeds,
              packSeconds.mean() * 1e3, packSeconds.max * 1e3,
              onlineSeconds.mean() * 1e3);
  std::fflush(stdout);
  return true;
}

/// Reads an instance in MiniMalloc's CSV format: a header line, then one
/// buffer a line. Lifetimes there are half-open, [start, end).
Status readCsv(const std::string &path, std::vector<PackBuffer> *buffers) {
  std::ifstream in(path);
  if (!in)
    return Status::error(path + ": cannot open");
  std::string line;
  if (!std::getline(in, line))
    return Status::error(path + ": empty, expected a header line");
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  const std::vector<std::string> header = splitAtCommas(line);
  auto column = [&](std::initializer_list<const char *> names) {
    for (size_t c = 0; c < header.size(); ++c)
      for (const char *name : names)
        if (header[c] == name)
          return int(c);
    return -1;
  };
  const int start = column({"start", "lower"}), end = column({"end", "upper"}),
            size = column({"size"}), alignment = column({"alignment"});
  if (start < 0 || end < 0 || size < 0)
    return Status::error(path + ":1: the header names no start (or lower), " +
                         "end (or upper) or size column: " + line);
  for (int number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty())
      continue;
    const std::vector<std::string> fields = splitAtCommas(line);
    const std::string where = path + ":" + std::to_string(number) + ": ";
    int64_t first = 0, past = 0, bytes = 0, align = 1;
    if (fields.size() != header.size() ||
        !parseCount(fields[size_t(start)], &first) ||
        !parseCount(fields[size_t(end)], &past) ||
        !parseCount(fields[size_t(size)], &bytes) ||
        (alignment >= 0 && !parseCount(fields[size_t(alignment)], &align)))
      return Status::error(where + "expected " + std::to_string(header.size()) +
                           " non-negative integers: " + line);
    if (past <= first)
      return Status::error(where + "the lifetime [" + std::to_string(first) +
                           ", " + std::to_string(past) + ") is empty");
    if (align > 1)
      return Status::error(where + "per-buffer alignment is not supported");
    buffers->push_back({first, past - 1, bytes});
  }
  return Status::ok();
}

/// One row per instance file: packed as low as it goes, and, with a
/// capacity, packed to fit it; false when reading or a packing fails.
bool benchFile(const std::string &path, const Config &config) {
  std::vector<PackBuffer> buffers;
  if (Status st = readCsv(path, &buffers); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return false;
  }
  PackOptions fitting = config.options;
  fitting.targetPeak = config.capacity;
  Series ratio, seconds, onlineRatio, onlineSeconds, fitRatio, fitSeconds;
  PackResult packed, online, fitted;
  const int64_t alignment = config.options.alignment;
  const bool ok =
      measure(
          "packBuffers", buffers, alignment,
          [&](PackResult *r) {
            return packBuffers(buffers, config.options, r);
          },
          &ratio, &seconds, &packed) &&
      measure(
          "packBestFitOnline", buffers, alignment,
          [&](PackResult *r) {
            return packBestFitOnline(buffers, alignment, r);
          },
          &onlineRatio, &onlineSeconds, &online) &&
      (config.capacity == 0 ||
       measure(
           "packBuffers to fit", buffers, alignment,
           [&](PackResult *r) { return packBuffers(buffers, fitting, r); },
           &fitRatio, &fitSeconds, &fitted));
  if (!ok) {
    std::fprintf(stderr, "on %s\n", path.c_str());
    return false;
  }
  std::printf("| %s | %zu | %lld | %lld | %.4f | %s | %.2f | %.4f |",
              path.c_str(), buffers.size(), (long long)packed.lowerBound,
              (long long)packed.peak, ratio.mean(),
              packed.provedOptimal ? "yes" : "no", seconds.mean() * 1e3,
              onlineRatio.mean());
  if (config.capacity)
    std::printf(" %s | %.2f |", fitted.peak <= config.capacity ? "yes" : "no",
                fitSeconds.mean() * 1e3);
  std::printf("\n");
  std::fflush(stdout);
  return true;
}

int benchFiles(const Config &config) {
  std::printf(
      "Instances from files; search node limit %lld%s.\n\n",
      (long long)config.options.searchNodeLimit,
      config.capacity
          ? ("; capacity " + std::to_string(config.capacity) + " bytes").c_str()
          : "");
  std::printf("| file | buffers | lower bound | peak | peak / lower bound | "
              "proved optimal | pack ms | best fit peak / lower bound |%s\n",
              config.capacity ? " fits the capacity | ms to fit |" : "");
  std::printf("|---|--:|--:|--:|--:|--:|--:|--:|%s\n",
              config.capacity ? "--:|--:|" : "");
  for (const std::string &path : config.csvFiles)
    if (!benchFile(path, config))
      return 1;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Config config;
  if (!parseArguments(argc, argv, &config) ||
      (config.capacity && config.csvFiles.empty())) {
    std::fprintf(stderr,
                 "usage: %s [--kinds perfect,random,stack,mixed] "
                 "[--sizes 100,200,...] [--seeds N] [--node-limit N]\n"
                 "       %s --csv FILE[,FILE...] [--capacity BYTES] "
                 "[--node-limit N]\n",
                 argv[0], argv[0]);
    return 2;
  }
  if (!config.csvFiles.empty())
    return benchFiles(config);
  std::printf("Peak / lower bound per set (1 is optimal); search node limit "
              "%lld.\n\n",
              (long long)config.options.searchNodeLimit);
  std::printf("| kind | buffers | sets | packBuffers mean | worst | "
              "best fit mean | worst | proved optimal | pack ms mean | "
              "pack ms max | best fit ms mean |\n");
  std::printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (IntervalKind kind : config.kinds)
    for (int64_t size : config.sizes)
      if (!benchRow(kind, size, config))
        return 1;
  return 0;
}
