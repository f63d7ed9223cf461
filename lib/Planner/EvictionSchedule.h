//===- EvictionSchedule.h - Evictions chosen from the whole future -*- C++ -*-===//
//
// Internal to the planner core. An online policy evicts when an allocation
// finds no room, choosing among what is resident then. Ahead of time every
// value's reads are known, so evictions can be chosen for the whole step
// at once: scheduleEvictions() lowers the step's live-byte profile below a
// target by dropping values between two of their reads (or from their
// producer to their first read), cheapest bytes first, and the simulator
// follows that schedule (PlanOptions).
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
  /// What the simulator's closure holds, op by op in its order (the
  /// step's, PlanOptions::evictClosureValues; a rebuilt value freed after
  /// its last read there, an output written in place over a rebuilt input
  /// it reads last taking that buffer over, other outputs freed at once),
  /// less the value the recomputation is for, which the profile has there
  /// already and the closure makes last (for a value rebuilt for another
  /// recomputation, less that one's value). HeldAtOnce counts that value
  /// beside every op, an output written in place beside its operand, and
  /// one op's operands at a time where a branch (a residual block's skip
  /// input) is held across others: near the floor its greedy stops above
  /// the target where this one reaches it (Inception V3 at r = 0.2156: a
  /// 531 MB activation rebuilt before the max-pool backward that reads
  /// it, 0.67 % over the budget), or below the simulator's peak: counted
  /// so, the peak is the simulator's (ResNet-152 at r = 0.1594: a schedule
  /// reaching 1.903 GB, followed in an unbounded arena: 1.901 GB).
  HeldInTurn,
};

/// Which stretches a value may be away for.
enum class ScheduleGaps {
  /// Between two of its reads.
  BetweenReads,
  /// Also from right after its producer to its first read (a forward value
  /// only the backward reads, like max-pool indices): U-Net at r = 0.5
  /// 7.85 -> 7.41 %, but on the BiLSTM at 0.85 the schedules that drop
  /// gate values after their producer cost 5.82 % where 2.70 % was found
  /// without: neither is better everywhere.
  FromProducer,
};

/// How many ops the recomputation of one choice may run: its producer and
/// the producers of its inputs gone by then, earlier choices included.
enum class RecomputeChains {
  /// At most 6: a long chain re-runs much and holds much at once.
  Short,
  /// At most 64 (a bound on the pricing walk, not on the price): a large
  /// value whose chain runs back through values gone by then (an attention
  /// score rebuilt from the projections, its scaling and a mask made of
  /// three tiny ops) is no longer ruled out, though its chain of pointwise
  /// ops often frees the most bytes per microsecond. Counting every
  /// rebuilt value, a value that a chosen recomputation rebuilds inside its
  /// own gap comes back there and stays resident until its read, as in the
  /// simulator, instead of being rebuilt again at the read; and a chosen
  /// value that a later choice's recomputation needs is rebuilt there
  /// instead of at its gap's end: its chain is priced for the bytes it
  /// holds there, not again for its microseconds.
  Long,
};

/// What a recomputation of an op with several outputs (max-pool's output
/// and indices, layer norm's output, mean and rstd) brings back, as the
/// simulator does it: every output that is away.
enum class SiblingOutputs {
  /// Priced apart: each output's recomputation re-runs the op.
  Apart,
  /// Rebuilt together: a chosen recomputation re-running a value's
  /// producer inside the value's gap brings it back there at no cost (it
  /// stays resident until its read), and one that re-runs it while a
  /// sibling is away ends the sibling's absence there, its own
  /// recomputation moved up rather than run twice. Only with
  /// RecomputeChains::Long counting RebuiltBytes::EveryValue, the kind that
  /// follows values brought back early; with the others, as Apart.
  RebuiltTogether,
};

/// Which candidate the greedy takes over a peak.
enum class ChoicePick {
  /// The most byte-ops per microsecond recomputed.
  BestRatio,
  /// The cheapest one that alone brings the whole run over the target
  /// under it, where one does; the best ratio otherwise. Where the excess is
  /// small (light budgets), a cheap value that covers it beats a dearer one
  /// that frees more per microsecond than is needed.
  CheapestCover,
};

