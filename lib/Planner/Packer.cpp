//===- Packer.cpp - Offline address assignment for fixed lifetimes --------===//
//
// Works in units of the alignment and in "sections": the distinct first
// instructions, which are the only points where the live set grows, so two
// buffers overlap in time exactly when their section ranges do.
//
// The timeline splits where no buffer crosses a section boundary; the parts
// are packed independently from offset 0. Inside a part, a buffer alive in
// every section goes to the bottom (stacking those loses nothing: any
// packing can be rearranged so), and the rest is packed by the best of
// several greedy orders, then by an exact search when that is above the
// lower bound (see `SkylineSearch`).
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Packer.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_set>

namespace coop::planner {
namespace {

/// Beyond this many pairs of buffers that overlap in time (16 bytes each
/// when listed), a part is packed without listing them.
constexpr int64_t kMaxListedOverlaps = 20'000'000;

std::string describeBuffer(const std::vector<PackBuffer> &buffers, size_t i) {
  const PackBuffer &b = buffers[i];
  return "buffer #" + std::to_string(i) + " (" + std::to_string(b.size) +
         " bytes, alive [" + std::to_string(b.first) + ", " +
         std::to_string(b.last) + "])";
}

/// Buffer indices in order of `when` (first or last), ties in input order:
/// the order in which a sweep over time starts or ends them.
std::vector<int32_t> orderedBy(const std::vector<PackBuffer> &buffers,
                               int64_t PackBuffer::*when) {
  std::vector<int32_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return buffers[a].*when < buffers[b].*when;
  });
  return order;
}

/// Sizes in alignment units; fails on malformed input.
Status toUnits(const std::vector<PackBuffer> &buffers, int64_t alignment,
               std::vector<int64_t> *units) {
  if (alignment <= 0)
    return Status::error("alignment must be positive, got " +
                         std::to_string(alignment));
  units->resize(buffers.size());
  int64_t total = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PackBuffer &b = buffers[i];
    if (b.size < 0)
      return Status::error(describeBuffer(buffers, i) + " has a negative size");
    if (b.last < b.first)
      return Status::error(describeBuffer(buffers, i) +
                           " ends before it starts");
    const int64_t u = b.size / alignment + (b.size % alignment != 0);
    if (u > std::numeric_limits<int64_t>::max() / alignment - total)
      return Status::error("the sizes up to " + describeBuffer(buffers, i) +
                           " add up to more than 2^63 bytes");
    total += u;
    (*units)[i] = u;
  }
  return Status::ok();
}

/// One independent part of the timeline, in local section numbers.
struct Part {
  std::vector<int32_t> ids; // input indices
  std::vector<int32_t> begin, end; // sections, inclusive
  std::vector<int64_t> size;       // units
  int32_t sections = 0;
};

/// A packing of a part: offsets in units, per part buffer.
struct Packing {
  std::vector<int64_t> offset;
  int64_t peak = 0;
  std::string method;
};

/// Buffers that overlap in time, as compressed adjacency lists.
struct Overlaps {
  std::vector<int64_t> start; // per buffer, into `other`
  std::vector<int32_t> other;

  explicit Overlaps(const Part &p) {
    const size_t n = p.size.size();
    std::vector<int32_t> byBegin(n);
    std::iota(byBegin.begin(), byBegin.end(), 0);
    std::stable_sort(byBegin.begin(), byBegin.end(), [&](int32_t a, int32_t b) {
      return p.begin[a] < p.begin[b];
    });
    // Sweep in order of begin; each buffer overlaps the active ones.
    std::vector<std::pair<int32_t, int32_t>> pairs;
    std::vector<int32_t> active;
    for (int32_t b : byBegin) {
      size_t kept = 0;
      for (int32_t a : active)
        if (p.end[a] >= p.begin[b]) {
          active[kept++] = a;
          pairs.push_back({a, b});
        }
      active.resize(kept);
      active.push_back(b);
    }
    std::vector<int64_t> degree(n + 1, 0);
    for (auto [a, b] : pairs) {
      ++degree[a];
      ++degree[b];
    }
    start.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i)
      start[i + 1] = start[i] + degree[i];
    other.resize(start[n]);
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (auto [a, b] : pairs) {
      other[fill[a]++] = b;
      other[fill[b]++] = a;
    }
  }
};

