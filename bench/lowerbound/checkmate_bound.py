#!/usr/bin/env python3
"""Checkmate-style lower bound on the recomputation overhead of a step.

    python3 bench/lowerbound/checkmate_bound.py GRAPH.json --ratio 0.5 [--ratio 0.3]
            [--mode milp|lp] [--time-limit 240] [--json OUT.json]
            [--start-plan PLANNED.json] [--improve SECONDS] [--runnable]
            [--solver-log PREFIX]

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
  K             K[t,v] >= S[t+1,v] - R[t,producer(v)]
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
bound, a weaker one.

The other side, how cheap a schedule of the model really gets: the MILP's
incumbent (printed, and its schedule written with --json), started from
our own plan with --start-plan and improved by fix-and-optimise with
--improve. An incumbent is a point of the model, so the model's optimum
lies between the bound and it; being a point of a relaxation, it is not
necessarily a schedule our planner could run (README.md); --runnable keeps
only incumbents that run stage by stage within the budget (realize()).
A bench tool: it needs highspy (pip install highspy)
and says so, without failing, when it is missing.
"""
import argparse
import json
import sys
import time

MIB = float(1 << 20)
LP_SOLVER = [""]  # HiGHS "solver" option for --mode lp ("" = its default)
SUB_MILP_SECONDS = 30.0  # the time limit of one fix-and-optimise sub-MILP


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
            # Resident at t+1 and not re-made in stage t means resident at
            # t too (residency) and throughout: K = S[t+1] (1 - R) at every
            # integer point. The linear form below is exact there and,
            # unlike S[t] + S[t+1] - 1 - R, not void for fractional S.
            e = [(k, 1.0), (S[(t + 1, v)], -1.0)]
            if (t, p.producer[v]) in R:
                e.append((R[(t, p.producer[v])], 1.0))
            row(0.0, INF, e)
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
        x[c] = max(0.0, val(model["S"], (t + 1, v))
                   - val(model["R"], (t, p.producer[v])))
    for t, c in model["M"].items():
        x[c] = 0.0
    # M_t = sum bytes K[t,v]
    for (t, v), c in model["K"].items():
        x[model["M"][t]] += p.bytes[v] / MIB * x[c]
    return x, cost, pruned


def row_activities(model, x):
    """Each row's value at the point x."""
    starts, index, value = model["starts"], model["index"], model["value"]
    return [sum(value[e] * x[index[e]] for e in range(starts[r], starts[r + 1]))
            for r in range(len(model["rows_lo"]))]


def violations(p, model, x, budget):
    """The rows and column bounds the point x violates at a budget, by
    kind of row."""
    row_hi = memory_bounds(p, model, budget)
    bad = {}
    for r, a in enumerate(row_activities(model, x)):
        tol = 1e-6 * max(1.0, abs(row_hi[r]) if row_hi[r] < 1e300 else 1.0)
        if a < model["rows_lo"][r] - tol or a > row_hi[r] + tol:
            kind = model["kinds"][r]
            bad.setdefault(kind, []).append((r, a, model["rows_lo"][r], row_hi[r]))
    for c in range(len(x)):
        if x[c] < model["lo"][c] - 1e-9 or x[c] > model["hi"][c] + 1e-9:
            bad.setdefault("column bound", []).append((c, x[c]))
    return bad


def memory_peak(p, model, x):
    """The largest bytes any memory row of the model counts at x (the
    persistent bytes included): the least budget at which x is a point."""
    activity = row_activities(model, x)
    return p.persistent_bytes + max(
        [activity[r] * MIB + fixed for r, fixed in model["memory_rows"]] + [0])


