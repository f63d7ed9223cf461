//===- Packer.h - Offline address assignment for fixed lifetimes -*- C++ -*-===//
//
// Once a schedule is fixed, every buffer has a lifetime [first, last] (in
// instruction indices) and a size. packBuffers() assigns offsets so that no
// two buffers alive at the same time overlap, minimising the high-water
// mark (dynamic storage allocation). It runs several greedy orders (by
// size, by breadth, by contention, by lifetime), keeps the best, then, when
// that is above the max-live lower bound, searches canonical solutions
// exactly within a node limit, or, in a part too large for that, places
// the highest buffers around its peak again, window by window. See
// docs/planner.md, "Offline packing".
//
// No MLIR dependency.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_PACKER_H
#define COOP_PLANNER_PACKER_H

#include "coop/Planner/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace coop::planner {

struct PackBuffer {
  /// Alive from instruction `first` to instruction `last`, both included.
  int64_t first = 0;
  int64_t last = 0;
  int64_t size = 0;
};

struct PackOptions {
  /// Every offset is a multiple of this; sizes are rounded up to it.
  int64_t alignment = 1;
  /// Nodes the exact search may visit in all (0: heuristics only): its
  /// descents and the placements its inference rejects. A node limit, not
  /// a time limit, so that the result is deterministic. 170,000 nodes take
  /// about the CPU time 100,000 did before a node got cheaper.
  int64_t searchNodeLimit = 170000;
  /// Independent parts of the timeline with more buffers than this get
  /// no exact search (a node costs time linear in the part), only the
  /// strongest greedy orders (each costs time linear in the overlaps) and
  /// a windowed repair of the best (work linear in the part; none when
  /// searchNodeLimit is 0).
  int64_t searchMaxBuffers = 2000;
  /// Stop improving once the peak is at most this many bytes (0: only at
  /// the lower bound); no exact search when the lower bound is above it,
  /// else every node of it at this peak (none above: a packing that misses
  /// the target is of no use, so on a miss the peak is the greedy orders').
  /// A plan that must fit a budget needs no better, and can get no more.
  int64_t targetPeak = 0;
  /// Only the initial packing's order (dropped onto the skyline, then
  /// placed greedily), no other order and no exact search: a quick check
  /// that a plan fits, for a search that has many to judge.
  bool initialOrderOnly = false;
  /// Wall-clock safety net for the exact search, in seconds (0: none).
  /// Only reached on instances far larger than the node limit expects.
  double searchTimeLimitSeconds = 0;
};

struct PackResult {
  std::vector<int64_t> offsets; // per buffer, in input order
  /// Highest offset + size: the arena the packing needs.
  int64_t peak = 0;
  /// Most bytes (sizes rounded to the alignment) alive at one instruction.
  int64_t lowerBound = 0;
  /// peak is the least any packing can reach: it equals the lower bound,
  /// or the exact search exhausted every packing below it.
  bool provedOptimal = false;
  /// Which method found `peak`: a greedy order's name, or "search".
  std::string method;
  int64_t searchNodes = 0;
  /// What the packing cost beside its search nodes: the buffers the greedy
  /// placements looked at (each scans those placed before it that live at
  /// once, and sorts them), the overlapping pairs listed for them, and the
  /// steps of the windowed repair of large parts.
  int64_t packingSteps = 0;
};

/// Packs `buffers`. `initial`, when given, is a packing to improve on (an
/// online allocator's): its buffers dropped as low as they go, in order of
/// offset, are one more candidate, so the result is never higher. Fails
/// only on malformed input (a negative size, a lifetime that ends before it
/// starts, a non-positive alignment, sizes whose sum overflows, an invalid
/// initial packing), naming the buffer.
Status packBuffers(const std::vector<PackBuffer> &buffers,
                   const PackOptions &options, PackResult *result,
                   const std::vector<int64_t> *initial = nullptr);

/// The packing of the online best-fit allocator: buffers are placed in the
/// order of their first instruction (ties: input order) into the smallest
/// free gap that holds them, lowest address on ties, and released after
/// their last. For comparisons; same input checks as packBuffers().
Status packBestFitOnline(const std::vector<PackBuffer> &buffers,
                         int64_t alignment, PackResult *result);

/// Checks that `offsets` are aligned, non-negative and never overlap two
/// buffers alive at the same instruction; names the first clash.
Status checkPacking(const std::vector<PackBuffer> &buffers,
                    const std::vector<int64_t> &offsets, int64_t alignment);

} // namespace coop::planner

#endif // COOP_PLANNER_PACKER_H