/// Places buffers in `order`, each at the lowest offset (or, with
/// `bestGap`, in the smallest gap) that clears every placed buffer it
/// overlaps in time.
Packing placeGreedily(const Part &p, const Overlaps &overlaps,
                      const std::vector<int32_t> &order, bool bestGap) {
  const size_t n = p.size.size();
  Packing result;
  result.offset.assign(n, -1);
  std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) placed
  for (int32_t b : order) {
    busy.clear();
    for (int64_t k = overlaps.start[b]; k < overlaps.start[b + 1]; ++k) {
      const int32_t o = overlaps.other[k];
      if (result.offset[o] >= 0)
        busy.push_back({result.offset[o], result.offset[o] + p.size[o]});
    }
    std::sort(busy.begin(), busy.end());
    int64_t chosen = -1, chosenGap = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    for (auto [lo, hi] : busy) {
      if (lo - cursor >= p.size[b]) {
        const int64_t gap = lo - cursor;
        if (!bestGap) {
          chosen = cursor;
          break;
        }
        if (gap < chosenGap) {
          chosen = cursor;
          chosenGap = gap;
        }
      }
      cursor = std::max(cursor, hi);
    }
    if (chosen < 0)
      chosen = cursor;
    result.offset[b] = chosen;
    result.peak = std::max(result.peak, chosen + p.size[b]);
  }
  return result;
}

/// Live units per section, and the most live over each buffer's lifetime.
struct Contention {
  std::vector<int64_t> live;
  std::vector<int64_t> maxLive;   // per buffer
  std::vector<int32_t> maxAt;     // per buffer: first section reaching it

  explicit Contention(const Part &p) {
    std::vector<int64_t> delta(p.sections + 1, 0);
    for (size_t i = 0; i < p.size.size(); ++i) {
      delta[p.begin[i]] += p.size[i];
      delta[p.end[i] + 1] -= p.size[i];
    }
    live.resize(p.sections);
    int64_t running = 0;
    for (int32_t s = 0; s < p.sections; ++s)
      live[s] = running += delta[s];
    // Sparse table of (live, -section) maxima for O(1) range queries.
    std::vector<std::vector<int32_t>> table(1, std::vector<int32_t>(p.sections));
    std::iota(table[0].begin(), table[0].end(), 0);
    auto better = [&](int32_t a, int32_t b) {
      return live[a] > live[b] || (live[a] == live[b] && a < b) ? a : b;
    };
    for (int32_t w = 1; 2 * w <= p.sections; w *= 2) {
      const std::vector<int32_t> &prev = table.back();
      std::vector<int32_t> next(p.sections - 2 * w + 1);
      for (size_t s = 0; s < next.size(); ++s)
        next[s] = better(prev[s], prev[s + w]);
      table.push_back(std::move(next));
    }
    maxLive.resize(p.size.size());
    maxAt.resize(p.size.size());
    for (size_t i = 0; i < p.size.size(); ++i) {
      const int32_t len = p.end[i] - p.begin[i] + 1;
      int32_t level = 0;
      while ((2 << level) <= len)
        ++level;
      const int32_t at = better(table[level][p.begin[i]],
                                table[level][p.end[i] - (1 << level) + 1]);
      maxAt[i] = at;
      maxLive[i] = live[at];
    }
  }
};

/// Pairs of buffers that overlap in time, counted without listing them.
int64_t countOverlaps(const Part &p) {
  std::vector<int64_t> starting(p.sections + 1, 0), ending(p.sections + 1, 0);
  for (size_t i = 0; i < p.size.size(); ++i) {
    ++starting[p.begin[i]];
    ++ending[p.end[i] + 1];
  }
  // Each buffer overlaps those alive when it starts, counted once.
  int64_t pairs = 0, alive = 0;
  for (int32_t s = 0; s < p.sections; ++s) {
    alive -= ending[s];
    pairs += starting[s] * alive + starting[s] * (starting[s] - 1) / 2;
    alive += starting[s];
  }
  return pairs;
}

