//===- PlannerBench.cpp - Planning time per policy and graph size ---------===//
//
// BM_Plan10k: one simulated plan (simulate(), the online policy) of a
// generated ~10,000-op training step per policy, at 0.7 of its
// no-rematerialization live peak.
// BM_PlanSearch10k: the same with plan(): the simulated arenas it searches,
// each plan repacked offline.
// BM_CoopScaling, BM_LookaheadScaling: simulate() at 1k..100k ops;
// `pieces_per_search` counts the pieces each search walks (those above the
// persistent state), `scored_per_search` those whose score it computed, and
// `ns_per_piece` (eviction-search time / pieces walked) stays flat when
// each search is linear in the pieces it walks.
//
//===----------------------------------------------------------------------===//

#include "coop/Planner/GraphGenerator.h"
#include "coop/Planner/Plan.h"

#include <benchmark/benchmark.h>

#include <map>
#include <memory>

using namespace coop::planner;

namespace {

struct Workload {
  Graph graph;
  int64_t livePeak = 0; // no-rematerialization peak of live bytes
  std::string error;
};

/// A generated training step of about `ops` ops (cached across runs).
const Workload &workload(int32_t ops) {
  static std::map<int32_t, std::unique_ptr<Workload>> cache;
  std::unique_ptr<Workload> &slot = cache[ops];
  if (slot)
    return *slot;
  slot = std::make_unique<Workload>();
  // Size the graph from the op count of a 100-layer probe.
  TrainingGraphShape shape;
  shape.layers = 100;
  Status st = generateTrainingGraph(1, shape, &slot->graph);
  if (st) {
    const double opsPerLayer = double(slot->graph.ops.size()) / 100.0;
    shape.layers = std::max(1, int32_t(double(ops) / opsPerLayer + 0.5));
    st = generateTrainingGraph(1, shape, &slot->graph);
  }
  if (!st)
    slot->error = st.message();
  slot->livePeak = computeMemoryStats(slot->graph).peakLiveBytes;
  return *slot;
}

using PlanFunction = Status (*)(const Graph &, const PlanOptions &, Plan *);

void planOnce(benchmark::State &state, PlanFunction planner, Policy policy,
              int32_t ops, double ratio) {
  const Workload &w = workload(ops);
  if (!w.error.empty()) {
    state.SkipWithError(w.error.c_str());
    return;
  }
  PlanOptions o;
  o.policy = policy;
  o.budgetBytes = int64_t(ratio * double(w.livePeak));
  Plan p;
  for (auto _ : state) {
    Status st = planner(w.graph, o, &p);
    if (!st) {
      state.SkipWithError(st.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(p.instructions.data());
  }
  const PlanStats &s = p.stats;
  state.counters["ops"] = double(w.graph.ops.size());
  state.counters["evictions"] = double(s.evictionCount);
  state.counters["recomputes"] = double(s.recomputeCount);
  state.counters["overhead"] = s.computeOverhead;
  state.counters["frag"] = s.fragmentationRate;
  state.counters["search_ms"] = s.evictionSearchSeconds * 1e3;
  auto perSearch = [&](int64_t count) {
    return s.evictionEvents ? double(count) / double(s.evictionEvents) : 0.0;
  };
  state.counters["pieces_per_search"] = perSearch(s.piecesScanned);
  state.counters["scored_per_search"] = perSearch(s.piecesScored);
  state.counters["unread_blocks_per_search"] =
      perSearch(s.blocksPassedUnread);
  state.counters["ns_per_piece"] =
      s.piecesScanned ? s.evictionSearchSeconds * 1e9 / double(s.piecesScanned)
                      : 0.0;
}

/// Budget as a fraction of the live peak; every policy plans the 10k-op
/// step at 0.7 and the whole scaling series at 0.8.
constexpr double kRatio10k = 0.7;
constexpr double kScalingRatio = 0.8;

void BM_Plan10k(benchmark::State &state) {
  planOnce(state, simulate, static_cast<Policy>(state.range(0)), 10000,
           kRatio10k);
  state.SetLabel(policyName(static_cast<Policy>(state.range(0))));
}
BENCHMARK(BM_Plan10k)
    ->Arg(int(Policy::Coop))
    ->Arg(int(Policy::DTR))
    ->Arg(int(Policy::DTE))
    ->Arg(int(Policy::Lookahead))
    ->Unit(benchmark::kMillisecond);

void BM_PlanSearch10k(benchmark::State &state) {
  planOnce(state, plan, static_cast<Policy>(state.range(0)), 10000,
           kRatio10k);
  state.SetLabel(policyName(static_cast<Policy>(state.range(0))));
}
BENCHMARK(BM_PlanSearch10k)
    ->Arg(int(Policy::Coop))
    ->Arg(int(Policy::DTR))
    ->Arg(int(Policy::DTE))
    ->Unit(benchmark::kMillisecond);

/// The default planner, every candidate (no time limit).
void BM_SearchPlan10k(benchmark::State &state) {
  planOnce(
      state,
      [](const Graph &g, const PlanOptions &o, Plan *p) {
        PlanOptions unlimited = o;
        unlimited.searchWorkLimit = 0;
        return searchPlan(g, unlimited, p);
      },
      Policy::Lookahead, 10000, kRatio10k);
}
BENCHMARK(BM_SearchPlan10k)->Unit(benchmark::kMillisecond);

void BM_CoopScaling(benchmark::State &state) {
  planOnce(state, simulate, Policy::Coop, int32_t(state.range(0)),
           kScalingRatio);
}
BENCHMARK(BM_CoopScaling)
    ->Arg(1000)
    ->Arg(2000)
    ->Arg(5000)
    ->Arg(10000)
    ->Arg(20000)
    ->Arg(50000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

void BM_LookaheadScaling(benchmark::State &state) {
  planOnce(state, simulate, Policy::Lookahead, int32_t(state.range(0)),
           kScalingRatio);
}
BENCHMARK(BM_LookaheadScaling)
    ->Arg(10000)
    ->Arg(50000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
