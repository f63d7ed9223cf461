#!/usr/bin/env python3
"""PyTorch's min-cut rematerialization partitioner with a memory budget
against Coop's planner, at matched budgets, with one cost model.

For each model (peer_models.py):
  (a) aot_autograd traces one step (forward, loss, backward) and
      min_cut_rematerialization_partition splits it at
      torch._functorch.config.activation_memory_budget = f for every f of
      --fractions; we record the bytes the forward saves for the backward
      (distinct storages, parameters and inputs left out) and the forward
      nodes the backward recomputes;
  (b) coop_export exports the same step (plus its SGD update), coop-translate
      imports it, coop-opt merges its duplicate ops, runs its SGD updates
      as soon as their gradients are ready and annotates roofline costs
      (--coop-compile's first passes) and plans it at
      budget = (none's arena) - (saved(1.0) - saved(f)): the same bytes
      removed, under the default policy and under policy=coop;
  (c) both overheads are costed by Coop's roofline (roofline.py, checked
      against every cost_us of the annotated step): PyTorch's is the
      recomputed nodes' cost over the exported step's total cost, Coop's is
      the report's compute overhead (recomputed cost over the same total).

Needs torch >= 2.4 (skips with a reason otherwise). See README.md.

  python partitioner_bench.py --build ../../build --out /tmp/coop-peers
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

FRACTIONS = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]


def torch2_or_reason():
    """None when torch >= 2.4 with activation_memory_budget is importable,
    else why not."""
    try:
        import torch
    except ImportError as e:
        return f"torch is not importable ({e})"
    version = tuple(int(x) for x in re.findall(r"\d+", torch.__version__)[:2])
    if version < (2, 4):
        return (f"torch {torch.__version__} at {sys.executable}; this bench "
                "needs torch >= 2.4 (activation_memory_budget)")
    import torch._functorch.config as fconfig
    if not hasattr(fconfig, "activation_memory_budget"):
        return f"torch {torch.__version__} has no activation_memory_budget"
    return None


# --- (b) export -----------------------------------------------------------

def export_step(name, path):
    import peer_models
    from coop_export import export
    model, inputs, targets, loss_fn = peer_models.build(name)
    graph = export(model, inputs, loss_fn, "sgd", targets=targets, name=name)
    with open(path, "wb") as f:
        f.write(graph.SerializeToString(deterministic=True))
    return dict(graph.metadata).get("torch_version", "")


def export_with_fallback(name, path, fallback_python):
    import torch
    try:
        export_step(name, path)
        return f"coop_export under torch {torch.__version__}"
    except Exception as e:  # noqa: BLE001  (any exporter failure falls back)
        print(f"  export under torch {torch.__version__} failed: {e!r}; "
              f"exporting with {fallback_python}", flush=True)
        subprocess.run([fallback_python, __file__, "--export-only", name, path],
                       check=True)
        version = subprocess.run(
            [fallback_python, "-c", "import torch; print(torch.__version__)"],
            check=True, capture_output=True, text=True).stdout.strip()
        return f"coop_export under torch {version} ({fallback_python})"


def run(cmd, tries=120):
    """Runs a build/bin tool; waits while it is being rebuilt (not
    executable for a moment), up to 10 minutes."""
    for attempt in range(tries):
        try:
            return subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            if attempt == tries - 1:
                raise
            print(f"  ({cmd[0]}: {e.strerror}; retrying in 5 s)", flush=True)
            time.sleep(5)


def import_and_annotate(build, pb, out_prefix):
    mlir, costs = out_prefix + ".mlir", out_prefix + ".costs.mlir"
    for cmd in ([f"{build}/bin/coop-translate", "--import-training-graph", pb,
                 "-o", mlir],
                # --coop-compile's first three passes: the planned step is
                # the one --coop-compile plans.
                [f"{build}/bin/coop-opt", mlir, "--coop-merge-duplicates",
                 "--coop-hoist-state-updates", "--coop-annotate-costs", "-o",
                 costs]):
        r = run(cmd)
        if r.returncode:
            raise RuntimeError(" ".join(cmd) + " failed:\n" + r.stderr)
    return costs


def plan(build, costs, options):
    """coop-opt --coop-plan-memory="<options> report=true": the report's
    figures, or the error."""
    cmd = [f"{build}/bin/coop-opt", costs,
           f"--coop-plan-memory={options} report=true", "-o", os.devnull]
    start = time.time()
    r = run(cmd)
    out = {"command": " ".join(cmd[:2]) + f' "{cmd[2]}" -o /dev/null',
           "seconds": round(time.time() - start, 3)}
    if r.returncode:
        lines = [l for l in r.stderr.splitlines() if "error:" in l]
        message = (lines[0] if lines else r.stderr.strip().splitlines()[0])
        out["error"] = message.split("error: ", 1)[-1]
        m = re.search(r"with policy '([^']+)'", out["error"])
        out["policy"] = m.group(1) if m else None
        return out
    text = r.stdout

    def grab(pattern, cast=str):
        m = re.search(pattern, text)
        return cast(m.group(1)) if m else None

    out.update(
        policy=grab(r"policy (\S+),"),
        budget=grab(r"budget (\d+)", int),
        no_remat_bytes=grab(r"= [0-9.]+ x (\d+) \(no rematerialization\)", int),
        floor=grab(r"memory floor:\s+(\d+)", int),
        high_water=grab(r"arena high water:\s+(\d+)", int),
        overhead=grab(r"compute overhead:\s+([0-9.]+) %", float),
        evictions=grab(r"evictions:\s+(\d+)", int),
        recomputations=grab(r"recomputations:\s+(\d+)", int),
        search_winner=grab(r"won: ([^\n]+)"),
    )
    return out


def lowest_budget(build, costs, low, high, policy_option, resolution=2**20):
    """The lowest budget in [low, high] (to `resolution` bytes) at which
    coop-opt finds a plan, by bisection (assuming a plan at `high`), and
    that plan's figures. Plannability need not be monotone in the budget;
    this is the point bisection finds."""
    best = plan(build, costs, f"budget={high} {policy_option}")
    while high - low > resolution:
        mid = (low + high) // 2
        p = plan(build, costs, f"budget={mid} {policy_option}")
        if "error" in p:
            low = mid
        else:
            high, best = mid, p
    return high, best


# --- (a) PyTorch's partitioner --------------------------------------------

def _tensor_shapes(value):
    import torch
    if isinstance(value, torch.Tensor):
        return [(tuple(int(d) for d in value.shape), value.element_size())]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _tensor_shapes(v)]
    return []


def _operands(node):
    import torch.fx as fx
    shapes = []

    def visit(a):
        if isinstance(a, fx.Node):
            shapes.extend(_tensor_shapes(a.meta.get("val")))
        elif isinstance(a, (list, tuple)):
            for x in a:
                visit(x)
    for a in list(node.args) + list(node.kwargs.values()):
        visit(a)
    return shapes


def node_cost(node):
    """Coop's roofline for one aten node of a partitioned graph; 0 for
    views (free in both PyTorch and Coop), getitem and placeholders."""
    import torch
    if node.op != "call_function" or not isinstance(node.target,
                                                    torch._ops.OpOverload):
        return 0.0
    kernel = str(node.target)
    base = kernel.split(".")[1]
    # `_unsafe_view` is an alias in ATen (coop-reuse-buffers makes it a
    # view too when its source dies with it).
    if node.target.is_view or base == "_unsafe_view":
        return 0.0
    transposed = False
    if base == "convolution":
        transposed = bool(node.args[6])
    elif base == "convolution_backward":
        transposed = bool(node.args[7])
    import roofline
    return roofline.cost(kernel, _operands(node), _tensor_shapes(
        node.meta.get("val")), transposed)


def _storages(value):
    import torch
    if isinstance(value, torch.Tensor):
        s = value.untyped_storage()
        return [(s._cdata, s.nbytes())]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _storages(v)]
    return []


def live_peak(fw, bw):
    """(peak, inputs): the most bytes live at once when the forward and
    then the backward graph run in their node order, each storage from the
    node that makes it to its last reader, with the forward's inputs
    (parameters, buffers, data), its outputs and the backward's outputs
    (the gradients) live to the end; views share their source's storage.
    No allocator, no fragmentation: a lower bound of PyTorch's own peak."""
    # A node the backward recomputes carries the forward node's fake value,
    # so its storage is told apart from the forward's: in the backward,
    # only the storages of its placeholders (saved values) are the
    # forward's.
    saved = {key for n in bw.graph.nodes if n.op == "placeholder"
             for key, _ in _storages(n.meta.get("val"))}

    def keys(node, in_bw):
        return [(key if not in_bw or key in saved else ("bw", key), nbytes)
                for key, nbytes in _storages(node.meta.get("val"))]

    nodes = [(n, False) for n in fw.graph.nodes] + [(n, True)
                                                   for n in bw.graph.nodes]
    end = len(nodes)
    first, last, size = {}, {}, {}
    for i, (n, in_bw) in enumerate(nodes):
        if n.op == "output":
            for a in n.all_input_nodes:
                for key, _ in keys(a, in_bw):
                    last[key] = end
            continue
        for key, nbytes in keys(n, in_bw):
            size[key] = nbytes
            first.setdefault(key, 0 if n.op == "placeholder" and not in_bw else i)
            last[key] = max(last.get(key, i), i)
        for a in n.all_input_nodes:
            for key, _ in keys(a, in_bw):
                last[key] = max(last.get(key, i), i)
    inputs = {key for n in fw.graph.nodes if n.op == "placeholder"
              for key, _ in keys(n, False)}
    for key in inputs:
        last[key] = end
    delta = [0] * (end + 2)
    for key, nbytes in size.items():
        delta[first[key]] += nbytes
        delta[last[key] + 1] -= nbytes
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak, sum(size[k] for k in inputs)


