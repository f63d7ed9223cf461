//===- IntervalGenerator.cpp - Seeded buffer-lifetime sets ----------------===//

#include "coop/Planner/IntervalGenerator.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

namespace coop::planner {
namespace {

/// Perfect strips hold this many units per piece on average.
constexpr int64_t kMeanPieceUnits = 8;

/// Sizes and Perfect offsets are built in units, then scaled to bytes.
class Generator {
public:
  Generator(uint64_t seed, const IntervalShape &shape)
      : rng_(seed), shape_(shape) {}

  void build(IntervalKind kind, int64_t count, IntervalSet *out);
  void shuffle(IntervalSet *set);

private:
  // Hand-rolled draws: std distributions differ between standard libraries
  // and the same seed must give the same set everywhere.
  bool chance(double p) { return double(rng_() >> 11) * 0x1.0p-53 < p; }
  int64_t pick(int64_t lo, int64_t hi) {
    return lo + int64_t(rng_() % uint64_t(hi - lo + 1));
  }

  /// Instructions a buffer spans: mostly a few, some a good part of the
  /// window.
  int64_t lifetime() {
    const int64_t window = shape_.lifetimeWindow;
    const int64_t quarter = std::max<int64_t>(4, window / 4);
    if (chance(0.5))
      return pick(1, 3);
    return chance(0.7) ? pick(4, quarter) : pick(quarter, 2 * window);
  }
  /// Mostly small, some large: 1 unit to 2 Ki units.
  int64_t sizeUnits() {
    if (chance(0.7))
      return pick(1, 16);
    return chance(0.83) ? pick(16, 256) : pick(256, 2048);
  }

  void perfect(int64_t count, IntervalSet *out);
  void cutIntoBuffers(int64_t offset, int64_t size, int64_t pieces,
                      int64_t first, IntervalSet *out,
                      std::vector<size_t> *strip);
  void random(int64_t count, IntervalSet *out);
  void stack(int64_t count, IntervalSet *out);
  void mixed(int64_t count, IntervalSet *out);