def check_plan(p, model, plan, baseline):
    """Every row and column bound of the model at the plan's point, at the
    plan's own budget. Returns the number of violations."""
    x, cost, pruned = plan_point(p, model, plan)
    bad = violations(p, model, x, plan["budgetBytes"])
    objective = sum(model["cost"][c] * x[c] for c in range(len(x)))
    print("  plan: recomputation cost %.3f us (%.4f %% overhead), at the "
          "model's point %.3f us; %d executions in pruned columns" % (
              cost, 100 * cost / baseline, objective, pruned))
    peak = memory_peak(p, model, x)
    print("  the model's memory rows peak at %d B at the plan's point "
          "(%.1f %% of its budget)" % (peak, 100.0 * peak / plan["budgetBytes"]))
    print("  the plan's point run stage by stage: %s" % describe_run(
        realize(p, model, x), plan["budgetBytes"]))
    for kind, rows in bad.items():
        print("  VIOLATED %s: %d rows, e.g. %s" % (kind, len(rows), rows[:3]))
    if objective > cost + 1e-6 * max(1.0, cost):
        print("  VIOLATED objective: the point costs more than the plan")
        bad["objective"] = [objective]
    if not bad:
        print("  the plan is a point of the relaxation: OK")
    return sum(len(v) for v in bad.values())


