#!/usr/bin/env python3
"""Optimality gap of our plans against the Checkmate-style lower bound.

    python3 bench/lowerbound/gap_report.py [--build build] [--lb-build build-lb]
            [--work /tmp/coop-lowerbound] [--time-limit 60] [--lp-time-limit 300] [--jobs 2]
            [--models resnet50,unet] [--out bench/lowerbound/results.md]

For each zoo model and ratio (0.7, 0.5, 0.3) it computes the bound
(checkmate_bound.py over coop-dump-graph's JSON) and our plans' compute
overhead (`coop-opt --coop-plan-memory="ratio=R report=true"`, default
policy and policy=coop) on the same graph, and writes a Markdown table with
gap = (plan - bound) / bound. Graphs of more than --max-full-stages stages
are too big for the MILP (and, measured, for the LP within minutes), so
those models are replaced by a scaled-down model of the same architecture
(export_small.py, run with Debian's /usr/bin/python3 and torch), and the
plans are made on that same scaled graph. Scaled graphs of more than
--max-milp-stages stages get the LP relaxation instead of the MILP.
"""
import argparse
import concurrent.futures
import datetime
import gzip
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MODELS = ["resnet50", "resnet152", "inception_v3", "densenet121", "swin_t",
          "unet", "bert_large", "gpt2", "gpt3_2.7b", "bilstm"]

_log_lock = threading.Lock()
COMMANDS = []


def run(cmd, stdin=None, timeout=1800, env=None, retry=None):
    """Runs a command, records its line for the report. `retry(result)`
    true: run it again (up to 3 times, 15 s apart), for tools that another
    engineer's build may be relinking under us."""
    for attempt in range(3):
        result = run_once(cmd, stdin, timeout, env)
        if retry is None or not retry(result) or attempt == 2:
            return result
        time.sleep(15)


def crashed(result):
    """Failed without a diagnostic of its own: a missing or half-written
    binary, a signal."""
    err = result.stderr.decode(errors="replace")
    return result.returncode != 0 and (
        result.returncode < 0 or result.returncode in (126, 127) or
        "error:" not in err)


def run_once(cmd, stdin, timeout, env):
    text = " ".join(shlex.quote(c) for c in cmd)
    if stdin:
        text += " < " + shlex.quote(stdin)
    with _log_lock:
        COMMANDS.append(text)
        print("$ " + text, flush=True)
    inp = None
    if stdin:
        opener = gzip.open if stdin.endswith(".gz") else open
        with opener(stdin, "rb") as f:
            inp = f.read()
    return subprocess.run(cmd, input=inp, capture_output=True,
                          timeout=timeout, env=env)


def import_step(args, pb, out):
    """.pb(.gz) -> cost-annotated .mlir, as bench/eval/coop_eval.py does."""
    t = run([os.path.join(args.build, "bin/coop-translate"),
             "--import-training-graph"], stdin=pb, retry=crashed)
    if t.returncode:
        raise RuntimeError("import of %s failed: %s" % (pb, t.stderr.decode()[-300:]))
    with open(out + ".raw", "wb") as f:
        f.write(t.stdout)
    a = run([os.path.join(args.build, "bin/coop-opt"), out + ".raw",
             "--coop-annotate-costs", "-o", out], retry=crashed)
    if a.returncode:
        raise RuntimeError("cost annotation failed: " + a.stderr.decode()[-300:])
    os.remove(out + ".raw")


def dump(args, mlir, out):
    d = run([os.path.join(args.lb_build, "bin/coop-dump-graph"), mlir, "-o", out],
            retry=crashed)
    if d.returncode:
        raise RuntimeError("coop-dump-graph failed: " + d.stderr.decode()[-300:])
    with open(out) as f:
        return json.load(f)


