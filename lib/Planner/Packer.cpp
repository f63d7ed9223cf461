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
// lower bound (see `CanonicalSearch`).
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/Packer.h"

#include "PackRepair.h"
#include "PlacedByOffset.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>

namespace coop::planner {
namespace {

/// Beyond this many pairs of buffers that overlap in time (16 bytes each
/// when listed), a part is packed without listing them.
constexpr int64_t kMaxListedOverlaps = 20'000'000;

/// Nodes per buffer that each attempt of the exact search may visit, and
/// in a part full nearly everywhere (see kFullShare), where each dive is
/// better and more restarts pay: with the galloping descent, on 40
/// perfect sets of 200 / 500 buffers 1.0259 / 1.0340 of the lower bound
/// against 1.0269 / 1.0363 with 3, and MiniMalloc's instance D reaches
/// its bound (1.0114 with 3; bench/packing/results.md). In every part, 2
/// or 3 lost packings of random and mixed sets.
constexpr int64_t kNodesPerBuffer = 4;
constexpr int64_t kNodesPerBufferWhenFull = 2;

/// Each capacity the bisection probes gets this share of the nodes left,
/// and in a part full nearly everywhere the smaller one: there the bound is
/// seldom reached past a hundred buffers and a probe that runs out of nodes
/// finds nothing, so the nodes go to the capacities above it (on perfect
/// sets of 200 / 500 buffers, 60 seeds, 1.0411 / 1.0573 of the lower bound
/// against 1.0461 / 1.0588 with a third).
constexpr int64_t kProbeShare = 3;
constexpr int64_t kProbeShareWhenFull = 8;

/// Every other restart of the exact search ranks buffers by space-time area
/// times a random factor in [1, 1 + kRestartNoise].
constexpr double kRestartNoise = 2.0;

/// Restarts near the incumbent come in two kinds. One keeps its buffers
/// whose top is at most a level drawn in [kKeptShareLeast, kKeptShareMost)
/// of its peak and searches the rest again above them (keepIncumbentBelow;
/// other ranges, [0.3, 0.8) to [0.6, 0.95), were within 0.2 % of the lower
/// bound of it on perfect sets, bench/packing/results.md). The other
/// rebuilds it but in a window of up to kNearIncumbentWindow sections
/// either side of a buffer at its peak, where each buffer's offset is
/// lifted by a random share of up to kNearIncumbentNoise of the peak
/// before the offsets break ties (rankNearIncumbent).
constexpr double kKeptShareLeast = 0.1;
constexpr double kKeptShareMost = 0.6;
constexpr int32_t kNearIncumbentWindow = 8;
constexpr double kNearIncumbentNoise = 0.3;

/// A part whose sections hold on average at least this share of its most
/// live units is full nearly everywhere: there the exact search branches
/// on the most constrained cell (startByCells).
constexpr double kFullShare = 0.9;

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
/// overlaps in time. Those buffers are needed in order of offset: listed
/// by `overlaps` and sorted per placement, or, without a list (a part where
/// most buffers overlap most others in time, such as a recurrent step with
/// thousands of neighbours each), filtered out of every placed buffer kept
/// in order of offset, which costs neither the list nor a sort. Both see
/// the same buffers, so the packing is the same. Adds the buffers it looks
/// at to `steps`.
Packing placeGreedily(const Part &p, const Overlaps *overlaps,
                      const std::vector<int32_t> &order, bool bestGap,
                      int64_t &steps) {
  const size_t n = p.size.size();
  Packing result;
  result.offset.assign(n, -1);
  std::vector<std::pair<int64_t, int64_t>> busy; // [offset, end) placed
  PlacedByOffset placed;                          // without a list
  for (int32_t b : order) {
    int64_t chosen = -1, chosenGap = std::numeric_limits<int64_t>::max();
    int64_t cursor = 0;
    // The next placed buffer alive with b, in order of offset; true once
    // the lowest fitting gap is found.
    auto clear = [&](int64_t lo, int64_t hi) {
      if (lo - cursor >= p.size[b]) {
        const int64_t gap = lo - cursor;
        if (!bestGap) {
          chosen = cursor;
          return true;
        }
        if (gap < chosenGap) {
          chosen = cursor;
          chosenGap = gap;
        }
      }
      cursor = std::max(cursor, hi);
      return false;
    };
    if (!overlaps) {
      placed.visitInOrder([&](const PlacedByOffset::Record &r) {
        ++steps;
        return r.begin <= p.end[b] && p.begin[b] <= r.end &&
               clear(r.offset, r.top);
      });
    } else {
      busy.clear();
      steps += overlaps->start[b + 1] - overlaps->start[b];
      for (int64_t k = overlaps->start[b]; k < overlaps->start[b + 1]; ++k) {
        const int32_t o = overlaps->other[k];
        if (result.offset[o] >= 0)
          busy.push_back({result.offset[o], result.offset[o] + p.size[o]});
      }
      std::sort(busy.begin(), busy.end());
      for (size_t half = busy.size(); half > 1; half /= 2) // the sort's
        steps += int64_t(busy.size());
      for (auto [lo, hi] : busy)
        if (clear(lo, hi))
          break;
    }
    if (chosen < 0)
      chosen = cursor;
    result.offset[b] = chosen;
    result.peak = std::max(result.peak, chosen + p.size[b]);
    if (!overlaps)
      placed.insert({chosen, chosen + p.size[b], p.begin[b], p.end[b], b});
  }
  return result;
}

/// Over any range of sections, the most unplaced units and the most floor
/// plus unplaced units (of the sections with some): a tree of maxima, each
/// query in time logarithmic in the sections, bringing a range of them up
/// to date in time linear in its length.
class SectionMaxima {
public:
  struct Maxima {
    int64_t units, floorUnits;
  };

