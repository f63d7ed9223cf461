"""Plans models that are not in the zoo, end to end, and checks the numbers.

Each model (small torchvision CNNs, a GRU language model, a self-attention
block: the models docs/exporter.md once saw fail above their floor) is
exported, imported and costed, then compiled with `--coop-compile` at every
ratio of the grid by the default plan search and by coop, dtr and dte. The
default's plans at `--check-ratios` run two steps on the CPU backend from
one seed, and their arguments after the steps must be bit-identical to the
unconstrained plan's (ratio 1.0, policy none). Writes a Markdown table;
exits 1 if a checked plan's numbers differ or the default has no plan at a
checked ratio above the floor, 77 without torch.

    /usr/bin/python3 bench/outside/outside_check.py --build build --out DIR

Needs torch and torchvision (Debian's python3-torch and python3-torchvision
are enough); it is run by hand, not by the test suite.
"""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

try:
    import torch
    import torch.nn as nn
    import torchvision.models as tvm
except ImportError as missing:
    print(f"skipped: {missing}")
    sys.exit(77)  # ctest's SKIP_RETURN_CODE

from coop_export.exporter import export  # noqa: E402
from coop_export.__main__ import write_graph  # noqa: E402

POLICIES = ["default", "coop", "dtr", "dte"]
CNNS = ["mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0",
        "shufflenet_v2_x0_5", "regnet_y_400mf", "squeezenet1_0"]


