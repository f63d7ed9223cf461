#!/usr/bin/env python3
"""Checkmate-style lower bound on the recomputation overhead of a step.

    python3 bench/lowerbound/checkmate_bound.py GRAPH.json --ratio 0.5 [--ratio 0.3]
            [--mode milp|lp] [--time-limit 240] [--json OUT.json]

GRAPH.json is written by coop-dump-graph. The budget is B = ratio x the
arena policy `none` needs (the graph's noneArenaBytes), the same bytes
`--coop-plan-memory="ratio=R"` plans into. The model is Checkmate's (Jain et
al., MLSys 2020) with one stage per non-view op, relaxed wherever our
planner could do something Checkmate's schedule cannot; README.md lists
every simplification and why the optimum stays a lower bound on the
overhead of every plan the planner can produce.

Variables (stage t runs op t; boundary t is the instant right after the Run
of stage t-1's op):
  R[t,i]  op i (recomputable, i < t) is executed in stage t       binary
  S[t,v]  transient value v is resident at boundary t               binary
  K[t,v]  v is resident through all of stage t                      >= 0
Constraints:
  dependencies  R[t,i] <= S[t,v] + R[t,producer(v)] per input v of i
                (and 1 <= ... for the Run of op t)
  residency     S[t+1,v] <= S[t,v] + R[t,producer(v)]
  K             K[t,v] >= S[t,v] + S[t+1,v] - 1 - R[t,producer(v)]
  Run memory    what is resident right after op t ran, plus op t's inputs
                and fresh outputs, fits B
  recompute     the values held through stage t (K), plus the inputs and
                fresh outputs of a recomputed op, fit B
  step outputs  resident at the last boundary
Objective: minimise sum cost(i) R[t,i]; overhead = that / the step's cost.

With --mode milp (the default) HiGHS solves the MILP under the time limit;
the bound reported is its proven dual bound (the optimum when it finishes),
or, if it proved none above 0 in time, the LP relaxation's, solved with
the same limit, when that is higher.
With --mode lp the integrality is relaxed: the LP optimum is also a lower
bound, a weaker one. A bench tool: it needs highspy (pip install highspy)
and says so, without failing, when it is missing.
"""
import argparse
import json
import sys
import time

MIB = float(1 << 20)
LP_SOLVER = [""]  # HiGHS "solver" option for --mode lp ("" = its default)