def partition(name, fraction):
    """Trace one step with aot_autograd and partition it at `fraction`."""
    import torch
    import torch._functorch.config as fconfig
    from torch._functorch.aot_autograd import aot_function
    from torch._functorch.partitioners import min_cut_rematerialization_partition
    from torch._inductor.fx_utils import get_node_storage
    from torch.func import functional_call
    import peer_models

    model, inputs, targets, loss_fn = peer_models.build(name)
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())

    def step(params, buffers, inputs, targets):
        return loss_fn(functional_call(model, {**params, **buffers}, inputs),
                       *targets)

    got = {}

    def partition_fn(joint, joint_inputs, **kwargs):
        fw, bw = min_cut_rematerialization_partition(joint, joint_inputs,
                                                     **kwargs)
        got["fw"], got["bw"] = fw, bw
        return fw, bw

    start = time.time()
    with fconfig.patch(activation_memory_budget=fraction):
        compiled = aot_function(step, fw_compiler=lambda g, _: g,
                                bw_compiler=lambda g, _: g,
                                partition_fn=partition_fn)
        compiled(params, buffers, inputs, targets)
    seconds = time.time() - start
    fw, bw = got["fw"], got["bw"]

    # Saved for backward: the backward's placeholders other than tangents.
    # Memory is counted per distinct storage; storages of the forward's
    # own inputs (parameters, buffers, data) are not activations.
    input_storages = {get_node_storage(n) for n in fw.graph.nodes
                      if n.op == "placeholder"
                      and isinstance(n.meta.get("val"), torch.Tensor)}
    saved = [n for n in bw.graph.nodes if n.op == "placeholder"
             and not n.name.startswith("tangents")
             and isinstance(n.meta.get("val"), torch.Tensor)]
    storages = {}
    for n in saved:
        key = get_node_storage(n)
        if key not in input_storages:
            storages[key] = n.meta["val"].untyped_storage().nbytes()
    # Recomputed: backward nodes that the forward also runs (names are kept
    # from the joint graph by both partitions).
    fw_names = {n.name for n in fw.graph.nodes if n.op == "call_function"}
    recomputed = [n for n in bw.graph.nodes
                  if n.op == "call_function" and n.name in fw_names]
    peak, persistent = live_peak(fw, bw)
    fw_cost = sum(node_cost(n) for n in fw.graph.nodes)
    bw_cost = sum(node_cost(n) for n in bw.graph.nodes)
    rec = [(n.name, str(n.target), node_cost(n)) for n in recomputed]
    rec_cost = sum(c for _, _, c in rec)
    kinds = collections.Counter(t.split(".")[1] for _, t, c in rec if c > 0)
    return {
        "fraction": fraction,
        "seconds": round(seconds, 2),
        "saved_tensors": len(saved),
        "saved_bytes": sum(storages.values()),
        "saved_storages": len(storages),
        "peak_bytes": peak,
        "input_bytes": persistent,
        "recomputed_nodes": len([r for r in rec if r[2] > 0]),
        "recomputed_kinds": dict(sorted(kinds.items())),
        "recomputed": rec,
        "recomputed_us": rec_cost,
        "step_us": fw_cost + bw_cost - rec_cost,
    }