/// Drops the buffers in `order` straight down onto the skyline of those
/// placed before them: each lands on the highest top alive in its
/// sections. In order of an initial packing's offsets this moves no buffer
/// up; time O(n log n) with a segment tree over the sections.
Packing dropOntoSkyline(const Part &p, const std::vector<int32_t> &order) {
  int32_t leaves = 1;
  while (leaves < p.sections)
    leaves *= 2;
  // Max of the skyline below each node; a pending level set on all of it.
  std::vector<int64_t> top(2 * leaves, 0), pending(2 * leaves, -1);
  auto push = [&](int32_t node) {
    if (pending[node] < 0)
      return;
    for (int32_t child : {2 * node, 2 * node + 1})
      top[child] = pending[child] = pending[node];
    pending[node] = -1;
  };
  // Highest top in [lo, hi], or, with `level` >= 0, sets it to `level`.
  std::function<int64_t(int32_t, int32_t, int32_t, int32_t, int32_t,
                        int64_t)>
      visit = [&](int32_t node, int32_t from, int32_t to, int32_t lo,
                  int32_t hi, int64_t level) -> int64_t {
    if (hi < from || to < lo)
      return 0;
    if (lo <= from && to <= hi) {
      if (level >= 0)
        top[node] = pending[node] = level;
      return top[node];
    }
    push(node);
    const int32_t mid = (from + to) / 2;
    const int64_t highest =
        std::max(visit(2 * node, from, mid, lo, hi, level),
                 visit(2 * node + 1, mid + 1, to, lo, hi, level));
    top[node] = std::max(top[2 * node], top[2 * node + 1]);
    return highest;
  };
  Packing result;
  result.offset.assign(p.size.size(), 0);
  for (int32_t b : order) {
    const int64_t at = visit(1, 0, leaves - 1, p.begin[b], p.end[b], -1);
    visit(1, 0, leaves - 1, p.begin[b], p.end[b], at + p.size[b]);
    result.offset[b] = at;
    result.peak = std::max(result.peak, at + p.size[b]);
  }
  return result;
}

/// The best of the greedy orders of the published offline allocators, and
/// of the initial packing's order when there is one. A large part gets the
/// initial order and the first three only, and a part whose overlapping
/// pairs are too many to list (each order costs time linear in them) is
/// dropped onto its skyline in the initial order, or by size. Stops at the
/// first packing whose peak is at most `goodEnough`; the initial order
/// dropped onto its skyline, which needs no list of overlaps, goes first.
Packing packByGreedyOrders(const Part &p, const Contention &contention,
                           const std::vector<int64_t> *initial, bool large,
                           bool initialOrderOnly, int64_t goodEnough) {
  const size_t n = p.size.size();
  auto length = [&](int32_t i) { return int64_t(p.end[i]) - p.begin[i]; };
  auto sorted = [&](auto before) {
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), before);
    return order;
  };
  // Computed only when a candidate needs it: most packings stop early.
  std::vector<int32_t> bySizeOrder;
  auto bySize = [&] {
    if (bySizeOrder.size() != n)
      bySizeOrder = sorted([&](int32_t a, int32_t b) {
        if (p.size[a] != p.size[b])
          return p.size[a] > p.size[b];
        return length(a) > length(b);
      });
    return bySizeOrder;
  };
  std::vector<int32_t> initialOrder;
  Packing dropped;
  if (initial) {
    initialOrder = sorted([&](int32_t a, int32_t b) {
      return (*initial)[p.ids[a]] < (*initial)[p.ids[b]];
    });
    dropped = dropOntoSkyline(p, initialOrder);
    dropped.method = "dropped-initial";
    if (dropped.peak <= goodEnough)
      return dropped;
  }
  if (countOverlaps(p) > kMaxListedOverlaps) {
    if (initial)
      return dropped;
    dropped = dropOntoSkyline(p, bySize());
    dropped.method = "dropped-by-size";
    return dropped;
  }
  struct Candidate {
    const char *name;
    std::function<std::vector<int32_t>()> order;
    bool bestGap;
  };
  std::vector<Candidate> candidates = {
      // TFLite's greedy by size.
      {"greedy-by-size", bySize, false},
      // TFLite's greedy by breadth: sections by live bytes, largest first;
      // a buffer is taken at its most contended section, larger first.
      {"greedy-by-breadth",
       [&] {
         return sorted([&](int32_t a, int32_t b) {
           if (contention.maxLive[a] != contention.maxLive[b])
             return contention.maxLive[a] > contention.maxLive[b];
           if (contention.maxAt[a] != contention.maxAt[b])
             return contention.maxAt[a] < contention.maxAt[b];
           return p.size[a] > p.size[b];
         });
       },
       false},
      // Space-time area, then long lifetimes first (they fragment most).
      {"greedy-by-area",
       [&] {
         return sorted([&](int32_t a, int32_t b) {
           const double ka = double(p.size[a]) * double(length(a) + 1);
           const double kb = double(p.size[b]) * double(length(b) + 1);
           return ka > kb;
         });
       },
       false},
      {"best-gap-by-size", bySize, true},
      // TelaMalloc's contention first, weighted by what the buffer blocks.
      {"greedy-by-contention",
       [&] {
         return sorted([&](int32_t a, int32_t b) {
           const double ka = double(contention.maxLive[a]) * double(p.size[a]);
           const double kb = double(contention.maxLive[b]) * double(p.size[b]);
           if (ka != kb)
             return ka > kb;
           return length(a) > length(b);
         });
       },
       false},
      {"greedy-by-lifetime",
       [&] {
         return sorted([&](int32_t a, int32_t b) {
           if (length(a) != length(b))
             return length(a) > length(b);
           return p.size[a] > p.size[b];
         });
       },
       false},
  };
  // Dropping an initial packing's buffers in order of offset moves each one
  // no higher: the buffers below it in time moved no higher either. First,
  // so that ties keep the initial layout.
  if (initial)
    candidates.insert(candidates.begin(),
                      {"compacted-initial", [&] { return initialOrder; }, false});
  if (initial && initialOrderOnly)
    candidates.resize(1);
  else if (large)
    candidates.resize(initial ? 4 : 3);
  const Overlaps overlaps(p);
  Packing best;
  best.peak = std::numeric_limits<int64_t>::max();
  for (const Candidate &c : candidates) {
    Packing packing = placeGreedily(p, overlaps, c.order(), c.bestGap);
    if (packing.peak < best.peak) {
      best = std::move(packing);
      best.method = c.name;
    }
    if (best.peak <= goodEnough)
      break;
  }
  return best;
}