class Problem:
    """The step as the bound sees it: stages, transient values, and which
    op may run when."""

    def __init__(self, graph):
        self.graph = graph
        tensors, ops = graph["tensors"], graph["ops"]
        self.stages = [k for k, op in enumerate(ops) if not op["isView"]]
        stage_of = {k: s for s, k in enumerate(self.stages)}
        n = self.N = len(self.stages)

        def transient(t):
            c = tensors[t]["content"]
            # Arguments are placed before the first op and never evicted;
            # the persistent ones are counted once below. A transient
            # argument would be free and always available here (a
            # relaxation); the zoo has none.
            if tensors[c]["persistent"] or tensors[c]["producer"] < 0:
                return None
            return c

        # Persistent bytes: one buffer per persistent storage, resident
        # from the first op to the last (versions share it).
        self.persistent_bytes = sum(
            t["bytes"] for t in tensors
            if t["persistent"] and t["viewOf"] < 0 and t["previousVersion"] < 0)
        self.transient_args = sum(
            1 for t in tensors if t["producer"] < 0 and not t["persistent"])

        # Per stage: transient inputs of the Run, inputs of a recomputation
        # (a discardable op does not read what it overwrites), fresh and
        # in-place transient outputs.
        self.run_in, self.rec_in, self.fresh, self.inplace = [], [], [], []
        self.recomputable = []
        persistent_reads = []  # persistent contents a recomputation reads
        last_read = {}         # content -> last stage reading it
        overwriter = {}        # content -> stage of the op overwriting it
        for s, k in enumerate(self.stages):
            op = ops[k]
            outs = op["outputs"]
            prev = [tensors[o]["previousVersion"] for o in outs]
            in_place = [p >= 0 for p in prev]
            persistent_out = [tensors[o]["persistent"] for o in outs]
            # The planner's rule (Planner.cpp, analyse): no op writing
            # persistent state, no multi-output op with an in-place output,
            # except a discardable op whose in-place outputs are all
            # persistent and fresh outputs all transient.
            rerun = bool(outs) and not any(persistent_out)
            rerun = rerun and not (any(in_place) and len(outs) > 1)
            discards = (op["discardableInPlace"] and any(in_place)
                        and not all(in_place)
                        and all(po for po, ip in zip(persistent_out, in_place) if ip)
                        and not any(po for po, ip in zip(persistent_out, in_place) if not ip))
            rerun = rerun or discards
            self.recomputable.append(rerun)
            overwritten = set(p for p in prev if p >= 0) if discards else set()
            run_in, rec_in, reads = [], [], []
            for t in op["inputs"]:
                c = tensors[t]["content"]
                last_read[c] = s
                v = transient(t)
                if v is not None:
                    if v not in run_in:
                        run_in.append(v)
                    if t not in overwritten and v not in rec_in:
                        rec_in.append(v)
                elif t not in overwritten and tensors[c]["persistent"]:
                    reads.append(c)
            for p in prev:
                if p >= 0:
                    overwriter[tensors[p]["content"]] = s
            self.run_in.append(run_in)
            self.rec_in.append(rec_in)
            persistent_reads.append(reads)
            self.fresh.append([o for o, ip in zip(outs, in_place)
                               if not ip and transient(o) is not None])
            self.inplace.append([o for o, ip in zip(outs, in_place)
                                 if ip and transient(o) is not None])

        # A persistent version is readable until it is overwritten or, if
        # the update copied it, until its last reader: the planner's avail()
        # of persistent values (their last use). The final version forever.
        def avail(c):
            if c not in overwriter:
                return n
            return max(overwriter[c], last_read.get(c, -1))

        self.avail_until = [min([avail(c) for c in persistent_reads[s]] + [n])
                            for s in range(n)]

        self.producer = {}  # transient value -> stage of its producer
        for s in range(n):
            for v in self.fresh[s] + self.inplace[s]:
                self.producer[v] = s
        self.bytes = {v: tensors[v]["bytes"] for v in self.producer}
        outputs = set()
        for i, t in enumerate(tensors):
            if t["isStepOutput"]:
                v = transient(i)
                if v is not None:
                    outputs.add(v)
        self.step_outputs = outputs

        # Latest stage at which running op s, or holding value v, can
        # matter (pruning that keeps the bound, README.md): need(v) is the
        # latest stage any reader of v may run at; an op is worth running
        # no later than its outputs are needed.
        need = {v: (n if v in outputs else self.producer[v]) for v in self.producer}
        self.last = [0] * n
        for s in reversed(range(n)):
            last = s
            if self.recomputable[s]:
                for v in self.fresh[s] + self.inplace[s]:
                    last = max(last, need[v])
                last = max(s, min(last, self.avail_until[s]))
            self.last[s] = last
            for v in self.run_in[s]:
                need[v] = max(need[v], s)
            if self.recomputable[s] and last > s:
                for v in self.rec_in[s]:
                    need[v] = max(need[v], last)
        self.need = need


