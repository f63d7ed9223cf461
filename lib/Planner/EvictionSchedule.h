//===- EvictionSchedule.h - Evictions chosen from the whole future -*- C++ -*-===//
//
// Internal to the planner core. An online policy evicts when an allocation
// finds no room, choosing among what is resident then. Ahead of time every
// value's reads are known, so evictions can be chosen for the whole step
// at once: scheduleEvictions() lowers the step's live-byte profile below a
// target by dropping values between two of their reads, cheapest bytes
// first, and the simulator follows that schedule (PlanOptions).
//
//===----------------------------------------------------------------------===//
#ifndef COOP_LIB_PLANNER_EVICTIONSCHEDULE_H
#define COOP_LIB_PLANNER_EVICTIONSCHEDULE_H

#include "StepAnalysis.h"

namespace coop::planner {

/// How the profile counts what the recomputations a choice needs rebuild,
/// besides the values they are for.
enum class RebuiltBytes {
  /// Every value, all at once on top of the op they run before, and each
  /// recomputation on top of the others there: a margin the simulator's
  /// contiguity and packing mostly use.
  EveryValue,
  /// What the simulator holds: the closure before an op runs one
  /// recomputation after the other, before the op allocates anything, and
  /// frees a rebuilt value once the closure's ops that read it have run, so
  /// the most one op's output and its rebuilt inputs take. Near the floor,
  /// where the margin is more than there is, it reaches lower peaks.
  HeldAtOnce,
};

struct ScheduledEvictions {
  /// Per op: the values to evict once it has run.
  EvictionSchedule evictAfter;
  /// The live-byte peak the schedule leaves (above the target when nothing
  /// left could lower it).
  int64_t peakLiveBytes = 0;
};

/// Greedy: while the profile's peak is above `targetBytes`, evicts, over
/// the peak, the value between two of its reads that frees the most
/// byte-ops per microsecond recomputed: its bytes times the ops of the run
/// over the target around the peak that its gap covers. Then every choice
/// that the peak reached no longer needs is undone, dearest per byte
/// first. The price of an eviction is its own
/// recomputation at the next read (the producer, and the producers of
/// inputs gone by then) plus the recomputations of it that earlier choices,
/// which read it inside the gap, now need; each adds the bytes it rebuilds,
/// counted as `rebuilt` says, where it runs.
ScheduledEvictions scheduleEvictions(const Graph &graph,
                                     const StepAnalysis &analysis,
                                     int64_t alignment, int64_t targetBytes,
                                     RebuiltBytes rebuilt);

} // namespace coop::planner

#endif // COOP_LIB_PLANNER_EVICTIONSCHEDULE_H