/// Exact search for a packing of peak <= capacity, in the style of the
/// canonical-solution solvers: the state is a skyline (per section, the
/// height below which nothing unplaced lies). At the lowest section that
/// still has unplaced buffers, either an unplaced buffer whose sections are
/// all at that height goes there, or nothing does and the section rises to
/// the next height a buffer could start at. Every packing is reachable this
/// way (take any packing with every buffer dropped as low as it goes).
/// Prunes when a section's height plus its unplaced units exceeds the
/// capacity, and remembers the states that failed.
class SkylineSearch {
public:
  SkylineSearch(const Part &p, int64_t nodeLimit,
                std::chrono::steady_clock::time_point deadline,
                bool hasDeadline)
      : p_(p), nodeLimit_(nodeLimit), deadline_(deadline),
        hasDeadline_(hasDeadline), bySection_(p.sections),
        byBegin_(p.sections), startsInRun_(p.sections + 1, 0),
        minSize_(*std::min_element(p.size.begin(), p.size.end())) {
    for (size_t i = 0; i < p.size.size(); ++i) {
      byBegin_[p.begin[i]].push_back(int32_t(i));
      for (int32_t s = p.begin[i]; s <= p.end[i]; ++s)
        bySection_[s].push_back(int32_t(i));
    }
    // Larger buffers first: they are the hardest to fit later.
    for (std::vector<int32_t> &list : bySection_)
      std::stable_sort(list.begin(), list.end(), [&](int32_t a, int32_t b) {
        return p.size[a] > p.size[b];
      });
    uint64_t state = 0x9E3779B97F4A7C15ull;
    zobrist_.resize(p.size.size());
    for (uint64_t &z : zobrist_)
      z = state = mix(state + 0x9E3779B97F4A7C15ull);
  }

  enum class Outcome { Found, Infeasible, OutOfNodes };

  /// Looks for a packing with peak <= capacity, visiting at most `nodes`.
  Outcome run(int64_t capacity, int64_t nodes, Packing *found) {
    capacity_ = capacity;
    failed_.clear();
    const int64_t limit = std::min(nodeLimit_, nodes_ + nodes);
    // Restarts with growing node limits and reshuffled ties undo a bad
    // early choice that a single depth-first pass would never revisit; the
    // states proved to fail are kept across restarts.
    for (restart_ = 0;; ++restart_) {
      runLimit_ = std::min(limit, nodes_ + (int64_t(256) << std::min(restart_, 40)));
      if (descendFromScratch())
        break;
      if (!outOfNodes_)
        return Outcome::Infeasible;
      if (nodes_ >= limit)
        return Outcome::OutOfNodes;
    }
    found->offset = offset_;
    found->peak = 0;
    for (size_t i = 0; i < offset_.size(); ++i)
      found->peak = std::max(found->peak, offset_[i] + p_.size[i]);
    found->method = "search";
    return Outcome::Found;
  }