def plan_overhead(args, mlir, ratio, policy):
    """(compute overhead in % or why there is no plan, the policy coop-opt
    named, the --check-plan verdict)."""
    options = "ratio=%s report=true" % ratio
    if policy:
        options += " policy=" + policy
    planned = "%s.r%s.%s.planned.mlir" % (mlir, ratio, policy or "default")
    p = run([os.path.join(args.build, "bin/coop-opt"), mlir,
             "--coop-plan-memory=" + options, "-o", planned], retry=crashed)
    out = p.stdout.decode()
    m = re.search(r"compute overhead:\s+([0-9.]+) %", out)
    used = re.search(r"policy (\S+), budget", out)
    used = used.group(1) if used else policy
    if p.returncode == 0 and m:
        return float(m.group(1)), used, check(args, planned)
    err = p.stderr.decode()
    reason = "no plan"
    if "below the memory floor" in err:
        reason = "below floor"
    elif "out of memory" in err:
        reason = "no plan (out of memory)"
    return reason, used, None


def check(args, planned):
    """Is the plan a point of the relaxation (checkmate_bound.py
    --check-plan)? 'ok', 'VIOLATED' or why it could not tell."""
    pjson = planned[:-len(".mlir")] + ".json"
    d = run([os.path.join(args.lb_build, "bin/coop-dump-graph"), planned,
             "-o", pjson], retry=crashed)
    os.remove(planned)  # planned steps are large; the JSON has the plan
    if d.returncode:
        return "unreadable plan"
    c = run([sys.executable, os.path.join(HERE, "checkmate_bound.py"), pjson,
             "--check-plan"])
    os.remove(pjson)
    text = c.stdout.decode()
    if c.returncode == 0 and "point of the relaxation: OK" in text:
        return "ok"
    return "VIOLATED" if "VIOLATED" in text else "check failed"


def bound(args, graph_json, ratios, mode):
    out = graph_json + ".%s.bound.json" % mode
    cmd = [sys.executable, os.path.join(HERE, "checkmate_bound.py"), graph_json,
           "--mode", mode, "--time-limit", str(args.time_limit if mode == "milp"
                                               else args.lp_time_limit),
           "--json", out]
    for r in ratios:
        cmd += ["--ratio", str(r)]
    b = run(cmd, timeout=3600)
    text = b.stdout.decode()
    if "skipped" in text:
        return None, text.strip()
    if b.returncode:
        raise RuntimeError("checkmate_bound failed: " + b.stderr.decode()[-400:])
    with open(out) as f:
        return json.load(f), text


def do_model(args, model):
    work = os.path.join(args.work, model)
    os.makedirs(work, exist_ok=True)
    full = os.path.join(work, model + ".mlir")
    import_step(args, os.path.join(REPO, "models/zoo", model + ".pb.gz"), full)
    g = dump(args, full, os.path.join(work, model + ".json"))
    stages = sum(1 for op in g["ops"] if not op["isView"])
    info = dict(model=model, full_stages=stages, full_ops=len(g["ops"]))
    if stages <= args.max_full_stages:
        mlir, gjson, graph, source = full, os.path.join(work, model + ".json"), g, "full"
    else:
        small_pb = os.path.join(work, model + "_small.pb.gz")
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        e = run([args.torch_python, os.path.join(HERE, "export_small.py"),
                 "--model", model, "-o", small_pb], env=env)
        if e.returncode:
            info["error"] = "scaled export failed: " + e.stderr.decode()[-200:]
            return info
        mlir = os.path.join(work, model + "_small.mlir")
        import_step(args, small_pb, mlir)
        gjson = os.path.join(work, model + "_small.json")
        graph = dump(args, mlir, gjson)
        source = "scaled"
    n = sum(1 for op in graph["ops"] if not op["isView"])
    mode = "milp" if (source == "full" or n <= args.max_milp_stages) else "lp"
    results, text = bound(args, gjson, args.ratios, mode)
    info.update(source=source, stages=n, ops=len(graph["ops"]), mode=mode,
                bound_log=text, noneArena=graph["noneArenaBytes"])
    if results is None:
        info["skipped"] = text
    rows = []
    for i, r in enumerate(args.ratios):
        plans = {pol or "default": plan_overhead(args, mlir, r, pol)
                 for pol in ("", "coop")}
        rows.append(dict(ratio=r, bound=None if results is None else results[i],
                         plans=plans))
    info["rows"] = rows
    return info


KIND = {"milp-optimal": "MILP optimal", "milp-bound": "MILP bound at time limit",
        "lp": "LP relaxation", "infeasible": "infeasible (no schedule fits)",
        "none": "no bound in the time limit", "too-big": "too big"}