def build_model(p):
    """Columns and rows in plain lists; the budget enters only the upper
    bounds of the memory rows (memory_rows), so one build serves every
    ratio."""
    n = p.N
    cost, lo, hi, integer = [], [], [], []

    def col(c, lower, upper, is_int):
        cost.append(c)
        lo.append(lower)
        hi.append(upper)
        integer.append(is_int)
        return len(cost) - 1

    ops = p.graph["ops"]
    R = {}  # (t, s) -> column
    for s in range(n):
        if p.recomputable[s]:
            c = ops[p.stages[s]]["costUs"]
            for t in range(s + 1, p.last[s] + 1):
                if t < n:
                    R[(t, s)] = col(c, 0.0, 1.0, True)
    S = {}  # (t, v) -> column, boundary t in producer+1 .. need
    for v, s in p.producer.items():
        for t in range(s + 1, p.need[v] + 1):
            S[(t, v)] = col(0.0, 1.0 if (t == n and v in p.step_outputs) else 0.0,
                            1.0, True)
    has_rec = [False] * n
    for (t, _s) in R:
        has_rec[t] = True

    rows_lo, rows_hi, starts, index, value, kinds = [], [], [], [], [], []
    kind = ["?"]

    def row(lower, upper, entries):
        kinds.append(kind[0])
        rows_lo.append(lower)
        rows_hi.append(upper)
        starts.append(len(index))
        for c, a in entries:
            index.append(c)
            value.append(a)
        return len(rows_lo) - 1

    INF = float("inf")

    def available(t, v):
        """Entries of S[t,v] + R[t,producer(v)] (those that exist)."""
        e = []
        if (t, v) in S:
            e.append((S[(t, v)], 1.0))
        if (t, p.producer[v]) in R:
            e.append((R[(t, p.producer[v])], 1.0))
        return e

    kind[0] = "dependency"
    for t in range(n):
        for v in p.run_in[t]:
            if p.producer[v] == t:
                continue
            e = available(t, v)
            row(1.0, INF, e)  # an empty row makes the model infeasible
    for (t, s), r in R.items():
        for v in p.rec_in[s]:
            row(0.0, INF, available(t, v) + [(r, -1.0)])
    kind[0] = "residency"
    for (t1, v), c in S.items():
        t = t1 - 1
        if t == p.producer[v]:
            continue
        row(-INF, 0.0, [(c, 1.0)] + [(a, -1.0) for a, _ in available(t, v)])
    kind[0] = "K"  # and M_t = sum bytes K
    K = {}
    per_stage_k = [[] for _ in range(n)]
    for (t, v), c in S.items():
        if t < n and has_rec[t] and (t + 1, v) in S:
            k = col(0.0, 0.0, INF, False)
            K[(t, v)] = k
            per_stage_k[t].append((k, p.bytes[v] / MIB))
            e = [(k, 1.0), (c, -1.0), (S[(t + 1, v)], -1.0)]
            if (t, p.producer[v]) in R:
                e.append((R[(t, p.producer[v])], 1.0))
            row(-1.0, INF, e)
    M = {}
    for t in range(n):
        if has_rec[t]:
            M[t] = col(0.0, 0.0, INF, False)
            row(0.0, 0.0, [(M[t], 1.0)] + [(k, -b) for k, b in per_stage_k[t]])

    # Memory rows: (row, bytes that do not depend on the variables).
    memory_rows = []
    per_boundary = [[] for _ in range(n + 1)]
    for (t, v), c in S.items():
        per_boundary[t].append((v, c))
    kind[0] = "run memory"
    for t in range(n):
        io = set(p.run_in[t]) | set(p.fresh[t])
        skip = io | set(p.inplace[t])  # in place: the operand's buffer
        fixed = sum(p.bytes[v] for v in io)
        e = [(c, p.bytes[v] / MIB) for v, c in per_boundary[t + 1] if v not in skip]
        memory_rows.append((row(-INF, 0.0, e), fixed))
    kind[0] = "recompute memory"
    for (t, s), r in R.items():
        io = list(dict.fromkeys(p.rec_in[s] + p.fresh[s]))
        fixed = sum(p.bytes[v] for v in io)
        e = [(M[t], 1.0), (r, fixed / MIB)]
        e += [(K[(t, v)], -p.bytes[v] / MIB) for v in io if (t, v) in K]
        memory_rows.append((row(-INF, 0.0, e), 0))
    starts.append(len(index))
    return dict(cost=cost, lo=lo, hi=hi, integer=integer, rows_lo=rows_lo,
                rows_hi=rows_hi, starts=starts, index=index, value=value,
                memory_rows=memory_rows, R=R, S=S, K=K, M=M, kinds=kinds)


def plan_point(p, model, plan):
    """The planner's plan as a point of the model: R[t,i] = op i ran in
    stage t, S[t,v] = v resident right after the Run of stage t-1, K and M
    from those; then projected onto the pruned columns as README.md argues.
    Returns (x, the plan's recomputation cost, pruned executions)."""
    tensors, ops = p.graph["tensors"], p.graph["ops"]
    stage_of = {k: s for s, k in enumerate(p.stages)}
    x = [0.0] * len(model["cost"])
    resident = set()
    t, cost, pruned = 0, 0.0, 0
    for ins in plan["instructions"]:
        if ins["kind"] in ("evict", "free"):
            resident.discard(tensors[ins["tensor"]]["content"])
            continue
        k = ins["op"]
        if ins["kind"] == "recompute":
            cost += ops[k]["costUs"]
        for out in ins["inPlace"]:
            prev = tensors[out]["previousVersion"]
            resident.discard(tensors[prev]["content"])
        for out in ins["outputs"]:
            if out in p.producer:
                resident.add(out)
        if ops[k]["isView"]:
            continue
        s = stage_of[k]
        if ins["kind"] == "recompute":
            if (t, s) in model["R"]:
                x[model["R"][(t, s)]] = 1.0
            else:
                pruned += 1
            continue
        assert s == t, "run of stage %d in stage %d" % (s, t)
        t += 1
        for v in resident:
            if (t, v) in model["S"]:
                x[model["S"][(t, v)]] = 1.0

    def val(d, key):
        return x[d[key]] if key in d else 0.0
    for (t, v), c in model["K"].items():
        x[c] = max(0.0, val(model["S"], (t, v)) + val(model["S"], (t + 1, v))
                   - 1.0 - val(model["R"], (t, p.producer[v])))
    for t, c in model["M"].items():
        x[c] = 0.0
    # M_t = sum bytes K[t,v]
    for (t, v), c in model["K"].items():
        x[model["M"][t]] += p.bytes[v] / MIB * x[c]
    return x, cost, pruned


