//===- PackRepair.cpp - Windowed repair of a packing ----------------------===//
//
// A greedy packing of a large part is usually above the lower bound in a
// few places only. Around a buffer at the peak, a window of sections is
// cut out: the buffers entirely inside it that lie highest are placed
// again among the rest, which stay where they are. A window small enough
// to search costs time in its own buffers and those alive with them, not
// in the part, so the repair scales with the work it is given.
//
//===----------------------------------------------------------------------===//

#include "PackRepair.h"
#include "PlacedByOffset.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <utility>

namespace coop::planner {
namespace {

/// Buffers placed again per window: the highest of those inside it. On
/// perfect sets of 10,000 buffers 48 / 96 / 192 reach 1.2012 / 1.1673 /
/// 1.1745 of the lower bound (bench/packing/results.md).
constexpr size_t kMaxLifted = 96;

/// Sections either side of the centre buffer's lifetime, in turn.
constexpr int32_t kWidths[] = {0, 1, 2, 4, 8, 16, 32, 64};
constexpr uint64_t kWidthCount = sizeof(kWidths) / sizeof(kWidths[0]);

/// Orders the lifted buffers are placed in, in turn: by their old offset
/// (each drops as low as it goes), larger first, larger space-time area
/// first with noise, at random.
constexpr uint64_t kOrderCount = 4;

/// The buffers alive in a section: a segment tree over the sections with
/// each buffer listed at the O(log sections) nodes that cover its
/// lifetime, so that a query walks one leaf's path up.
class AliveIndex {
public:
  AliveIndex(const std::vector<int32_t> &begin, const std::vector<int32_t> &end,
             int32_t sections) {
    while (leaves_ < sections)
      leaves_ *= 2;
    start_.assign(2 * leaves_ + 1, 0);
    forEachNode(begin, end, [&](int32_t node, int32_t) { ++start_[node + 1]; });
    std::partial_sum(start_.begin(), start_.end(), start_.begin());
    listed_.resize(start_.back());
    std::vector<int64_t> fill(start_.begin(), start_.end() - 1);
    forEachNode(begin, end,
                [&](int32_t node, int32_t b) { listed_[fill[node]++] = b; });
  }

  template <typename Visit>
  void visitAliveAt(int32_t section, Visit visit) const {
    for (int32_t node = section + leaves_; node >= 1; node /= 2)
      for (int64_t k = start_[node]; k < start_[node + 1]; ++k)
        visit(listed_[k]);
  }

private:
  template <typename Add>
  void forEachNode(const std::vector<int32_t> &begin,
                   const std::vector<int32_t> &end, Add add) const {
    for (size_t b = 0; b < begin.size(); ++b)
      for (int32_t lo = begin[b] + leaves_, hi = end[b] + leaves_ + 1; lo < hi;
           lo /= 2, hi /= 2) {
        if (lo & 1)
          add(lo++, int32_t(b));
        if (hi & 1)
          add(--hi, int32_t(b));
      }
  }

  int32_t leaves_ = 1;
  std::vector<int64_t> start_;
  std::vector<int32_t> listed_;
};

class WindowRepair {
public:
  WindowRepair(const std::vector<int32_t> &begin,
               const std::vector<int32_t> &end,
               const std::vector<int64_t> &size, int32_t sections,
               std::vector<int64_t> &offset)
      : begin_(begin), end_(end), size_(size), sections_(sections),
        offset_(offset), alive_(begin, end, sections) {
    const size_t n = size.size();
    byBegin_.resize(n);
    std::iota(byBegin_.begin(), byBegin_.end(), 0);
    std::stable_sort(byBegin_.begin(), byBegin_.end(),
                     [&](int32_t a, int32_t b) { return begin[a] < begin[b]; });
    firstBeginning_.assign(sections + 1, 0);
    for (size_t i = 0; i < n; ++i)
      ++firstBeginning_[begin[i] + 1];
    std::partial_sum(firstBeginning_.begin(), firstBeginning_.end(),
                     firstBeginning_.begin());
    for (size_t b = 0; b < n; ++b)
      byTop_.insert({top(int32_t(b)), int32_t(b)});
  }

  /// Repairs until the peak is at most `goal` or the work runs out.
  void run(int64_t goal, int64_t workLimit) {
    std::vector<int32_t> atPeak;
    for (uint64_t attempt = 0; peak() > goal && work_ < workLimit; ++attempt) {
      atPeak.clear();
      for (auto it = byTop_.rbegin();
           it != byTop_.rend() && it->first == peak(); ++it)
        atPeak.push_back(it->second);
      work_ += int64_t(atPeak.size());
      const int32_t centre = atPeak[random_() % atPeak.size()];
      const int32_t width = kWidths[(attempt / kOrderCount) % kWidthCount];
      tryWindow(centre, width, attempt % kOrderCount);
    }
  }

  int64_t peak() const { return byTop_.empty() ? 0 : byTop_.rbegin()->first; }
  int64_t work() const { return work_; }

private:
  int64_t top(int32_t b) const { return offset_[b] + size_[b]; }
  int64_t length(int32_t b) const { return int64_t(end_[b]) - begin_[b] + 1; }