def fmt_gap(plan, b):
    if not isinstance(plan, float) or b is None or b.get("overhead") is None:
        return "n/a"
    bo = 100 * b["overhead"]
    if bo <= 1e-9:
        return "n/a (bound 0)"
    return "%.2f" % ((plan - bo) / bo)


def write_md(args, infos, started, wall):
    lines = []
    add = lines.append
    add("# Optimality gap against a Checkmate-style lower bound (issue 12)")
    add("")
    add("GENERATED by `bench/lowerbound/gap_report.py`; see README.md for the "
        "model and why it is a lower bound. Regenerate with:")
    add("")
    add("```sh")
    add("cd <repo> && python3 bench/lowerbound/gap_report.py " +
        " ".join(shlex.quote(a) for a in sys.argv[1:]))
    add("```")
    add("")
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
               if l.startswith("model name")][0]
    except (OSError, IndexError):
        cpu = platform.processor()
    try:
        mem = int(open("/proc/meminfo").readline().split()[1]) / 2 ** 20
    except (OSError, ValueError, IndexError):
        mem = 0
    rev = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip()
    add("- date: %s; wall time %.0f s, %d jobs at a time" % (
        started.strftime("%Y-%m-%d %H:%M"), wall, args.jobs))
    add("- machine: %s, %d cores (os.cpu_count), %.0f GiB RAM, %s %s, Python %s; "
        "load average at start %s" % (cpu, os.cpu_count(), mem, platform.system(),
                                      platform.release(), platform.python_version(),
                                      args.load_at_start))
    add("- checkout: %s; `coop-opt` and `coop-translate` copied from `%s/bin` at "
        "the start (coop-opt built %s) and run from `%s` for every row; "
        "`%s/bin/coop-dump-graph` from this checkout" % (
            rev, args.source_build, args.tools_mtime, args.build + "/bin",
            args.lb_build))
    try:
        import highspy  # noqa: F401
        from importlib.metadata import version
        add("- solver: HiGHS (highspy %s), 1 thread; MILP time limit %g s per "
            "ratio, LP time limit %g s" % (version("highspy"), args.time_limit,
                                           args.lp_time_limit))
    except ImportError:
        add("- solver: highspy not installed: bounds skipped")
    add("- plans: `coop-opt M.mlir --coop-plan-memory=\"ratio=R report=true "
        "[policy=coop]\" -o P.mlir` on the graph the bound is for; overheads in "
        "%, gap = (plan - bound) / bound. Each plan is then checked to be a point "
        "of the relaxation at its budget (`coop-dump-graph P.mlir -o P.json; "
        "checkmate_bound.py P.json --check-plan`; last column, default/coop: "
        "ok means every row of the model holds at the plan's point and its "
        "objective is at most the plan's recomputation cost)")
    add("")
    add("| model | graph (stages) | ratio | bound kind | bound % | default policy % (winner) "
        "| gap | coop % | gap | plans in the relaxation |")
    add("|---|---|---|---|---|---|---|---|---|---|")
    for info in infos:
        if "error" in info:
            add("| %s | %s | | | | | | | | |" % (info["model"], info["error"]))
            continue
        graph = "%s (%d)" % ("full" if info["source"] == "full" else "scaled",
                             info["stages"])
        for row in info["rows"]:
            b = row["bound"]
            kind = "skipped" if b is None else KIND.get(b["status"], b["status"])
            if b is not None and info["source"] == "scaled":
                kind = "scaled-down, " + kind
            bo = ("n/a" if b is None or b.get("overhead") is None
                  else "%.2f" % (100 * b["overhead"]))
            d, _, dcheck = row["plans"]["default"]
            c, _, ccheck = row["plans"]["coop"]
            checks = "/".join(x for x in (dcheck, ccheck) if x) or "-"
            winner = row["plans"]["default"][1]
            add("| %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s |" % (
                info["model"], graph, row["ratio"], kind, bo,
                d if isinstance(d, str) else "%.2f (%s)" % (d, winner),
                fmt_gap(d, b),
                c if isinstance(c, str) else "%.2f" % c, fmt_gap(c, b), checks))
    add("")
    default_names = sorted({row["plans"]["default"][1] for info in infos
                            if "rows" in info for row in info["rows"]
                            if row["plans"]["default"][1]})
    if default_names:
        add("The default policy is whatever `coop-opt` defaults to at run time "
            "(now `search`: the best of several candidate plans); the name in "
            "brackets is the one its report gives. Names seen: %s." %
            ", ".join(default_names))
        add("")
    add("Graphs: *full* is the zoo model itself; *scaled* is export_small.py's "
        "model of the same architecture (below), bound and plans both on it. "
        "A scaled row bounds the scaled step, not the zoo model.")
    add("")
    add("| model | zoo graph (ops, stages) | graph used | ops | stages | solve |")
    add("|---|---|---|---|---|---|")
    for info in infos:
        if "error" in info:
            continue
        add("| %s | %d, %d | %s | %d | %d | %s |" % (
            info["model"], info["full_ops"], info["full_stages"],
            "zoo" if info["source"] == "full" else "scaled: " + SMALL_TEXT.get(
                info["model"], ""), info["ops"], info["stages"],
            info["mode"].upper()))
    add("")
    add("Solver log (columns, rows, time per ratio):")
    add("")
    add("```")
    for info in infos:
        for l in info.get("bound_log", "").splitlines():
            if not l.startswith(("Running HiGHS", "Includes third")):
                add(l)
    add("```")
    add("")
    add("<details><summary>Every command run</summary>")
    add("")
    add("```sh")
    lines.extend(COMMANDS)
    add("```")
    add("</details>")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")