  int64_t nodes() const { return nodes_; }
  int64_t nodesLeft() const { return std::max<int64_t>(0, nodeLimit_ - nodes_); }

private:
  bool descendFromScratch() {
    height_.assign(p_.sections, 0);
    unplacedUnits_.assign(p_.sections, 0);
    crossingUnits_.assign(p_.sections, 0);
    for (size_t i = 0; i < p_.size.size(); ++i)
      for (int32_t s = p_.begin[i]; s <= p_.end[i]; ++s) {
        unplacedUnits_[s] += p_.size[i];
        crossingUnits_[s] += s < p_.end[i] ? p_.size[i] : 0;
      }
    offset_.assign(p_.size.size(), -1);
    savedHeights_.clear();
    placedHash_ = 0;
    placedCount_ = 0;
    outOfNodes_ = false;
    return descend();
  }

  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }

  bool outOfBudget() {
    if (++nodes_ > runLimit_)
      outOfNodes_ = true;
    else if (hasDeadline_ && (nodes_ & 1023) == 0 &&
             std::chrono::steady_clock::now() > deadline_)
      outOfNodes_ = true;
    return outOfNodes_;
  }

  /// The skyline of the sections that still matter, with the placed set.
  uint64_t stateKey() const {
    uint64_t key = placedHash_;
    for (int32_t s = 0; s < p_.sections; ++s)
      if (unplacedUnits_[s] > 0)
        key = mix(key ^ (uint64_t(height_[s]) * 0x100000001B3ull + uint64_t(s)));
    return key;
  }

  bool descend() {
    if (placedCount_ == p_.size.size())
      return true;
    if (outOfBudget())
      return false;
    int64_t level = std::numeric_limits<int64_t>::max();
    for (int32_t s = 0; s < p_.sections; ++s) {
      if (unplacedUnits_[s] == 0)
        continue;
      if (height_[s] + unplacedUnits_[s] > capacity_)
        return false;
      // What crosses into the next section lies above both heights.
      if (s + 1 < p_.sections &&
          std::max(height_[s], height_[s + 1]) + crossingUnits_[s] > capacity_)
        return false;
      level = std::min(level, height_[s]);
    }
    const uint64_t key = stateKey();
    if (failed_.count(key))
      return false;
    // Any section at the lowest height will do; take the one with the
    // fewest buffers that could start there (fail first). Such a buffer
    // lies inside the run of sections at that height around it.
    int32_t chosen = -1, runBegin = 0, runEnd = 0;
    int64_t fewest = std::numeric_limits<int64_t>::max();
    for (int32_t a = 0; a < p_.sections && fewest > 0;) {
      if (unplacedUnits_[a] == 0 || height_[a] != level) {
        ++a;
        continue;
      }
      int32_t z = a;
      while (z + 1 < p_.sections && unplacedUnits_[z + 1] > 0 &&
             height_[z + 1] == level)
        ++z;
      std::fill(startsInRun_.begin() + a, startsInRun_.begin() + z + 2, 0);
      for (int32_t s = a; s <= z; ++s)
        for (int32_t b : byBegin_[s])
          if (offset_[b] < 0 && p_.end[b] <= z) {
            ++startsInRun_[s];
            --startsInRun_[p_.end[b] + 1];
          }
      int64_t count = 0;
      for (int32_t s = a; s <= z; ++s) {
        count += startsInRun_[s];
        if (count < fewest) {
          fewest = count;
          chosen = s;
          runBegin = a;
          runEnd = z;
        }
      }
      a = z + 1;
    }
    // The least height above `level` at which another buffer of the chosen
    // section could start.
    int64_t nextLevel = std::numeric_limits<int64_t>::max();
    std::vector<int32_t> candidates;
    for (int32_t b : bySection_[chosen]) {
      if (offset_[b] >= 0)
        continue;
      if (p_.begin[b] >= runBegin && p_.end[b] <= runEnd) {
        candidates.push_back(b);
        continue;
      }
      int64_t natural = 0;
      for (int32_t s = p_.begin[b]; s <= p_.end[b]; ++s)
        natural = std::max(natural, height_[s]);
      nextLevel = std::min(nextLevel, natural);
    }
    // Buffers that end where the run ends keep the skyline flat; after
    // the first pass, ties go by a hash that changes with each restart.
    auto rank = [&](int32_t b) {
      const uint64_t flat = (p_.begin[b] == runBegin) + (p_.end[b] == runEnd);
      return restart_ == 0 ? flat << 62
                           : mix(zobrist_[b] + uint64_t(restart_));
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](int32_t x, int32_t y) { return rank(x) > rank(y); });
    for (int32_t b : candidates) {
      place(b, level);
      if (descend())
        return true;
      unplace(b);
      if (outOfNodes_)
        return false;
    }
    // Nothing starts at `level` in the chosen section. In a packing dropped
    // as low as it goes, the next buffer there starts at its natural
    // height, or, if that is `level`, on top of an unplaced buffer, which
    // lies at `level` or higher.
    const int64_t raised =
        candidates.empty() ? nextLevel : std::min(nextLevel, level + minSize_);
    height_[chosen] = raised;
    if (descend())
      return true;
    height_[chosen] = level;
    if (!outOfNodes_)
      failed_.insert(key);
    return false;
  }

  void place(int32_t b, int64_t at) {
    offset_[b] = at;
    placedHash_ ^= zobrist_[b];
    ++placedCount_;
    for (int32_t s = p_.begin[b]; s <= p_.end[b]; ++s) {
      savedHeights_.push_back(height_[s]);
      height_[s] = at + p_.size[b];
      unplacedUnits_[s] -= p_.size[b];
      crossingUnits_[s] -= s < p_.end[b] ? p_.size[b] : 0;
    }
  }

  void unplace(int32_t b) {
    for (int32_t s = p_.end[b]; s >= p_.begin[b]; --s) {
      height_[s] = savedHeights_.back();
      savedHeights_.pop_back();
      unplacedUnits_[s] += p_.size[b];
      crossingUnits_[s] += s < p_.end[b] ? p_.size[b] : 0;
    }
    offset_[b] = -1;
    placedHash_ ^= zobrist_[b];
    --placedCount_;
  }

  const Part &p_;
  const int64_t nodeLimit_;
  const std::chrono::steady_clock::time_point deadline_;
  const bool hasDeadline_;
  std::vector<std::vector<int32_t>> bySection_, byBegin_;
  std::vector<int64_t> startsInRun_; // scratch: difference array
  const int64_t minSize_;
  std::vector<uint64_t> zobrist_;
  int64_t capacity_ = 0;
  int64_t runLimit_ = 0;
  int restart_ = 0;
  std::vector<int64_t> height_, unplacedUnits_, offset_;
  /// Per section: unplaced units alive in it and in the next one.
  std::vector<int64_t> crossingUnits_;
  std::vector<int64_t> savedHeights_; // under each placed buffer, in order
  uint64_t placedHash_ = 0;
  size_t placedCount_ = 0;
  std::unordered_set<uint64_t> failed_;
  int64_t nodes_ = 0;
  bool outOfNodes_ = false;
};

} // namespace

