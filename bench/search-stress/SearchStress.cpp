//===- SearchStress.cpp - The plan search on many generated steps ---------===//
//
// Plans generated training steps of random shapes, with random options
// (alignment, two-ended placement, in-place recomputation, work limit), at
// budgets from just above the floor to `none`'s arena, by the default plan
// search, and checks what searchPlan() promises: every plan verifies, the
// same input gives the same plan, and with no work limit the search plans
// wherever a single policy does and is never worse than one. Whether a
// larger budget plans with no more overhead is counted, not required (it is
// not guaranteed). Exits 1 if a promise is broken.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/GraphGenerator.h"
#include "coop/Planner/Plan.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace coop::planner;

namespace {

struct Options {
  uint64_t firstSeed = 0, lastSeed = 20;
  /// -1: drawn per seed among none, 200,000, 3,000,000 and the default.
  int64_t workLimit = -1;
  int budgets = 9;
};

struct Tally {
  int plans = 0, failures = 0;
  int broken = 0; // promises broken
  int notMonotone = 0;
};

/// A step and options drawn from `seed`.
Status drawStep(uint64_t seed, const Options &run, Graph *graph,
                PlanOptions *options) {
  std::mt19937_64 rng(seed * 104729 + 3);
  auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * double(rng() % 10000) / 10000.0;
  };
  TrainingGraphShape shape;
  shape.layers = 2 + int32_t(rng() % 20);
  shape.skipProbability = uniform(0, 0.8);
  shape.inPlaceProbability = uniform(0, 1.0);
  shape.oldValueProbability = uniform(0, 1.0);
  shape.dropoutProbability = uniform(0, 0.6);
  shape.viewProbability = uniform(0, 0.6);
  shape.workspaceProbability = uniform(0, 0.8);
  shape.batchNormProbability = seed % 2 == 0 ? uniform(0.1, 1.0) : 0.0;
  shape.minActivationBytes = int64_t(256) << (rng() % 4);
  shape.maxActivationBytes = shape.minActivationBytes * (2 << (rng() % 8));
  shape.minParameterBytes = int64_t(64) << (rng() % 4);
  shape.maxParameterBytes = shape.minParameterBytes * (2 << (rng() % 6));
  options->alignment = int64_t(1) << (rng() % 10);
  options->twoEndedPartitioning = rng() % 2 == 0;
  options->recomputableInPlace = rng() % 3 != 0;
  const int64_t limits[] = {0, 200000, 3000000, kDefaultSearchWorkLimit};
  const int64_t drawn = limits[rng() % 4];
  options->searchWorkLimit = run.workLimit >= 0 ? run.workLimit : drawn;
  return generateTrainingGraph(seed, shape, graph);
}

bool sameAllocations(const std::vector<Allocation> &a,
                     const std::vector<Allocation> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].tensor != b[i].tensor || a[i].offset != b[i].offset ||
        a[i].size != b[i].size || a[i].inPlace != b[i].inPlace)
      return false;
  return true;
}

/// The same instructions at the same addresses, found with the same work.
bool samePlan(const Plan &a, const Plan &b) {
  if (a.instructions.size() != b.instructions.size() ||
      a.stats.searchWork != b.stats.searchWork)
    return false;
  for (size_t i = 0; i < a.instructions.size(); ++i) {
    const Instruction &x = a.instructions[i], &y = b.instructions[i];
    if (x.kind != y.kind || x.op != y.op || x.tensor != y.tensor ||
        x.workspaceOffset != y.workspaceOffset ||
        x.workspaceBytes != y.workspaceBytes ||
        !sameAllocations(x.outputs, y.outputs) ||
        !sameAllocations(x.discarded, y.discarded))
      return false;
  }
  return true;
}