SMALL_TEXT = {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(REPO, "build"))
    parser.add_argument("--lb-build", default=os.path.join(REPO, "build-lb"))
    parser.add_argument("--work", default="/tmp/coop-lowerbound")
    parser.add_argument("--out", default=os.path.join(HERE, "results.md"))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--ratios", default="0.7,0.5,0.3")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--lp-time-limit", type=float, default=300.0)
    parser.add_argument("--max-full-stages", type=int, default=400)
    parser.add_argument("--max-milp-stages", type=int, default=460)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--torch-python", default="/usr/bin/python3")
    args = parser.parse_args()
    args.ratios = [float(r) for r in args.ratios.split(",")]
    args.build = os.path.abspath(args.build)
    args.lb_build = os.path.abspath(args.lb_build)
    args.load_at_start = " / ".join("%.2f" % x for x in os.getloadavg())
    try:
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
        listing = subprocess.run([args.torch_python, os.path.join(HERE, "export_small.py"),
                                  "--list"], capture_output=True, text=True, env=env)
        for l in listing.stdout.splitlines():
            name, _, text = l.partition(" ")
            SMALL_TEXT[name] = text.strip()
    except OSError:
        pass
    # One coop-opt for every row: build/bin is rebuilt by others while this
    # runs, so the tools are copied first (retried if caught mid-link).
    tools = os.path.join(args.work, "bin")
    os.makedirs(tools, exist_ok=True)
    for tool in ("coop-opt", "coop-translate"):
        src = os.path.join(args.build, "bin", tool)
        for attempt in range(3):
            shutil.copy2(src, os.path.join(tools, tool))
            if subprocess.run([os.path.join(tools, tool), "--version"],
                              capture_output=True).returncode == 0:
                break
            time.sleep(15)
    args.tools_mtime = datetime.datetime.fromtimestamp(
        os.path.getmtime(os.path.join(args.build, "bin", "coop-opt"))
    ).strftime("%Y-%m-%d %H:%M:%S")
    args.source_build = args.build
    args.build = os.path.dirname(tools)  # so that build/bin/<tool> is the copy
    started = datetime.datetime.now()
    t0 = time.time()
    models = args.models.split(",")
    # The LP-bound models take longest: start them first.
    slow = ("inception_v3", "swin_t", "bilstm")
    order = sorted(models, key=lambda m: m not in slow)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        started_jobs = {m: pool.submit(do_model, args, m) for m in order}
        futures = [started_jobs[m] for m in models]
        infos = []
        for m, f in zip(models, futures):
            try:
                infos.append(f.result())
            except Exception as error:  # one model's failure is a row
                infos.append(dict(model=m, error=str(error)[:200]))
    write_md(args, infos, started, time.time() - t0)
    print("wrote " + args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