  std::mt19937_64 rng_;
  const IntervalShape &shape_;
};

void Generator::build(IntervalKind kind, int64_t count, IntervalSet *out) {
  switch (kind) {
  case IntervalKind::Perfect:
    return perfect(count, out);
  case IntervalKind::Random:
    return random(count, out);
  case IntervalKind::Stack:
    return stack(count, out);
  case IntervalKind::Mixed:
    return mixed(count, out);
  }
}

void Generator::shuffle(IntervalSet *set) {
  for (size_t i = set->buffers.size(); i > 1; --i) {
    const size_t j = size_t(pick(0, int64_t(i) - 1));
    std::swap(set->buffers[i - 1], set->buffers[j]);
    if (!set->offsets.empty())
      std::swap(set->offsets[i - 1], set->offsets[j]);
  }
}

/// Cuts [offset, offset + size) at random points into `pieces` buffers that
/// start at `first`, appending them to `strip` in address order.
void Generator::cutIntoBuffers(int64_t offset, int64_t size, int64_t pieces,
                               int64_t first, IntervalSet *out,
                               std::vector<size_t> *strip) {
  // pieces - 1 distinct cut points in (0, size): a partial Fisher-Yates.
  std::vector<int64_t> cuts(size_t(size - 1));
  std::iota(cuts.begin(), cuts.end(), 1);
  for (int64_t i = 0; i < pieces - 1; ++i)
    std::swap(cuts[size_t(i)], cuts[size_t(pick(i, size - 2))]);
  cuts.resize(size_t(pieces - 1));
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(size);
  int64_t begin = 0;
  for (int64_t end : cuts) {
    strip->push_back(out->buffers.size());
    const int64_t last = first + lifetime() - 1;
    out->buffers.push_back({first, last, end - begin});
    out->offsets.push_back(offset + begin);
    begin = end;
  }
}

void Generator::perfect(int64_t count, IntervalSet *out) {
  if (count == 0)
    return;
  const int64_t targetPieces =
      std::min(std::max<int64_t>(count / 8, 4), shape_.maxPerfectPieces);
  out->capacity = targetPieces * kMeanPieceUnits;
  // The live buffers in address order; together they cover the strip.
  std::vector<size_t> strip;
  cutIntoBuffers(0, out->capacity, targetPieces, 0, out, &strip);
  std::vector<PackBuffer> &buffers = out->buffers;
  int64_t t = 0;
  while (int64_t(buffers.size()) < count) {
    ++t;
    const size_t n = strip.size();
    std::vector<bool> ends(n);
    for (size_t i = 0; i < n; ++i)
      ends[i] = buffers[strip[i]].last < t;
    // Ending a buffer early (its last becomes t - 1) keeps the strip full.
    auto endEarly = [&](size_t i) {
      ends[i] = true;
      buffers[strip[i]].last = t - 1;
    };
    // Every instruction changes the strip.
    if (std::none_of(ends.begin(), ends.end(), [](bool e) { return e; }))
      endEarly(size_t(pick(0, int64_t(n) - 1)));
    // A neighbour now and then ends too, so that freed runs are re-cut
    // across old boundaries: this is what makes the packing non-guillotine.
    const std::vector<bool> lifetimeEnds = ends;
    for (size_t i = 0; i < n; ++i) {
      if (!lifetimeEnds[i] || !chance(0.3))
        continue;
      const size_t neighbour = i > 0 && chance(0.5) ? i - 1 : i + 1;
      if (neighbour < n)
        endEarly(neighbour);
    }
    // Pull the number of live buffers towards the target.
    const int64_t drift = int64_t(n) < targetPieces   ? 1
                          : int64_t(n) > targetPieces ? -1
                                                      : 0;
    std::vector<size_t> next;
    for (size_t i = 0; i < n;) {
      if (!ends[i]) {
        next.push_back(strip[i++]);
        continue;
      }
      size_t j = i;
      int64_t runSize = 0;
      for (; j < n && ends[j]; ++j)
        runSize += buffers[strip[j]].size;
      const int64_t pieces =
          std::clamp(int64_t(j - i) + pick(-1, 1) + drift, int64_t(1), runSize);
      cutIntoBuffers(out->offsets[strip[i]], runSize, pieces, t, out, &next);
      i = j;
    }
    strip.swap(next);
  }
  for (size_t b : strip) // the horizon ends with the strip still full
    buffers[b].last = t;
}

void Generator::random(int64_t count, IntervalSet *out) {
  // About four buffers start per instruction: some hundred alive at once.
  const int64_t horizon = std::max<int64_t>(1, count / 4);
  const int64_t window = shape_.lifetimeWindow;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t first = pick(0, horizon - 1);
    if (chance(0.05)) { // a constant: one unit, alive for many windows
      const int64_t last = first + pick(4 * window, 16 * window) - 1;
      out->buffers.push_back({first, last, 1});
      continue;
    }
    const int64_t last = first + lifetime() - 1;
    out->buffers.push_back({first, last, sizeUnits()});
  }
}

void Generator::stack(int64_t count, IntervalSet *out) {
  const int64_t window = shape_.lifetimeWindow;
  std::vector<PackBuffer> &buffers = out->buffers;
  for (int64_t base = 0; int64_t(buffers.size()) < count;) {
    // A step makes about 2.3 buffers per layer; the last one is trimmed.
    const int64_t remaining = count - int64_t(buffers.size());
    const int64_t depth =
        std::min(pick(std::max<int64_t>(1, window / 2), 2 * window),
                 std::max<int64_t>(1, remaining / 2));
    const int64_t end = base + 2 * depth - 1; // the step's last instruction
    const int64_t scale = pick(4, 128);       // its typical activation
    for (int64_t i = 0; i < depth; ++i) {
      const int64_t first = base + i;   // forward op i
      const int64_t backward = end - i; // backward op i
      const int64_t size = pick(std::max<int64_t>(1, scale / 2), 2 * scale);
      // Most activations are saved for backward op i, give or take an op;
      // the others die with the next layer.
      const int64_t last = chance(0.8) ? std::max(first, backward + pick(-2, 2))
                                       : first + pick(1, 2);
      buffers.push_back({first, last, size});
      if (chance(0.3)) // a weight gradient, kept for the optimizer
        buffers.push_back({backward, end, pick(1, 32)});
    }
    for (int64_t op = base; op <= end; ++op) {
      if (!chance(0.5))
        continue;
      const int64_t last = op + pick(0, 2); // a kernel's temporary
      buffers.push_back({op, last, pick(1, 64)});
    }
    base = end + 1;
  }
  buffers.resize(size_t(count));
}

void Generator::mixed(int64_t count, IntervalSet *out) {
  constexpr IntervalKind kParts[] = {IntervalKind::Perfect,
                                     IntervalKind::Random, IntervalKind::Stack};
  const int64_t parts = pick(2, 4);
  int64_t remaining = count;
  for (int64_t p = 0; p < parts && remaining > 0; ++p) {
    const int64_t partsLeft = parts - p;
    const int64_t share =
        partsLeft == 1
            ? remaining
            : std::max<int64_t>(1, remaining / partsLeft * pick(50, 150) / 100);
    IntervalSet part;
    build(kParts[pick(0, 2)], share, &part);
    const int64_t shift = pick(0, shape_.lifetimeWindow);
    for (PackBuffer b : part.buffers) {
      b.first += shift;
      b.last += shift;
      out->buffers.push_back(b);
    }
    remaining -= share;
  }
}

} // namespace

const char *intervalKindName(IntervalKind kind) {
  switch (kind) {
  case IntervalKind::Perfect:
    return "perfect";
  case IntervalKind::Random:
    return "random";
  case IntervalKind::Stack:
    return "stack";
  case IntervalKind::Mixed:
    return "mixed";
  }
  return "?";
}

Status generateIntervals(uint64_t seed, const IntervalShape &shape,
                         IntervalSet *out) {
  // The bounds keep every size and offset, in bytes, far from overflow.
  constexpr int64_t kMaxParameter = int64_t(1) << 20;
  auto inRange = [&](int64_t v, int64_t lo) {
    return v >= lo && v <= kMaxParameter;
  };
  if (!inRange(shape.buffers, 0))
    return Status::error("interval shape: buffers must be in [0, 2^20], not " +
                         std::to_string(shape.buffers));
  if (!inRange(shape.unit, 1) || !inRange(shape.lifetimeWindow, 1) ||
      !inRange(shape.maxPerfectPieces, 1))
    return Status::error("interval shape: unit, lifetimeWindow and "
                         "maxPerfectPieces must be in [1, 2^20]");
  *out = IntervalSet();
  Generator generator(seed, shape);
  generator.build(shape.kind, shape.buffers, out);
  generator.shuffle(out);
  for (PackBuffer &b : out->buffers)
    b.size *= shape.unit;
  for (int64_t &offset : out->offsets)
    offset *= shape.unit;
  out->capacity *= shape.unit;
  return Status::ok();
}

} // namespace coop::planner
