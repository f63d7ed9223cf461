#!/usr/bin/env python3
"""What the MILP's incumbent does differently from our plan.

    python3 bench/lowerbound/compare_schedules.py GRAPH.json RESULTS.json

RESULTS.json is checkmate_bound.py's --json from a run with --start-plan
(the plan's schedule, "start") and a MILP incumbent ("incumbent"). Prints,
for each, its recomputations by op kind; then the ops only one of them
recomputes (or recomputes in more stages), with their cost, the bytes of
their fresh outputs and the cost per MiB; then the values one of them
keeps resident where the other drops them, counted in boundaries up to the
value's last use in that schedule (what happens after it is free either
way). Needs no solver.
"""
import argparse
import collections
import json
import sys

MIB = float(1 << 20)


def recomputed_stages(schedule):
    """op -> the stages that recompute it."""
    stages = collections.defaultdict(list)
    for stage in schedule["stages"]:
        for op in stage["recomputes"]:
            stages[op].append(stage["stage"])
    return stages


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graph", help="JSON from coop-dump-graph")
    parser.add_argument("results", help="checkmate_bound.py --json output")
    parser.add_argument("--ratio", type=float,
                        help="the result at this ratio (default: the first "
                             "with both schedules)")
    args = parser.parse_args(argv)
    with open(args.graph) as f:
        graph = json.load(f)
    with open(args.results) as f:
        results = json.load(f)
    chosen = [r for r in results if "start" in r and "incumbent" in r and
              (args.ratio is None or abs(r["ratio"] - args.ratio) < 1e-9)]
    if not chosen:
        print("compare_schedules: error: %s has no result with both a start "
              "plan and an incumbent%s" % (
                  args.results, "" if args.ratio is None
                  else " at ratio %g" % args.ratio), file=sys.stderr)
        return 1
    result = chosen[0]
    if result["step"] != graph["step"]:
        print("compare_schedules: error: %s is for %s, %s is %s" % (
            args.results, result["step"], args.graph, graph["step"]),
            file=sys.stderr)
        return 1
    ops, tensors = graph["ops"], graph["tensors"]
    baseline = graph["baselineCostUs"]
    stage_of = {k: s for s, k in enumerate(
        k for k, op in enumerate(ops) if not op["isView"])}

    def kind(op):
        return ops[op]["name"].split("#")[0]

    def fresh_bytes(op):
        return sum(tensors[o]["bytes"] for o in ops[op]["outputs"]
                   if tensors[o]["previousVersion"] < 0)

    schedules = (("plan", result["start"]), ("incumbent", result["incumbent"]))
    print("%s at ratio %g (budget %d B)" % (result["step"], result["ratio"],
                                            result["budget"]))
    recomputes = {}
    for name, schedule in schedules:
        stages = recomputed_stages(schedule)
        recomputes[name] = stages
        count, cost = collections.Counter(), collections.Counter()
        for op, at in stages.items():
            count[kind(op)] += len(at)
            cost[kind(op)] += len(at) * ops[op]["costUs"]
        print("%s: %.2f %% overhead, %d recomputations of %d ops" % (
            name, 100 * schedule["costUs"] / baseline,
            sum(count.values()), len(stages)))
        for op_kind, us in cost.most_common():
            print("  %-36s %3d x  %6.2f %%" % (op_kind, count[op_kind],
                                               100 * us / baseline))

    for this, other in (("plan", "incumbent"), ("incumbent", "plan")):
        mine, theirs = recomputes[this], recomputes[other]
        more = sorted(op for op in mine if len(mine[op]) > len(theirs.get(op, [])))
        print("recomputed by the %s only (or in more stages): %d ops, %.2f %%" % (
            this, len(more), 100 * sum(
                (len(mine[op]) - len(theirs.get(op, []))) * ops[op]["costUs"]
                for op in more) / baseline))
        for op in more:
            size = fresh_bytes(op) / MIB
            print("  op %4d (stage %3d) %-32s %8.1f us, %7.1f MiB fresh%s, "
                  "in stages %s (the %s: %s)" % (
                      op, stage_of[op], kind(op)[:32], ops[op]["costUs"], size,
                      ", %.2f us/MiB" % (ops[op]["costUs"] / size) if size else "",
                      mine[op], other, theirs.get(op, "none")))

    # Boundaries a schedule needs a value at: up to its last use, the last
    # stage that reads it (a Run or a recomputation) in that schedule.
    def last_use(schedule_name):
        last = {}
        for k, op in enumerate(ops):
            if op["isView"]:
                continue
            for t in op["inputs"]:
                c = tensors[t]["content"]
                last[c] = max(last.get(c, -1), stage_of[k])
        for op, at in recomputes[schedule_name].items():
            for t in ops[op]["inputs"]:
                c = tensors[t]["content"]
                last[c] = max(last.get(c, -1), max(at))
        return last

    held = {name: {int(v): ts for v, ts in schedule["resident"].items()}
            for name, schedule in schedules}
    lasts = {name: last_use(name) for name, _ in schedules}
    rows = []
    for v in set(held["plan"]) | set(held["incumbent"]):
        needed = {}
        for name, _ in schedules:
            until = lasts[name].get(v, -1)
            needed[name] = {t for t in held[name].get(v, []) if t <= until}
        gained = len(needed["incumbent"] - needed["plan"])
        lost = len(needed["plan"] - needed["incumbent"])
        if gained or lost:
            rows.append((v, gained, lost))
    print("values resident at more (+) or fewer (-) boundaries in the "
          "incumbent than in the plan, up to their last use: %d" % len(rows))
    for v, gained, lost in sorted(rows):
        producer = tensors[v]["producer"]
        print("  value %4d %-30s %7.1f MiB, made in stage %3d: +%d -%d" % (
            v, kind(producer)[:30], tensors[v]["bytes"] / MIB,
            stage_of[producer], gained, lost))
    return 0


if __name__ == "__main__":
    sys.exit(main())