# --- the table ------------------------------------------------------------

def mib(b):
    return f"{b / 2**20:.1f}"


def short(p, notes):
    """A table cell: the overhead, or 'fails' with a footnote holding the
    error (one footnote per distinct message)."""
    if "error" not in p:
        won = f" ({p['search_winner']})" if p.get("search_winner") else ""
        return f"{p['overhead']:.2f} %{won}"
    message = p["error"].replace("|", "/")
    why = ("below floor" if "below the memory floor" in message else
           "out of memory" if "out of memory" in message else "error")
    # One footnote per kind of failure, policy and op: the budget and the
    # free bytes differ from row to row.
    m = re.search(r"at op #\d+ '[^']+'|op #\d+ '[^']+'\)", message)
    key = (why, p.get("policy"), m.group(0) if m else message)
    keys = [k for k, _ in notes]
    if key not in keys:
        notes.append((key, message))
        keys.append(key)
    return f"fails ({why}) [{keys.index(key) + 1}]"


def winner(torch_pct, plans):
    ok = [p["overhead"] for p in plans if "error" not in p]
    if not ok:
        return "PyTorch (Coop has no plan)"
    best = min(ok)
    if round(best, 2) == round(torch_pct, 2):
        return "tie"
    return "Coop" if best < torch_pct else "PyTorch"