/// What a recomputation does with an input that is past its last use
/// where it runs (a dense block's concatenation reads every earlier
/// layer's small output, which the backward no longer reads).
enum class DeadInputs {
  /// Rebuilds it, with the producers of its own inputs gone by then.
  Recomputed,
  /// Keeps it resident from its last use to the recomputation: no
  /// microseconds, its bytes held there (the greedy counts them against
  /// the bytes the choice frees). On DenseNet-121 the concatenations go
  /// for a copy each instead of a convolution chain.
  Retained,
};

/// What the greedy does at a peak over the target where nothing can go
/// (only values the ops there read are resident).
enum class StuckPeaks {
  /// Stops: the rest of the excess is the policy's, where it runs out.
  Stop,
  /// Sets that peak's run aside and lowers the other runs over the target
  /// (U-Net at r = 0.3: 44.17 -> 38.11 %). Neither is better everywhere:
  /// bench/peers' ResNet-18, stuck at the max-pool backward with the
  /// forward's end 12 MB over, plans at 6.51 % setting aside where
  /// stopping gets 6.24 % (budget=161000000), so it is a kind of its own.
  SetAside,
};

/// Whether some op has two outputs the schedule may drop: without one,
/// SiblingOutputs::RebuiltTogether schedules as Apart does.
bool hasEvictableSiblings(const Graph &graph, const StepAnalysis &analysis);

struct ScheduledEvictions {
  /// Per op: the values to evict once it has run.
  EvictionSchedule evictAfter;
  /// The live-byte peak the schedule leaves (above the target when nothing
  /// left could lower it).
  int64_t peakLiveBytes = 0;
  /// The peak outside the runs set aside (StuckPeaks::SetAside), those
  /// counted at the target (peakLiveBytes where there are none): how low
  /// the greedy got where it could choose.
  int64_t peakElsewhereBytes = 0;
  /// Per value: the op through which it stays resident past its last use
  /// for a recomputation (DeadInputs::Retained; kNone: freed as usual).
  std::vector<OpId> retainUntil;
};

/// Greedy: while the profile's peak is above `targetBytes`, evicts, over
/// the peak, the value away over a gap (between two of its reads, or, as
/// `gaps` says, from its producer to its first read) that frees the most
/// byte-ops per microsecond recomputed: its bytes times the ops of the run
/// over the target around the peak that its gap covers. Then every choice
/// that the peak reached no longer needs is undone, dearest per byte
/// first. The price of an eviction is its own
/// recomputation at the next read (the producer, and the producers of
/// inputs gone by then) plus the recomputations of it that earlier choices,
/// which read it inside the gap, now need (or, as RecomputeChains::Long
/// says, one recomputation before the first of them); each adds the bytes
/// it rebuilds, counted as `rebuilt` says, where it runs. A choice whose
/// recomputation runs more ops than `chains` allows is not considered;
/// `siblings` says what re-running a multi-output op brings back, `pick`
/// which candidate goes, `dead` what a recomputation does with an input
/// past its last use.
/// `stuck` says what it does where nothing over a peak can go.
/// Past `deadline`, where it counts its work, it chooses no more (the peak then
/// stays above the target): on a recurrent step a greedy that keeps finding
/// values to drop can price long chains for a minute.
ScheduledEvictions scheduleEvictions(
    const Graph &graph, const StepAnalysis &analysis, int64_t alignment,
    int64_t targetBytes, RebuiltBytes rebuilt, RecomputeChains chains,
    ScheduleGaps gaps = ScheduleGaps::BetweenReads,
    SiblingOutputs siblings = SiblingOutputs::Apart,
    ChoicePick pick = ChoicePick::BestRatio,
    DeadInputs dead = DeadInputs::Recomputed,
    StuckPeaks stuck = StuckPeaks::Stop, const Deadline &deadline = {});

} // namespace coop::planner

#endif // COOP_LIB_PLANNER_EVICTIONSCHEDULE_H