Status packBuffers(const std::vector<PackBuffer> &buffers,
                   const PackOptions &options, PackResult *result,
                   const std::vector<int64_t> *initial) {
  std::vector<int64_t> units;
  if (Status st = toUnits(buffers, options.alignment, &units); !st)
    return st;
  if (initial)
    if (Status st = checkPacking(buffers, *initial, options.alignment); !st)
      return Status::error("invalid initial packing: " + st.message());
  const size_t n = buffers.size();
  *result = PackResult();
  result->offsets.assign(n, 0);
  result->method = "empty";
  result->provedOptimal = true;

  // Sections: the distinct first instructions of the buffers that occupy
  // memory (zero-unit buffers stay at offset 0 and overlap nothing).
  std::vector<int64_t> firsts;
  for (size_t i = 0; i < n; ++i)
    if (units[i] > 0)
      firsts.push_back(buffers[i].first);
  std::sort(firsts.begin(), firsts.end());
  firsts.erase(std::unique(firsts.begin(), firsts.end()), firsts.end());
  const int32_t sections = int32_t(firsts.size());
  std::vector<int32_t> begin(n), end(n);
  std::vector<int64_t> crossing(sections + 1, 0), live(sections + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    if (units[i] == 0)
      continue;
    begin[i] = int32_t(std::lower_bound(firsts.begin(), firsts.end(),
                                        buffers[i].first) -
                       firsts.begin());
    end[i] = int32_t(std::upper_bound(firsts.begin(), firsts.end(),
                                      buffers[i].last) -
                     firsts.begin()) -
             1;
    live[begin[i]] += units[i];
    live[end[i] + 1] -= units[i];
    ++crossing[begin[i]];
    --crossing[end[i]];
  }
  int64_t liveNow = 0, lowerBound = 0;
  for (int32_t s = 0; s < sections; ++s)
    lowerBound = std::max(lowerBound, liveNow += live[s]);
  result->lowerBound = lowerBound * options.alignment;
  const int64_t target = std::max<int64_t>(0, options.targetPeak) / options.alignment;

  // Parts: maximal section ranges that no buffer leaves.
  std::vector<int32_t> partOf(sections, 0);
  std::vector<int32_t> partStart = {0};
  int64_t crossingNow = 0;
  for (int32_t s = 0; s + 1 < sections; ++s) {
    crossingNow += crossing[s];
    partOf[s + 1] = partOf[s] + (crossingNow == 0);
    if (crossingNow == 0)
      partStart.push_back(s + 1);
  }
  std::vector<Part> parts(partStart.size());
  for (size_t k = 0; k < parts.size(); ++k)
    parts[k].sections =
        (k + 1 < partStart.size() ? partStart[k + 1] : sections) - partStart[k];
  std::vector<int64_t> base(parts.size(), 0);
  // Per part, the buffers alive throughout, bottom up by size.
  std::vector<std::vector<int32_t>> throughout(parts.size());
  for (size_t i = 0; i < n; ++i) {
    if (units[i] == 0)
      continue;
    const int32_t k = partOf[begin[i]];
    Part &part = parts[k];
    const int32_t b = begin[i] - partStart[k], e = end[i] - partStart[k];
    if (b == 0 && e == part.sections - 1) {
      throughout[k].push_back(int32_t(i));
      continue;
    }
    part.ids.push_back(int32_t(i));
    part.begin.push_back(b);
    part.end.push_back(e);
    part.size.push_back(units[i]);
  }

  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(options.searchTimeLimitSeconds));
  int64_t peak = 0;
  bool peakProved = true;
  std::string method = "empty";
  for (size_t k = 0; k < parts.size(); ++k) {
    std::stable_sort(throughout[k].begin(), throughout[k].end(),
                     [&](int32_t a, int32_t b) { return units[a] > units[b]; });
    for (int32_t i : throughout[k]) {
      result->offsets[i] = base[k];
      base[k] += units[i];
    }
    const Part &part = parts[k];
    Packing best;
    best.method = "stacked";
    bool proved = true;
    if (!part.ids.empty()) {
      const Contention contention(part);
      const bool large = part.ids.size() > size_t(options.searchMaxBuffers);
      // Nothing needs to beat the lower bound of the whole set: every
      // capacity below `known` is infeasible or not worth proving. Nor
      // the target, when it is higher.
      int64_t known = lowerBound - base[k];
      const int64_t goodEnough = std::max(known, target - base[k]);
      best = packByGreedyOrders(part, contention, initial, large,
                                options.initialOrderOnly, goodEnough);
      const bool targetReachable = target == 0 || lowerBound <= target;
      if (best.peak > goodEnough && targetReachable &&
          options.searchNodeLimit > 0 && !large && !options.initialOrderOnly) {
        SkylineSearch search(part, options.searchNodeLimit - result->searchNodes,
                             deadline, options.searchTimeLimitSeconds > 0);
        // Aim at what is good enough first, then bisect between the least
        // capacity not given up on and the best found. A capacity that
        // runs out of nodes is given up: search above it, without a proof.
        int64_t tried = goodEnough;
        for (bool first = true; best.peak > goodEnough && tried < best.peak &&
                                search.nodesLeft() > 0;
             first = false) {
          const int64_t capacity =
              first ? tried : tried + (best.peak - 1 - tried) / 2;
          Packing found;
          switch (search.run(capacity, search.nodesLeft() / 3 + 1, &found)) {
          case SkylineSearch::Outcome::Found:
            best = std::move(found);
            break;
          case SkylineSearch::Outcome::Infeasible:
            // No capacity below this one can be feasible either.
            known = std::max(known, capacity + 1);
            tried = capacity + 1;
            break;
          case SkylineSearch::Outcome::OutOfNodes:
            tried = capacity + 1;
            break;
          }
        }
        result->searchNodes += search.nodes();
      }
      proved = known >= best.peak;
    }
    for (size_t j = 0; j < part.ids.size(); ++j)
      result->offsets[part.ids[j]] = base[k] + best.offset[j];
    const int64_t partPeak = base[k] + best.peak;
    if (partPeak > peak || (partPeak == peak && !proved)) {
      peak = partPeak;
      peakProved = proved;
      method = best.method;
    }
  }
  for (size_t i = 0; i < n; ++i)
    result->offsets[i] *= options.alignment;
  result->peak = peak * options.alignment;
  result->provedOptimal = peakProved || peak == lowerBound;
  result->method = method;

  // The online allocator's packing is one more candidate: never worse.
  PackResult online;
  if (Status st = packBestFitOnline(buffers, options.alignment, &online); !st)
    return st;
  if (online.peak < result->peak) {
    result->offsets = std::move(online.offsets);
    result->peak = online.peak;
    result->provedOptimal = online.peak == result->lowerBound;
    result->method = online.method;
  }
  return Status::ok();
}