MATCHES = {
    "saved": ("equal saved bytes removed (the brief's match)",
              "saved_bytes", "PyTorch saved MiB"),
    "peak": ("equal live-peak bytes removed", "peak_bytes",
             "PyTorch live peak MiB"),
}


def table(model, rows, meta, match, notes):
    title, _, column = MATCHES[match]
    lines = [
        f"#### {model}: {title}",
        "",
        f"| fraction | {column} | PyTorch recomputes (ops) | PyTorch overhead "
        "| Coop budget B (MiB) | Coop, default policy | Coop, policy=coop "
        "| lower overhead |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        t, m = r["torch"], r[match]
        pct = 100 * t["recomputed_us"] / meta["step_us"]
        lines.append(
            f"| {t['fraction']:.1f} | {mib(t[MATCHES[match][1]])} | "
            f"{t['recomputed_nodes']} | {pct:.2f} % | {m['budget']} "
            f"({mib(m['budget'])}) | {short(m['default'], notes)} | "
            f"{short(m['coop'], notes)} | "
            f"{winner(pct, [m['default'], m['coop']])} |")
    return "\n".join(lines) + "\n"


def model_section(model, rows, meta):
    notes = []
    head = (
        f"### {model}\n\n"
        f"Exported by {meta['exporter']}. Coop: no-remat arena "
        f"{meta['none_bytes']} B ({mib(meta['none_bytes'])} MiB), floor "
        f"{meta['floor']} B ({mib(meta['floor'])} MiB); step cost "
        f"{meta['step_us']:.1f} us (roofline, a100, forward + loss + backward"
        f" + SGD; {meta['roofline_ops_checked']} ops, roofline.py agrees "
        f"with every cost_us to {meta['roofline_max_rel_error']:.1e}); "
        f"PyTorch's forward + backward graphs at 1.0 cost "
        f"{rows[0]['torch']['step_us']:.1f} us by the same roofline. "
        f"Default policy (no `policy=`), per coop-opt --help: "
        f"\"{meta['default_policy']}\"; its cells name the winning "
        f"candidate.\n")
    for key, name in (("default", "default policy"), ("coop", "policy=coop")):
        low = meta[f"lowest_{key}"]
        head += (f"\nLowest budget at which Coop plans ({name}; bisection "
                 f"from the floor to the no-remat arena, 1 MiB steps): "
                 f"{low['budget']} B ({mib(low['budget'])} MiB), overhead "
                 f"{short(low['plan'], notes)}.\n")
    body = [table(model, rows, meta, m, notes) for m in MATCHES]
    kinds = ["#### " + model + ": the forward ops PyTorch's backward "
             "recomputes (views left out)", "",
             "| fraction | saved tensors | ops by aten kernel (count) |",
             "| --- | --- | --- |"]
    for r in rows:
        t = r["torch"]
        listed = ", ".join(f"{k} {n}" for k, n in t["recomputed_kinds"].items())
        kinds.append(f"| {t['fraction']:.1f} | {t['saved_tensors']} | "
                     f"{listed or 'none'} |")
    body.append("\n".join(kinds) + "\n")
    foot = "".join(f"[{i + 1}] e.g. `{n}`\n\n"
                   for i, (_, n) in enumerate(notes))
    return head + "\n" + "\n".join(body) + "\n" + foot


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default="/tmp/coop-peers")
    ap.add_argument("--models", default="gpt,resnet18")
    ap.add_argument("--fractions", default=",".join(map(str, FRACTIONS)))
    ap.add_argument("--fallback-python", default="/usr/bin/python3",
                    help="exports with this interpreter (torch 1.13) if "
                    "coop_export fails under this one")
    ap.add_argument("--export-only", nargs=2, metavar=("MODEL", "OUT_PB"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "python"))

    if args.export_only:  # the fallback exporter: any torch will do
        export_step(*args.export_only)
        return 0
    reason = torch2_or_reason()
    if reason:
        print(f"SKIP partitioner_bench: {reason}")
        return 0
    import torch
    os.makedirs(args.out, exist_ok=True)
    # One run, one binary: build/bin may be rebuilt while the bench runs,
    # so the tools are copied first and the copies are used.
    import hashlib
    import shutil
    tools = {}
    os.makedirs(os.path.join(args.out, "bin"), exist_ok=True)
    for tool in ("coop-opt", "coop-translate"):
        source = os.path.join(args.build, "bin", tool)
        copy = os.path.join(args.out, "bin", tool)
        for _ in range(120):  # wait out a rebuild in progress
            if os.access(source, os.X_OK):
                break
            time.sleep(5)
        shutil.copy2(source, copy)
        with open(copy, "rb") as f:
            tools[tool] = {
                "sha256": hashlib.sha256(f.read()).hexdigest(),
                "mtime": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                       time.gmtime(os.path.getmtime(source)))}
        print(f"{tool}: {source} of {tools[tool]['mtime']}, sha256 "
              f"{tools[tool]['sha256'][:16]}", flush=True)
    args.build = args.out
    fractions = [float(f) for f in args.fractions.split(",")]
    if fractions[0] != 1.0:
        fractions.insert(0, 1.0)  # the reference of "bytes removed"
    results = {"torch": torch.__version__, "python": sys.executable,
               "tools": tools,
               "models": {}}
    md = []
    for model in args.models.split(","):
        print(f"== {model}", flush=True)
        prefix = os.path.join(args.out, model)
        exporter = export_with_fallback(model, prefix + ".pb",
                                        args.fallback_python)
        costs = import_and_annotate(args.build, prefix + ".pb", prefix)
        import roofline
        checked, worst = roofline.check_against_mlir(costs)
        step_us = sum(op[1] for op in roofline.read_annotated(costs))
        none = plan(args.build, costs, "policy=none ratio=1.0")
        if "error" in none:
            raise RuntimeError("policy=none failed: " + none["error"])
        help_text = run([f"{args.build}/bin/coop-opt", "--help"]).stdout
        policy_help = re.search(r"--policy=<string>\s+- (.*)", help_text)
        meta = {"default_policy": policy_help.group(1).strip()
                if policy_help else "?",
                "exporter": exporter, "roofline_ops_checked": checked,
                "roofline_max_rel_error": worst, "step_us": step_us,
                "none_bytes": none["no_remat_bytes"], "floor": none["floor"],
                "none": none}
        print(f"  {exporter}; roofline re-derived {checked} costs, max rel "
              f"error {worst:.2e}; step {step_us:.1f} us; none arena "
              f"{none['no_remat_bytes']} B, floor {none['floor']} B", flush=True)
        rows = []
        for f in fractions:
            t = partition(model, f)
            row = {"torch": t}
            for match, (_, key, _) in MATCHES.items():
                removed = rows[0]["torch"][key] - t[key] if rows else 0
                budget = none["no_remat_bytes"] - removed
                row[match] = {
                    "removed_bytes": removed, "budget": budget,
                    "default": plan(args.build, costs, f"budget={budget}"),
                    "coop": plan(args.build, costs,
                                 f"budget={budget} policy=coop")}
            rows.append(row)
            print(f"  f={f:.1f}: saved {t['saved_bytes']} B, live peak "
                  f"{t['peak_bytes']} B, recomputes {t['recomputed_nodes']} "
                  f"ops ({t['recomputed_us']:.1f} us, {t['seconds']} s)",
                  flush=True)
            for match in MATCHES:
                m = row[match]
                print(f"    {match}: budget {m['budget']}: default "
                      f"{m['default'].get('overhead', m['default'].get('error'))}"
                      f", coop {m['coop'].get('overhead', m['coop'].get('error'))}",
                      flush=True)
        for key, option in (("default", ""), ("coop", "policy=coop")):
            budget, p = lowest_budget(args.build, costs, none["floor"],
                                      none["no_remat_bytes"], option)
            meta[f"lowest_{key}"] = {"budget": budget, "plan": p}
            print(f"  lowest budget found, {key}: {budget} B, overhead "
                  f"{p.get('overhead')} %", flush=True)
        results["models"][model] = {"meta": meta, "rows": rows}
        md.append(model_section(model, rows, meta))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "tables.md"), "w") as f:
        f.write("\n".join(md))
    print("\n" + "\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
