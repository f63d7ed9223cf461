//===- EvictionSearchTest.cpp - Bounded victim search = every piece scored -===//
//
// The bounded eviction search (PlanOptions::boundedEvictionSearch) skips
// pieces by bounds on their scores; it must choose exactly the victims the
// reference, which scores every piece, chooses. Every policy plans
// generated steps of several sizes at several budgets both ways, and the
// plans must agree instruction by instruction, address by address.
//
//===----------------------------------------------------------------------===//

#include "PlanTestUtil.h"

#include <sstream>

using namespace coop::planner;
using namespace coop::planner::testing;

namespace {

std::string describe(const Allocation &a) {
  std::ostringstream os;
  os << a.tensor << "@" << a.offset << "+" << a.size << (a.inPlace ? "i" : "");
  return os.str();
}

/// One line per instruction with everything a plan says about it.
std::vector<std::string> describe(const Plan &plan) {
  std::vector<std::string> lines;
  for (const Allocation &a : plan.arguments)
    lines.push_back("arg " + describe(a));
  for (const Instruction &ins : plan.instructions) {
    std::ostringstream os;
    os << int(ins.kind) << " op " << ins.op << " tensor " << ins.tensor
       << " ws " << ins.workspaceOffset << "+" << ins.workspaceBytes;
    for (const Allocation &a : ins.outputs)
      os << " out " << describe(a);
    for (const Allocation &a : ins.discarded)
      os << " scratch " << describe(a);
    lines.push_back(os.str());
  }
  return lines;
}

struct Tally {
  int64_t plans = 0, evictingPlans = 0;
  int64_t boundedScored = 0, referenceScored = 0;
};

void compareBothWays(const Graph &g, PlanOptions o, Tally &tally) {
  Plan bounded, reference;
  o.boundedEvictionSearch = true;
  Status boundedStatus = simulate(g, o, &bounded);
  o.boundedEvictionSearch = false;
  Status referenceStatus = simulate(g, o, &reference);
  ASSERT_EQ(bool(boundedStatus), bool(referenceStatus));
  ASSERT_EQ(boundedStatus.message(), referenceStatus.message());
  const std::vector<std::string> a = describe(bounded),
                                 b = describe(reference);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(a[i], b[i]) << "instruction " << i;
  EXPECT_EQ(bounded.stats.evictionCount, reference.stats.evictionCount);
  EXPECT_EQ(bounded.stats.executedCostUs, reference.stats.executedCostUs);
  // Both walk the same pieces; the bounded search scores at most as many.
  EXPECT_EQ(bounded.stats.piecesScanned, reference.stats.piecesScanned);
  EXPECT_LE(bounded.stats.piecesScored, reference.stats.piecesScored);
  ++tally.plans;
  tally.evictingPlans += reference.stats.evictionCount > 0;
  tally.boundedScored += bounded.stats.piecesScored;
  tally.referenceScored += reference.stats.piecesScored;
}

TEST(EvictionSearch, BoundedSearchChoosesTheReferenceVictims) {
  Tally tally;
  for (int32_t layers : {6, 30, 120}) {
    for (uint64_t seed : {1, 2}) {
      Graph g;
      TrainingGraphShape shape;
      shape.layers = layers;
      shape.batchNormProbability = seed == 2 ? 0.5 : 0.0;
      ASSERT_OK(generateTrainingGraph(seed, shape, &g));
      const int64_t livePeak = computeMemoryStats(g).peakLiveBytes;
      for (double ratio : {0.9, 0.7, 0.5, 0.35}) {
        for (Policy policy :
             {Policy::Coop, Policy::DTR, Policy::DTE, Policy::Lookahead}) {
          for (bool window : {true, false}) {
            if (!window && (policy == Policy::DTR || policy == Policy::DTE))
              continue; // they never slide a window
            SCOPED_TRACE(std::to_string(layers) + " layers, seed " +
                         std::to_string(seed) + ", ratio " +
                         std::to_string(ratio) + ", " + policyName(policy) +
                         (window ? "" : " without window"));
            PlanOptions o;
            o.policy = policy;
            o.slidingWindow = window;
            o.budgetBytes = int64_t(ratio * double(livePeak));
            compareBothWays(g, o, tally);
          }
        }
      }
    }
  }
  // The comparison means something only if searches ran and skipped.
  EXPECT_GT(tally.evictingPlans, tally.plans / 2);
  EXPECT_LT(tally.boundedScored, tally.referenceScored);
}

} // namespace