Status packBestFitOnline(const std::vector<PackBuffer> &buffers,
                         int64_t alignment, PackResult *result) {
  std::vector<int64_t> units;
  if (Status st = toUnits(buffers, alignment, &units); !st)
    return st;
  const size_t n = buffers.size();
  *result = PackResult();
  result->offsets.assign(n, 0);
  result->method = "online-best-fit";
  const std::vector<int32_t> byFirst = orderedBy(buffers, &PackBuffer::first);
  const std::vector<int32_t> byLast = orderedBy(buffers, &PackBuffer::last);
  // Free gaps below `top` (the arena grows on demand above it).
  std::map<int64_t, int64_t> gaps;                // offset -> size
  std::set<std::pair<int64_t, int64_t>> bySize;   // (size, offset)
  int64_t top = 0, peak = 0, liveUnits = 0, lowerBound = 0;
  auto addGap = [&](int64_t offset, int64_t size) {
    auto next = gaps.lower_bound(offset);
    if (next != gaps.end() && next->first == offset + size) {
      size += next->second;
      bySize.erase({next->second, next->first});
      next = gaps.erase(next);
    }
    if (next != gaps.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        bySize.erase({prev->second, prev->first});
        gaps.erase(prev);
      }
    }
    if (offset + size == top) {
      top = offset; // the arena shrinks back: the top is free anyway
      return;
    }
    gaps[offset] = size;
    bySize.insert({size, offset});
  };
  size_t released = 0;
  for (int32_t i : byFirst) {
    while (released < n && buffers[byLast[released]].last < buffers[i].first) {
      const int32_t r = byLast[released++];
      if (units[r] > 0) {
        addGap(result->offsets[r] / alignment, units[r]);
        liveUnits -= units[r];
      }
    }
    if (units[i] == 0)
      continue;
    auto fit = bySize.lower_bound({units[i], std::numeric_limits<int64_t>::min()});
    int64_t at;
    if (fit != bySize.end()) {
      auto [size, offset] = *fit;
      bySize.erase(fit);
      gaps.erase(offset);
      at = offset;
      if (size > units[i]) {
        gaps[offset + units[i]] = size - units[i];
        bySize.insert({size - units[i], offset + units[i]});
      }
    } else {
      // Extend the arena (a free gap never reaches its top: see addGap).
      at = top;
      top += units[i];
    }
    result->offsets[i] = at * alignment;
    peak = std::max(peak, at + units[i]);
    lowerBound = std::max(lowerBound, liveUnits += units[i]);
  }
  result->peak = peak * alignment;
  result->lowerBound = lowerBound * alignment;
  result->provedOptimal = peak == lowerBound;
  return Status::ok();
}