def check_plan(p, model, plan, baseline):
    """Every row and column bound of the model at the plan's point, at the
    plan's own budget. Returns the number of violations."""
    x, cost, pruned = plan_point(p, model, plan)
    row_hi = list(model["rows_hi"])
    free = (plan["budgetBytes"] - p.persistent_bytes) / MIB
    for r, fixed in model["memory_rows"]:
        row_hi[r] = free - fixed / MIB
    bad = {}
    starts, index, value = model["starts"], model["index"], model["value"]
    for r in range(len(model["rows_lo"])):
        a = sum(value[e] * x[index[e]] for e in range(starts[r], starts[r + 1]))
        tol = 1e-6 * max(1.0, abs(row_hi[r]) if row_hi[r] < 1e300 else 1.0)
        if a < model["rows_lo"][r] - tol or a > row_hi[r] + tol:
            kind = model["kinds"][r]
            bad.setdefault(kind, []).append((r, a, model["rows_lo"][r], row_hi[r]))
    for c in range(len(x)):
        if x[c] < model["lo"][c] - 1e-9 or x[c] > model["hi"][c] + 1e-9:
            bad.setdefault("column bound", []).append((c, x[c]))
    objective = sum(model["cost"][c] * x[c] for c in range(len(x)))
    print("  plan: recomputation cost %.3f us (%.4f %% overhead), at the "
          "model's point %.3f us; %d executions in pruned columns" % (
              cost, 100 * cost / baseline, objective, pruned))
    for kind, rows in bad.items():
        print("  VIOLATED %s: %d rows, e.g. %s" % (kind, len(rows), rows[:3]))
    if objective > cost + 1e-6 * max(1.0, cost):
        print("  VIOLATED objective: the point costs more than the plan")
        bad["objective"] = [objective]
    if not bad:
        print("  the plan is a point of the relaxation: OK")
    return sum(len(v) for v in bad.values())