  void assign(size_t sections) {
    leaves_ = 1;
    while (leaves_ < sections)
      leaves_ *= 2;
    tree_.assign(2 * leaves_, {std::numeric_limits<int64_t>::min(),
                               std::numeric_limits<int64_t>::min()});
  }
  /// Sets one section's values; refresh() over it before the next query.
  void set(size_t s, int64_t units, int64_t floor) {
    tree_[leaves_ + s] = {units, units != 0
                                     ? floor + units
                                     : std::numeric_limits<int64_t>::min()};
  }
  /// Brings the maxima over sections [from, to] up to date.
  void refresh(size_t from, size_t to) {
    for (size_t l = (leaves_ + from) / 2, r = (leaves_ + to) / 2; l > 0;
         l /= 2, r /= 2)
      for (size_t i = l; i <= r; ++i)
        tree_[i] = combine(tree_[2 * i], tree_[2 * i + 1]);
  }
  /// The maxima over sections [from, to] (from <= to).
  Maxima over(size_t from, size_t to) const {
    Maxima most = {std::numeric_limits<int64_t>::min(),
                   std::numeric_limits<int64_t>::min()};
    for (size_t l = leaves_ + from, r = leaves_ + to + 1; l < r;
         l /= 2, r /= 2) {
      if (l & 1)
        most = combine(most, tree_[l++]);
      if (r & 1)
        most = combine(most, tree_[--r]);
    }
    return most;
  }

private:
  static Maxima combine(const Maxima &a, const Maxima &b) {
    return {std::max(a.units, b.units), std::max(a.floorUnits, b.floorUnits)};
  }
  size_t leaves_ = 1;
  std::vector<Maxima> tree_;
};

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
/// initial order, the first three, greedy by size in order of time and by
/// lifetime only, and a part whose overlapping pairs are too many to list (each
/// order costs time linear in them) is dropped onto its skyline in the
/// initial order, or by size. Stops at the first packing whose peak is at
/// most `goodEnough`; the initial order dropped onto its skyline, which
/// needs no list of overlaps, goes first. Adds the buffers the placements
/// look at, and the overlapping pairs listed for them, to `steps`.
Packing packByGreedyOrders(const Part &p, const Contention &contention,
                           const std::vector<int64_t> *initial, bool large,
                           bool initialOrderOnly, int64_t goodEnough,
                           int64_t &steps) {
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
  const int64_t pairs = countOverlaps(p);
  if (pairs > kMaxListedOverlaps) {
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
      // TFLite's greedy by size (equal sizes longer first).
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
  // A large part gets no exact search, whose restarts break ties anew, so
  // greedy by size again, equal sizes in order of time: a buffer takes
  // over the slot one of its size left before it (a network's repeated
  // shapes), where longer first scatters them (Inception V3 near its
  // floor: 2.113 GB, in order of time 2.007 GB, live 1.984 GB).
  if (large)
    candidates.insert(candidates.begin() + 1,
                      {"greedy-by-size-in-time",
                       [&] {
                         return sorted([&](int32_t a, int32_t b) {
                           if (p.size[a] != p.size[b])
                             return p.size[a] > p.size[b];
                           if (p.begin[a] != p.begin[b])
                             return p.begin[a] < p.begin[b];
                           return length(a) > length(b);
                         });
                       },
                       false});
  // Dropping an initial packing's buffers in order of offset moves each one
  // no higher: the buffers below it in time moved no higher either. First,
  // so that ties keep the initial layout.
  if (initial)
    candidates.insert(candidates.begin(),
                      {"compacted-initial", [&] { return initialOrder; }, false});
  if (initial && initialOrderOnly)
    candidates.resize(1);
  else if (large) // without best gap by size and contention
    // By lifetime stays: long-lived buffers low, where a few of hundreds
    // of MB alive over most of a step set the peak (DenseNet-121's plans
    // at 0.13 of its arena: 1.0174 of the live bytes, the others 1.0477).
    candidates.erase(candidates.end() - 3, candidates.end() - 1);
  // Listing the overlaps pays where each buffer has few of them.
  std::optional<Overlaps> overlaps;
  if (pairs / int64_t(n) < int64_t(n) / 16) {
    overlaps.emplace(p);
    steps += pairs;
  }
  Packing best;
  best.peak = std::numeric_limits<int64_t>::max();
  for (const Candidate &c : candidates) {
    Packing packing = placeGreedily(p, overlaps ? &*overlaps : nullptr,
                                    c.order(), c.bestGap, steps);
    if (packing.peak < best.peak) {
      best = std::move(packing);
      best.method = c.name;
    }
    if (best.peak <= goodEnough)
      break;
  }
  return best;
}

/// Exact search for a packing of peak <= capacity over canonical solutions,
/// after MiniMalloc (Moffitt, ASPLOS 2023). Buffers are placed in order of
/// offset, then of first section, each at its floor: the lowest offset that
/// clears every placed buffer alive with it. Every packing with each buffer
/// dropped as low as it goes is reached this way, so the search is
/// complete. A node places one buffer; it prunes
/// - by section inference: in a section, the unplaced buffers lie at or
///   above the least of their floors, and above the last placement if
///   that is higher (or as high and beginning later: the order has passed
///   them), so that plus their total size must fit the capacity; and, where
///   a placement raised floors, the same at higher levels (levelsOverflow);
/// - by dominance: a buffer whose floor is at or above the top another
///   unplaced buffer would have at its own floor is not placed next (that
///   one fits entirely below it, and would be placed first);
/// - by remembering the states (placed set and floors) that failed;
/// and splits the search where no unplaced buffer crosses a section
/// boundary any more: the two sides are then independent. A node is a
/// descent or a placement the inference rejects. In a part full nearly
/// everywhere, it branches instead on the most constrained cell of the
/// least floor (startByCells), where every buffer there covers or a hole
/// is left.
class CanonicalSearch {
public:
  CanonicalSearch(const Part &p, const Contention &contention,
                  int64_t nodeLimit,
                  std::chrono::steady_clock::time_point deadline,
                  bool hasDeadline)
      : p_(p), overlaps_(p), nodeLimit_(nodeLimit), deadline_(deadline),
        hasDeadline_(hasDeadline), nearlyFull_(nearlyFull(contention)) {
    const size_t n = p.size.size();
    firstSlot_.resize(n + 1, 0);
    for (size_t i = 0; i < n; ++i)
      firstSlot_[i + 1] = firstSlot_[i] + (p.end[i] - p.begin[i] + 1);
    // The first attempt breaks ties by contention, as TelaMalloc orders
    // its placements: the most contended first, then the longest, then
    // the largest.
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int32_t b) {
      return std::make_tuple(contention.maxLive[b], p.end[b] - p.begin[b],
                             p.size[b]);
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return key(a) > key(b); });
    unplacedAtDepth_.resize(n + 1);
    candidatesAtDepth_.resize(n + 1);
    limitsAtDepth_.resize(n + 1);
    contentionRank_.resize(n);
    for (size_t r = 0; r < n; ++r)
      contentionRank_[order[r]] = int32_t(r);
    rank_ = contentionRank_; // sized for a run that starts near an incumbent
    uint64_t state = 0x9E3779B97F4A7C15ull;
    zobrist_.resize(n);
    for (uint64_t &z : zobrist_)
      z = state = mix(state + 0x9E3779B97F4A7C15ull);
  }

  enum class Outcome { Found, Infeasible, OutOfNodes };

  /// Looks for a packing with peak <= capacity, visiting at most `nodes`.
  /// Restarts, each with a few nodes per buffer and ties broken anew
  /// (every other one by noisy area, the rest uniformly at random), undo
  /// a bad early choice that one depth-first pass would never revisit.
  /// What failed does not depend on the order in which it was explored,
  /// so the failed states are kept across restarts. With `newOrders`, the
  /// attempts go on from where the earlier runs left off (no run's orders
  /// are tried twice), else they start afresh. With an `incumbent` (the
  /// best packing so far, above the capacity), the uniformly
  /// random restarts give way to restarts near it, of the kind that found
  /// more packings so far more often (as adaptive large-neighbourhood
  /// searches choose their moves): keeping its bottom pays on large sets,
  /// rebuilding it but for a window on small ones (perfect sets of 500 /
  /// 100 buffers, bench/packing/results.md).
  Outcome run(int64_t capacity, int64_t nodes, Packing *found,
              bool newOrders = false, const Packing *incumbent = nullptr) {
    capacity_ = capacity;
    failed_.clear();
    const int64_t limit = std::min(nodeLimit_, nodes_ + nodes);
    const int64_t perAttempt =
        (nearlyFull_ ? kNodesPerBufferWhenFull : kNodesPerBuffer) *
        int64_t(p_.size.size());
    for (uint64_t attempt = newOrders ? attempts_ : 0;; ++attempt) {
      attempts_ = std::max(attempts_, attempt + 1);
      kept_.clear();
      failedKeeping_.clear();
      windowAttempt_ = false;
      if (incumbent && attempt % 2 == 0) {
        // Each kind drawn with odds of its packings found + 1.
        const uint64_t odds = keepWins_ + windowWins_ + 2;
        if (mix(attempt * 0x51ED27ull + 11) % odds < keepWins_ + 1) {
          keepIncumbentBelow(*incumbent, attempt);
          rankByNoisyArea(attempt);
        } else {
          windowAttempt_ = true;
          rankNearIncumbent(*incumbent, attempt);
        }
      } else if (attempt == 0) {
        rank_ = contentionRank_;
      } else if (attempt % 2 == 1) {
        rankByNoisyArea(attempt);
      } else {
        for (size_t b = 0; b < rank_.size(); ++b)
          rank_[b] = int32_t(mix(zobrist_[b] + attempt) >> 33);
      }
      runLimit_ = std::min(limit, nodes_ + perAttempt);
      if (searchFromScratch()) {
        found->offset = offset_;
        found->peak = 0;
        for (size_t i = 0; i < offset_.size(); ++i)
          found->peak = std::max(found->peak, offset_[i] + p_.size[i]);
        found->method = "search";
        keepWins_ += !kept_.empty();
        windowWins_ += windowAttempt_;
        return Outcome::Found;
      }
      // Exhausted with buffers kept in place proves nothing.
      if (!outOfNodes_ && kept_.empty())
        return Outcome::Infeasible;
      if (nodes_ >= limit)
        return Outcome::OutOfNodes;
    }
  }

  int64_t nodes() const { return nodes_; }
  int64_t nodesLeft() const { return std::max<int64_t>(0, nodeLimit_ - nodes_); }
  /// The nodes one capacity of the bisection may visit.
  int64_t probeNodes() const {
    return nodesLeft() / (nearlyFull_ ? kProbeShareWhenFull : kProbeShare) + 1;
  }

private:
  /// A buffer the search may place next, at its floor.
  struct Candidate {
    int64_t floor;
    int32_t rank, buffer;
  };

  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  /// Buffer `b`'s random draw in [0, 1) for restart `attempt`.
  double restartDraw(size_t b, uint64_t attempt) const {
    return double(mix(zobrist_[b] + attempt) >> 11) * 0x1.0p-53;
  }
  /// Ranks the buffers in the order of their keys (`keyed`: key, buffer)
  /// under `before`.
  template <typename Before>
  void rankByKeys(std::vector<std::pair<double, int32_t>> &keyed,
                  Before before) {
    std::sort(keyed.begin(), keyed.end(), before);
    for (size_t r = 0; r < keyed.size(); ++r)
      rank_[keyed[r].second] = int32_t(r);
  }

