#!/usr/bin/env python3
"""Smoke test for the evaluation tool (ctest: coop-eval-quick).

Runs `coop_eval.py --quick` into a scratch directory and checks what it
produced: the CSV columns and rows, that every plan it reports verified,
that the figures are numbers in range, the figures' SVG parses, and that the
generated report has its sections and working figure links.

    python3 bench/eval/check_quick.py --build build --out /tmp/eval-quick
"""

import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import coop_eval  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def num(x):
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=float, default=300.0,
                    help="seconds the quick mode may take")
    args = ap.parse_args()
    if os.path.isdir(args.out):
        shutil.rmtree(args.out)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, os.path.join(HERE, "coop_eval.py"),
                           "--quick", "--build", args.build, "--out",
                           args.out], capture_output=True, text=True)
    elapsed = time.monotonic() - start
    sys.stdout.write(proc.stdout[-3000:])
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-3000:])
        sys.exit("FAIL: coop_eval.py --quick exited with %d" % proc.returncode)
    check(elapsed < args.limit, "quick mode took %.0f s (limit %.0f s)" %
          (elapsed, args.limit))

    # runs.csv: columns and rows
    with open(os.path.join(args.out, "runs.csv")) as f:
        rd = csv.DictReader(f)
        check(rd.fieldnames == coop_eval.COLUMNS,
              "runs.csv columns %s" % rd.fieldnames)
        rows = list(rd)
    models, ratios = coop_eval.QUICK_MODELS, coop_eval.QUICK_RATIOS
    statuses = {"ok", "verify_failed", "oom", "below_floor", "error"}
    for r in rows:
        check(r["status"] in statuses, "unknown status %r" % r["status"])
        check(r["status"] != "error", "run error: %s %s r=%s: %s" % (
            r["model"], r["policy"], r["ratio"], r["message"]))
        check(r["status"] != "verify_failed",
              "plan did not verify: %s %s %s r=%s: %s" % (
                  r["model"], r["policy"], r["variant"], r["ratio"],
                  r["message"]))
        if r["status"] == "ok":
            check(r["verified"] == "1", "ok row not marked verified")
            for c in ("overhead_pct", "peak_bytes", "floor_bytes",
                      "fragmentation_pct", "evictions", "recomputations",
                      "search_ms", "plan_ms", "wall_s", "budget_bytes"):
                check(num(r[c]) is not None, "%s %s r=%s: %s is %r" % (
                    r["model"], r["policy"], r["ratio"], c, r[c]))
            if all(num(r[c]) is not None for c in
                   ("overhead_pct", "fragmentation_pct", "peak_bytes",
                    "budget_bytes", "floor_bytes", "evictions")):
                check(num(r["overhead_pct"]) >= 0, "negative overhead")
                check(0 <= num(r["fragmentation_pct"]) <= 100,
                      "fragmentation out of range")
                check(num(r["peak_bytes"]) <= num(r["budget_bytes"]),
                      "%s %s r=%s: peak above budget" % (
                          r["model"], r["policy"], r["ratio"]))
                check(num(r["budget_bytes"]) >= num(r["floor_bytes"]),
                      "planned below the floor")
                if abs(float(r["ratio"]) - 1.0) < 1e-9:
                    check(num(r["overhead_pct"]) == 0 and
                          num(r["evictions"]) == 0,
                          "%s %s evicts at r = 1" % (r["model"], r["policy"]))
        else:
            check(r["message"] != "", "failed run without a message")
    for m in models:
        ok_none = [r for r in rows if r["model"] == m and r["policy"] ==
                   "none" and r["status"] == "ok" and
                   abs(float(r["ratio"]) - 1.0) < 1e-9]
        check(ok_none, "%s: none does not plan at r = 1" % m)
        for p in ("dtr", "dte", "coop"):
            grid = {round(float(r["ratio"]), 6): r for r in rows
                    if r["model"] == m and r["policy"] == p and
                    r["variant"] == "full" and r["kind"] == "grid"}
            check(1.0 in grid and grid[1.0]["status"] == "ok",
                  "%s %s: no verified plan at r = 1" % (m, p))
            check(0.5 in grid, "%s %s: no row at r = 0.5" % (m, p))
        coop = [r for r in rows if r["model"] == m and r["policy"] == "coop"
                and r["variant"] == "full" and r["kind"] == "grid" and
                abs(float(r["ratio"]) - 0.5) < 1e-9]
        if check(coop and coop[0]["status"] == "ok",
                 "%s: coop does not plan at r = 0.5" % m):
            check(num(coop[0]["overhead_pct"]) is not None and
                  num(coop[0]["overhead_pct"]) > 0,
                  "%s: coop overhead at 0.5 is not a positive number: %r" %
                  (m, coop[0]["overhead_pct"]))
    abl = [r for r in rows if r["variant"] in coop_eval.ABLATIONS]
    check({r["variant"] for r in abl} == set(coop_eval.ABLATIONS),
          "ablation variants missing: %s" % {r["variant"] for r in abl})

    # minratio.csv
    with open(os.path.join(args.out, "minratio.csv")) as f:
        rd = csv.DictReader(f)
        check(rd.fieldnames == coop_eval.MIN_COLUMNS,
              "minratio.csv columns %s" % rd.fieldnames)
        mins = list(rd)
    for m in models:
        for p in coop_eval.POLICIES:
            x = [r for r in mins if r["model"] == m and r["policy"] == p and
                 r["variant"] == "full"]
            if not check(len(x) == 1, "%s %s: %d min-ratio rows" %
                         (m, p, len(x))):
                continue
            mr, fr = num(x[0]["min_ratio"]), num(x[0]["floor_ratio"])
            if check(mr is not None and fr is not None,
                     "%s %s: min ratio %r floor %r" % (
                         m, p, x[0]["min_ratio"], x[0]["floor_ratio"])):
                check(fr <= mr <= 1.0, "%s %s: min ratio %.4f not in "
                      "[floor %.4f, 1]" % (m, p, mr, fr))
                if p == "none":
                    check(mr == 1.0, "none's minimum is not 1.0")
            check(num(x[0]["min_budget_bytes"]) is not None,
                  "%s %s: no minimum budget" % (m, p))

    # figures
    fig = os.path.join(args.out, "figures")
    want = ["fragmentation.svg"] + ["overhead_%s.svg" % m for m in models] + \
        ["ablation_%s.svg" % models[0], "memory_%s_dtr.svg" % models[0],
         "memory_%s_coop.svg" % models[0]]
    for name in want:
        path = os.path.join(fig, name)
        if check(os.path.exists(path), "missing figure %s" % name):
            try:
                root = ET.parse(path).getroot()
                check(root.tag.endswith("svg"), "%s is not SVG" % name)
                check(len(list(root.iter())) > 5, "%s is empty" % name)
            except ET.ParseError as e:
                check(False, "%s does not parse: %s" % (name, e))

    # report
    md_path = os.path.join(args.out, "results.md")
    with open(md_path) as f:
        md = f.read()
    for s in ("GENERATED by", "coop_eval.py", "--quick", "## Targets of "
              "issue 7", "## Against the paper", "BERT Large r = 0.5",
              "## Fragmentation", "## Memory pictures", "## Planning time",
              "machine:"):
        check(s in md, "results.md lacks %r" % s)
    for link in re.findall(r"\]\(([^)]+\.svg)\)", md):
        check(os.path.exists(os.path.join(os.path.dirname(md_path), link)),
              "results.md links a missing figure %s" % link)
    check("coop overhead lower than dtr and dte" in md,
          "results.md lacks the overhead target")

    if failures:
        print("FAIL (%d):" % len(failures))
        for f in failures[:50]:
            print("  - " + f)
        sys.exit(1)
    print("PASS: quick evaluation in %.0f s, %d runs checked" %
          (elapsed, len(rows)))


if __name__ == "__main__":
    main()