Status checkPacking(const std::vector<PackBuffer> &buffers,
                    const std::vector<int64_t> &offsets, int64_t alignment) {
  std::vector<int64_t> units;
  if (Status st = toUnits(buffers, alignment, &units); !st)
    return st;
  const size_t n = buffers.size();
  if (offsets.size() != n)
    return Status::error("the packing has " + std::to_string(offsets.size()) +
                         " offsets for " + std::to_string(n) + " buffers");
  for (size_t i = 0; i < n; ++i)
    if (offsets[i] < 0 || offsets[i] % alignment != 0 ||
        offsets[i] / alignment >
            std::numeric_limits<int64_t>::max() / alignment - units[i])
      return Status::error(describeBuffer(buffers, i) + " has offset " +
                           std::to_string(offsets[i]) +
                           ", which is negative, unaligned or out of range");
  const std::vector<int32_t> byFirst = orderedBy(buffers, &PackBuffer::first);
  const std::vector<int32_t> byLast = orderedBy(buffers, &PackBuffer::last);
  // Alive buffers by offset; they are disjoint, so each new one needs only
  // its neighbours checked.
  std::map<int64_t, int32_t> alive;
  size_t released = 0;
  for (int32_t i : byFirst) {
    while (released < n && buffers[byLast[released]].last < buffers[i].first) {
      const int32_t r = byLast[released++];
      auto it = alive.find(offsets[r]);
      if (it != alive.end() && it->second == r)
        alive.erase(it);
    }
    if (units[i] == 0)
      continue;
    const int64_t lo = offsets[i], hi = offsets[i] + units[i] * alignment;
    auto clash = [&](int32_t other) {
      return Status::error(describeBuffer(buffers, i) + " at [" +
                           std::to_string(lo) + ", " + std::to_string(hi) +
                           ") overlaps " + describeBuffer(buffers, other) +
                           " at [" + std::to_string(offsets[other]) + ", " +
                           std::to_string(offsets[other] +
                                          units[other] * alignment) +
                           ")");
    };
    auto next = alive.lower_bound(lo);
    if (next != alive.end() && next->first < hi)
      return clash(next->second);
    if (next != alive.begin()) {
      const int32_t prev = std::prev(next)->second;
      if (offsets[prev] + units[prev] * alignment > lo)
        return clash(prev);
    }
    alive[lo] = i;
  }
  return Status::ok();
}

} // namespace coop::planner