def realize(p, model, x):
    """The bytes a point of the model needs when it is run, a stage at a
    time: each stage's recomputations in one order, then its Run, every
    value held from its execution to its last read in the stage or, if
    resident at the next boundary, beyond; an in-place output reuses its
    operand's buffer unless the operand is read later (a copy); sizes
    rounded up to the arena's alignment, workspace and scratch counted.
    This counts what the model's rows leave out (README.md, 1. and 2.),
    but not the addresses, so a point above its budget here is not a
    schedule a plan can follow in these orders. Each stage starts from
    what is resident at its boundary, so each gets the better of two
    orders: by op index, and depth first from the Run's inputs, as the
    planner rebuilds a closure (what is recomputed for a later stage after
    the Run). Returns (peak, where it is reached in words, its stage), or
    (None, why, stage) where a stage runs in neither order."""
    tensors, ops = p.graph["tensors"], p.graph["ops"]
    R = {}
    for (t, s), c in model["R"].items():
        if x[c] > 0.5:
            R.setdefault(t, set()).add(s)
    resident = [set() for _ in range(p.N + 1)]
    for (t, v), c in model["S"].items():
        if x[c] > 0.5:
            resident[t].add(v)
    align = p.graph.get("alignment", 1)

    def aligned(n):
        return -(-n // align) * align
    size = {v: aligned(b) for v, b in p.bytes.items()}
    # Beside its inputs and outputs an op holds its workspace while it
    # runs, and a recomputed discardable op (training batch norm) scratch
    # for the persistent outputs it must not overwrite again.
    held = [aligned(ops[k]["workspaceBytes"]) for k in p.stages]
    scratch = [sum(aligned(tensors[o]["bytes"]) for o in ops[k]["outputs"]
                   if tensors[o]["persistent"]
                   and tensors[o]["previousVersion"] >= 0)
               if ops[k]["discardableInPlace"] else 0 for k in p.stages]
    persistent = sum(aligned(t["bytes"]) for t in tensors if t["persistent"]
                     and t["viewOf"] < 0 and t["previousVersion"] < 0)
    operand = {}  # in-place value -> the transient value it overwrites
    for s in range(p.N):
        for v in p.inplace[s]:
            prev = tensors[tensors[v]["previousVersion"]]["content"]
            if prev in p.producer:
                operand[v] = prev

    def by_index(t):
        return sorted(R.get(t, ())) + [t]

    def depth_first(t):
        order, seen = [], set()

        def visit(s):
            for v in (p.run_in[s] if s == t else p.rec_in[s]):
                u = p.producer[v]
                if u in R.get(t, ()) and u not in seen and v not in resident[t]:
                    seen.add(u)
                    visit(u)
                    order.append(u)
        visit(t)
        order.append(t)
        for s in sorted(R.get(t, set()) - seen):
            if s not in seen:
                seen.add(s)
                visit(s)
                order.append(s)
        return order

    def stage_peak(t, order):
        """Transient bytes at the fullest execution of stage t in this
        order, or None if the order reads a value it lacks or leaves out
        one resident at the next boundary."""
        reads = [p.run_in[s] if s == t else p.rec_in[s] for s in order]
        last_read = {}
        for k, vs in enumerate(reads):
            for v in vs:
                last_read[v] = k
        keep = resident[t + 1]
        live = {v for v in resident[t] if v in keep or v in last_read}
        peak = 0
        for k, s in enumerate(order):
            if any(v not in live for v in reads[k]):
                return None
            copied = [v for v in p.inplace[s] if operand.get(v) is None
                      or operand[v] in keep or last_read.get(operand[v], -1) > k]
            peak = max(peak, sum(size[v] for v in live) + sum(
                size[v] for v in p.fresh[s] + copied) + held[s] + (
                    scratch[s] if s != t else 0))
            live |= set(p.fresh[s] + p.inplace[s])
            live = {v for v in live if v in keep or last_read.get(v, -1) > k}
        return peak if keep <= live else None

    worst = (0, "", -1)
    for t in range(p.N):
        runs = [(peak, name) for name, order_of in (
            ("index order", by_index), ("depth first", depth_first))
            for peak in [stage_peak(t, order_of(t))] if peak is not None]
        if not runs:
            return None, "stage %d runs in neither order" % t, t
        peak, name = min(runs)
        if persistent + peak > worst[0]:
            worst = (persistent + peak, name, t)
    return worst[0], "%s at stage %d" % (worst[1], worst[2]), worst[2]


def fits(realized, budget):
    """Whether realize()'s answer runs within the budget."""
    return realized[0] is not None and realized[0] <= budget


def describe_run(realized, budget):
    """realize()'s answer in words, against a budget."""
    peak, where, _ = realized
    if peak is None:
        return where
    return "peak %d B (%s), %.2f %% of the budget: %s" % (
        peak, where, 100.0 * peak / budget,
        "fits" if peak <= budget else "over by %d B" % (peak - budget))


def memory_bounds(p, model, budget):
    """The rows' upper bounds at a budget: the memory rows get what the
    budget leaves beside the persistent bytes and their fixed bytes."""
    row_hi = list(model["rows_hi"])
    free = (budget - p.persistent_bytes) / MIB
    for r, fixed in model["memory_rows"]:
        row_hi[r] = free - fixed / MIB
    return row_hi


def highs_model(highspy, cost, lo, hi, integer, rows_lo, rows_hi, starts,
                index, value):
    """A HighsLp from row-wise arrays; `integer` None for the LP."""
    import numpy as np
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cost), len(rows_lo)
    lp.col_cost_ = np.asarray(cost, dtype=np.double)
    lp.col_lower_ = np.asarray(lo, dtype=np.double)
    lp.col_upper_ = np.asarray(hi, dtype=np.double)
    lp.row_lower_ = np.asarray(rows_lo, dtype=np.double)
    lp.row_upper_ = np.asarray(rows_hi, dtype=np.double)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.asarray(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.asarray(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(value, dtype=np.double)
    if integer is not None:
        lp.integrality_ = [highspy.HighsVarType.kInteger if i else
                           highspy.HighsVarType.kContinuous for i in integer]
    return lp


def run_highs(highspy, lp, time_limit, threads, start=None, log=None,
              solver=""):
    """Solves lp with HiGHS (`solver`: its option, "" for its choice);
    `start` (column values) is its first incumbent. Returns the Highs
    object."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", log is not None)
    if log is not None:
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("log_file", log)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", int(threads))
    if solver:
        h.setOptionValue("solver", solver)
    h.passModel(lp)
    if start is not None:
        solution = highspy.HighsSolution()
        solution.col_value = list(start)
        solution.value_valid = True
        h.setSolution(solution)
    h.run()
    return h


def solve(highspy, model, p, budget, mode, time_limit, threads, start=None,
          log=None):
    """Solves at one budget. `start` (a point of the model, e.g. a plan's)
    is given to HiGHS as its first incumbent; `log` is a file for HiGHS's
    own log (its primal and dual bounds over time). Returns a dict: status,
    boundUs (None where none was proven), seconds, detail, and for the MILP
    the best schedule found, incumbentUs and x (None where none was)."""
    lp = highs_model(highspy, model["cost"], model["lo"], model["hi"],
                     model["integer"] if mode == "milp" else None,
                     model["rows_lo"], memory_bounds(p, model, budget),
                     model["starts"], model["index"], model["value"])
    begin = time.time()
    h = run_highs(highspy, lp, time_limit, threads,
                  start if mode == "milp" else None, log,
                  LP_SOLVER[0] if mode == "lp" else "")
    result = dict(seconds=time.time() - begin, boundUs=None,
                  incumbentUs=None, x=None, detail="")
    status = h.getModelStatus()
    info = h.getInfo()
    S = highspy.HighsModelStatus
    if status == S.kInfeasible:
        return dict(result, status="infeasible",
                    detail="no schedule fits the budget")
    if mode == "lp":
        if status == S.kOptimal:
            return dict(result, status="lp",
                        boundUs=info.objective_function_value)
        return dict(result, status="none",
                    detail="LP: " + h.modelStatusToString(status))
    if info.primal_solution_status == 2:  # a feasible incumbent
        result.update(incumbentUs=info.objective_function_value,
                      x=list(h.getSolution().col_value))
    bound = info.mip_dual_bound
    if status == S.kOptimal:
        # The dual bound, not the incumbent: within the MIP gap tolerance
        # of it, and the one that is proven.
        return dict(result, status="milp-optimal", boundUs=bound,
                    detail="gap %.2g" % info.mip_gap)
    if bound is not None and bound > -1e30:
        return dict(result, status="milp-bound", boundUs=max(bound, 0.0),
                    detail="%s, gap %.2g" % (h.modelStatusToString(status),
                                             info.mip_gap))
    return dict(result, status="none",
                detail="MILP: " + h.modelStatusToString(status))


def neighbourhoods(p, model, width):
    """Column sets that fix-and-optimise frees, each a boolean mask over
    the columns: the decisions of `width` consecutive stages (what is
    recomputed in them, what is resident at their boundaries), and the
    whole lives of the values `width` consecutive ops produce (every
    boundary they may be resident at, every stage their producers may be
    recomputed in). Windows overlap by half."""
    import numpy as np
    ncol = len(model["cost"])
    r_stage = np.full(ncol, -1)
    r_op = np.full(ncol, -1)
    for (t, s), c in model["R"].items():
        r_stage[c], r_op[c] = t, s
    for (t, v), c in model["S"].items():
        r_stage[c], r_op[c] = t, p.producer[v]
    step = max(1, width // 2)
    for key, what in ((r_stage, "stages"), (r_op, "values of stages")):
        for first in range(0, p.N, step):
            yield ("%s %d-%d" % (what, first, min(first + width, p.N) - 1),
                   (key >= first) & (key < first + width))


def improve(highspy, model, p, budget, x, seconds, threads, width,
            baseline, runnable=False):
    """Fix-and-optimise (a large-neighbourhood search) from the point x of
    the model: for each neighbourhood, every integer column outside it is
    fixed at x and the rest (with the continuous K and M) is solved as a
    smaller MILP whose first incumbent is x; a cheaper solution replaces
    x. Sweeps until a sweep finds nothing or `seconds` run out. Returns
    (x, sub-MILPs, how many of them stopped at their time limit
    (SUB_MILP_SECONDS), improvements). Every x is a point of the model:
    an upper bound on its optimum, not on any plan's. With `runnable`, a
    cheaper solution replaces x only if realize() runs it within the
    budget: x then stays a schedule a plan could follow, addresses
    aside."""
    import numpy as np
    deadline = time.time() + seconds
    cost = np.asarray(model["cost"])
    lo, hi = np.asarray(model["lo"]), np.asarray(model["hi"])
    integer = np.asarray(model["integer"], dtype=bool)
    starts = np.asarray(model["starts"])
    index, value = np.asarray(model["index"]), np.asarray(model["value"])
    nrow = len(starts) - 1
    row_of = np.repeat(np.arange(nrow), np.diff(starts))
    rows_lo = np.asarray(model["rows_lo"])
    rows_hi = np.asarray(memory_bounds(p, model, budget))
    x = np.asarray(x, dtype=np.double)
    solved = unfinished = improvements = 0
    improved = True
    while improved and time.time() < deadline:
        improved = False
        for name, free in neighbourhoods(p, model, width):
            left = deadline - time.time()
            if left <= 0:
                break
            free = free | ~integer
            cols = np.flatnonzero(free)
            renumber = np.full(len(cost), -1)
            renumber[cols] = np.arange(len(cols))
            on_free = free[index]
            fixed = np.bincount(row_of[~on_free],
                                weights=value[~on_free] * x[index[~on_free]],
                                minlength=nrow)
            rows = np.unique(row_of[on_free])  # the others hold at x
            keep = on_free & np.isin(row_of, rows)
            sub_starts = np.concatenate(
                ([0], np.cumsum(np.bincount(row_of[keep], minlength=nrow)[rows])))
            lp = highs_model(highspy, cost[cols], lo[cols], hi[cols],
                             integer[cols], rows_lo[rows] - fixed[rows],
                             rows_hi[rows] - fixed[rows], sub_starts,
                             renumber[index[keep]], value[keep])
            h = run_highs(highspy, lp, min(left, SUB_MILP_SECONDS), threads,
                          x[cols])
            solved += 1
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                unfinished += 1
            info = h.getInfo()
            if info.primal_solution_status != 2:
                continue
            y = np.asarray(h.getSolution().col_value)
            y[integer[cols]] = np.round(y[integer[cols]])
            if cost[cols] @ y < cost[cols] @ x[cols] - 1e-6 * max(1.0, cost @ x):
                if runnable:
                    trial = x.copy()
                    trial[cols] = y
                    if not fits(realize(p, model, trial), budget):
                        continue
                x[cols] = y
                improved = True
                improvements += 1
                print("    %.0f s, sub-MILP %d (%s): %.4f %%" % (
                    seconds - (deadline - time.time()), solved, name,
                    100 * (cost @ x) / baseline))
                sys.stdout.flush()
    return list(x), solved, unfinished, improvements


def schedule(p, model, x):
    """A point of the model as a schedule: per stage, the ops it
    recomputes, and per value the boundaries at which it is resident."""
    ops = p.graph["ops"]
    recomputed = {}
    for (t, s), c in model["R"].items():
        if x[c] > 0.5:
            recomputed.setdefault(t, []).append(p.stages[s])
    resident = {}
    for (t, v), c in model["S"].items():
        if x[c] > 0.5:
            resident.setdefault(v, []).append(t)
    return dict(
        stages=[dict(stage=t, op=p.stages[t], recomputes=sorted(recomputed[t]))
                for t in sorted(recomputed)],
        resident={str(v): sorted(ts) for v, ts in sorted(resident.items())},
        costUs=sum(ops[k]["costUs"] for ks in recomputed.values() for k in ks))


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
    parser.add_argument("--json", help="write the results here (with the "
                        "incumbent's and the start plan's schedules)")
    parser.add_argument("--start-plan", action="append", default=[],
                        metavar="PLANNED.json",
                        help="coop-dump-graph of a planned step of GRAPH: "
                             "its plan, mapped to the model as --check-plan "
                             "does, is the MILP's first incumbent at every "
                             "--ratio where it is a point of the model "
                             "(repeatable: the cheapest that fits)")
    parser.add_argument("--improve", type=float, default=0.0,
                        metavar="SECONDS",
                        help="after the MILP, improve its incumbent (or the "
                             "start plan's point) by fix-and-optimise for "
                             "this long (default 0: not)")
    parser.add_argument("--runnable", action="store_true",
                        help="keep only incumbents that run within the "
                             "budget stage by stage (realize(): the bytes "
                             "made and freed inside a stage counted): the "
                             "MILP's if it runs, else the start plan's; "
                             "--improve then keeps only such schedules")
    parser.add_argument("--improve-width", type=int, default=24,
                        metavar="STAGES",
                        help="stages (and producers of values) each "
                             "fix-and-optimise neighbourhood frees "
                             "(default 24)")
    parser.add_argument("--solver-log", metavar="PREFIX",
                        help="write HiGHS's log of each solve (primal and "
                             "dual bounds over time) to PREFIX.RATIO.log")
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
    if args.mode == "lp" and (args.start_plan or args.improve > 0
                              or args.runnable):
        parser.error("--start-plan, --improve and --runnable are for "
                     "--mode milp")
    if args.improve_width < 1:
        parser.error("--improve-width must be at least 1")
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
    starts = []  # (path, the plan's point, its recomputation cost)
    for path in args.start_plan:
        with open(path) as f:
            planned = json.load(f)
        if "plan" not in planned or (planned["tensors"], planned["ops"]) != (
                graph["tensors"], graph["ops"]):
            print("checkmate_bound: error: %s is not a planned step of %s's "
                  "graph" % (path, args.graph), file=sys.stderr)
            return 1
        x, cost, _ = plan_point(p, model, planned["plan"])
        starts.append((path, x, cost))

    baseline = graph["baselineCostUs"]

    def percent(us):
        return "n/a" if us is None else "%.4f %%" % (100 * us / baseline)

    results = []
    for ratio in args.ratio:
        budget = int(ratio * graph["noneArenaBytes"])
        # The cheapest start plan that is a point of the model at this
        # budget (a plan made for a larger budget may fit a smaller one).
        start_path, start_x, start_cost = min(
            [st for st in starts if not violations(p, model, st[1], budget)],
            key=lambda st: st[2], default=(None, None, None))
        log = None if not args.solver_log else "%s.%g.log" % (
            args.solver_log, ratio)
        if args.max_columns and ncol > args.max_columns:
            r = dict(status="too-big", boundUs=None, incumbentUs=None, x=None,
                     seconds=0.0, detail="%d columns" % ncol)
        else:
            r = solve(highspy, model, p, budget, args.mode, args.time_limit,
                      args.threads, start_x, log)
            if args.mode == "milp" and (
                    r["status"] == "none" or
                    (r["status"] == "milp-bound" and r["boundUs"] <= 0)):
                # No useful dual bound in time (the root LP did not finish):
                # the LP relaxation alone, with the same limit, is still one.
                lp = solve(highspy, model, p, budget, "lp", args.time_limit,
                           args.threads)
                r["seconds"] += lp["seconds"]
                if lp["boundUs"] is not None and (
                        r["boundUs"] is None or lp["boundUs"] > r["boundUs"]):
                    r.update(status=lp["status"], boundUs=lp["boundUs"])
                r["detail"] += "; then " + (lp["detail"] or "LP relaxation")
        if args.runnable and args.mode == "milp":
            x = r["x"]
            run = None if x is None else realize(p, model, x)
            if run is not None and not fits(run, budget):
                r["detail"] += "; its incumbent (%s) does not run: %s" % (
                    percent(r["incumbentUs"]), describe_run(run, budget))
                x = None
            if x is None and start_x is not None and \
                    fits(realize(p, model, start_x), budget):
                x = start_x
            r.update(x=x, incumbentUs=None if x is None else sum(
                c * v for c, v in zip(model["cost"], x)))
        if args.improve > 0 and args.mode == "milp":
            x = r["x"] if r["x"] is not None else start_x
            if x is not None:
                begin = time.time()
                x, solved, unfinished, better = improve(
                    highspy, model, p, budget, x, args.improve, args.threads,
                    args.improve_width, graph["baselineCostUs"],
                    args.runnable)
                r.update(x=x, incumbentUs=sum(
                    c * v for c, v in zip(model["cost"], x)))
                r["detail"] += "; fix-and-optimise: %d sub-MILPs (%d " \
                    "stopped at their time limit), %d improvements, " \
                    "%.1f s" % (solved, unfinished, better,
                                time.time() - begin)
        bound, incumbent = r["boundUs"], r["incumbentUs"]
        result = dict(step=graph["step"], ratio=ratio, budget=budget,
                      status=r["status"], boundUs=bound,
                      overhead=None if bound is None else bound / baseline,
                      incumbentUs=incumbent,
                      incumbentOverhead=None if incumbent is None
                      else incumbent / baseline,
                      seconds=r["seconds"], detail=r["detail"], columns=ncol,
                      rows=nrow, nonzeros=nnz, stages=p.N)
        if r["x"] is not None:
            result["incumbent"] = schedule(p, model, r["x"])
        if start_x is not None:
            result.update(startPlan=start_path, startPlanUs=start_cost,
                          start=schedule(p, model, start_x))
        results.append(result)
        print("  ratio %.2f (budget %d B): %s, bound %s, %.1f s %s" % (
            ratio, budget, r["status"], percent(bound), r["seconds"],
            r["detail"]))
        if start_x is not None:
            print("    start: the plan of %s, %s" % (start_path,
                                                      percent(start_cost)))
        elif starts:
            print("    start: none of the start plans fits this budget")
        if args.mode == "milp":
            print("    incumbent: %s" % percent(incumbent))
        if r["x"] is not None and args.mode == "milp":
            result["incumbentRun"] = describe_run(
                realize(p, model, r["x"]), budget)
            print("    incumbent run stage by stage: %s" %
                  result["incumbentRun"])
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
