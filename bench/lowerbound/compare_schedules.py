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

    # The stages at which each schedule reads each value: the Runs of its
    # readers and the recomputations of them.
    def reads_of(schedule_name):
        reads = collections.defaultdict(set)
        for k, op in enumerate(ops):
            if not op["isView"]:
                for t in op["inputs"]:
                    reads[tensors[t]["content"]].add(stage_of[k])
        for op, at in recomputes[schedule_name].items():
            for t in ops[op]["inputs"]:
                reads[tensors[t]["content"]].update(at)
        return reads

    held = {name: {int(v): set(ts) for v, ts in schedule["resident"].items()}
            for name, schedule in schedules}
    reads = {name: reads_of(name) for name, _ in schedules}
    lasts = {name: {v: max(at) for v, at in reads[name].items()}
             for name, _ in schedules}

    # Held only to be dropped: boundaries after a value's last read (or its
    # making) before it is dropped and later made again; the bytes there
    # buy nothing, and dropping it right after that read costs nothing.
    # (Where memory does not bind the solver is indifferent: the
    # incumbent's count means little.)
    for name, _ in schedules:
        per_boundary = collections.Counter()
        worst = []
        for v, boundaries in held[name].items():
            for b in boundaries:
                if b + 1 in boundaries or lasts[name].get(v, -1) <= b:
                    continue  # still resident, or not needed again
                before = [u for u in reads[name][v] if u < b]
                made = [t - 1 for t in boundaries if t <= b and t - 1 not in boundaries]
                u = max(before + made)
                # Boundary u+1 is the instant right after the Run of stage
                # u, where the value is still io of that op: not counted.
                if b < u + 2:
                    continue
                for t in range(u + 2, b + 1):
                    per_boundary[t] += tensors[v]["bytes"]
                worst.append((tensors[v]["bytes"] * (b - u - 1), v, u, b))
        if not per_boundary:
            print("%s: no value is held past its last read before a drop" % name)
            continue
        at, most = per_boundary.most_common(1)[0]
        print("%s: values held past their last read before a drop: %.0f MiB "
              "at boundary %d at most, %.1f GiB-boundaries in all" % (
                  name, most / MIB, at,
                  sum(per_boundary.values()) / (1 << 30)))
        for _, v, u, b in sorted(worst, reverse=True)[:8]:
            print("  value %4d %-30s %7.1f MiB, read at stage %3d, dropped "
                  "after boundary %3d" % (v, kind(tensors[v]["producer"])[:30],
                                         tensors[v]["bytes"] / MIB, u, b))

    rows = []
    for v in set(held["plan"]) | set(held["incumbent"]):
        needed = {}
        for name, _ in schedules:
            until = lasts[name].get(v, -1)
            needed[name] = {t for t in held[name].get(v, ()) if t <= until}
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