def solve(highspy, model, p, budget, mode, time_limit, threads):
    """Returns (status, bound in us or None, seconds, detail)."""
    import numpy as np
    lp = highspy.HighsLp()
    ncol, nrow = len(model["cost"]), len(model["rows_lo"])
    lp.num_col_, lp.num_row_ = ncol, nrow
    lp.col_cost_ = np.array(model["cost"], dtype=np.double)
    lp.col_lower_ = np.array(model["lo"], dtype=np.double)
    lp.col_upper_ = np.array(model["hi"], dtype=np.double)
    row_hi = np.array(model["rows_hi"], dtype=np.double)
    free = (budget - p.persistent_bytes) / MIB
    for r, fixed in model["memory_rows"]:
        row_hi[r] = free - fixed / MIB
    lp.row_lower_ = np.array(model["rows_lo"], dtype=np.double)
    lp.row_upper_ = row_hi
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(model["starts"], dtype=np.int32)
    lp.a_matrix_.index_ = np.array(model["index"], dtype=np.int32)
    lp.a_matrix_.value_ = np.array(model["value"], dtype=np.double)
    if mode == "milp":
        lp.integrality_ = [highspy.HighsVarType.kInteger if i else
                           highspy.HighsVarType.kContinuous
                           for i in model["integer"]]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", int(threads))
    if mode == "lp" and LP_SOLVER[0]:
        h.setOptionValue("solver", LP_SOLVER[0])
    h.passModel(lp)
    start = time.time()
    h.run()
    seconds = time.time() - start
    status = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    if status == S.kInfeasible:
        return "infeasible", None, seconds, "no schedule fits the budget"
    if mode == "lp":
        if status == S.kOptimal:
            return "lp", info.objective_function_value, seconds, ""
        return "none", None, seconds, "LP: " + h.modelStatusToString(status)
    bound = info.mip_dual_bound
    if status == S.kOptimal:
        # The dual bound, not the incumbent: within the MIP gap tolerance
        # of it, and the one that is proven.
        return "milp-optimal", bound, seconds, "gap %.2g" % info.mip_gap
    if bound is not None and bound > -1e30:
        return "milp-bound", max(bound, 0.0), seconds, "%s, gap %.2g" % (
            h.modelStatusToString(status), info.mip_gap)
    return "none", None, seconds, "MILP: " + h.modelStatusToString(status)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graph", help="JSON from coop-dump-graph")
    parser.add_argument("--ratio", type=float, action="append", default=[])
    parser.add_argument("--mode", choices=("milp", "lp"), default="milp")
    parser.add_argument("--time-limit", type=float, default=240.0,
                        help="seconds per solve (default 240)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--lp-solver", default="",
                        help="HiGHS solver for --mode lp: simplex, ipm, pdlp "
                             "(default: HiGHS's choice)")
    parser.add_argument("--max-columns", type=int, default=0,
                        help="refuse (status 'too-big') above this many "
                             "columns (0: no limit)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--check-plan", action="store_true",
                        help="GRAPH.json is a planned step's: check that "
                             "its plan satisfies the model at its budget "
                             "(no solver needed)")
    args = parser.parse_args(argv)

    if args.check_plan:
        with open(args.graph) as f:
            graph = json.load(f)
        p = Problem(graph)
        model = build_model(p)
        print("%s: checking the plan at %d bytes" % (
            graph["step"], graph["plan"]["budgetBytes"]))
        return 1 if check_plan(p, model, graph["plan"],
                               graph["baselineCostUs"]) else 0
    if not args.ratio:
        parser.error("--ratio is required")
    try:
        import highspy  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as error:
        print("checkmate_bound: skipped: the HiGHS solver is not installed "
              "(%s); pip install highspy numpy" % error)
        return 0

    LP_SOLVER[0] = args.lp_solver
    with open(args.graph) as f:
        graph = json.load(f)
    start = time.time()
    p = Problem(graph)
    model = build_model(p)
    build_seconds = time.time() - start
    ncol, nrow, nnz = len(model["cost"]), len(model["rows_lo"]), len(model["index"])
    print("%s: %d stages, %d transient values, %d R + %d S columns (%d in all), "
          "%d rows, %d nonzeros, built in %.1f s" % (
              graph["step"], p.N, len(p.producer), len(model["R"]),
              len(model["S"]), ncol, nrow, nnz, build_seconds))
    results = []
    for ratio in args.ratio:
        budget = int(ratio * graph["noneArenaBytes"])
        if args.max_columns and ncol > args.max_columns:
            status, bound, seconds, detail = "too-big", None, 0.0, "%d columns" % ncol
        else:
            status, bound, seconds, detail = solve(
                highspy, model, p, budget, args.mode, args.time_limit,
                args.threads)
            if args.mode == "milp" and (
                    status == "none" or (status == "milp-bound" and bound <= 0)):
                # No useful dual bound in time (the root LP did not finish):
                # the LP relaxation alone, with the same limit, is still one.
                lp_status, lp_bound, more, lp_detail = solve(
                    highspy, model, p, budget, "lp", args.time_limit,
                    args.threads)
                seconds += more
                if lp_bound is not None and (bound is None or lp_bound > bound):
                    status, bound = lp_status, lp_bound
                detail += "; then " + (lp_detail or "LP relaxation")
        overhead = None if bound is None else bound / graph["baselineCostUs"]
        results.append(dict(step=graph["step"], ratio=ratio, budget=budget,
                            status=status, boundUs=bound, overhead=overhead,
                            seconds=seconds, detail=detail, columns=ncol,
                            rows=nrow, nonzeros=nnz, stages=p.N))
        print("  ratio %.2f (budget %d B): %s, bound %s, %.1f s %s" % (
            ratio, budget, status,
            "n/a" if overhead is None else "%.4f %%" % (100 * overhead),
            seconds, detail))
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