  /// Lifts the highest buffers inside the window of `width` sections either
  /// side of `centre`'s lifetime and places them again in order `order`;
  /// keeps the result if it is better.
  void tryWindow(int32_t centre, int32_t width, uint64_t order) {
    const int32_t lo = std::max(0, begin_[centre] - width);
    const int32_t hi = std::min(sections_ - 1, end_[centre] + width);
    collectAlive(lo, hi, &window_);
    lifted_.clear();
    for (int32_t b : window_)
      if (begin_[b] >= lo && end_[b] <= hi)
        lifted_.push_back(b);
    auto higher = [&](int32_t a, int32_t b) {
      return top(a) != top(b) ? top(a) > top(b) : a < b;
    };
    if (lifted_.size() > kMaxLifted) {
      std::nth_element(lifted_.begin(), lifted_.begin() + kMaxLifted - 1,
                       lifted_.end(), higher);
      lifted_.resize(kMaxLifted);
    }
    // The lifted buffers go back no lower than the lowest of them, so only
    // the rest reaching above that are in the way: by offset, as the
    // placements scan them.
    int64_t bottom = std::numeric_limits<int64_t>::max();
    for (int32_t b : lifted_)
      bottom = std::min(bottom, offset_[b]);
    std::sort(lifted_.begin(), lifted_.end());
    occupants_.clear();
    for (int32_t b : window_)
      if (top(b) > bottom &&
          !std::binary_search(lifted_.begin(), lifted_.end(), b))
        occupants_.insert({offset_[b], top(b), begin_[b], end_[b], b});

    int64_t oldHighest = 0;
    double oldWeight = 0;
    for (int32_t b : lifted_) {
      oldHighest = std::max(oldHighest, top(b));
      oldWeight += double(length(b)) * double(top(b));
    }
    orderLifted(order);

    placed_.clear();
    int64_t newHighest = 0;
    double newWeight = 0;
    for (int32_t b : lifted_) {
      const int64_t at = lowestClear(b, bottom);
      if (at + size_[b] > oldHighest)
        return;
      newHighest = std::max(newHighest, at + size_[b]);
      newWeight += double(length(b)) * double(at + size_[b]);
      occupants_.insert({at, at + size_[b], begin_[b], end_[b], b});
      placed_.push_back({b, at});
    }
    // Lower at the top, else lower in all: space-time weighted tops.
    if (newHighest > oldHighest ||
        (newHighest == oldHighest && newWeight >= oldWeight))
      return;
    for (auto [b, at] : placed_) {
      byTop_.erase({top(b), b});
      offset_[b] = at;
      byTop_.insert({top(b), b});
    }
  }

  /// Every buffer alive in sections [lo, hi]: alive at lo, or beginning
  /// after it.
  void collectAlive(int32_t lo, int32_t hi, std::vector<int32_t> *alive) {
    alive->clear();
    alive_.visitAliveAt(lo, [&](int32_t b) { alive->push_back(b); });
    for (int64_t k = firstBeginning_[lo + 1]; k < firstBeginning_[hi + 1]; ++k)
      alive->push_back(byBegin_[k]);
    work_ += int64_t(alive->size());
  }

  void orderLifted(uint64_t order) {
    // In [1, 2): the generator's bits, the same on every platform.
    auto noise = [&] { return 1 + double(random_() >> 11) * 0x1.0p-53; };
    std::vector<std::pair<double, int32_t>> keyed;
    for (int32_t b : lifted_) {
      double key = 0;
      switch (order) {
      case 0:
        key = double(offset_[b]);
        break;
      case 1:
        key = -double(size_[b]) - double(length(b)) / double(sections_ + 1);
        break;
      case 2:
        key = -double(size_[b]) * double(length(b)) * noise();
        break;
      default:
        key = noise();
        break;
      }
      keyed.push_back({key, b});
    }
    std::sort(keyed.begin(), keyed.end());
    for (size_t i = 0; i < keyed.size(); ++i)
      lifted_[i] = keyed[i].second;
  }

  /// The lowest offset from `bottom` up where `b` clears every occupant
  /// alive with it.
  int64_t lowestClear(int32_t b, int64_t bottom) {
    int64_t cursor = bottom;
    work_ += int64_t(occupants_.size());
    occupants_.visitInOrder([&](const PlacedByOffset::Record &o) {
      if (o.end < begin_[b] || end_[b] < o.begin)
        return false;
      if (o.offset - cursor >= size_[b])
        return true;
      cursor = std::max(cursor, o.top);
      return false;
    });
    return cursor;
  }

  const std::vector<int32_t> &begin_, &end_;
  const std::vector<int64_t> &size_;
  const int32_t sections_;
  std::vector<int64_t> &offset_;
  const AliveIndex alive_;
  std::vector<int32_t> byBegin_;
  std::vector<int64_t> firstBeginning_; // per section, into byBegin_
  std::set<std::pair<int64_t, int32_t>> byTop_;
  int64_t work_ = 0;
  std::mt19937_64 random_; // default seed: deterministic
  // Scratch per window.
  std::vector<int32_t> window_, lifted_;
  PlacedByOffset occupants_;
  std::vector<std::pair<int32_t, int64_t>> placed_;
};

} // namespace

bool repairPacking(const std::vector<int32_t> &begin,
                   const std::vector<int32_t> &end,
                   const std::vector<int64_t> &size, int32_t sections,
                   int64_t goal, int64_t workLimit,
                   std::vector<int64_t> *offset, int64_t *peak,
                   int64_t &steps) {
  if (*peak <= goal || size.empty())
    return false;
  WindowRepair repair(begin, end, size, sections, *offset);
  repair.run(goal, workLimit);
  steps += repair.work();
  const bool lowered = repair.peak() < *peak;
  *peak = repair.peak();
  return lowered;
}

} // namespace coop::planner