  /// Ties broken for a restart by larger space-time area first, each area
  /// scaled by its own random factor: large buffers placed early leave the
  /// small ones to fill what is left, as in the greedy orders, and the
  /// noise gives every such restart another order. On perfect sets of
  /// 200-500 buffers this gains 1.5-2 % of the lower bound over restarts
  /// that all break ties uniformly at random; those still find some
  /// packings of random and mixed sets that these miss, so the two
  /// alternate (bench/packing/results.md).
  void rankByNoisyArea(uint64_t attempt) {
    std::vector<std::pair<double, int32_t>> keyed(rank_.size());
    for (size_t b = 0; b < rank_.size(); ++b) {
      const double area =
          double(p_.size[b]) * double(p_.end[b] - p_.begin[b] + 1);
      keyed[b] = {area * (1 + kRestartNoise * restartDraw(b, attempt)),
                  int32_t(b)};
    }
    rankByKeys(keyed, std::greater<>());
  }

  /// Ties broken for a restart by offset in the incumbent, lowest first, so
  /// that the dive (lowest floor first, then earliest section) places its
  /// buffers where the incumbent has them, except in a window of sections
  /// around a buffer at the incumbent's peak, where each offset is lifted
  /// by its own random amount: a large-neighbourhood move, ruin and
  /// recreate with the exact search rebuilding the window and what rests
  /// on it. Used below the best packing, with the nodes the
  /// bisection leaves: on perfect sets of 100 and 200 buffers it gains
  /// 0.2 % of the lower bound over uniformly random restarts there, and
  /// more sets reach it; in the bisection too it gained more on perfect
  /// sets but lost packings of mixed and random ones
  /// (bench/packing/results.md).
  void rankNearIncumbent(const Packing &incumbent, uint64_t attempt) {
    std::vector<int32_t> atPeak;
    for (size_t b = 0; b < rank_.size(); ++b)
      if (incumbent.offset[b] + p_.size[b] == incumbent.peak)
        atPeak.push_back(int32_t(b));
    const uint64_t draw = mix(attempt * 0x9E3779B97F4A7C15ull);
    const int32_t centre = atPeak[draw % atPeak.size()];
    const int32_t width = int32_t((draw >> 32) % kNearIncumbentWindow) + 1;
    const int32_t lo = p_.begin[centre] - width, hi = p_.end[centre] + width;
    std::vector<std::pair<double, int32_t>> keyed(rank_.size());
    for (size_t b = 0; b < rank_.size(); ++b) {
      double key = double(incumbent.offset[b]);
      if (p_.begin[b] <= hi && lo <= p_.end[b])
        key += restartDraw(b, attempt) * kNearIncumbentNoise *
               double(incumbent.peak);
      keyed[b] = {key, int32_t(b)};
    }
    rankByKeys(keyed, std::less<>());
  }

  /// A restart near the incumbent, ruin and recreate as large-neighbourhood
  /// searches do: the incumbent's buffers whose top is at most a level
  /// drawn in [kKeptShareLeast, kKeptShareMost) of its peak are kept
  /// (placed first, in order of offset, each at its floor: where the
  /// incumbent has it or lower), and the search places the rest above them,
  /// ties broken by noisy area. A search packs from the bottom up, so the
  /// space it wastes lies mostly high up (on perfect sets of 200 buffers
  /// nearly all of it above 0.3 of the peak): the restart keeps a tight
  /// bottom and searches again, as a smaller instance, where the incumbent
  /// wasted space. On perfect sets of 500 buffers the restarts by a window
  /// (rankNearIncumbent) found no lower packing at all (a perfect set's
  /// lifetimes are long, so a window frees most of it, and ranks rebuild
  /// the rest only approximately), these about half of those found one
  /// step below the best (bench/packing/results.md).
  void keepIncumbentBelow(const Packing &incumbent, uint64_t attempt) {
    const double draw =
        double(mix(attempt * 0x9E3779B97F4A7C15ull) >> 11) * 0x1.0p-53;
    const double share =
        kKeptShareLeast + (kKeptShareMost - kKeptShareLeast) * draw;
    const int64_t level = int64_t(share * double(incumbent.peak));
    for (size_t b = 0; b < rank_.size(); ++b)
      if (incumbent.offset[b] + p_.size[b] <= level)
        kept_.push_back(int32_t(b));
    std::sort(kept_.begin(), kept_.end(), [&](int32_t a, int32_t b) {
      return incumbent.offset[a] < incumbent.offset[b];
    });
  }

  uint64_t floorKey(int32_t b, int64_t floor) const {
    return mix(zobrist_[b] ^ uint64_t(floor));
  }

  bool searchFromScratch() {
    const size_t n = p_.size.size();
    offset_.assign(n, -1);
    floor_.assign(n, 0);
    unplacedUnits_.assign(p_.sections, 0);
    crossing_.assign(p_.sections, 0);
    unplacedIn_.assign(p_.sections, {});
    slot_.resize(firstSlot_.back());
    for (size_t i = 0; i < n; ++i)
      for (int32_t s = p_.begin[i]; s <= p_.end[i]; ++s) {
        slot_[firstSlot_[i] + s - p_.begin[i]] = int32_t(unplacedIn_[s].size());
        unplacedIn_[s].push_back(int32_t(i));
        unplacedUnits_[s] += p_.size[i];
        crossing_[s] += s < p_.end[i];
      }
    floorsIn_.resize(p_.sections);
    sectionFloor_.assign(p_.sections, std::numeric_limits<int64_t>::max());
    for (int32_t s = 0; s < p_.sections; ++s) {
      floorsIn_[s].clear();
      if (!unplacedIn_[s].empty())
        enter(s, 0, int32_t(unplacedIn_[s].size()));
    }
    maxima_.assign(p_.sections);
    refreshMaxima(0, p_.sections - 1);
    skyline_.assign(p_.sections, 0);
    skylineTrail_.clear();
    holeAt_.assign(p_.sections, -1);
    holeTrail_.clear();
    cover_.assign(p_.sections + 1, 0);
    placedHash_ = 0;
    floorHash_ = 0;
    for (size_t i = 0; i < n; ++i)
      floorHash_ ^= floorKey(int32_t(i), 0);
    placements_.clear();
    floorTrail_.clear();
    risen_.clear();
    outOfNodes_ = false;
    // A kept buffer costs a node like a placement the search makes: an
    // attempt whose kept part leaves no room fails after those.
    for (int32_t b : kept_) {
      if (outOfBudget())
        return false;
      place(b, floor_[b]);
    }
    std::vector<int32_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    return searchAll(all);
  }

  bool outOfBudget() {
    if (++nodes_ > runLimit_)
      outOfNodes_ = true;
    else if (hasDeadline_ && (nodes_ & 1023) == 0 &&
             std::chrono::steady_clock::now() > deadline_)
      outOfNodes_ = true;
    return outOfNodes_;
  }

  /// What starting or advancing a search over some sections came to: all
  /// its buffers placed, no way to place them, or a frame pushed on top of
  /// the stack that is to be advanced first.
  enum class Step { Packed, Failed, Pushed };
  /// What a frame of the search's stack branches over (see Frame).
  enum class FrameKind { Candidates, Cells, Sides };

  /// Places the unplaced buffers of `all` over every section, as
  /// startAfterCuts does. The search runs on an explicit stack of frames,
  /// not on the call stack: it is as deep as the part has buffers (up to
  /// searchMaxBuffers), which would overflow a small thread's stack.
  bool searchAll(const std::vector<int32_t> &all) {
    top_ = 0;
    Step step =
        startAfterCuts(0, p_.sections - 1, all, 0, p_.sections - 1, 0, -1);
    while (top_ > 0)
      step = step == Step::Pushed ? advance(top_ - 1)
                                  : resume(top_ - 1, step == Step::Packed);
    return step == Step::Packed;
  }

  Step advance(size_t index) {
    return frames_[index].kind == FrameKind::Sides ? advanceSides(index)
                                                   : advanceCandidates(index);
  }

