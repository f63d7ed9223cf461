//===- Deadline.h - Where planning work stops -------------------*- C++ -*-===//
//
// The plan search stops after a count of work done, not at a time on the
// clock: the same step then gets the same plan on any machine under any
// load. Work is counted where it is done, weighted by what each piece
// costs; a wall-clock time may bound it as well, at the cost of that
// determinism.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_DEADLINE_H
#define COOP_PLANNER_DEADLINE_H

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

namespace coop::planner {

/// Units of planning work, each about 25 ns on the 2-core machine of
/// docs/test-suite.md: what each piece of work costs, fitted to the search's
/// time over the zoo (docs/planner.md, "The search's limit is its work").
constexpr int64_t kWorkPerSimulatedInstruction = 16;
constexpr int64_t kWorkPerScannedPiece = 2;
/// A gap the eviction schedule's greedy looks at, or a value a new price
/// looks at.
constexpr int64_t kWorkPerScheduleStep = 1;
constexpr int64_t kWorkPerPackedBuffer = 100;
/// PackResult::packingSteps: a unit is this many of them.
constexpr int64_t kPackingStepsPerWork = 20;
constexpr int64_t kWorkPerPackingNode = 2200;
/// searchPlan()'s default work limit: about 3.75 s on that machine.
constexpr int64_t kDefaultSearchWorkLimit = 150000000;

/// Planning work done so far.
class WorkMeter {
public:
  void add(int64_t units) { done_ += units; }
  int64_t done() const { return done_; }

private:
  int64_t done_ = 0;
};

/// When planning work stops: after a count of work on a meter, at a time on
/// the clock, or at whichever comes first. Default: never, and no work is
/// counted.
class Deadline {
public:
  using Clock = std::chrono::steady_clock;

  /// This one, also stopping `seconds` of the clock after `start`.
  Deadline withTimeLimit(Clock::time_point start, double seconds) const {
    Deadline deadline = *this;
    deadline.time_ =
        std::min(time_, start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(seconds)));
    return deadline;
  }
  /// This one's time, counting its work on `meter` (which outlives every
  /// copy) from now on and stopping after `units` more of it.
  Deadline withWorkLimit(WorkMeter *meter, int64_t units) const {
    Deadline deadline = *this;
    deadline.meter_ = meter;
    deadline.work_ = units < std::numeric_limits<int64_t>::max() - meter->done()
                         ? meter->done() + units
                         : std::numeric_limits<int64_t>::max();
    return deadline;
  }
  /// Never, but counting the work on the same meter.
  Deadline withoutLimit() const {
    Deadline deadline;
    deadline.meter_ = meter_;
    return deadline;
  }

  /// Whether the clock, rather than the work, has passed it.
  bool timePassed() const {
    return time_ != Clock::time_point::max() && Clock::now() >= time_;
  }
  /// Has it passed? (No clock read when it has no time.)
  bool passed() const {
    return (meter_ && meter_->done() >= work_) || timePassed();
  }
  /// 1/`shares` of the way from now to this deadline, in work and in time:
  /// the most one slow piece of work may take, so that the rest keeps some.
  Deadline share(int shares) const {
    Deadline deadline = *this;
    if (meter_ && work_ != std::numeric_limits<int64_t>::max() &&
        work_ > meter_->done())
      deadline.work_ = meter_->done() + (work_ - meter_->done()) / shares;
    if (time_ != Clock::time_point::max()) {
      const Clock::time_point now = Clock::now();
      if (time_ > now)
        deadline.time_ = now + (time_ - now) / shares;
    }
    return deadline;
  }
  /// Counts `units` of work done, where a meter counts it.
  void count(int64_t units) const {
    if (meter_)
      meter_->add(units);
  }

private:
  WorkMeter *meter_ = nullptr;
  int64_t work_ = std::numeric_limits<int64_t>::max();
  Clock::time_point time_ = Clock::time_point::max();
};

} // namespace coop::planner

#endif // COOP_PLANNER_DEADLINE_H