void stressSeed(uint64_t seed, const Options &run, Tally &tally) {
  Graph graph;
  PlanOptions base;
  if (Status st = drawStep(seed, run, &graph, &base); !st) {
    std::printf("seed %llu: %s\n", (unsigned long long)seed,
                st.message().c_str());
    ++tally.broken;
    return;
  }
  StepBounds bounds;
  if (Status st = stepBounds(graph, base, &bounds); !st) {
    std::printf("seed %llu: none: %s\n", (unsigned long long)seed,
                st.message().c_str());
    ++tally.broken;
    return;
  }
  const long long limit = (long long)base.searchWorkLimit;
  bool plannedBelow = false;
  double costBelow = 0;
  for (int k = 0; k < run.budgets; ++k) {
    // Just above the floor, then evenly up to `none`'s arena.
    const double fraction = k == 0 ? 0.02 : double(k) / (run.budgets - 1);
    PlanOptions options = base;
    options.budgetBytes = budgetBetween(bounds, fraction);
    auto report = [&](const char *what, const std::string &detail) {
      std::printf("seed %llu, budget %lld (limit %lld): %s%s\n",
                  (unsigned long long)seed, (long long)options.budgetBytes,
                  limit, what, detail.c_str());
    };
    Plan searched, again;
    const Status st = searchPlan(graph, options, &searched);
    const Status stAgain = searchPlan(graph, options, &again);
    if (bool(st) != bool(stAgain) || (st && !samePlan(searched, again))) {
      report("not deterministic", "");
      ++tally.broken;
    }
    double cheapest = -1;
    for (Policy policy :
         {Policy::Coop, Policy::DTR, Policy::DTE, Policy::Lookahead}) {
      PlanOptions alone = options;
      alone.policy = policy;
      Plan p;
      if (plan(graph, alone, &p) &&
          (cheapest < 0 || p.stats.executedCostUs < cheapest))
        cheapest = p.stats.executedCostUs;
    }
    if (!st) {
      ++tally.failures;
      if (st.message().empty()) {
        report("failed without a message", "");
        ++tally.broken;
      }
      if (cheapest >= 0 && options.searchWorkLimit == 0) {
        report("no plan where a policy plans: ", st.message());
        ++tally.broken;
      }
      if (plannedBelow) {
        report("no plan where a smaller budget planned: ", st.message());
        ++tally.notMonotone;
      }
      continue;
    }
    ++tally.plans;
    if (Status verified = verifyPlan(graph, searched, options.budgetBytes);
        !verified) {
      report("the verifier rejects the plan: ", verified.message());
      ++tally.broken;
    }
    const double cost = searched.stats.executedCostUs;
    if (options.searchWorkLimit == 0 && cheapest >= 0 && cost > cheapest) {
      report("worse than a policy alone: ",
             std::to_string(cost) + " us against " + std::to_string(cheapest));
      ++tally.broken;
    }
    if (plannedBelow && cost > costBelow) {
      report("costs more than a smaller budget's plan: ",
             std::to_string(cost) + " us against " + std::to_string(costBelow));
      ++tally.notMonotone;
    }
    plannedBelow = true;
    costBelow = cost;
  }
}

bool parseSeeds(const char *text, Options *run) {
  char *end = nullptr;
  run->firstSeed = std::strtoull(text, &end, 10);
  if (*end != ':')
    return false;
  run->lastSeed = std::strtoull(end + 1, &end, 10);
  return *end == '\0' && run->lastSeed > run->firstSeed;
}

} // namespace

int main(int argc, char **argv) {
  Options run;
  for (int i = 1; i < argc; ++i) {
    const bool hasValue = i + 1 < argc;
    if (!std::strcmp(argv[i], "--seeds") && hasValue &&
        parseSeeds(argv[i + 1], &run)) {
      ++i;
    } else if (!std::strcmp(argv[i], "--work-limit") && hasValue) {
      run.workLimit = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--budgets") && hasValue &&
               std::atoi(argv[i + 1]) >= 2) {
      run.budgets = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: coop-search-stress [--seeds FIRST:END] "
                           "[--work-limit N] [--budgets N>=2]\n");
      return 2;
    }
  }
  Tally tally;
  for (uint64_t seed = run.firstSeed; seed < run.lastSeed; ++seed) {
    stressSeed(seed, run, tally);
    std::fflush(stdout);
  }
  std::printf("%llu steps: %d plans, %d failures, %d promises broken, %d "
              "budgets not monotone\n",
              (unsigned long long)(run.lastSeed - run.firstSeed), tally.plans,
              tally.failures, tally.broken, tally.notMonotone);
  return tally.broken == 0 ? 0 : 1;
}