class GruLanguageModel(nn.Module):
    def __init__(self, vocab=1000, width=128, hidden=256):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.gru = nn.GRU(width, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.gru(self.embed(tokens))
        return self.head(out).flatten(0, 1)


class AttentionBlock(nn.Module):
    def __init__(self, width=128, heads=4, classes=10):
        super().__init__()
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        attended, _ = self.attention(x, x, x, need_weights=False)
        return self.head(self.norm(x + attended).mean(dim=1))


def build(name, args):
    """(model, inputs, targets, optimizer) of one model of the check."""
    torch.manual_seed(0)
    batch = args.sequence_batch
    if name == "gru_lm":
        model = GruLanguageModel()
        tokens = torch.randint(0, 1000, (batch, 32))
        targets = torch.randint(0, 1000, (batch * 32,))
        return model, (tokens,), (targets,), torch.optim.Adam(
            model.parameters(), lr=1e-3)
    if name == "self_attention":
        model = AttentionBlock()
        return model, (torch.randn(batch, 64, 128),), (
            torch.randint(0, 10, (batch,)),), torch.optim.Adam(
                model.parameters(), lr=1e-3)
    model = getattr(tvm, name)(num_classes=10)
    batch, side = args.batch, args.side
    return model, (torch.randn(batch, 3, side, side),), (
        torch.randint(0, 10, (batch,)),), torch.optim.SGD(
            model.parameters(), lr=0.01, momentum=0.9)


def tool(build_dir, name, *args):
    return subprocess.run([os.path.join(build_dir, "bin", name), *args],
                          capture_output=True, text=True)


def compile_step(build_dir, mlir, ratio, policy, out):
    """Overhead in % of one `--coop-compile`, or why it did not plan."""
    options = f"ratio={ratio} report=true"
    if policy != "default":
        options += f" policy={policy}"
    done = tool(build_dir, "coop-opt", mlir, f"--coop-compile={options}",
                "-o", out)
    if done.returncode == 0:
        found = re.search(r"overhead:\s*([0-9.]+) %", done.stdout + done.stderr)
        return float(found.group(1)) if found else None, "planned"
    return None, "floor" if "below the memory floor" in done.stderr else "fails"


def run_steps(build_dir, mlir, dump):
    """Runs two steps of a compiled step on the CPU; its arguments after."""
    plan = mlir[:-len(".mlir")] + ".plan"
    for done in (tool(build_dir, "coop-translate", "--coop-rt-to-plan", mlir,
                      "-o", plan),
                 tool(build_dir, "coop-run", plan, "--seed", "1", "--steps",
                      "2", "--dump-arguments", dump, "--quiet")):
        if done.returncode != 0:
            sys.exit(f"{mlir}: {done.stderr.strip()}")
    with open(dump, "rb") as f:
        return f.read()


def check_model(name, args):
    model, inputs, targets, optimizer = build(name, args)
    graph = export(model, inputs, nn.functional.cross_entropy, optimizer,
                   targets=targets, name=f"{name}_step")
    base = os.path.join(args.out, name)
    write_graph(graph, base + ".pb")
    imported = tool(args.build, "coop-translate", "--import-training-graph",
                    base + ".pb", "-o", base + ".imported.mlir")
    costed = tool(args.build, "coop-opt", base + ".imported.mlir",
                  "--coop-annotate-costs", "-o", base + ".mlir")
    for done in (imported, costed):
        if done.returncode != 0:
            sys.exit(f"{name}: {done.stderr.strip()}")
    unconstrained = base + ".none.mlir"
    compile_step(args.build, base + ".mlir", 1.0, "none", unconstrained)
    reference = run_steps(args.build, unconstrained, base + ".none.bin")
    rows = []
    for ratio in args.ratios:
        cells, started = {}, time.time()
        for policy in POLICIES:
            out = f"{base}.{ratio}.{policy}.mlir"
            cells[policy] = compile_step(args.build, base + ".mlir", ratio,
                                         policy, out)
        identical = "-"
        if ratio in args.check_ratios and cells["default"][1] == "fails":
            identical = "NO (no plan)"
        if ratio in args.check_ratios and cells["default"][1] == "planned":
            numbers = run_steps(args.build, f"{base}.{ratio}.default.mlir",
                                f"{base}.{ratio}.bin")
            identical = "yes" if numbers == reference else "NO"
        rows.append((ratio, cells, identical, time.time() - started))
    return rows


def cell(result):
    overhead, state = result
    return f"{overhead:.2f}" if state == "planned" else state


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default=",".join(
        CNNS + ["gru_lm", "self_attention"]))
    parser.add_argument("--batch", type=int, default=8,
                        help="batch of the CNNs")
    parser.add_argument("--sequence-batch", type=int, default=64,
                        help="batch of the sequence models")
    parser.add_argument("--side", type=int, default=64,
                        help="image height and width of the CNNs")
    parser.add_argument("--ratios", default="0.9,0.8,0.7,0.6,0.5")
    parser.add_argument("--check-ratios", default="0.8,0.5")
    args = parser.parse_args()
    args.ratios = [float(r) for r in args.ratios.split(",")]
    args.check_ratios = [float(r) for r in args.check_ratios.split(",")]
    os.makedirs(args.out, exist_ok=True)
    print(f"torch {torch.__version__}; CNNs: batch {args.batch}, images "
          f"{args.side}x{args.side}; sequence models: batch "
          f"{args.sequence_batch}; overhead in % of the step's cost, "
          "`--coop-compile`; 'floor': the budget is below the step's memory "
          "floor; identical: the default's plan, two CPU steps, bit for bit "
          "against ratio 1.0 policy none\n")
    print("| model | ratio | default | coop | dtr | dte | default <= best "
          "baseline | identical | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    worse = failed = 0
    for name in args.models.split(","):
        for ratio, cells, identical, seconds in check_model(name, args):
            baselines = [cells[p][0] for p in POLICIES[1:]
                         if cells[p][1] == "planned"]
            ok = "-"
            if baselines:
                ok = "yes" if (cells["default"][1] == "planned" and
                               cells["default"][0] <= min(baselines)) else "NO"
                worse += ok == "NO"
            failed += identical.startswith("NO")
            print(f"| {name} | {ratio} | " +
                  " | ".join(cell(cells[p]) for p in POLICIES) +
                  f" | {ok} | {identical} | {seconds:.1f} |", flush=True)
    print(f"\npoints where the default is worse than a baseline: {worse}")
    print(f"checked ratios without a plan or with other numbers: {failed}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