  /// Frame `index` goes on from where its child came to `packed`.
  Step resume(size_t index, bool packed) {
    const Step step = packed ? Step::Packed : Step::Failed;
    Frame &f = frames_[index];
    if (f.kind == FrameKind::Sides) {
      if (std::optional<Step> done = afterSide(index, step))
        return *done;
      return advanceSides(index);
    }
    if (f.inHole)
      return packed ? pop(step) : holeFailed(index);
    // The child was started only after the inference passed.
    if (std::optional<Step> done = afterCandidate(index, step, true))
      return *done;
    return advanceCandidates(index);
  }

  size_t push(FrameKind kind, int32_t lo, int32_t hi) {
    if (top_ == frames_.size())
      frames_.emplace_back();
    Frame &f = frames_[top_];
    f.kind = kind;
    f.inHole = false;
    f.lo = lo;
    f.hi = hi;
    f.mark = placements_.size();
    f.holeMark = holeTrail_.size();
    f.next = 0;
    return top_++;
  }

  /// Pops the frame on top, which came to `step`.
  Step pop(Step step) {
    --top_;
    return step;
  }

  /// Starts placing the unplaced buffers of `buffers`, which lie in
  /// sections [lo, hi], each after (lastOffset, lastBegin) in placement
  /// order (by cells: at or above level lastOffset, clear of its holes).
  Step startDescend(int32_t lo, int32_t hi, const std::vector<int32_t> &buffers,
                    int64_t lastOffset, int32_t lastBegin) {
    // The frames on the stack have distinct placement depths, but for a
    // hole's, which no longer reads its lists: each reuses its depth's
    // lists instead of allocating its own.
    const size_t depth = placements_.size();
    std::vector<int32_t> &unplaced = unplacedAtDepth_[depth];
    std::vector<Candidate> &candidates = candidatesAtDepth_[depth];
    // Without branches on whether each buffer is placed: which ones are
    // follows no pattern the processor could predict.
    unplaced.resize(buffers.size());
    size_t count = 0;
    int64_t lowestTop = std::numeric_limits<int64_t>::max();
    for (int32_t b : buffers) {
      const bool placed = offset_[b] >= 0;
      unplaced[count] = b;
      count += !placed;
      const int64_t top = floor_[b] + p_.size[b];
      lowestTop = std::min(lowestTop,
                           placed ? std::numeric_limits<int64_t>::max() : top);
    }
    unplaced.resize(count);
    if (unplaced.empty())
      return Step::Packed;
    if (outOfBudget())
      return Step::Failed;
    if (nearlyFull_)
      return startByCells(lo, hi, unplaced, lowestTop, lastOffset);
    // A candidate at or above another buffer's top at its floor is
    // dominated; one before the last placement in order is not next.
    candidates.clear();
    for (int32_t b : unplaced)
      if (floor_[b] < lowestTop &&
          (floor_[b] > lastOffset ||
           (floor_[b] == lastOffset && p_.begin[b] > lastBegin)))
        candidates.push_back({floor_[b], rank_[b], b});
    if (candidates.empty())
      return Step::Failed;
    const uint64_t key =
        mix(placedHash_ ^ floorHash_ ^
            mix(uint64_t(lastOffset) * 0x100000001B3ull +
                uint64_t(uint32_t(lastBegin)) * 0x9E3779B1ull +
                (uint64_t(uint32_t(lo)) << 32) + uint32_t(hi)));
    if (failed().count(key))
      return Step::Failed;
    // The limits at each level the candidates are at. Every placement is
    // undone before the next candidate, so they hold for all of them; those
    // they stop are dropped before the sort.
    limitsAtDepth_[depth].clear();
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](const Candidate &c) {
                                      return !clearsOutside(
                                          limitsAt(depth, lo, hi, c.floor),
                                          c.buffer);
                                    }),
                     candidates.end());
    std::sort(candidates.begin(), candidates.end(),
              [&](const Candidate &x, const Candidate &y) {
                if (x.floor != y.floor)
                  return x.floor < y.floor;
                if (p_.begin[x.buffer] != p_.begin[y.buffer])
                  return p_.begin[x.buffer] < p_.begin[y.buffer];
                return x.rank < y.rank;
              });
    frames_[push(FrameKind::Candidates, lo, hi)].key = key;
    return Step::Pushed;
  }

  /// Tries the candidates of frame `index` from its next one on, each
  /// placed at its floor with the rest of its sections searched above it.
  /// A frame by cells then tries its cell's hole.
  Step advanceCandidates(size_t index) {
    for (;;) {
      Frame &f = frames_[index];
      const bool byCells = f.kind == FrameKind::Cells;
      const std::vector<Candidate> &candidates = candidatesAtDepth_[f.mark];
      if (f.next == candidates.size()) {
        if (byCells)
          return tryHole(index);
        failed().insert(f.key);
        return pop(Step::Failed);
      }
      const Candidate c = candidates[f.next];
      if (!mayFit(f.lo, f.hi, c.buffer,
                  byCells ? f.limits : limitsAt(f.mark, f.lo, f.hi, c.floor))) {
        ++f.next;
        continue;
      }
      // By cells, the buffers of one level go in any order.
      const int32_t begin = byCells ? -1 : p_.begin[c.buffer];
      place(c.buffer, c.floor);
      const bool feasible = fits(f.lo, f.hi, c.floor, begin);
      const Step step =
          feasible ? startAfterCuts(f.lo, f.hi, unplacedAtDepth_[f.mark],
                                    p_.begin[c.buffer], p_.end[c.buffer],
                                    c.floor, begin)
                   : Step::Failed;
      if (std::optional<Step> done = afterCandidate(index, step, feasible))
        return *done;
    }
  }

  /// What frame `index`'s current candidate came to (`feasible`: its
  /// placement passed the inference). No value: the next one is to be
  /// tried.
  std::optional<Step> afterCandidate(size_t index, Step step, bool feasible) {
    if (step == Step::Pushed)
      return step;
    if (step == Step::Packed)
      return pop(step);
    Frame &f = frames_[index];
    undoTo(f.mark);
    // A placement the inference rejects costs a node too: else a node
    // whose candidates are placed and undone one after another has no
    // bound on its CPU (one probe on a perfect set of 500 buffers took
    // 43 us a node against 5 elsewhere, with levelsOverflow).
    if ((!feasible && outOfBudget()) || outOfNodes_) {
      undoHoles(f.holeMark);
      return pop(Step::Failed);
    }
    ++f.next;
    return std::nullopt;
  }

  /// Whether the part's sections hold on average at least kFullShare of its
  /// most live units. Perfect sets hold all of it in every section; the
  /// random and mixed sets of the benchmark 0.27-0.69.
  static bool nearlyFull(const Contention &contention) {
    int64_t most = 0, total = 0;
    for (int64_t units : contention.live) {
      most = std::max(most, units);
      total += units;
    }
    return double(total) >= kFullShare * double(most) *
                                double(contention.live.size());
  }

  /// The search in a part full nearly everywhere branches on cells, as
  /// exact-cover solvers do (Knuth: the column with the fewest options).
  /// Buffers still go in order of offset, a level at a time (the least
  /// floor of the candidates), but within a level in any order: each
  /// section whose skyline is at most the level has a cell there, which a
  /// candidate at that floor alive in the section covers or which stays a
  /// hole (the buffers alive there then rest on later placements, above the
  /// level). It branches on the open cell with the fewest options (one
  /// with no candidate is a hole at once), over its candidates and then
  /// over the hole. Every packing with each buffer dropped as low as it
  /// goes is still reached, so the search stays complete; the canonical
  /// order is the special case that always takes the earliest cell. On
  /// perfect sets of 100 / 200 / 500 buffers the mean peak falls from
  /// 1.0057 / 1.0397 / 1.0579 to 1.0052 / 1.0255 / 1.0394 of the lower
  /// bound, at less CPU (bench/packing/results.md). `level` is that of the
  /// last placement or hole.
  Step startByCells(int32_t lo, int32_t hi, std::vector<int32_t> &unplaced,
                    int64_t lowestTop, int64_t level) {
    std::vector<Candidate> &candidates =
        candidatesAtDepth_[placements_.size()];
    candidates.clear();
    int64_t least = std::numeric_limits<int64_t>::max();
    for (int32_t b : unplaced)
      if (floor_[b] < lowestTop && floor_[b] >= level &&
          (floor_[b] > level || !coversHole(b, level))) {
        candidates.push_back({floor_[b], rank_[b], b});
        least = std::min(least, floor_[b]);
      }
    if (candidates.empty())
      return Step::Failed;
    // Dominance as in startDescend; a failed state is also keyed by its
    // holes.
    const uint64_t key =
        mix(placedHash_ ^ floorHash_ ^
            mix(uint64_t(level) * 0x100000001B3ull + holesKey(lo, hi, level) +
                (uint64_t(uint32_t(lo)) << 32) + uint32_t(hi)));
    if (failed().count(key))
      return Step::Failed;
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](const Candidate &c) {
                                      return c.floor != least;
                                    }),
                     candidates.end());
    // How many candidates cover each section, by differences.
    std::fill(cover_.begin() + lo, cover_.begin() + hi + 2, 0);
    for (const Candidate &c : candidates) {
      ++cover_[p_.begin[c.buffer]];
      --cover_[p_.end[c.buffer] + 1];
    }
    // The open cell with the fewest options (the hole is one where the
    // section can spare it), ties to the section with the least slack.
    const size_t holeMark = holeTrail_.size();
    int32_t cell = -1, fewest = std::numeric_limits<int32_t>::max();
    int64_t leastSlack = 0;
    bool holesFit = true;
    for (int32_t s = lo, covering = 0; s <= hi; ++s) {
      covering += cover_[s];
      if (skyline_[s] > least || holeAt_[s] == least)
        continue;
      const int64_t slack = capacity_ - least - unplacedUnits_[s];
      if (covering == 0) {
        leaveHole(s, least);
        holesFit = holesFit && slack >= 1;
        continue;
      }
      const int32_t options = covering + (slack >= 1);
      if (options < fewest || (options == fewest && slack < leastSlack)) {
        fewest = options;
        leastSlack = slack;
        cell = s;
      }
    }
    if (!holesFit) {
      undoHoles(holeMark);
      failed().insert(key);
      return Step::Failed;
    }
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](const Candidate &c) {
                                      return p_.begin[c.buffer] > cell ||
                                             p_.end[c.buffer] < cell;
                                    }),
                     candidates.end());
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate &x, const Candidate &y) {
                return x.rank < y.rank;
              });
    preferLevelTops(candidates);
    const OutsideLimits limits = outsideLimits(lo, hi, least);
    Frame &f = frames_[push(FrameKind::Cells, lo, hi)];
    f.holeMark = holeMark;
    f.key = key;
    f.level = least;
    f.cell = cell;
    f.limits = limits;
    return Step::Pushed;
  }

  /// Frame `index` by cells leaves its cell a hole, its candidates there
  /// exhausted: its lists are not read past here, so the search at the
  /// same depth may reuse them.
  Step tryHole(size_t index) {
    Frame &f = frames_[index];
    f.inHole = true;
    leaveHole(f.cell, f.level);
    if (f.level + 1 + unplacedUnits_[f.cell] <= capacity_) {
      const Step step =
          startDescend(f.lo, f.hi, unplacedAtDepth_[f.mark], f.level, -1);
      if (step == Step::Pushed)
        return step;
      if (step == Step::Packed)
        return pop(step);
    }
    return holeFailed(index);
  }

  Step holeFailed(size_t index) {
    const Frame &f = frames_[index];
    undoHoles(f.holeMark);
    if (!outOfNodes_)
      failed().insert(f.key);
    return pop(Step::Failed);
  }

  /// Whether buffer b is alive in a section left a hole at `level`.
  bool coversHole(int32_t b, int64_t level) const {
    for (int32_t s = p_.begin[b]; s <= p_.end[b]; ++s)
      if (holeAt_[s] == level)
        return true;
    return false;
  }

  uint64_t holesKey(int32_t lo, int32_t hi, int64_t level) const {
    uint64_t key = 0;
    for (int32_t s = lo; s <= hi; ++s)
      if (holeAt_[s] == level)
        key ^= mix(uint64_t(s) + 0x9E3779B97F4A7C15ull);
    return key;
  }

  /// The least level of the unplaced buffers in section s while the
  /// search by cells is at `level`: where the section is a hole there,
  /// those alive in it rest on later placements.
  int64_t levelAbove(int32_t s, int64_t level) const {
    return sectionFloor_[s] > level ? sectionFloor_[s]
           : holeAt_[s] == level    ? level + 1
                                    : level;
  }

  void leaveHole(int32_t s, int64_t level) {
    holeTrail_.push_back({s, holeAt_[s]});
    holeAt_[s] = level;
  }

  void undoHoles(size_t mark) { restore(holeAt_, holeTrail_, mark); }

  /// Gives the sections `trail` records from `mark` on their old `values`
  /// back, latest first, and drops those records.
  static void restore(std::vector<int64_t> &values,
                      std::vector<std::pair<int32_t, int64_t>> &trail,
                      size_t mark) {
    for (size_t k = trail.size(); k-- > mark;)
      values[trail[k].first] = trail[k].second;
    trail.resize(mark);
  }

  /// Puts first the candidates (all at one floor) whose top is level with
  /// the skyline of the section just before or just after them: they
  /// extend a flat surface instead of starting a step that the buffers
  /// above would have to match (on perfect sets of 200 / 500 buffers
  /// 1.0265 / 1.0405 of the lower bound against 1.0430 / 1.0558 without).
  /// A partition, not a sort by step height: the restarts' ranks still
  /// order each side.
  void preferLevelTops(std::vector<Candidate> &candidates) const {
    auto level = [&](const Candidate &c) {
      const int32_t b = c.buffer;
      const int64_t top = c.floor + p_.size[b];
      return (p_.begin[b] > 0 && skyline_[p_.begin[b] - 1] == top) ||
             (p_.end[b] + 1 < p_.sections && skyline_[p_.end[b] + 1] == top);
    };
    std::stable_partition(candidates.begin(), candidates.end(), level);
  }

  /// Where no unplaced buffer crosses a boundary between sections `from`
  /// and `to` (those of the last placement) any more, the sides are
  /// independent: they are searched one after the other, each afresh.
  Step startAfterCuts(int32_t lo, int32_t hi,
                      const std::vector<int32_t> &buffers, int32_t from,
                      int32_t to, int64_t offset, int32_t lastBegin) {
    cuts_.clear();
    for (int32_t s = std::max(lo, from); s < std::min(hi, to); ++s)
      if (crossing_[s] == 0)
        cuts_.push_back(s);
    if (cuts_.empty())
      return startDescend(lo, hi, buffers, offset, lastBegin);
    cuts_.push_back(hi);
    Frame &f = frames_[push(FrameKind::Sides, lo, hi)];
    f.cuts.assign(cuts_.begin(), cuts_.end());
    f.buffers = &buffers;
    // The search by cells goes on at its level, with its holes.
    f.level = nearlyFull_ ? offset : 0;
    return Step::Pushed;
  }

  /// Searches the sides of frame `index` from its next one on.
  Step advanceSides(size_t index) {
    for (;;) {
      const Frame &f = frames_[index];
      if (f.next == f.cuts.size())
        return pop(Step::Packed);
      const int32_t sideBegin = f.next == 0 ? f.lo : f.cuts[f.next - 1] + 1;
      const int32_t sideEnd = f.cuts[f.next];
      side_.clear();
      for (int32_t o : *f.buffers)
        if (offset_[o] < 0 && p_.begin[o] >= sideBegin && p_.end[o] <= sideEnd)
          side_.push_back(o);
      const Step step = startDescend(sideBegin, sideEnd, side_, f.level, -1);
      if (std::optional<Step> done = afterSide(index, step))
        return *done;
    }
  }

  /// What frame `index`'s current side came to. No value: the next side is
  /// to be searched.
  std::optional<Step> afterSide(size_t index, Step step) {
    if (step == Step::Pushed)
      return step;
    Frame &f = frames_[index];
    if (step == Step::Failed) {
      undoTo(f.mark);
      undoHoles(f.holeMark);
      return pop(step);
    }
    ++f.next;
    return std::nullopt;
  }

  /// Section inference over [lo, hi] after a placement at `offset` that
  /// begins in section `begin`. A buffer that would come before it in
  /// placement order (below `offset`, or at it and beginning earlier; by
  /// cells, in a hole at `offset`) can no longer go where its floor is: it
  /// will rest on a later placement.
  bool fits(int32_t lo, int32_t hi, int64_t offset, int32_t begin) const {
    // No section's units over the capacity from the higher of its floor
    // and just above `offset`, the most its lowest level can be: it fits.
    if (const auto most = maxima_.over(lo, hi);
        most.floorUnits <= capacity_ && most.units + offset + 1 <= capacity_)
      return !levelsOverflow(lo, hi, offset, begin);
    for (int32_t s = lo; s <= hi; ++s) {
      if (unplacedUnits_[s] == 0)
        continue;
      const bool passed = sectionFloor_[s] < offset ||
                          (sectionFloor_[s] == offset && s < begin);
      const int64_t lowest = nearlyFull_ ? levelAbove(s, offset)
                             : passed    ? offset + 1
                                         : sectionFloor_[s];
      if (lowest + unplacedUnits_[s] > capacity_)
        return false;
    }
    return !levelsOverflow(lo, hi, offset, begin);
  }

  /// The section inference at more levels than the least floor, where the
  /// last placement (at `offset`, beginning in `begin`) raised floors. An
  /// unplaced buffer lies at or above its level (its floor, or above
  /// `offset` where the order has passed it), so for every level t, t plus
  /// the units of the buffers at or above t must fit; fits() checks the
  /// least level only, which misses a well: a section low between higher
  /// neighbours whose buffers mostly reach into them, and so lie above the
  /// well's walls, with too few confined to fill it. Checked at two
  /// levels: the least above the section's slack (capacity minus its
  /// unplaced units: a lower level has every unplaced unit above it) and
  /// the placement's top, over the sections the buffers it raised span,
  /// where that top is above the slack (elsewhere no level rose past it).
  /// Sound, so the search stays complete; on perfect sets of 200 and 500
  /// buffers it rejects 17-24 % of the placements checked.
  bool levelsOverflow(int32_t lo, int32_t hi, int64_t offset,
                      int32_t begin) const {
    const Placement &last = placements_.back();
    const int64_t top = offset + p_.size[last.buffer];
    const auto [from, to] = raisedSections(last.floorMark, hi + 1, lo - 1);
    for (int32_t s = std::max(lo, from); s <= std::min(hi, to); ++s) {
      const int64_t slack = capacity_ - unplacedUnits_[s];
      if (unplacedUnits_[s] == 0 || top <= slack)
        continue;
      int64_t leastHigh = std::numeric_limits<int64_t>::max();
      int64_t highUnits = 0, unitsAtTop = 0;
      for (int32_t o : unplacedIn_[s]) {
        const bool ahead =
            floor_[o] > offset ||
            (floor_[o] == offset &&
             (nearlyFull_ ? holeAt_[s] != offset : p_.begin[o] > begin));
        const int64_t level = ahead ? floor_[o] : offset + 1;
        if (level > slack) {
          leastHigh = std::min(leastHigh, level);
          highUnits += p_.size[o];
        }
        if (level >= top)
          unitsAtTop += p_.size[o];
      }
      if (leastHigh + highUnits > capacity_ || top + unitsAtTop > capacity_)
        return true;
    }
    return false;
  }

  /// Where the sections outside a candidate's lifetime stop it, at one
  /// level `at` of a node: the first section that cannot be passed (its
  /// unplaced units do not fit above its least level once the order has
  /// passed `at`) and the last that cannot follow (nor above its least
  /// level after a placement at `at`); hi + 1 and lo - 1 where none. A
  /// candidate at `at` clears them iff it begins at or before the first
  /// and ends at or after the last. Found once a level and node, not once a
  /// candidate: a node of a part that is not nearly full has tens of
  /// candidates (84 on MiniMalloc's benchmark F).
  struct OutsideLimits {
    int64_t at;
    int32_t firstPassed, lastFollowing;
  };
  OutsideLimits outsideLimits(int32_t lo, int32_t hi, int64_t at) const {
    OutsideLimits limits{at, hi + 1, lo - 1};
    // As in fits(): no section over from the higher of its floor and just
    // above `at`, the most its least level can be, then none over.
    if (const auto most = maxima_.over(lo, hi);
        most.floorUnits <= capacity_ && most.units + at + 1 <= capacity_)
      return limits;
    // The least level of section s: by cells just above `at` where the
    // section is a hole there (levelAbove), else its floor or `least`.
    auto overflows = [&](int32_t s, int64_t least) {
      const int64_t units = unplacedUnits_[s];
      const int64_t level =
          nearlyFull_ ? levelAbove(s, at) : std::max(sectionFloor_[s], least);
      return units != 0 && level + units > capacity_;
    };
    for (int32_t s = lo; s <= hi && limits.firstPassed > hi; ++s)
      if (overflows(s, at + 1))
        limits.firstPassed = s;
    for (int32_t s = hi; s >= lo && limits.lastFollowing < lo; --s)
      if (overflows(s, at))
        limits.lastFollowing = s;
    return limits;
  }

  /// The outside limits at level `at` of the candidates at placement depth
  /// `depth`, over [lo, hi]: found once a level.
  OutsideLimits limitsAt(size_t depth, int32_t lo, int32_t hi, int64_t at) {
    std::vector<OutsideLimits> &levels = limitsAtDepth_[depth];
    for (const OutsideLimits &limits : levels)
      if (limits.at == at)
        return limits;
    return levels.emplace_back(outsideLimits(lo, hi, at));
  }

  bool clearsOutside(const OutsideLimits &limits, int32_t b) const {
    return limits.firstPassed >= p_.begin[b] &&
           limits.lastFollowing <= p_.end[b];
  }

  /// A bound on fits() after placing b at `limits.at`, from the state
  /// before: floors only rise, those of the buffers alive with b to its
  /// top. False only where fits() would be, and far cheaper than placing b
  /// and undoing it, which is what most candidates of a tight part come to.
  bool mayFit(int32_t lo, int32_t hi, int32_t b,
              const OutsideLimits &limits) const {
    if (!clearsOutside(limits, b))
      return false;
    const int32_t begin = p_.begin[b], end = p_.end[b];
    // In b's lifetime, the unplaced units left above b's top, or above the
    // section's floor if higher (a section with none has no floor).
    const int64_t size = p_.size[b], top = limits.at + size;
    if (const auto most = maxima_.over(begin, end);
        most.floorUnits > capacity_ + size ||
        most.units + top - size > capacity_)
      for (int32_t s = begin; s <= end; ++s) {
        const int64_t units = unplacedUnits_[s] - size;
        if (units != 0 && std::max(sectionFloor_[s], top) + units > capacity_)
          return false;
      }
    return !raisesFloorPastSlack(lo, hi, b, top);
  }

  /// Whether placing b with top `top` raises the floor of a section
  /// outside its lifetime so high that what is unplaced there no longer
  /// fits: every buffer at or below the section's slack overlaps b and so
  /// rises to its top. Then fits() fails in that section (the floor is
  /// above the slack, which mayFit's bound has shown is at least b's
  /// offset, so the order has not passed it); checked here without
  /// placing b, which most such candidates of a tight part used to be, only
  /// to be undone.
  bool raisesFloorPastSlack(int32_t lo, int32_t hi, int32_t b,
                            int64_t top) const {
    auto checkSections = [&](int32_t from, int32_t to) {
      for (int32_t s = from; s <= to; ++s) {
        const int64_t slack = capacity_ - unplacedUnits_[s];
        if (unplacedUnits_[s] == 0 || top <= slack)
          continue;
        bool held = false;
        for (int32_t o : unplacedIn_[s])
          if (floor_[o] <= slack &&
              (p_.end[o] < p_.begin[b] || p_.begin[o] > p_.end[b])) {
            held = true;
            break;
          }
        if (!held)
          return true;
      }
      return false;
    };
    return checkSections(lo, p_.begin[b] - 1) ||
           checkSections(p_.end[b] + 1, hi);
  }

  /// Places b at its floor `at`: every unplaced buffer alive with it and
  /// below its top rises to that top. In b's sections, where each unplaced
  /// buffer is alive with b, that merges every floor below the top into
  /// it; elsewhere it moves the floors the raised buffers had there.
  void place(int32_t b, int64_t at) {
    placements_.push_back(
        {b, floorTrail_.size(), risen_.size(), skylineTrail_.size()});
    const int64_t top = at + p_.size[b];
    if (nearlyFull_)
      for (int32_t s = p_.begin[b]; s <= p_.end[b]; ++s)
        if (skyline_[s] < top) {
          skylineTrail_.push_back({s, skyline_[s]});
          skyline_[s] = top;
        }
    offset_[b] = at;
    placedHash_ ^= zobrist_[b];
    floorHash_ ^= floorKey(b, floor_[b]);
    for (int32_t s = p_.begin[b]; s <= p_.end[b]; ++s) {
      unplacedUnits_[s] -= p_.size[b];
      crossing_[s] -= s < p_.end[b];
      // Out of the section's list: the last one takes its slot.
      std::vector<int32_t> &list = unplacedIn_[s];
      const int32_t slot = slotOf(b, s), last = list.back();
      list[slot] = last;
      slot_[firstSlot_[last] + s - p_.begin[last]] = slot;
      list.pop_back();
      leave(s, at, 1);
      std::vector<FloorCount> &floors = floorsIn_[s];
      int32_t risen = 0;
      while (!floors.empty() && floors.back().floor < top) {
        risen_.push_back({s, floors.back().count, floors.back().floor});
        risen += floors.back().count;
        floors.pop_back();
      }
      if (risen > 0)
        enter(s, top, risen);
    }
    const size_t raisedMark = floorTrail_.size();
    for (int64_t k = overlaps_.start[b]; k < overlaps_.start[b + 1]; ++k) {
      const int32_t o = overlaps_.other[k];
      if (offset_[o] >= 0 || floor_[o] >= top)
        continue;
      floorTrail_.push_back({o, floor_[o]});
      floorHash_ ^= floorKey(o, floor_[o]) ^ floorKey(o, top);
      floor_[o] = top;
    }
    forEachFloorOutside(b, raisedMark, [&](int32_t s, int64_t floor, int32_t n) {
      leave(s, floor, n);
      enter(s, top, n);
      risen_.push_back({s, n, floor});
    });
    const auto [from, to] = changedSections(b, raisedMark);
    refreshMaxima(from, to);
  }

  /// The sections [from, to] widened to those of the buffers a placement
  /// raised (floorTrail_ from `mark`).
  std::pair<int32_t, int32_t> raisedSections(size_t mark, int32_t from,
                                             int32_t to) const {
    for (size_t k = mark; k < floorTrail_.size(); ++k) {
      from = std::min(from, p_.begin[floorTrail_[k].first]);
      to = std::max(to, p_.end[floorTrail_[k].first]);
    }
    return {from, to};
  }

  /// The sections whose units or floor placing b changed: its own and
  /// those of the buffers it raised (floorTrail_ from `mark`).
  std::pair<int32_t, int32_t> changedSections(int32_t b, size_t mark) const {
    return raisedSections(mark, p_.begin[b], p_.end[b]);
  }

  /// Brings maxima_ up to date over sections [from, to].
  void refreshMaxima(int32_t from, int32_t to) {
    for (int32_t s = from; s <= to; ++s)
      maxima_.set(s, unplacedUnits_[s], sectionFloor_[s]);
    maxima_.refresh(from, to);
  }

  /// Calls visit(s, floor, n) for each section s outside b's lifetime and
  /// each floor that n of the buffers b raised (floorTrail_ from `mark`)
  /// and alive in s had. A raised buffer reaches b, so it is alive in every
  /// section between b and its far end: a sweep from the farthest end
  /// towards b gathers them, each floor with its count. The raised buffers
  /// of a section mostly had one floor: on DenseNet-121's 14,090-buffer
  /// part (docs/planner.md) 16 M changes where one per buffer and section
  /// made 122 M.
  template <typename Visit>
  void forEachFloorOutside(int32_t b, size_t mark, Visit visit) {
    auto sweep = [&](auto reachPast, auto sectionAt) {
      // Each raised buffer that reaches d > 0 sections past b, farthest
      // first.
      reach_.clear();
      for (size_t k = mark; k < floorTrail_.size(); ++k)
        if (const int32_t d = reachPast(floorTrail_[k].first); d > 0)
          reach_.push_back({d, floorTrail_[k].second});
      std::sort(reach_.begin(), reach_.end(), std::greater<>());
      risenFloors_.clear();
      size_t next = 0;
      for (int32_t d = reach_.empty() ? 0 : reach_[0].first; d > 0; --d) {
        for (; next < reach_.size() && reach_[next].first == d; ++next) {
          const int64_t floor = reach_[next].second;
          auto known = std::find_if(
              risenFloors_.begin(), risenFloors_.end(),
              [&](const FloorCount &f) { return f.floor == floor; });
          if (known == risenFloors_.end())
            risenFloors_.push_back({floor, 1});
          else
            ++known->count;
        }
        for (const FloorCount &f : risenFloors_)
          visit(sectionAt(d), f.floor, f.count);
      }
    };
    sweep([&](int32_t o) { return p_.begin[b] - p_.begin[o]; },
          [&](int32_t d) { return p_.begin[b] - d; });
    sweep([&](int32_t o) { return p_.end[o] - p_.end[b]; },
          [&](int32_t d) { return p_.end[b] + d; });
  }

  /// `count` more unplaced buffers of section s at `floor`.
  void enter(int32_t s, int64_t floor, int32_t count) {
    std::vector<FloorCount> &floors = floorsIn_[s];
    size_t i = floors.size();
    while (i > 0 && floors[i - 1].floor < floor)
      --i;
    if (i > 0 && floors[i - 1].floor == floor)
      floors[i - 1].count += count;
    else
      floors.insert(floors.begin() + i, {floor, count});
    sectionFloor_[s] = floors.back().floor;
  }

  /// `count` fewer unplaced buffers of section s at `floor`.
  void leave(int32_t s, int64_t floor, int32_t count) {
    std::vector<FloorCount> &floors = floorsIn_[s];
    size_t i = floors.size() - 1;
    while (floors[i].floor != floor)
      --i;
    if ((floors[i].count -= count) == 0)
      floors.erase(floors.begin() + i);
    sectionFloor_[s] = floors.empty() ? std::numeric_limits<int64_t>::max()
                                      : floors.back().floor;
  }

  int32_t slotOf(int32_t b, int32_t s) const {
    return slot_[firstSlot_[b] + s - p_.begin[b]];
  }

  void undoTo(size_t mark) {
    while (placements_.size() > mark) {
      const Placement last = placements_.back();
      placements_.pop_back();
      const int32_t b = last.buffer;
      const int64_t top = offset_[b] + p_.size[b];
      const auto [from, to] = changedSections(b, last.floorMark);
      restore(skyline_, skylineTrail_, last.skylineMark);
      // In reverse, so that each floor returns where it was.
      for (size_t k = risen_.size(); k-- > last.risenMark;) {
        const Risen &r = risen_[k];
        leave(r.section, top, r.count);
        enter(r.section, r.floor, r.count);
      }
      risen_.resize(last.risenMark);
      for (size_t k = floorTrail_.size(); k-- > last.floorMark;) {
        const auto [o, floor] = floorTrail_[k];
        floorHash_ ^= floorKey(o, floor_[o]) ^ floorKey(o, floor);
        floor_[o] = floor;
      }
      floorTrail_.resize(last.floorMark);
      for (int32_t s = p_.end[b]; s >= p_.begin[b]; --s) {
        enter(s, offset_[b], 1);
        unplacedUnits_[s] += p_.size[b];
        crossing_[s] += s < p_.end[b];
        // Back into its slot, and the one that took it to the end.
        std::vector<int32_t> &list = unplacedIn_[s];
        const int32_t slot = slotOf(b, s);
        if (slot == int32_t(list.size())) {
          list.push_back(b);
          continue;
        }
        const int32_t moved = list[slot];
        slot_[firstSlot_[moved] + s - p_.begin[moved]] = int32_t(list.size());
        list.push_back(moved);
        list[slot] = b;
      }
      floorHash_ ^= floorKey(b, floor_[b]);
      placedHash_ ^= zobrist_[b];
      offset_[b] = -1;
      refreshMaxima(from, to);
    }
  }

  /// A search in progress over sections [lo, hi] (one frame of the explicit
  /// stack): over the candidates for its next placement, over those
  /// covering one cell and then over its hole (by cells), or over the
  /// independent sides of a cut.
  struct Frame {
    FrameKind kind = FrameKind::Candidates;
    bool inHole = false; // by cells: the candidates done, the hole tried
    int32_t lo = 0, hi = 0;
    /// The placements and holes made before it: what a failure undoes to.
    /// A frame over candidates has as many placements below it as it is
    /// deep, so `mark` also indexes its scratch lists.
    size_t mark = 0, holeMark = 0;
    size_t next = 0;  // the candidate or side tried next, or now
    uint64_t key = 0; // over candidates: the state, kept if it fails
    /// By cells: the level of its candidates; over sides: the level each
    /// side starts at.
    int64_t level = 0;
    int32_t cell = -1; // by cells
    OutsideLimits limits{};
    const std::vector<int32_t> *buffers = nullptr; // over sides
    std::vector<int32_t> cuts; // over sides: the last section of each side
  };
  /// The stack's frames up to top_; those above stay for their lists'
  /// memory.
  std::vector<Frame> frames_;
  size_t top_ = 0;
  std::vector<int32_t> cuts_, side_; // scratch for startAfterCuts and sides

  struct Placement {
    int32_t buffer;
    size_t floorMark, risenMark, skylineMark;
  };

  const Part &p_;
  const Overlaps overlaps_;
  const int64_t nodeLimit_;
  const std::chrono::steady_clock::time_point deadline_;
  const bool hasDeadline_;
  const bool nearlyFull_;
  /// Per section, the unplaced buffers alive in it, in any order; each
  /// buffer's slot in the list of each of its sections.
  std::vector<std::vector<int32_t>> unplacedIn_;
  std::vector<int32_t> slot_;
  std::vector<int64_t> firstSlot_; // per buffer, into slot_
  /// Each buffer's place in the order that breaks ties, first by
  /// contention.
  std::vector<int32_t> contentionRank_, rank_;
  std::vector<uint64_t> zobrist_;
  int64_t capacity_ = 0;
  int64_t runLimit_ = 0;
  std::vector<int64_t> offset_, floor_;
  /// Per section: the units of its unplaced buffers, and their least floor
  /// (floorsIn_'s last, at hand for the inference).
  std::vector<int64_t> unplacedUnits_, sectionFloor_;
  /// The inference's test over a range of sections in one query, where it
  /// passes, as it mostly does.
  SectionMaxima maxima_;
  /// Per section: unplaced buffers alive in it and in the next one.
  std::vector<int32_t> crossing_;
  std::vector<Placement> placements_;
  /// Scratch per placement depth: startDescend's unplaced buffers, candidates
  /// and the outside limits at their levels.
  std::vector<std::vector<int32_t>> unplacedAtDepth_;
  std::vector<std::vector<Candidate>> candidatesAtDepth_;
  std::vector<std::vector<OutsideLimits>> limitsAtDepth_;
  std::vector<std::pair<int32_t, int64_t>> floorTrail_;
  /// Per section, the distinct floors of its unplaced buffers, highest
  /// first, each with how many are at it (a dozen or so: a section's floor
  /// is known without a scan of its buffers when its last one there rises).
  struct FloorCount {
    int64_t floor;
    int32_t count;
  };
  std::vector<std::vector<FloorCount>> floorsIn_;
  /// Per placement: `count` unplaced buffers of `section` rose from `floor`
  /// to its top.
  struct Risen {
    int32_t section, count;
    int64_t floor;
  };
  std::vector<Risen> risen_;
  /// Scratch for forEachFloorOutside.
  std::vector<std::pair<int32_t, int64_t>> reach_;
  std::vector<FloorCount> risenFloors_;
  /// Per section, the highest top of the placed buffers alive in it (kept
  /// only in a nearly full part), and its old values.
  std::vector<int64_t> skyline_;
  std::vector<std::pair<int32_t, int64_t>> skylineTrail_;
  /// Per section, the level at which the search by cells left it a hole
  /// (-1: none yet), and its old values; scratch: candidates per section.
  std::vector<int64_t> holeAt_;
  std::vector<std::pair<int32_t, int64_t>> holeTrail_;
  std::vector<int32_t> cover_;
  uint64_t placedHash_ = 0, floorHash_ = 0;
  /// The states that failed at this capacity; and those that failed in
  /// this attempt, where buffers were kept in place: a state reached so
  /// may lie outside the canonical order, so its failure is not kept for
  /// the attempts whose exhaustion proves the capacity infeasible.
  std::unordered_set<uint64_t> failed_, failedKeeping_;
  std::unordered_set<uint64_t> &failed() {
    return kept_.empty() ? failed_ : failedKeeping_;
  }
  /// The incumbent's buffers this attempt keeps, in order of offset;
  /// whether it is a restart by a window; the packings each kind of restart
  /// near an incumbent found.
  std::vector<int32_t> kept_;
  bool windowAttempt_ = false;
  uint64_t keepWins_ = 0, windowWins_ = 0;
  int64_t nodes_ = 0;
  uint64_t attempts_ = 0; // the most any run has made
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
  int64_t &steps = result->packingSteps;
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
                                options.initialOrderOnly, goodEnough, steps);
      const bool targetReachable = target == 0 || lowerBound <= target;
      if (best.peak > goodEnough && targetReachable &&
          options.searchNodeLimit > 0 && !large && !options.initialOrderOnly) {
        CanonicalSearch search(part, contention,
                               options.searchNodeLimit - result->searchNodes,
                               deadline, options.searchTimeLimitSeconds > 0);
        // Every offset the search gives is a sum of sizes, and so is every
        // peak: only multiples of their greatest common divisor are tried.
        int64_t unit = 0;
        for (int64_t size : part.size)
          unit = std::gcd(unit, size);
        auto multiple = [&](int64_t capacity) { return capacity / unit * unit; };
        // Aim at what is good enough first, then bisect between the least
        // capacity not given up on and the best found, until a probe above
        // that first one runs out of nodes: from there restarts near the
        // best packing get lower faster than fresh probes (on MiniMalloc's
        // instances F and I they reach the bound, bench/packing/results.md).
        // A target gets every node: a packing above it is of no use.
        int64_t tried = multiple(goodEnough);
        bool bisecting = true;
        for (bool first = true; bisecting && best.peak > goodEnough &&
                                tried < best.peak && search.nodesLeft() > 0 &&
                                (first || target == 0);
             first = false) {
          const int64_t capacity =
              first ? tried : multiple(tried + (best.peak - 1 - tried) / 2);
          Packing found;
          switch (search.run(capacity,
                             target == 0 ? search.probeNodes()
                                         : search.nodesLeft(),
                             &found)) {
          case CanonicalSearch::Outcome::Found:
            best = std::move(found);
            break;
          case CanonicalSearch::Outcome::Infeasible:
            // No capacity below the next multiple can be feasible either.
            known = std::max(known, capacity + unit);
            tried = capacity + unit;
            break;
          case CanonicalSearch::Outcome::OutOfNodes:
            tried = capacity + unit;
            bisecting = first;
            break;
          }
        }
        // The nodes the bisection leaves go below the best, in orders not
        // tried yet, half of them near the best packing: a step below it
        // that doubles after each packing found and halves after each
        // probe of more than one step that runs out of nodes (such a probe
        // gets a share of the nodes, one step all that are left), as long
        // as that finds packings. Not for a target: a lower peak that
        // still misses it is of no use.
        int64_t step = unit;
        while (target == 0 && best.peak > goodEnough &&
               search.nodesLeft() > 0 && best.peak - unit >= known) {
          const int64_t capacity = std::max(known, multiple(best.peak - step));
          const bool oneStep = capacity == best.peak - unit;
          Packing found;
          const CanonicalSearch::Outcome outcome = search.run(
              capacity, oneStep ? search.nodesLeft() : search.probeNodes(),
              &found, true, &best);
          if (outcome == CanonicalSearch::Outcome::Found) {
            best = std::move(found);
            step *= 2;
          } else if (outcome == CanonicalSearch::Outcome::Infeasible) {
            known = capacity + unit;
            step = unit;
          } else if (oneStep) {
            break;
          } else {
            step = std::max(unit, step / 2);
          }
        }
        result->searchNodes += search.nodes();
      }
      // A part too large for the exact search: a windowed repair of the
      // better of the greedy orders' packing and the online best fit's
      // (far lower on a part too dense to list its overlaps), with work in
      // proportion to the part.
      if (large && best.peak > goodEnough && targetReachable &&
          options.searchNodeLimit > 0 && !options.initialOrderOnly) {
        std::vector<PackBuffer> lifetimes(part.size.size());
        for (size_t j = 0; j < part.size.size(); ++j)
          lifetimes[j] = {part.begin[j], part.end[j], part.size[j]};
        PackResult online;
        if (packBestFitOnline(lifetimes, 1, &online) &&
            online.peak < best.peak) {
          best.offset = std::move(online.offsets);
          best.peak = online.peak;
          best.method = online.method;
        }
        if (repairPacking(part.begin, part.end, part.size, part.sections,
                          goodEnough,
                          kRepairWorkPerBuffer * int64_t(part.ids.size()),
                          &best.offset, &best.peak, steps))
          best.method = "repair";
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
